import ast

from grader.sabotage.mutate import operator, rule_updates


@operator("add_half", cause="add_half", check="add",
          catch="backpropagate through a + b (or the hand example L = (a*b + c)*f) and assert both inputs get the "
                "incoming gradient unchanged")
def add_half(tree: ast.Module) -> None:
    for update in rule_updates(tree, "add"):
        update.value = ast.BinOp(ast.Constant(0.5), ast.Mult(), update.value)
