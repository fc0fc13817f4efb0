import ast

from grader.sabotage.mutate import changed, method, operator, replace, value_class


@operator(
    "topo_not_reversed",
    cause="topo_not_reversed",
    check="topo_order",
    catch="backpropagate through an expression two or more operations deep, like the lesson's L = "
    "(a*b + c)*f, and assert the leaves' gradients",
    proof=(
        "a, b, c, f = Value(2.0), Value(-3.0), Value(10.0), Value(-2.0)\n"
        "L = (a * b + c) * f\n"
        "L.backward()\n"
        "assert math.isclose(a.grad, 6.0) and math.isclose(b.grad, -4.0) and math.isclose(c.grad, -2.0)"
    ),
)
def topo_not_reversed(tree: ast.Module) -> None:
    backward = method(value_class(tree), "backward")
    count = 0
    if backward is not None:
        for node in list(ast.walk(backward)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "reversed"
                and len(node.args) == 1
            ):
                replace(backward, node, node.args[0])
                count += 1
            elif (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Slice)
                and isinstance(node.slice.step, ast.UnaryOp)
                and node.slice.lower is None
            ):
                replace(backward, node, node.value)
                count += 1
    changed(count, "no reversed(...) or [::-1] in backward()")
