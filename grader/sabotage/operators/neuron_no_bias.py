import ast

from grader.sabotage.mutate import changed, method, operator, replace, value_class


@operator(
    "neuron_no_bias",
    cause="neuron_no_bias",
    check="neuron",
    catch="assert len(Neuron(n).parameters()) == n + 1, its n weights and its bias (training is no test of it: a "
    "neuron without a bias also brings the loss on the lesson's four points near 0)",
    proof="assert len(Neuron(3).parameters()) == 4",
    replaces=("Value", "Neuron"),
)
def neuron_no_bias(tree: ast.Module) -> None:
    neuron = value_class(tree, "Neuron")
    count = 0
    for name in ("__call__", "parameters"):
        body = method(neuron, name)
        if body is not None:
            for node in list(ast.walk(body)):
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _mentions_bias(node.right):
                    replace(body, node, node.left)
                    count += 1
    changed(count, "no `+ self.b` in Neuron")


def _mentions_bias(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "b" for n in ast.walk(node))
