import ast

from grader.sabotage.mutate import operator, replace, rule_updates


@operator(
    "assign_not_accumulate",
    cause="assign_in_add",
    check="accumulate",
    catch="use one value twice in a sum (b = a + a), backpropagate and assert its gradient is 2, both paths summed",
    proof=("a = Value(3.0)\n(a + a).backward()\nassert a.grad == 2.0"),
)
def assign_not_accumulate(tree: ast.Module) -> None:
    for update in rule_updates(tree, "add"):
        replace(tree, update, ast.Assign([update.target], update.value))
