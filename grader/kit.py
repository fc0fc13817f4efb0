"""The starter kit's methods: which of them a student's code still leaves unwritten, which checks need each, and
so where to start.

A check stops at the first method still raising NotImplementedError that it meets (the result says which:
`CheckResult.not_written`), so the checks alone never name `backward` while `__add__` is unwritten, nor `__rsub__`
while `__neg__` is. The student's code says the rest: a function whose whole body (its docstring aside) is
`raise NotImplementedError(...)` is not written yet. It is read here from the code as text, in the grader's own
process, within bounds: code over PARSED_CHARS is not read at all, and only the module's top level and its
classes' bodies are looked at (no walk of a tree the student shaped).

The next step follows the checks' real needs (NEEDS): the methods one waiting check still needs, chosen for the
most checks they let run per method written (the rubric's order breaks a tie), in the order the code has them.
With nothing written, that is `__add__` and `backward` (`add` and `deep_graph` run then); with only `__add__`
written, `backward` alone, not `__mul__`.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass

PARSED_CHARS = 200_000
"""The longest code read (an engine is 5 KB; the kit's notebook, 20 KB)."""

_OPERATIONS = (
    "Value.__add__",
    "Value.__mul__",
    "Value.__pow__",
    "Value.tanh",
    "Value.relu",
    "Value.__neg__",
    "Value.__sub__",
    "Value.__radd__",
    "Value.__rmul__",
    "Value.__rsub__",
)
_NEURON = ("Neuron.__init__", "Neuron.__call__", "Neuron.parameters")
_BACKWARD = "Value.backward"

NEEDS: dict[str, tuple[str, ...]] = {
    "forward": _OPERATIONS,
    "add": ("Value.__add__", _BACKWARD),
    "mul": ("Value.__mul__", _BACKWARD),
    "pow": ("Value.__pow__", _BACKWARD),
    "tanh": ("Value.tanh", _BACKWARD),
    "relu": ("Value.relu", _BACKWARD),
    "neg_sub": ("Value.__neg__", "Value.__sub__", "Value.__rsub__", _BACKWARD),
    "accumulate": ("Value.__add__", "Value.__mul__", _BACKWARD),
    "topo_order": ("Value.__add__", "Value.__mul__", _BACKWARD),
    "deep_graph": ("Value.__add__", _BACKWARD),
    "hand_examples": ("Value.__add__", "Value.__mul__", "Value.tanh", _BACKWARD),
    "gradcheck": ("Value.__add__", "Value.__mul__", _BACKWARD),
    "numerical_grad": ("numerical_grad",),
    "neuron": (*_NEURON, "Value.__add__", "Value.__mul__", "Value.__radd__", "Value.tanh"),
    "training": (
        *_NEURON,
        "Value.__add__",
        "Value.__mul__",
        "Value.__radd__",
        "Value.__sub__",
        "Value.__pow__",
        "Value.tanh",
        _BACKWARD,
    ),
}
"""The kit's methods each check of the lesson's rubric cannot run without (the checks on the student's tests need
none of them: they run the tests)."""


def unwritten(source: str | None, notebook: bool = False) -> tuple[str, ...]:
    """The functions of the code still raising NotImplementedError and nothing else (`Value.__add__`,
    `Neuron.parameters`, `numerical_grad`), in the code's order; a later definition replaces an earlier one, as
    when the code runs. `source` is a notebook's JSON when `notebook` (its code cells are read in order). Nothing
    for code over PARSED_CHARS, or that cannot be read."""
    if not source or len(source) > PARSED_CHARS:
        return ()
    found: dict[str, tuple[str, ...]] = {}
    for text in _cells(source) if notebook else [source]:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found[node.name] = tuple(
                    f"{node.name}.{item.name}"
                    for item in node.body
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _stub(item)
                )
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[node.name] = (node.name,) if _stub(node) else ()
    return tuple(name for names in found.values() for name in names)


def _cells(source: str) -> list[str]:
    """A notebook's code cells' sources, read as JSON (within PARSED_CHARS), skipping anything else; a magic's line
    (IPython's, which is no Python) is made a comment so the rest of its cell is read."""
    try:
        cells = json.loads(source).get("cells", [])
    except (ValueError, AttributeError, RecursionError):
        return []
    texts = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(t for t in text if isinstance(t, str)) if isinstance(text, list) else text
        if isinstance(text, str):
            texts.append(
                "\n".join("#" + line if line.lstrip()[:1] in ("%", "!") else line for line in text.split("\n"))
            )
    return texts


def _stub(node) -> bool:
    """A function whose body, its docstring aside, is one `raise NotImplementedError` (called or not)."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise):
        return False
    raised = body[0].exc
    if isinstance(raised, ast.Call):
        raised = raised.func
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


@dataclass(frozen=True)
class Start:
    """Where a student stands with the starter kit: what is still to write, what waits for it, what to do next."""

    methods: tuple[str, ...]
    """Every method still to write, in the code's order (each check's own, named where it stopped, included)."""
    waiting: dict[str, tuple[str, ...]]
    """Each check stopped at a method still to write, in the rubric's order, with the methods it still needs."""
    next_methods: tuple[str, ...]
    """The methods to write next: all that one waiting check still needs."""
    next_check: str
    """That check."""


def start(stopped: dict[str, str], found: tuple[str, ...]) -> Start | None:
    """Where to start, from the checks stopped at a method still to write (check id -> the method it stopped at,
    in the rubric's order) and the methods the code leaves unwritten (`unwritten`'s); None when no check waits."""
    if not stopped:
        return None
    methods = tuple(dict.fromkeys((*found, *stopped.values())))
    order = {name: k for k, name in enumerate(methods)}
    waiting = {
        check: tuple(sorted({method, *(m for m in NEEDS.get(check, ()) if m in found)}, key=order.__getitem__))
        for check, method in stopped.items()
    }
    order_of = list(waiting)

    def worth(check: str) -> tuple[float, int]:
        """What writing the check's methods gives: the checks it lets run, per method written (more first), then
        the rubric's order."""
        given = set(waiting[check])
        freed = sum(set(needs) <= given for needs in waiting.values())
        return (-freed / len(given), order_of.index(check))

    check = min(waiting, key=worth)
    return Start(methods, waiting, waiting[check], check)


def grouped(methods: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """The methods by class (`Value`: `__add__`, `backward`...), a function of the module on its own, in order."""
    groups: dict[str, list[str]] = {}
    for name in methods:
        owner, dot, method = name.rpartition(".")
        groups.setdefault(owner if dot else name, []).append(method if dot else "")
    return [(owner, [m for m in names if m]) for owner, names in groups.items()]
