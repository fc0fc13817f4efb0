"""Is the reference engine right? PyTorch, an independent autograd, is the oracle.

Random expression graphs over every operation of the reference, the lesson's hand
examples, a very deep graph, gradient accumulation, numerical_grad, and the neural-network
classes are each computed by both engines in float64 and compared.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import MLP, Neuron, Value, numerical_grad

torch = pytest.importorskip("torch")


def close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def tensor(x: float):
    return torch.tensor(float(x), dtype=torch.float64, requires_grad=True)


# -- random expression graphs ----------------------------------------------------------------

# Every operation as f(x, y, k): x and y are nodes (y only for binary operations), k a plain
# number (the exponent, or the left operand of the reflected operations). The same functions
# build the graph from reference Values and from torch tensors.
OPS = {
    "+": lambda x, y, k: x + y,
    "-": lambda x, y, k: x - y,
    "*": lambda x, y, k: x * y,
    "/": lambda x, y, k: x / y,
    "**": lambda x, y, k: x**k,
    "neg": lambda x, y, k: -x,
    "radd": lambda x, y, k: k + x,
    "rsub": lambda x, y, k: k - x,
    "rmul": lambda x, y, k: k * x,
    "rtruediv": lambda x, y, k: k / x,
    "exp": lambda x, y, k: x.exp(),
    "tanh": lambda x, y, k: x.tanh(),
    "relu": lambda x, y, k: x.relu(),
}
BINARY = {"+", "-", "*", "/"}

LEAVES = st.floats(-3, 3, allow_subnormal=False)
NUMBERS = st.one_of(st.integers(-3, 3), st.floats(-3, 3, allow_subnormal=False))


def allowed(op: str, x: float, y: float, k: float) -> bool:
    """Keep each operation where both engines are defined and well conditioned."""
    if op == "/":
        return abs(y) > 0.1
    if op == "rtruediv":
        return abs(x) > 0.1
    if op == "**":
        if k != int(k):  # fractional exponent: positive base
            return x > 0.1
        return k > 0 or abs(x) > 0.1  # negative exponent (and 0, see x**0 at x=0): away from 0
    if op in ("exp", "tanh"):
        return abs(x) < 5
    if op == "relu":
        return abs(x) > 1e-6
    return True


@st.composite
def graphs(draw) -> tuple[list[float], list[tuple]]:
    """Leaf values and steps (op, i, j, k): node i op node j (or constant k) -> a new node.

    Operands are drawn from all earlier nodes, so leaves are reused (a + a) and
    intermediate nodes get several consumers (diamonds).
    """
    leaves = draw(st.lists(LEAVES, min_size=1, max_size=4))
    data = list(leaves)  # forward value of every node so far
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        op = draw(st.sampled_from(sorted(OPS)))
        i = draw(st.integers(0, len(data) - 1))
        j = draw(st.integers(0, len(data) - 1)) if op in BINARY else i
        k = draw(NUMBERS)
        if not allowed(op, data[i], data[j], k):
            continue
        out = OPS[op](Value(data[i]), Value(data[j]), k).data
        if abs(out) > 1e3:
            continue
        steps.append((op, i, j, k))
        data.append(out)
    return leaves, steps


def build(leaves: list, steps: list[tuple]):
    """The graph on these leaves; its output is the sum of the nodes nothing else reads."""
    nodes = list(leaves)
    for op, i, j, k in steps:
        nodes.append(OPS[op](nodes[i], nodes[j], k))
    read = {i for _, i, _, _ in steps} | {j for _, _, j, _ in steps}
    sinks = [node for n, node in enumerate(nodes) if n not in read]
    return sum(sinks[1:], sinks[0])


@settings(derandomize=True, database=None, max_examples=200, deadline=None)
@given(graphs())
def test_random_graphs_match_torch(graph):
    """Does the reference agree with torch on random graphs?"""
    leaves, steps = graph
    values, tensors = [Value(x) for x in leaves], [tensor(x) for x in leaves]
    out, out_t = build(values, steps), build(tensors, steps)
    out.backward()
    out_t.backward()
    assert close(out.data, out_t.item())
    for n, (v, t) in enumerate(zip(values, tensors)):
        assert close(v.grad, t.grad.item()), f"leaf {n}: {v.grad} != {t.grad.item()}"


# -- the lesson's hand examples --------------------------------------------------------------

HAND_EXAMPLES = [
    pytest.param(lambda a, b, c, f: (a * b + c) * f, [2, -3, 10, -2], [6, -4, -2, 4], id="(a*b+c)*f"),
    pytest.param(
        lambda x1, x2, w1, w2, b: (x1 * w1 + x2 * w2 + b).tanh(),
        [2, 0, -3, 1, 6.8813735870195432],
        [-1.5, 0.5, 1.0, 0.0, 0.5],
        id="tanh-neuron",
    ),
    pytest.param(lambda a, b: (a * b + 5) ** 2, [2, -3], [6, -4], id="(a*b+5)**2"),
]


@pytest.mark.parametrize(("f", "inputs", "expected"), HAND_EXAMPLES)
def test_hand_examples(f, inputs, expected):
    """Does the reference give the lesson's gradients, and do they match torch's?"""
    values, tensors = [Value(x) for x in inputs], [tensor(x) for x in inputs]
    out, out_t = f(*values), f(*tensors)
    out.backward()
    out_t.backward()
    assert [v.grad for v in values] == pytest.approx(expected, abs=1e-12)
    assert close(out.data, out_t.item())
    assert all(close(v.grad, t.grad.item()) for v, t in zip(values, tensors))


# -- structure of the backward pass ----------------------------------------------------------


def test_deep_chain():
    """Does backward() work on a 100,000-node chain, without a RecursionError?"""
    x = Value(0.5)
    y = x
    for _ in range(100_000):
        y = y + x
    y.backward()
    assert y.data == pytest.approx(0.5 * 100_001)
    assert x.grad == 100_001


def test_leaf_used_twice():
    """Does a + a give a.grad == 2, accumulated rather than overwritten?"""
    a = Value(3.0)
    (a + a).backward()
    assert a.grad == 2.0


def test_diamond():
    """Does a node feeding two paths that meet again get the sum of both paths?"""
    a = Value(2.0)
    b, c = a * 4, a**2  # d = b * c = 4a^3: dd/da = c*4 + b*2a = 16 + 32
    d = b * c
    d.backward()
    assert a.grad == pytest.approx(48.0)
    assert b.grad == pytest.approx(4.0) and c.grad == pytest.approx(8.0)


def test_numerical_grad_is_central_difference():
    """Is numerical_grad the central difference (12.01), not the forward one (12.61)?"""
    assert numerical_grad(lambda x: x**3, 2.0, h=0.1) == pytest.approx(12.01)


# -- neural networks -------------------------------------------------------------------------


def test_neuron():
    """Are a Neuron's parameters its weights then its bias, and is it tanh(w.x + b)?"""
    random.seed(0)
    n = Neuron(3)
    params = n.parameters()
    assert len(params) == 4
    assert all(p is q for p, q in zip(params, [*n.w, n.b]))
    x = [0.5, -1.5, 2.0]
    w = torch.tensor([p.data for p in n.w], dtype=torch.float64)
    expected = torch.tanh(w @ torch.tensor(x, dtype=torch.float64) + n.b.data)
    assert close(n(x).data, expected.item())


def test_mlp_matches_torch():
    """Does MLP(3, [4, 4, 1]) have 41 parameters, and match the same network in torch?"""
    random.seed(1)
    model = MLP(3, [4, 4, 1])
    assert len(model.parameters()) == 41
    inputs = [0.5, -1.0, 2.0]

    xs = [Value(x) for x in inputs]
    out = model(xs)
    out.backward()

    x_t = torch.tensor(inputs, dtype=torch.float64, requires_grad=True)
    layers_t = []
    h = x_t
    for layer in model.layers:
        w = torch.tensor([[p.data for p in n.w] for n in layer.neurons], dtype=torch.float64, requires_grad=True)
        b = torch.tensor([n.b.data for n in layer.neurons], dtype=torch.float64, requires_grad=True)
        layers_t.append((w, b))
        h = torch.tanh(w @ h + b)
    out_t = h.squeeze()
    out_t.backward()

    assert close(out.data, out_t.item())
    # torch's gradients in the reference's parameter order: each neuron's weights, then its bias
    grads_t = [g for w, b in layers_t for row in range(len(b)) for g in [*w.grad[row].tolist(), b.grad[row].item()]]
    assert len(grads_t) == 41
    assert all(close(p.grad, g) for p, g in zip(model.parameters(), grads_t))
    assert all(close(x.grad, g) for x, g in zip(xs, x_t.grad.tolist()))
