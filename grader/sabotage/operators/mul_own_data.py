import ast

from grader.sabotage.mutate import changed, operator, rule_updates
from grader.sabotage.trees import clone


@operator(
    "mul_own_data",
    cause="mul_own_data",
    check="mul",
    catch="backpropagate through a * b with a != b and assert a.grad == b.data and b.grad == a.data",
    proof=("a, b = Value(2.0), Value(3.0)\n(a * b).backward()\nassert a.grad == 3.0 and b.grad == 2.0"),
)
def mul_own_data(tree: ast.Module) -> None:
    count = 0
    for update in rule_updates(tree, "mul"):
        target = update.target
        assert isinstance(target, ast.Attribute), "rule_updates gives `x.grad += ...` updates only"
        mine = target.value  # the x of `x.grad += ...`
        for node in ast.walk(update.value):
            if isinstance(node, ast.Attribute) and node.attr == "data" and ast.dump(node.value) != ast.dump(mine):
                node.value = clone(mine)
                count += 1
    changed(count, "no other input's .data in mul's backward")
