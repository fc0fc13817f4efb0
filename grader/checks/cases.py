"""The fixed programs several checks share: the preflight's probes, the lesson's hand examples.

The preflight (features.py), the rule checks, the hand-example check and the suite check's
equivalence probes all run these same programs; they live here so no check reaches into
another's private names.
"""

from __future__ import annotations

from typing import TypedDict

from grader.sandbox.inside.ops import BINARY, UNARY

LEAVES = (("leaf", 2.0), ("leaf", -3.0), ("leaf", 0.5), ("leaf", 1.5))

# One program per operation, on leaves with distinct values: it must build, compute the
# right value and backpropagate without raising for the operation to count as working.
SINGLE = {
    "add": (("leaf", 2.0), ("leaf", -3.0), ("add", 0, 1)),
    "mul": (("leaf", 2.0), ("leaf", -3.0), ("mul", 0, 1)),
    "sub": (("leaf", 2.0), ("leaf", -3.0), ("sub", 0, 1)),
    "div": (("leaf", 2.0), ("leaf", -4.0), ("div", 0, 1)),
    "pow": (("leaf", 1.5), ("pow", 0, 2)),
    "neg": (("leaf", 1.5), ("neg", 0)),
    "tanh": (("leaf", 0.5), ("tanh", 0)),
    "relu": (("leaf", 1.5), ("relu", 0)),
    "exp": (("leaf", 0.5), ("exp", 0)),
}
EQUAL_DATA = (("leaf", 2.0), ("leaf", 3.0), ("leaf", 1.5), ("leaf", 4.0), ("mul", 0, 1), ("mul", 2, 3), ("add", 4, 5))
"""Two different nodes holding the same number (2*3 and 1.5*4): a visited set keyed by value skips one."""


def chain(op: str) -> tuple:
    return LEAVES + ((op, 0, 1), (op, 4, 2), (op, 5, 3))


def diamond(op: str) -> tuple:
    return LEAVES[:2] + ((op, 0, 1), (op, 2, 2), (op, 3, 2))


# The lesson's hand-derived examples: (title, names, program, expected gradients by name).
HAND_EXAMPLES = (
    (
        "L = (a*b + c)*f",
        ["a", "b", "c", "f", "e", "d", "L"],
        (("leaf", 2.0), ("leaf", -3.0), ("leaf", 10.0), ("leaf", -2.0), ("mul", 0, 1), ("add", 4, 2), ("mul", 5, 3)),
        {"a": 6.0, "b": -4.0, "c": -2.0, "f": 4.0},
    ),
    (
        "the tanh neuron o = tanh(x1*w1 + x2*w2 + b)",
        ["x1", "x2", "w1", "w2", "b", "x1w1", "x2w2", "x1w1x2w2", "n", "o"],
        (
            ("leaf", 2.0),
            ("leaf", 0.0),
            ("leaf", -3.0),
            ("leaf", 1.0),
            ("leaf", 6.8813735870195432),
            ("mul", 0, 2),
            ("mul", 1, 3),
            ("add", 5, 6),
            ("add", 7, 4),
            ("tanh", 8),
        ),
        {"x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0},
    ),
    (
        "L = (a*b + 5)**2",
        ["a", "b", "e", "d", "L"],
        (("leaf", 2.0), ("leaf", -3.0), ("mul", 0, 1), ("cadd", 2, 5.0), ("pow", 3, 2)),
        {"a": 6.0, "b": -4.0},
    ),
)


def _discriminating() -> tuple:
    """Programs on which a hypothesis (a misconception replayed on correct engines) is tested beyond the
    smallest case: every operation alone at several points (x ** 1 at 2, tanh and relu on either side of 0),
    an incoming gradient other than 1, nesting, a value used twice through each operation (a leaf, and a node
    with a rule of its own: its input's _backward is not the operation's), shared nodes,
    equal numbers on different nodes and the lesson's hand examples. A cause whose replay is wrong on one
    of them where the student's engine is right is not the student's."""
    found: list[tuple] = list(SINGLE.values()) + [EQUAL_DATA, LEAVES[:3] + (("mul", 0, 1), ("mul", 3, 2))]
    found += [(("leaf", x), ("pow", 0, k)) for x, k in ((2.0, 1), (-1.5, 3), (0.5, -1), (3.0, 0.5))]
    found += [(("leaf", x), (op, 0)) for op in UNARY for x in (-0.8, 1.2)]
    found += [chain(op) for op in ("add", "mul")] + [diamond(op) for op in ("add", "mul")]
    found += [(("leaf", 1.5), (op, 0, 0)) for op in BINARY]
    for ins in (("pow", 0, 2), ("tanh", 0), ("relu", 0), ("exp", 0), ("neg", 0)):
        found += [(("leaf", 0.7), ins, ("add", 1, 0)), (("leaf", -0.7), ins, ("leaf", -2.0), ("mul", 1, 2))]
        inner = (ins[0], 2, *ins[2:])  # on a node with a rule of its own, used again beside it
        found.append((("leaf", 0.7), ("leaf", 1.2), ("mul", 0, 1), inner, ("mul", 3, 2)))
    found += [program for _, _, program, _ in HAND_EXAMPLES]
    return tuple(dict.fromkeys(found))


DISCRIMINATING = _discriminating()


class NeuronCase(TypedDict):
    """A neuron to build, set and call: protocol.neuron()'s arguments (the neuron check's case)."""

    nin: int
    weights: list[float]
    bias: float
    x: list[float]
