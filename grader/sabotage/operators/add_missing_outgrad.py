import ast

from grader.sabotage.mutate import changed, incoming_dropped, operator


@operator(
    "add_missing_outgrad",
    cause="missing_outgrad_add",
    check="add",
    catch="put a + b inside a larger expression, (a + b) * c, and assert both inputs' gradients are c",
    proof=(
        "a, b, c = Value(2.0), Value(-3.0), Value(4.0)\n((a + b) * c).backward()\n"
        "assert math.isclose(a.grad, 4.0) and math.isclose(b.grad, 4.0)"
    ),
)
def add_missing_outgrad(tree: ast.Module) -> None:
    """+ forgets the incoming gradient on one side, self's: `self.grad += 1.0`, the other side right."""
    changed(incoming_dropped(tree, "add", 0), "no update of self's gradient in add's backward")
