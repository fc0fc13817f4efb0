"""The operations a program may use, once: their names, how each is built with a Value, and
how the grader names them and finds their rules.

Stdlib only, with no imports at all: it is copied into the sandbox beside probes.py (which
imports it as a plain module) and imported on the host as grader.sandbox.inside.ops by
programs, strategies, spec, the checks and the mutation operators. A new operation is added
here, and nowhere else names the vocabulary.
"""

from __future__ import annotations

BINARY = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - b,
    "div": lambda a, b: a / b,
}
"""node_i (op) node_j"""
UNARY = {
    "neg": lambda a: -a,
    "tanh": lambda a: a.tanh(),
    "relu": lambda a: a.relu(),
    "exp": lambda a: a.exp(),
}
"""(op) node_i"""
CONSTANT_FORMS = {op: ("c" + op, "r" + op) for op in BINARY}
"""Each binary operation with a plain number on the right (cadd: node + c) and on the left (radd: c + node)."""
WITH_CONSTANT = {
    "pow": lambda a, k: a**k,
    "cadd": lambda a, c: a + c,
    "cmul": lambda a, c: a * c,
    "csub": lambda a, c: a - c,
    "cdiv": lambda a, c: a / c,
}
"""node_i (op) c, c a plain number (pow's exponent is one)."""
CONSTANT_FIRST = {
    "radd": lambda c, a: c + a,
    "rmul": lambda c, a: c * a,
    "rsub": lambda c, a: c - a,
    "rdiv": lambda c, a: c / a,
}
"""c (op) node_i"""
REFLECTED = {"radd": "__radd__", "rmul": "__rmul__", "rsub": "__rsub__", "rdiv": "__rtruediv__"}
"""The method of Value Python calls for each c (op) node_i."""
NEEDS = {form: op for op, forms in CONSTANT_FORMS.items() for form in forms}
"""The operation each constant form needs in the engine (radd needs add)."""

OPS = ("add", "mul", "pow", "neg", "sub", "tanh", "relu", "exp", "div")
"""Every operation an assignment may list, in the order the grader names them."""
DEFAULT_OPS = OPS[:7]
"""An assignment's operations when it lists none: the lesson's (no exp, no division)."""
METHODS = tuple(op for op in UNARY if op != "neg")
"""The operations called as methods of Value (a.tanh())."""
SYMBOL = {"add": "+", "mul": "*", "sub": "-", "div": "/"}
"""Each binary operation's Python operator, in code shown to the student."""
WORDS = {"add": "+", "mul": "*", "pow": "**", "neg": "-x", "sub": "a - b", "div": "/"}
"""How feedback names an operation (one without an entry by its name: tanh)."""

RULES = {
    "add": ("__add__", ("+", "add")),
    "mul": ("__mul__", ("*", "mul")),
    "pow": ("__pow__", ("**", "pow")),
    "tanh": ("tanh", ("tanh",)),
    "relu": ("relu", ("relu", "ReLU")),
    "exp": ("exp", ("exp",)),
    "sub": ("__sub__", ("-", "sub")),
}
"""Each backward rule: the method that defines it on Value, and the names a dispatching backward() uses."""
UPDATED = tuple(rule for rule in RULES if rule != "sub")
"""The rules whose backward holds gradient updates of its own (a - b is usually a + (-b))."""
DERIVATIVES = {
    "add": "1.0",
    "mul": "{other}.data",
    "pow": "{exponent} * {node}.data ** ({exponent} - 1)",
    "tanh": "1 - {data}**2",
    "relu": "{data} > 0",
    "exp": "{data}",
}
"""Each updated rule's local derivative as the lesson writes it, its names to fill in with a student's own (the
repairs' canonical rewrite, grader/repair/canonical.py): node, the input; data, the output's value; other, a
product's other input; exponent, a power's. The lesson's line is `node.grad += <this> * out.grad`."""
RULE_CHECK = {
    "add": "add",
    "mul": "mul",
    "pow": "pow",
    "tanh": "tanh",
    "relu": "relu",
    "neg": "neg_sub",
    "sub": "neg_sub",
}
"""The check that judges each operation's backward rule."""
