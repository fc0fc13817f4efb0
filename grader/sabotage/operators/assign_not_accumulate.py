import ast

from grader.sabotage.mutate import operator, replace, rule_updates


@operator("assign_not_accumulate", cause="assign_in_add", check="accumulate",
          catch="use one value twice (b = a + a, or a * a) and assert its gradient sums both paths")
def assign_not_accumulate(tree: ast.Module) -> None:
    for update in rule_updates(tree, "add"):
        replace(tree, update, ast.Assign([update.target], update.value))
