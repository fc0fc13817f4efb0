"""The lesson's one-line bugs planted by hand in engines whose backward is not a closure in a method (issue 39, item
4): each operation's backward a function given its nodes with functools.partial (partial_fns), a table of lambdas
keyed by the operation's label (lambda_table), and closures written with local names walked by functools.reduce
(reduce_walk), all in tests/fixtures/repair/. Beside them, relu's condition in several spellings, planted in the
three styles of repair_bugs.py too. An engine's bug is its correct text with one line replaced; the repair must be
at that line."""

from __future__ import annotations

from repair_bugs import ENGINES

NEW_STYLES = ("partial_fns", "lambda_table", "reduce_walk")

PLANTS: dict[str, dict[str, tuple[str, str, str]]] = {
    "partial_fns": {
        "add, x's side": ("missing_outgrad_add", "    x.grad += res.grad\n", "    x.grad += 1.0\n"),
        "add, y's side": ("missing_outgrad_add", "    y.grad += res.grad\n", "    y.grad += 1.0\n"),
        "mul, x's side": ("missing_outgrad_mul", "x.grad += y.data * res.grad", "x.grad += y.data"),
        "mul, y's side": ("missing_outgrad_mul", "y.grad += x.data * res.grad", "y.grad += x.data"),
        "pow without out.grad": (
            "missing_outgrad_pow",
            "x.grad += power * x.data ** (power - 1) * res.grad",
            "x.grad += power * x.data ** (power - 1)",
        ),
        "tanh without out.grad": (
            "missing_outgrad_tanh",
            "x.grad += (1 - res.data**2) * upstream",
            "x.grad += 1 - res.data**2",
        ),
        "relu without out.grad": (
            "missing_outgrad_relu",
            "x.grad += (res.data > 0) * res.grad",
            "x.grad += float(res.data > 0)",
        ),
        "add halved": (
            "add_half",
            "    x.grad += res.grad\n    y.grad += res.grad\n",
            "    x.grad += 0.5 * res.grad\n    y.grad += 0.5 * res.grad\n",
        ),
        "mul's own data": (
            "mul_own_data",
            "    x.grad += y.data * res.grad\n    y.grad += x.data * res.grad\n",
            "    x.grad += x.data * res.grad\n    y.grad += y.data * res.grad\n",
        ),
        "pow's exponent": ("pow_off_by_one", "power * x.data ** (power - 1)", "power * x.data**power"),
        "tanh on its input": ("tanh_grad_from_input", "(1 - res.data**2) * upstream", "(1 - x.data**2) * upstream"),
        "tanh without the square": ("tanh_square_missing", "(1 - res.data**2) * upstream", "(1 - res.data) * upstream"),
        "= in mul": (
            "assign_in_mul",
            "    x.grad += y.data * res.grad\n    y.grad += x.data * res.grad\n",
            "    x.grad = y.data * res.grad\n    y.grad = x.data * res.grad\n",
        ),
        "= in tanh": (
            "assign_in_tanh",
            "x.grad += (1 - res.data**2) * upstream",
            "x.grad = (1 - res.data**2) * upstream",
        ),
        "seed": ("missing_seed", "        self.grad = 1.0\n        for node in", "        for node in"),
        "reversed": ("topo_not_reversed", "for node in reversed(order):", "for node in order:"),
    },
    "lambda_table": {
        "add, a's side": (
            "missing_outgrad_add",
            '"+": lambda out, a, b: (out.grad, out.grad)',
            '"+": lambda out, a, b: (1.0, out.grad)',
        ),
        "add, b's side": (
            "missing_outgrad_add",
            '"+": lambda out, a, b: (out.grad, out.grad)',
            '"+": lambda out, a, b: (out.grad, 1.0)',
        ),
        "mul, a's side": (
            "missing_outgrad_mul",
            "(b.data * out.grad, a.data * out.grad)",
            "(b.data, a.data * out.grad)",
        ),
        "mul, b's side": (
            "missing_outgrad_mul",
            "(b.data * out.grad, a.data * out.grad)",
            "(b.data * out.grad, a.data)",
        ),
        "pow without out.grad": (
            "missing_outgrad_pow",
            "(out.exponent * a.data ** (out.exponent - 1) * out.grad,)",
            "(out.exponent * a.data ** (out.exponent - 1),)",
        ),
        "tanh without out.grad": ("missing_outgrad_tanh", "((1 - out.data**2) * out.grad,)", "(1 - out.data**2,)"),
        "relu without out.grad": ("missing_outgrad_relu", "((out.data > 0) * out.grad,)", "(float(out.data > 0),)"),
        "add halved": ("add_half", "(out.grad, out.grad)", "(out.grad / 2, out.grad / 2)"),
        "mul's own data": (
            "mul_own_data",
            "(b.data * out.grad, a.data * out.grad)",
            "(a.data * out.grad, b.data * out.grad)",
        ),
        "pow's exponent": ("pow_off_by_one", "a.data ** (out.exponent - 1)", "a.data**out.exponent"),
        "tanh on its input": (
            "tanh_grad_from_input",
            "((1 - out.data**2) * out.grad,)",
            "((1 - a.data**2) * out.grad,)",
        ),
        "tanh without the square": (
            "tanh_square_missing",
            "((1 - out.data**2) * out.grad,)",
            "((1 - out.data) * out.grad,)",
        ),
        "= in the loop adding each lambda's gradients": ("assign_in_", "child.grad += g", "child.grad = g"),
        "seed": ("missing_seed", "        self.grad = 1.0\n        for node in", "        for node in"),
        "reversed": ("topo_not_reversed", "for node in reversed(topo):", "for node in topo:"),
    },
    "reduce_walk": {
        "add, self's side": (
            "missing_outgrad_add",
            "            self.grad += g\n            other.grad += g\n",
            "            self.grad += 1.0\n            other.grad += g\n",
        ),
        "add, other's side": (
            "missing_outgrad_add",
            "            self.grad += g\n            other.grad += g\n",
            "            self.grad += g\n            other.grad += 1.0\n",
        ),
        "mul, self's side": ("missing_outgrad_mul", "self.grad += other.data * g", "self.grad += other.data"),
        "mul, other's side": ("missing_outgrad_mul", "other.grad += self.data * g", "other.grad += self.data"),
        "pow without out.grad": (
            "missing_outgrad_pow",
            "self.grad += exp * self.data ** (exp - 1) * out.grad",
            "self.grad += exp * self.data ** (exp - 1)",
        ),
        "tanh without out.grad": ("missing_outgrad_tanh", "self.grad += local * out.grad", "self.grad += local"),
        "relu without out.grad": ("missing_outgrad_relu", "self.grad += mask * out.grad", "self.grad += mask"),
        "add halved": (
            "add_half",
            "            self.grad += g\n            other.grad += g\n",
            "            self.grad += 0.5 * g\n            other.grad += 0.5 * g\n",
        ),
        "mul's own data": (
            "mul_own_data",
            "self.grad += other.data * g\n            other.grad += self.data * g\n",
            "self.grad += self.data * g\n            other.grad += other.data * g\n",
        ),
        "pow's exponent": ("pow_off_by_one", "self.data ** (exp - 1)", "self.data**exp"),
        "tanh on its input": ("tanh_grad_from_input", "local = 1 - y * y", "local = 1 - self.data * self.data"),
        "tanh without the square": ("tanh_square_missing", "local = 1 - y * y", "local = 1 - y"),
        "= in add": (
            "assign_in_add",
            "            self.grad += g\n            other.grad += g\n",
            "            self.grad = g\n            other.grad = g\n",
        ),
        "= in pow": ("assign_in_pow", "self.grad += exp * self.data", "self.grad = exp * self.data"),
        "seed": ("missing_seed", "        self.grad = 1\n        reduce(", "        reduce("),
        "reversed": ("topo_not_reversed", "reversed(topo), None)", "topo, None)"),
    },
}
"""style: bug: (the cause the grader names, or the start of its id, the correct text, the buggy text), each correct
text found once (`=` in the loop adding a table's gradients is every rule's: the check names the first). A
product's own data is planted on both sides, as repair_bugs.py plants it (on one side only, the mul check fails with
no cause named: its diagnosis replays the lesson's mistake, made on both)."""

RELU_LINES = {
    "lecture": "self.grad += (out.data > 0) * out.grad",
    "slots_gradfn": "a.grad += res.grad if a.data > 0 else 0.0",
    "partial_fns": "x.grad += (res.data > 0) * res.grad",
    "lambda_table": '"relu": lambda out, a: ((out.data > 0) * out.grad,)',
    "reduce_walk": "mask = 1.0 if self.data > 0 else 0.0",
}
"""Each style's line holding relu's condition, correct."""
RELU_SPELLINGS = {
    "lecture": {
        "> -1": "self.grad += (out.data > -1) * out.grad",
        "0 if < 0 else 1": "self.grad += (0 if out.data < 0 else 1) * out.grad",
        ">= 0": "self.grad += (out.data >= 0) * out.grad",
        "not < 0": "self.grad += (not out.data < 0) * out.grad",
        "flipped": "self.grad += (self.data <= 0) * out.grad",
        "none": "self.grad += out.grad",
    },
    "slots_gradfn": {
        "> -1": "a.grad += res.grad if a.data > -1 else 0.0",
        "0 if < 0 else": "a.grad += 0.0 if res.data < 0 else res.grad",
        "!= 0": "a.grad += res.grad if a.data != 0 else 0.0",
        "flipped": "a.grad += res.grad if a.data < 0 else 0.0",
    },
    "partial_fns": {
        "> -1": "x.grad += (res.data > -1) * res.grad",
        "0 if < 0 else 1": "x.grad += (0 if res.data < 0 else 1) * res.grad",
        ">= -1 on the input": "x.grad += (x.data >= -1) * res.grad",
        "flipped": "x.grad += (res.data <= 0) * res.grad",
    },
    "lambda_table": {
        "> -1": '"relu": lambda out, a: ((out.data > -1) * out.grad,)',
        "0 if < 0 else 1": '"relu": lambda out, a: ((0 if out.data < 0 else 1) * out.grad,)',
        ">= 0": '"relu": lambda out, a: ((out.data >= 0) * out.grad,)',
        "flipped": '"relu": lambda out, a: ((a.data < 0) * out.grad,)',
    },
    "reduce_walk": {
        "> -1": "mask = 1.0 if self.data > -1 else 0.0",
        "0 if < 0 else 1": "mask = 0.0 if out.data < 0 else 1.0",
        "abs": "mask = 1.0 if abs(self.data) > 0 else 0.0",
        "flipped": "mask = 1.0 if self.data < 0 else 0.0",
    },
}
"""Each style's relu condition written wrong, several ways: always true for negative inputs, or the wrong way."""


def correct(style: str) -> str:
    """A style's correct engine (these three, or repair_bugs.py's)."""
    return (ENGINES / f"{style}.py").read_text(encoding="utf-8")


def planted(style: str, old: str, new: str) -> str:
    """The style's engine with old (found once) replaced by new."""
    text = correct(style)
    assert text.count(old) == 1, (style, old)
    return text.replace(old, new)
