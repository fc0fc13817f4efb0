"""Stand-ins for the packages an assignment allows but the sandbox's Python lacks.

A lesson's notebook often starts with `import numpy as np` and `import matplotlib.pyplot
as plt`, and draws graphs with graphviz, though the engine never uses them. When such a
package is not installed where the code is graded, importing it gives a stand-in module
instead of failing the whole file: anything can be looked up on it, called, or used in a
`with`, and nothing happens; the moment a result of it is used as a number, a truth value,
a sequence or a string of text, it raises StandInError saying which package and which use.
The grader is told which packages were stood in for, and says so to the student.

The autograd libraries (UNAVAILABLE: torch...) are stood in for even where they are installed: the
grading machine may have one (the grader's own tests use torch) while Gradescope's has none, and a
grade must not depend on where it is computed. So unless the assignment lists one in `packages`,
importing it gives the stand-in everywhere, and a test that uses it fails with a StandInError the
grader explains to the student (how to test without it).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

USED: list[str] = []
"""The top-level packages stood in for, in the order first imported."""


class StandInError(RuntimeError):
    """Code used a package that is not installed where it is graded."""


class StandIn:
    """Whatever a missing package would have given: it can be named, called and passed around."""

    __slots__ = ("_path",)

    def __init__(self, path: str):
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name: str) -> StandIn:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return StandIn(f"{self._path}.{name}")

    def __setattr__(self, name, value) -> None:
        pass

    def __call__(self, *args, **kwargs) -> StandIn:
        return StandIn(f"{self._path}(...)")

    def __getitem__(self, key) -> StandIn:
        return StandIn(f"{self._path}[...]")

    def __setitem__(self, key, value) -> None:
        pass

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __repr__(self) -> str:
        root = self._path.split(".")[0]
        return f"<stand-in for {self._path}: {root} {_absent(root)} where this is graded>"

    def _refuse(self, *args, **kwargs):
        root = self._path.split(".")[0]
        raise StandInError(
            f"{root} {_absent(root)} where your code is graded, and your code used {self._path}; "
            f"grading code must not depend on {root} (or ask your instructor to offer it)"
        )

    def __str__(self) -> str:
        return repr(self)

    def __format__(self, spec: str) -> str:
        return repr(self)

    __float__ = __int__ = __index__ = __bool__ = __len__ = __iter__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __pow__ = __rpow__ = __neg__ = __abs__ = __lt__ = __le__ = __gt__ = __ge__ = __matmul__ = _refuse


def _absent(root: str) -> str:
    """Why there is no such package: an autograd library never is there; any other is not installed."""
    return "is not available" if root in UNAVAILABLE else "is not installed"


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: consulted only for what no real finder found (first, for UNAVAILABLE)."""

    def __init__(self, names: set[str]):
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _StandInModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        root = module.__name__.split(".")[0]
        if root not in USED:
            USED.append(root)


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


def install(names: list[str]) -> None:
    """Stand in for these top-level packages wherever the real ones cannot be imported, and for the autograd
    libraries they do not name everywhere."""
    blocked = set(UNAVAILABLE) - set(names)
    if blocked:
        sys.meta_path.insert(0, _Finder(blocked))  # first: before the real one, if it is installed
    if names:
        sys.meta_path.append(_Finder(set(names)))
