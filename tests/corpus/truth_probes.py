"""The expressions and numbers truth.py probes each check with: values, exponents, reuse
forms, the lesson's hand examples and its training run. Plain data and lambdas, built only
from what an engine's Value offers, so the same probe runs on an engine and on torch."""

from __future__ import annotations

POS = (0.7, 1.9, 2.6, 0.45, 1.15)
MIXED = (0.7, -1.3, 1.9, -0.4, 2.6, -2.2)
PAIRS = ((0.7, -1.3), (1.9, 0.45), (-2.2, 2.6), (-0.4, -1.15))
EXPONENTS = (2, 3, -1, 0.5, 2.5, -2, 1.5, 1)


def _bases(k):
    return POS if isinstance(k, float) else MIXED


def forward_probes():
    """(description, function, values) for the forward check."""
    out = []
    for a, b in PAIRS:
        out += [
            ("a + b", lambda x, y: x + y, (a, b)),
            ("a * b", lambda x, y: x * y, (a, b)),
            ("a - b", lambda x, y: x - y, (a, b)),
        ]
    for a in MIXED:
        out += [
            ("-a", lambda x: -x, (a,)),
            ("a.tanh()", lambda x: x.tanh(), (a,)),
            ("a.relu()", lambda x: x.relu(), (a,)),
            ("a + 2", lambda x: x + 2.0, (a,)),
            ("2 + a", lambda x: 2.0 + x, (a,)),
            ("a * 3", lambda x: x * 3.0, (a,)),
            ("3 * a", lambda x: 3.0 * x, (a,)),
            ("a - 1", lambda x: x - 1.0, (a,)),
            ("1 - a", lambda x: 1.0 - x, (a,)),
        ]
    for k in EXPONENTS:
        for a in _bases(k):
            out.append((f"a ** {k!r}", lambda x, k=k: x**k, (a,)))
    out += [
        ("((a*b + c)**2).tanh() - a", lambda a, b, c: ((a * b + c) ** 2).tanh() - a, (0.3, -0.8, 0.5)),
        ("(a - b).relu() * -(c + 1)", lambda a, b, c: (a - b).relu() * -(c + 1.0), (1.9, 0.45, -0.7)),
        ("2 * a**3 - 1 + b * a", lambda a, b: 2.0 * a**3 - 1.0 + b * a, (1.15, -0.4)),
    ]
    return out


FORWARD_NEEDS = {
    "a + b": {"add"},
    "a * b": {"mul"},
    "a - b": {"sub"},
    "-a": {"neg"},
    "a.tanh()": {"tanh"},
    "a.relu()": {"relu"},
    "a + 2": {"add"},
    "2 + a": {"add"},
    "a * 3": {"mul"},
    "3 * a": {"mul"},
    "a - 1": {"sub"},
    "1 - a": {"sub"},
    "((a*b + c)**2).tanh() - a": {"add", "mul", "pow", "tanh", "sub"},
    "(a - b).relu() * -(c + 1)": {"sub", "relu", "mul", "neg", "add"},
    "2 * a**3 - 1 + b * a": {"mul", "pow", "sub", "add"},
}
"""The operations each forward probe needs (a ** k: pow); a probe needing one the engine does not have is its
own check's charge, not forward's."""


def forward_needs(what: str) -> set[str]:
    return {"pow"} if what.startswith("a ** ") else FORWARD_NEEDS[what]


def _scaled(f):
    """f(...) times an extra leaf: the operation's incoming gradient is that leaf's value."""
    return lambda *xs: f(*xs[:-1]) * xs[-1]


# Each rule: probes (description, function, values) with every value used once, and
# probes that need a working * to scale the incoming gradient.
def rule_probes(op):
    if op == "add":
        core = [("a + b", lambda a, b: a + b, p) for p in PAIRS]
        core += [
            ("(a + b) + c", lambda a, b, c: (a + b) + c, (0.7, -1.3, 1.9)),
            ("a + (b + c)", lambda a, b, c: a + (b + c), (2.6, -0.4, 0.45)),
        ]
        scaled = [
            ("(a + b) * k", _scaled(lambda a, b: a + b), (0.7, -1.3, 2.6)),
            ("((a + b) + c) * k", _scaled(lambda a, b, c: (a + b) + c), (1.9, 0.45, -2.2, -1.15)),
        ]
    elif op == "mul":
        core = [("a * b", lambda a, b: a * b, p) for p in PAIRS]
        core += [
            ("(a * b) * c", lambda a, b, c: (a * b) * c, (0.7, -1.3, 1.9)),
            ("a * (b * c)", lambda a, b, c: a * (b * c), (2.6, -0.4, 0.45)),
            ("((a * b) * c) * d", lambda a, b, c, d: ((a * b) * c) * d, (1.15, -2.2, 0.7, 1.9)),
        ]
        scaled = []
    elif op == "pow":
        core = [(f"a ** {k!r}", lambda a, k=k: a**k, (x,)) for k in EXPONENTS for x in _bases(k)[:3]]
        core += [
            ("(a ** 2) ** 3", lambda a: (a**2) ** 3, (0.7,)),
            ("(a ** 0.5) ** -1", lambda a: (a**0.5) ** -1, (1.9,)),
        ]
        scaled = [(f"(a ** {k!r}) * s", _scaled(lambda a, k=k: a**k), (_bases(k)[1], -1.3)) for k in EXPONENTS]
    elif op == "tanh":
        core = [("a.tanh()", lambda a: a.tanh(), (x,)) for x in MIXED]
        core += [("a.tanh().tanh()", lambda a: a.tanh().tanh(), (0.7,))]
        scaled = [("a.tanh() * s", _scaled(lambda a: a.tanh()), (x, -1.3)) for x in (0.7, -0.4, 1.9)]
    elif op == "relu":
        core = [("a.relu()", lambda a: a.relu(), (x,)) for x in MIXED]
        core += [("a.relu().relu()", lambda a: a.relu().relu(), (x,)) for x in (1.9, -0.4)]
        scaled = [("a.relu() * s", _scaled(lambda a: a.relu()), (x, 2.6)) for x in (0.7, -1.3, 1.9, -2.2)]
    elif op == "neg_sub":
        core = [("-a", lambda a: -a, (x,)) for x in MIXED[:3]]
        core += [("a - b", lambda a, b: a - b, p) for p in PAIRS]
        core += [
            ("-(-a)", lambda a: -(-a), (0.45,)),  # noqa: B002 - a double negation, not a decrement
            ("(a - b) - c", lambda a, b, c: (a - b) - c, (0.7, -1.3, 1.9)),
        ]
        scaled = [
            ("(-a) * s", _scaled(lambda a: -a), (1.9, -2.2)),
            ("(a - b) * s", _scaled(lambda a, b: a - b), (0.7, -1.3, 2.6)),
        ]
    else:
        raise ValueError(op)
    return core, scaled


# Reuse probes: (ops needed, description, function of the uses, values, reused group).
# The reused version passes the same leaf for every index of the group; the split
# version gives each use its own leaf of the same value.
ACCUMULATE_PROBES = (
    (("add",), "a + a", lambda p, q: p + q, (0.7, 0.7), (0, 1)),
    (("add",), "(a + b) + a", lambda p, b, q: (p + b) + q, (1.9, -1.3, 1.9), (0, 2)),
    (("add",), "a + a + a", lambda p, q, r: p + q + r, (-0.4, -0.4, -0.4), (0, 1, 2)),
    (("mul",), "a * a", lambda p, q: p * q, (1.9, 1.9), (0, 1)),
    (("mul",), "(a * b) * a", lambda p, b, q: (p * b) * q, (0.7, 2.6, 0.7), (0, 2)),
    (("add", "mul"), "a * b + a", lambda p, b, q: p * b + q, (-1.3, 0.45, -1.3), (0, 2)),
    (("pow", "add"), "a**2 + a", lambda p, q: p**2 + q, (1.15, 1.15), (0, 1)),
    (("pow", "mul"), "a**3 * a", lambda p, q: p**3 * q, (0.7, 0.7), (0, 1)),
    (("pow", "add"), "a**2 + a**3", lambda p, q: p**2 + q**3, (-1.3, -1.3), (0, 1)),
    (("tanh", "mul"), "a.tanh() * a", lambda p, q: p.tanh() * q, (0.7, 0.7), (0, 1)),
    (("tanh", "add"), "a.tanh() + a", lambda p, q: p.tanh() + q, (-0.4, -0.4), (0, 1)),
    (("relu", "add"), "a.relu() + a", lambda p, q: p.relu() + q, (1.9, 1.9), (0, 1)),
    (("relu", "add"), "a.relu() + a (a < 0)", lambda p, q: p.relu() + q, (-1.3, -1.3), (0, 1)),
    (("relu", "mul"), "a.relu() * a", lambda p, q: p.relu() * q, (2.6, 2.6), (0, 1)),
    (("neg", "add"), "-a + a", lambda p, q: -p + q, (0.45, 0.45), (0, 1)),
    (("neg", "mul"), "-a * a", lambda p, q: -p * q, (1.9, 1.9), (0, 1)),
    (("sub",), "a - a", lambda p, q: p - q, (0.7, 0.7), (0, 1)),
    (("sub", "mul"), "a * b - a", lambda p, b, q: p * b - q, (2.6, -0.4, 2.6), (0, 2)),
)

OP_FORMS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "pow": lambda a, b: a**2,
    "neg": lambda a, b: -a,
    "sub": lambda a, b: a - b,
    "tanh": lambda a, b: a.tanh(),
    "relu": lambda a, b: a.relu(),
}

# Gradcheck expressions: (ops needed, description, function, values). Nested, with reuse
# and shared nodes; relu inputs kept away from 0 and fractional powers on positive bases.
GRADCHECK_EXPRESSIONS = (
    (("add", "mul"), "(a*b + c)*d", lambda a, b, c, d: (a * b + c) * d, (0.7, -1.3, 1.9, 2.6)),
    (("add", "mul"), "e = a*b; (e + c)*e", lambda a, b, c: (lambda e: (e + c) * e)(a * b), (0.7, -1.3, 1.9)),
    (("add", "mul"), "e = a + b; e*e + e", lambda a, b: (lambda e: e * e + e)(a + b), (0.45, 1.15)),
    (("mul",), "a*a*b", lambda a, b: a * a * b, (-0.4, 1.9)),
    (("add",), "a + a + b", lambda a, b: a + a + b, (0.7, -2.2)),
    (("pow", "add", "mul"), "(a*b + c)**2", lambda a, b, c: (a * b + c) ** 2, (2.0, -3.0, 5.5)),
    (("pow",), "a**3", lambda a: a**3, (-1.3,)),
    (("pow",), "a**0.5", lambda a: a**0.5, (1.9,)),
    (("pow", "add"), "a**2 + a", lambda a: a**2 + a, (1.15,)),
    (("pow", "mul"), "a**-1 * b**2", lambda a, b: a**-1 * b**2, (0.7, -1.3)),
    (("tanh", "add", "mul"), "(a*b + c).tanh()", lambda a, b, c: (a * b + c).tanh(), (0.7, -0.4, 0.45)),
    (("tanh", "mul"), "a.tanh() * a", lambda a: a.tanh() * a, (0.7,)),
    (("tanh", "add", "mul"), "e = a.tanh(); e*b + e", lambda a, b: (lambda e: e * b + e)(a.tanh()), (-0.4, 1.9)),
    (("relu", "add", "mul"), "(a*b + c).relu() * d", lambda a, b, c, d: (a * b + c).relu() * d, (0.7, 1.9, 0.45, -1.3)),
    (
        ("relu", "add", "mul"),
        "(a*b + c).relu() * d (< 0)",
        lambda a, b, c, d: (a * b + c).relu() * d,
        (0.7, -1.9, 0.45, -1.3),
    ),
    (("relu", "add"), "a.relu() + a", lambda a: a.relu() + a, (2.6,)),
    (("neg", "add"), "-a + b", lambda a, b: -a + b, (0.7, -1.3)),
    (("neg", "mul"), "-(a*b) * a", lambda a, b: -(a * b) * a, (1.9, 0.45)),
    (("sub", "mul"), "(a - b)*(a - c)", lambda a, b, c: (a - b) * (a - c), (0.7, -1.3, 1.9)),
    (("sub", "tanh", "mul"), "(a - b).tanh() * b", lambda a, b: (a - b).tanh() * b, (0.45, 1.15)),
)
GRADCHECK_H = 1e-6
GRADCHECK_RTOL = 1e-5
GRADCHECK_ATOL = 1e-6

HAND_EXAMPLES = (
    (
        "L = (a*b + c)*f",
        lambda a, b, c, f: (a * b + c) * f,
        (2.0, -3.0, 10.0, -2.0),
        {0: 6.0, 1: -4.0, 2: -2.0, 3: 4.0},
        ("a", "b", "c", "f"),
    ),
    (
        "the tanh neuron",
        lambda x1, x2, w1, w2, b: (x1 * w1 + x2 * w2 + b).tanh(),
        (2.0, 0.0, -3.0, 1.0, 6.8813735870195432),
        {0: -1.5, 2: 1.0, 1: 0.5, 3: 0.0},
        ("x1", "x2", "w1", "w2", "b"),
    ),
    ("L = (a*b + 5)**2", lambda a, b: (a * b + 5.0) ** 2, (2.0, -3.0), {0: 6.0, 1: -4.0}, ("a", "b")),
)

NEURON_WEIGHTS, NEURON_BIAS, NEURON_X = (0.5, -1.0, 0.25), 0.1, (1.0, 2.0, -3.0)
TRAIN_XS = ((1.0, -1.0), (2.0, 0.5), (-1.0, 0.5), (0.0, 1.5))
TRAIN_YS = (1.0, 1.0, -1.0, -1.0)
TRAIN_STEPS, TRAIN_LR, TRAIN_SEED, TRAIN_THRESHOLD = 50, 0.1, 0, 0.1
