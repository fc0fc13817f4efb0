"""Stand-ins for the packages an assignment allows but the sandbox's Python lacks.

A lesson's notebook often starts with `import numpy as np` and `import matplotlib.pyplot
as plt`, and draws graphs with graphviz, though the engine never uses them. When such a
package is not installed where the code is graded, importing it gives a stand-in module
instead of failing the whole file: anything can be looked up on it, called, or used in a
`with`, and nothing happens; the moment a result of it is used as a number, a truth value
or a sequence, it raises StandInError saying which package and which use.
The grader is told which packages were stood in for, and says so to the student.

The autograd libraries (UNAVAILABLE: torch...) are stood in for even where they are installed: the
grading machine may have one (the grader's own tests use torch) while Gradescope's has none, and a
grade must not depend on where it is computed. So unless the assignment lists one in `packages`,
importing it gives the stand-in everywhere, and a test that uses it fails with a StandInError the
grader explains to the student (how to test without it).

Beyond the packages an assignment lists, any other third-party package the student's own code imports (a notebook
cell, or their module) stands in where the sandbox lacks it, so that `from rich import print` opening a
cell does not stop the `import math` under it; unless their code guards the import with a `try` that catches
ImportError (its fallback then runs, as it would), or the package is micrograd itself (the lesson's own library:
the engine graded is the student's). A .py test file importing a package the sandbox lacks fails to load, as
before, which says what to use instead: a stand-in there would turn a decorated test into nothing, unseen. A
package the student's code did not import (an optional dependency a library tries) is never stood in for; a
submodule only under a stood-in package.

Arithmetic with a stand-in, comparing it, indexing it and unpacking it (`fig, ax = plt.subplots()`) give stand-ins,
as a plot's code needs; a progress bar (tqdm, rich's track) iterates as what it wraps.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import linecache
import opcode
import os
import sys
import types
from typing import Any

try:
    from names import MODULE_FILE  # inside the sandbox: a module beside this one
except ImportError:  # on the host
    from grader.sandbox.inside.names import MODULE_FILE

USED: list[str] = []
"""The top-level packages stood in for, in the order first imported."""
BLOCKED: set[str] = set()
"""The autograd libraries standing in even where installed (UNAVAILABLE less the assignment's packages)."""
ALLOWED: set[str] = set()
"""The assignment's packages: each stands in wherever it is missing, whoever imports it."""
MISSING = False
"""Whether any other package the student's own code imports stands in where it is missing."""


class StandInError(RuntimeError):
    """Code used a package that is not installed where it is graded."""


PASS_THROUGH = {"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm", "rich.progress.track"}
"""Progress bars: a call of one iterates as its first argument does (`for k in tqdm(range(100))`)."""
UNPACK = opcode.opmap["UNPACK_SEQUENCE"]


class StandIn:
    """Whatever a missing package would have given: it can be named, called and passed around."""

    __slots__ = ("_items", "_path")
    _items: Any
    _path: str

    def __init__(self, path: str, items=None):
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_items", items)

    def __getattr__(self, name: str) -> StandIn:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return StandIn(f"{self._path}.{name}")

    def __setattr__(self, name, value) -> None:
        pass

    def __call__(self, *args, **kwargs) -> StandIn:
        wrapped = args[0] if self._path in PASS_THROUGH and args and not isinstance(args[0], StandIn) else None
        return StandIn(f"{self._path}(...)", wrapped)

    def __getitem__(self, key) -> StandIn:
        return StandIn(f"{self._path}[...]")

    def __setitem__(self, key, value) -> None:
        pass

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __iter__(self):
        """What a progress bar wraps; n stand-ins for code unpacking n names (`fig, ax = plt.subplots()`, read off
        the instruction running, UNPACK_SEQUENCE n); for anything else (a loop over an array), StandInError."""
        if self._items is not None:
            return iter(self._items)
        frame = sys._getframe(1)
        code, at = frame.f_code.co_code, frame.f_lasti
        if 0 <= at < len(code) - 1 and code[at] == UNPACK and (at < 2 or code[at - 2] != opcode.EXTENDED_ARG):
            return iter([StandIn(f"{self._path}[{i}]") for i in range(code[at + 1])])
        return self._refuse()

    def __repr__(self) -> str:
        root = self._path.split(".")[0]
        return f"<stand-in for {self._path}: {root} {_absent(root)} where this is graded>"

    def _refuse(self, *args, **kwargs):
        root = self._path.split(".")[0]
        raise StandInError(
            f"{root} {_absent(root)} where your code is graded, and your code used {self._path}; "
            f"grading code must not depend on {root} (or ask your instructor to offer it)"
        )

    def _same(self, *args, **kwargs) -> StandIn:
        return self

    def __str__(self) -> str:
        return repr(self)

    def __format__(self, spec: str) -> str:
        return repr(self)

    __float__ = __int__ = __index__ = __bool__ = __len__ = __complex__ = __round__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _same
    __neg__ = __pos__ = __abs__ = __invert__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _same  # type: ignore[assignment]
    __hash__ = object.__hash__
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _same


def _absent(root: str) -> str:
    """Why there is no such package: an autograd library not offered never is there; any other is not installed."""
    return "is not available" if root in BLOCKED else "is not installed"


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Gives stand-in modules. First on sys.meta_path for the blocked libraries (before the real one, if it is
    installed); last for every other name, so consulted only for what no real finder found."""

    def __init__(self, blocked: bool):
        self.blocked = blocked

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.split(".")[0]
        if self.blocked:
            found = root in BLOCKED
        elif fullname != root:  # a submodule: of a stood-in package only, never one a real package lacks
            found = isinstance(sys.modules.get(root), _StandInModule)
        else:
            found = root in ALLOWED or (MISSING and _stands_in(root))
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True) if found else None

    def create_module(self, spec):
        module = _StandInModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        root = module.__name__.split(".")[0]
        if root not in USED:
            USED.append(root)


def _stands_in(root: str) -> bool:
    """Whether a package no real finder found stands in: when the student's own code imports it, and neither guards
    the import (try ... except ImportError) nor names micrograd, nor the standard library."""
    if root == "micrograd" or root in sys.stdlib_module_names:
        return False
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and (
        frame.f_code.co_filename.startswith("<frozen importlib") or frame.f_globals.get("__name__") == "importlib"
    ):
        frame = frame.f_back
    if frame is None:
        return False
    filename = frame.f_code.co_filename
    if not (filename.startswith("<ipython-input-") or os.path.basename(filename) == MODULE_FILE):
        return False
    return not _guarded(filename, frame.f_lineno)


CATCHES_IMPORT = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))


def _guarded(filename: str, line: int) -> bool:
    """Whether the statement on this line of the student's file (or cell, as IPython ran it) is in the body of a
    try whose handlers catch ImportError."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    for node in ast.walk(tree):
        body, handlers = getattr(node, "body", None), getattr(node, "handlers", None)
        if (
            isinstance(node, TRIES)
            and body
            and body[0].lineno <= line <= (body[-1].end_lineno or line)
            and any(_catches_import(h.type) for h in handlers or ())
        ):
            return True
    return False


def _catches_import(kind) -> bool:
    if kind is None:
        return True
    if isinstance(kind, ast.Tuple):
        return any(_catches_import(k) for k in kind.elts)
    return isinstance(kind, ast.Name) and kind.id in CATCHES_IMPORT


# Names other code tests with isinstance (pytest.approx asks whether a value is a numpy array):
# they stand in as classes nothing is an instance of.
TYPES = {
    "ndarray",
    "generic",
    "number",
    "bool_",
    "integer",
    "floating",
    "complexfloating",
    "dtype",
    "matrix",
    "DataFrame",
    "Series",
    "Figure",
    "Axes",
    "Tensor",
}


class _StandInModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name in TYPES:
            absent = type(name, (), {"__module__": self.__name__})
            setattr(self, name, absent)
            return absent
        return StandIn(f"{self.__name__}.{name}")


UNAVAILABLE = ("torch", "tensorflow", "jax")
"""Autograd libraries student code gets only as stand-ins, unless the assignment's packages name them."""


def install(names: list[str], missing: bool = False) -> None:
    """Stand in for these top-level packages wherever the real ones cannot be imported, for the autograd libraries
    they do not name everywhere, and (missing) for any other package the student's own code imports that the
    sandbox lacks."""
    global MISSING
    BLOCKED.update(set(UNAVAILABLE) - set(names))
    ALLOWED.update(names)
    MISSING = missing
    if BLOCKED:
        sys.meta_path.insert(0, _Finder(blocked=True))  # first: before the real one, if it is installed
    if names or missing:
        sys.meta_path.append(_Finder(blocked=False))


def stands_in(root: str) -> bool:
    """Whether the package stands in here: it was imported as a stand-in, or importing it would give one (blocked,
    or missing and the assignment's or, with stand-ins for any missing package, anyone's)."""
    module = sys.modules.get(root)
    if module is not None:
        return isinstance(module, _StandInModule)
    if root in BLOCKED:
        return True
    if not (root in ALLOWED or (MISSING and root not in sys.stdlib_module_names)):
        return False
    try:
        return importlib.machinery.PathFinder.find_spec(root) is None
    except (ImportError, ValueError, OSError):
        return True
