"""The repair tests' buggy engines: each misconception with an inverse edit planted, by hand, on one line of each
of three correct engines in different styles (tests/fixtures/repair/): the line as written and as the student
got it wrong. An engine's bug is its correct text with that line replaced; the inverse must find that line."""

from __future__ import annotations

import json
from pathlib import Path

from grader.result import Result

ENGINES = Path(__file__).parent / "fixtures" / "repair"
STYLES = ("lecture", "slots_gradfn", "list_iterative")

BUGS: dict[str, dict[str, tuple[str, str]]] = {
    "assign_in_add": {
        "lecture": (
            "            self.grad += out.grad\n            other.grad += out.grad\n",
            "            self.grad = out.grad\n            other.grad = out.grad\n",
        ),
        "slots_gradfn": (
            "            a.grad += res.grad\n            b.grad += res.grad\n",
            "            a.grad = res.grad\n            b.grad = res.grad\n",
        ),
        "list_iterative": (
            "            self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad\n",
            "            self.grad = 1.0 * out.grad\n            other.grad = 1.0 * out.grad\n",
        ),
    },
    "assign_in_mul": {
        "lecture": (
            "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n",
            "            self.grad = other.data * out.grad\n            other.grad = self.data * out.grad\n",
        ),
        "slots_gradfn": (
            "            a.grad += b.data * res.grad\n            b.grad += a.data * res.grad\n",
            "            a.grad = b.data * res.grad\n            b.grad = a.data * res.grad\n",
        ),
        "list_iterative": (
            "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n",
            "            self.grad = other.data * out.grad\n            other.grad = self.data * out.grad\n",
        ),
    },
    "assign_in_pow": {
        "lecture": (
            "self.grad += other * self.data ** (other - 1) * out.grad",
            "self.grad = other * self.data ** (other - 1) * out.grad",
        ),
        "slots_gradfn": ("a.grad += n * a.data ** (n - 1) * res.grad", "a.grad = n * a.data ** (n - 1) * res.grad"),
        "list_iterative": (
            "self.grad += (k * self.data ** (k - 1)) * out.grad",
            "self.grad = (k * self.data ** (k - 1)) * out.grad",
        ),
    },
    "assign_in_tanh": {
        "lecture": ("self.grad += (1 - t**2) * out.grad", "self.grad = (1 - t**2) * out.grad"),
        "slots_gradfn": ("a.grad += (1.0 - t * t) * res.grad", "a.grad = (1.0 - t * t) * res.grad"),
        "list_iterative": ("self.grad += (1 - out.data**2) * out.grad", "self.grad = (1 - out.data**2) * out.grad"),
    },
    "assign_in_relu": {
        "lecture": ("self.grad += (out.data > 0) * out.grad", "self.grad = (out.data > 0) * out.grad"),
        "slots_gradfn": ("a.grad += res.grad if a.data > 0 else 0.0", "a.grad = res.grad if a.data > 0 else 0.0"),
        "list_iterative": ("                self.grad += out.grad\n", "                self.grad = out.grad\n"),
    },
    "missing___rmul__": {
        "lecture": ("    def __rmul__(self, other):\n        return self * other\n\n", ""),
        "slots_gradfn": ("    def __rmul__(a, b):\n        return a * b\n\n", ""),
        "list_iterative": ("    def __rmul__(self, other):\n        return self * other\n\n", ""),
    },
    "add_half": {
        "lecture": (
            "            self.grad += out.grad\n            other.grad += out.grad\n",
            "            self.grad += 0.5 * out.grad\n            other.grad += 0.5 * out.grad\n",
        ),
        "slots_gradfn": (
            "            a.grad += res.grad\n            b.grad += res.grad\n",
            "            a.grad += res.grad / 2\n            b.grad += res.grad / 2\n",
        ),
        "list_iterative": (
            "            self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad\n",
            "            self.grad += 0.5 * out.grad\n            other.grad += 0.5 * out.grad\n",
        ),
    },
    "mul_own_data": {
        "lecture": (
            "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n",
            "            self.grad += self.data * out.grad\n            other.grad += other.data * out.grad\n",
        ),
        "slots_gradfn": (
            "            a.grad += b.data * res.grad\n            b.grad += a.data * res.grad\n",
            "            a.grad += a.data * res.grad\n            b.grad += b.data * res.grad\n",
        ),
        "list_iterative": (
            "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n",
            "            self.grad += self.data * out.grad\n            other.grad += other.data * out.grad\n",
        ),
    },
    "relu_negative_grad": {
        "lecture": ("self.grad += (out.data > 0) * out.grad", "self.grad += out.grad"),
        "slots_gradfn": ("a.grad += res.grad if a.data > 0 else 0.0", "a.grad += res.grad"),
        "list_iterative": (
            "            if self.data > 0:\n                self.grad",
            "            if out.data >= 0:\n                self.grad",
        ),
    },
    "tanh_grad_from_input": {
        "lecture": ("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - self.data**2) * out.grad"),
        "slots_gradfn": ("a.grad += (1.0 - t * t) * res.grad", "a.grad += (1.0 - a.data * a.data) * res.grad"),
        "list_iterative": ("self.grad += (1 - out.data**2) * out.grad", "self.grad += (1 - self.data**2) * out.grad"),
    },
    "tanh_square_missing": {
        "lecture": ("self.grad += (1 - t**2) * out.grad", "self.grad += (1 - t) * out.grad"),
        "slots_gradfn": ("a.grad += (1.0 - t * t) * res.grad", "a.grad += (1.0 - t) * res.grad"),
        "list_iterative": ("self.grad += (1 - out.data**2) * out.grad", "self.grad += (1 - out.data) * out.grad"),
    },
    "missing_outgrad_mul": {
        "lecture": (
            "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n",
            "            self.grad += other.data\n            other.grad += self.data\n",
        ),
        "slots_gradfn": (
            "            b.grad += a.data * res.grad\n",
            "            b.grad += a.data\n",
        ),  # b's side only
        "list_iterative": (  # one side only: self's
            "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n",
            "            self.grad += other.data\n            other.grad += self.data * out.grad\n",
        ),
    },
    "missing_outgrad_add": {
        "lecture": (  # one side only: self's, the incoming gradient written as the 1.0 it is on leaves
            "            self.grad += out.grad\n            other.grad += out.grad\n",
            "            self.grad += 1.0\n            other.grad += out.grad\n",
        ),
        "slots_gradfn": ("            b.grad += res.grad\n", "            b.grad += 1.0\n"),  # b's side only
        "list_iterative": (
            "            self.grad += 1.0 * out.grad\n            other.grad += 1.0 * out.grad\n",
            "            self.grad += 1.0\n            other.grad += 1.0\n",
        ),
    },
    "missing_outgrad_pow": {
        "lecture": (
            "self.grad += other * self.data ** (other - 1) * out.grad",
            "self.grad += other * self.data ** (other - 1)",
        ),
        "slots_gradfn": ("a.grad += n * a.data ** (n - 1) * res.grad", "a.grad += n * a.data ** (n - 1)"),
        "list_iterative": (
            "self.grad += (k * self.data ** (k - 1)) * out.grad",
            "self.grad += k * self.data ** (k - 1)",
        ),
    },
    "missing_outgrad_tanh": {
        "lecture": ("self.grad += (1 - t**2) * out.grad", "self.grad += 1 - t**2"),
        "slots_gradfn": ("a.grad += (1.0 - t * t) * res.grad", "a.grad += 1.0 - t * t"),
        "list_iterative": ("self.grad += (1 - out.data**2) * out.grad", "self.grad += 1 - out.data**2"),
    },
    "missing_outgrad_relu": {
        "lecture": ("self.grad += (out.data > 0) * out.grad", "self.grad += float(out.data > 0)"),
        "slots_gradfn": ("a.grad += res.grad if a.data > 0 else 0.0", "a.grad += 1.0 if a.data > 0 else 0.0"),
        "list_iterative": ("                self.grad += out.grad\n", "                self.grad += 1\n"),
    },
    "relu_flipped": {
        "lecture": ("self.grad += (out.data > 0) * out.grad", "self.grad += (self.data < 0) * out.grad"),
        "slots_gradfn": ("a.grad += res.grad if a.data > 0 else 0.0", "a.grad += res.grad if a.data < 0 else 0.0"),
        "list_iterative": (
            "            if self.data > 0:\n                self.grad",
            "            if self.data < 0:\n                self.grad",
        ),
    },
    "pow_off_by_one": {
        "lecture": (
            "self.grad += other * self.data ** (other - 1) * out.grad",
            "self.grad += other * self.data**other * out.grad",
        ),
        "slots_gradfn": ("a.grad += n * a.data ** (n - 1) * res.grad", "a.grad += n * a.data**n * res.grad"),
        "list_iterative": (
            "self.grad += (k * self.data ** (k - 1)) * out.grad",
            "self.grad += (k * self.data**k) * out.grad",
        ),
    },
    "topo_not_reversed": {
        "lecture": ("for v in reversed(topo):", "for v in topo:"),
        "slots_gradfn": ("for node in reversed(order):", "for node in order:"),
        "list_iterative": ("for node in reversed(nodes):", "for node in nodes:"),
    },
    "missing_seed": {
        "lecture": ("        self.grad = 1.0\n        for v in", "        for v in"),
        "slots_gradfn": ("        self.grad = 1.0\n        for node in", "        for node in"),
        "list_iterative": ("        self.grad = 1\n        for node in", "        for node in"),
    },
    "children_not_tuple": {
        "lecture": ('out = Value(t, (self,), "tanh")', 'out = Value(t, (self), "tanh")'),
        "slots_gradfn": ("res = Value(t, (a,))", "res = Value(t, (a))"),
        "list_iterative": (
            'out = Value(math.tanh(self.data), [self], "tanh")',
            'out = Value(math.tanh(self.data), (self), "tanh")',
        ),
    },
    "missing___radd__": {
        "lecture": ("    def __radd__(self, other):\n        return self + other\n\n", ""),
        "slots_gradfn": ("    def __radd__(a, b):\n        return a + b\n\n", ""),
        "list_iterative": ("    def __radd__(self, other):\n        return self + other\n\n", ""),
    },
    "missing___rsub__": {
        "lecture": ("    def __rsub__(self, other):\n        return other + (-self)\n\n", ""),
        "slots_gradfn": ("    def __rsub__(a, b):\n        return (-a) + b\n\n", ""),
        "list_iterative": ("    def __rsub__(self, other):\n        return -self + other\n\n", ""),
    },
    "sub_as_add": {
        "lecture": (
            "        return self + (-other)\n\n    def __rsub__",
            "        return self + other\n\n    def __rsub__",
        ),
        "slots_gradfn": ("        return a + (-b)\n", "        return a + b\n"),
        "list_iterative": (
            "        return self + (-other)\n\n    def __radd__",
            "        return self + other\n\n    def __radd__",
        ),
    },
    "neuron_no_bias": {
        "lecture": ("        act = act + self.b\n", ""),
        "slots_gradfn": ("return (total + self.b).tanh()", "return total.tanh()"),
        "list_iterative": ("zip(self.w, x)) + self.b).tanh()", "zip(self.w, x))).tanh()"),
    },
}
"""cause id: style: (the correct text, the buggy text), each correct text found once in its engine."""

NOT_PLANTED = {
    "missing___rtruediv__": "no style's engine is graded on division: the assignment's ops have none, so no check "
    "names the cause (the lecture style's __truediv__ has no reflected twin, and needs none)",
    "assign_in_exp": "no style's engine has exp (the assignment's ops have none)",
    "missing_outgrad_exp": "no style's engine has exp (the assignment's ops have none)",
}
"""The causes with an inverse that no style's engine can carry, and why: every other is planted in every style."""

MISSING_FROM_PARAMETERS = {"neuron_no_bias"}
"""Bugs that also leave a second line (parameters()): their buggy engines drop `+ [self.b]` there too."""

PRIORITY = (
    "assign_in_add",
    "assign_in_mul",
    "tanh_grad_from_input",
    "tanh_square_missing",
    "missing_outgrad_mul",
    "relu_flipped",
    "pow_off_by_one",
)
"""The most common causes, graded end to end in every style."""


def correct(style: str) -> str:
    return (ENGINES / f"{style}.py").read_text(encoding="utf-8")


def buggy(cause: str, style: str) -> tuple[str, int]:
    """The engine with the bug planted, and the line it is on."""
    text = correct(style)
    old, new = BUGS[cause][style]
    assert text.count(old) == 1, (cause, style)
    at = text.index(old)
    text = text.replace(old, new)
    if cause in MISSING_FROM_PARAMETERS:
        text = text.replace("return self.w + [self.b]", "return self.w")
    return text, text[:at].count("\n") + 1


def written(result: Result) -> dict[str, dict]:
    """Each check's verified repair as the result JSON writes it (`artifacts.repair`), by check id; the JSON read back
    (Result.from_dict, as a batch reads a result) gives each check the same typed repair."""
    data = json.loads(result.to_json())
    assert [c.repair for c in Result.from_dict(data).checks] == [c.repair for c in result.checks]
    return {c["id"]: c["artifacts"]["repair"] for c in data["checks"] if "repair" in c["artifacts"]}
