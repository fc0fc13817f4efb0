import ast

from grader.sabotage.mutate import changed, method, operator, replace, value_class


@operator(
    "missing_seed",
    cause="missing_seed",
    check="hand_examples",
    catch="call backward() on any expression and assert some gradient is not 0",
    proof=("a = Value(2.0)\n(a * 3.0).backward()\nassert a.grad != 0"),
)
def missing_seed(tree: ast.Module) -> None:
    backward = method(value_class(tree), "backward")
    count = 0
    if backward is not None:
        for node in list(ast.walk(backward)):
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets)
                and isinstance(node.value, ast.Constant)
                and node.value.value == 1
            ):
                replace(backward, node, ast.Pass())
                count += 1
    changed(count, "no `self.grad = 1` in backward()")
