import ast

from grader.sabotage.mutate import changed, operator, rule_updates


@operator(
    "mul_missing_outgrad",
    cause="mul_missing_outgrad",
    check="mul",
    catch="put a * b inside a larger expression, (a * b) * c, and assert a's gradient is b * c",
    proof=("a, b, c = Value(2.0), Value(3.0), Value(4.0)\n((a * b) * c).backward()\nassert math.isclose(a.grad, 12.0)"),
)
def mul_missing_outgrad(tree: ast.Module) -> None:
    incoming = {"grad"} | _names_bound_to_grad(tree)
    count = 0
    for update in rule_updates(tree, "mul"):
        product = update.value
        if isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult):
            for keep, drop in ((product.left, product.right), (product.right, product.left)):
                if _is_incoming(drop, incoming):
                    update.value = keep
                    count += 1
                    break
    changed(count, "no `* out.grad` factor in mul's backward")


def _is_incoming(node: ast.expr, incoming: set[str]) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "grad") or (
        isinstance(node, ast.Name) and node.id in incoming
    )


def _names_bound_to_grad(tree: ast.Module) -> set[str]:
    """Names a dispatching backward() binds to the incoming gradient (`g = node.grad`)."""
    return {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and node.value.attr == "grad"
        for target in node.targets
        if isinstance(target, ast.Name)
    }
