"""The two sides truth.py compares: an engine file loaded on its own (its unused imports
stubbed, its printing swallowed) and driven through its own `_backward` closures, and torch
(float64) computing the same expression. Imports only the standard library, and torch
when torch_run is called."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import math
import random
import sys
import types
from pathlib import Path

RTOL = 1e-6
ATOL = 1e-9
CHILD_ATTRS = ("_prev", "_children", "children", "prev", "_parents")
# Imports students leave in that the engines never use; stubbed only when not installed.
OPTIONAL_MODULES = ("numpy", "matplotlib", "matplotlib.pyplot", "graphviz", "IPython", "IPython.display")


# ---------------------------------------------------------------------------- loading


class _Placeholder:
    """Stands for anything taken from a stubbed module (never used by the engines)."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Placeholder()

    def __getattr__(self, name):
        return _Placeholder()


def _stub(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []  # a package, so submodules can be imported from it
    module.__getattr__ = lambda attr: _Placeholder  # PEP 562: `from graphviz import Digraph`
    return module


@contextlib.contextmanager
def _optional_modules():
    added = []
    for name in OPTIONAL_MODULES:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = _stub(name)
            added.append(name)
    try:
        yield
    finally:
        for name in added:
            sys.modules.pop(name, None)


def load(path: Path) -> types.ModuleType:
    """Import an engine file as a fresh module (its printing swallowed, unused imports stubbed)."""
    name = f"corpus_engine_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    state = random.getstate()
    with _optional_modules(), contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
    random.setstate(state)
    return module


# ---------------------------------------------------------------------------- numbers


def number(x) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def close(got, want: float, rtol: float = RTOL, atol: float = ATOL) -> bool:
    got = number(got)
    return got is not None and math.isclose(got, want, rel_tol=rtol, abs_tol=atol)


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:120]


class Failure(Exception):
    """A check's verdict is fail; the message says why."""


# ---------------------------------------------------------------------------- torch side


def torch_run(fn, values, backward=True):
    import torch

    leaves = [torch.tensor(float(v), dtype=torch.float64, requires_grad=True) for v in values]
    out = fn(*leaves)
    value = out.item()
    if not backward:
        return value, None
    out.backward()
    return value, [0.0 if t.grad is None else t.grad.item() for t in leaves]


# ---------------------------------------------------------------------------- engine side


class BrokenGraph(Exception):
    """The engine's record of a node's children cannot be walked."""


def children(v, Value) -> list:
    for name in CHILD_ATTRS:
        if name in getattr(v, "__dict__", {}):
            kids = getattr(v, name)
            if isinstance(kids, Value):
                raise BrokenGraph(
                    f"{name} of a {v._op if hasattr(v, '_op') else ''} node holds a single Value, "
                    "not a collection (written (self) instead of (self,)?)"
                )
            try:
                return list(kids)
            except TypeError as exc:
                raise BrokenGraph(f"{name} is not iterable: {exc}") from None
    raise BrokenGraph("no children attribute among " + ", ".join(CHILD_ATTRS))


def drive(root, Value) -> None:
    """A correct backward pass over the engine's own closures: reverse topological order,
    each node once, output seeded with 1."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for child in children(node, Value):
            if id(child) not in seen:
                stack.append((child, False))
    root.grad = 1.0
    for node in reversed(order):
        node._backward()


def engine_run(mod, fn, values, mode: str):
    """Build fn on fresh leaves; mode is 'forward', 'driver' (our pass over the engine's
    closures) or 'student' (the engine's own backward())."""
    Value = mod.Value
    leaves = [Value(float(v)) for v in values]
    out = fn(*leaves)
    if mode == "forward":
        return out.data, None
    if mode == "driver":
        drive(out, Value)
    else:
        out.backward()
    return out.data, [leaf.grad for leaf in leaves]
