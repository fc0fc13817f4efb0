import ast

from grader.sabotage.mutate import changed, incoming_dropped, operator


@operator(
    "mul_missing_outgrad",
    cause="missing_outgrad_mul",
    check="mul",
    catch="put a * b inside a larger expression, (a * b) * c, and assert a's gradient is b * c",
    proof=("a, b, c = Value(2.0), Value(3.0), Value(4.0)\n((a * b) * c).backward()\nassert math.isclose(a.grad, 12.0)"),
)
def mul_missing_outgrad(tree: ast.Module) -> None:
    changed(incoming_dropped(tree, "mul"), "no `* out.grad` factor in mul's backward")
