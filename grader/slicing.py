"""Which cells of a notebook its tests need, so that each run of the tests on another engine runs
only those, never the demo cells (a training loop, plots, `%timeit`, `!pip`) again.

Why not fork each run from the notebook's executed state: the process that ran the cells ran the
student's code, so anything it left (a shared mapping, an inherited pipe, a queued signal, or its
own memory read again before the next fork) would let one run see what another was given. Each run
is therefore a fresh process from the sandbox's template, as before, that runs the cells the tests
need and then appends its engine; the notebook's own engine is run in full once (the engine lane),
and the tests once on the full notebook (the run on the student's own engine), which the lane
compares with the same run on the needed cells only before it trusts them (grader/lanes/suite.py).

A cell is needed when it binds a needed name (assigns, defines, imports it, or calls a function that
declares it `global`), or changes one at its top level (`Value.__mul__ = ...`, `N.append(...)`, an
item assigned), or does what cannot be followed (`exec`, `globals()`, a star import, `%run`, writing
a file). Needed names start from what the tests use, their test functions, the lesson's names the
grader reads, and grow with every needed cell's own free names. Cells are read as IPython reads them
(magics and `!` lines become calls), each alone; a cell that cannot be parsed is needed.
"""

from __future__ import annotations

import ast
import functools
import symtable
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

OPAQUE_CALLS = frozenset({"exec", "eval", "globals", "vars", "locals", "__import__", "open", "compile"})
"""Names whose use in a cell means it may bind anything, or leave a file a test reads."""
OPAQUE_MAGICS = frozenset(
    {"run", "load", "writefile", "store", "load_ext", "cd", "bash", "sh", "script", "macro", "alias"}
)
"""Magics that may bind names or leave files no reading of the cell can follow."""
CODE_MAGICS = frozenset({"time", "capture"})
"""Magics whose code argument runs in the notebook's namespace, read as the cell's own code."""


@dataclass(frozen=True)
class CellNames:
    binds: frozenset[str]
    changes: frozenset[str]
    uses: frozenset[str]
    opaque: bool
    imported: frozenset[str] = frozenset()
    """Of binds, the names the cell binds by importing only."""
    top_uses: frozenset[str] = frozenset()
    """Of uses, those the cell's own statements read as it runs (not only its functions, when called)."""


PROMPTS = (">>>", "...", "In [")
"""What IPython's reading of a cell may strip from a line that Python parses: a prompt pasted with the code."""


@functools.lru_cache(maxsize=512)
def _transform(source: str) -> str:
    """The cell as IPython reads it (its magics and `!` lines made calls), for its names. A cell that Python parses
    and that holds no prompt IPython strips (PROMPTS) is read as it is: of such a cell, IPython changes at most its
    blank lines and its last newline (every escape it turns into a call starts a line, or follows an `=`, where
    Python's grammar has none), which bind and use no name; IPython (0.06 s to import) is then not imported."""
    if not any(prompt in source for prompt in PROMPTS):
        try:
            ast.parse(source)
            return source
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


@functools.lru_cache(maxsize=512)
def read_cell(source: str) -> CellNames:
    """What one cell binds, changes at its top level and uses (its free names), and whether it is opaque.
    Cached: a grading reads each cell for the slicer, the redefinitions and the tests' needs."""
    try:
        code = _transform(source)
        tree = ast.parse(code)
        table = symtable.symtable(code, "<cell>", "exec")
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, RuntimeError):
        # RuntimeError: IPython's "still changing after 500 iterations" (grading refuses such a cell first)
        return CellNames(frozenset(), frozenset(), frozenset(), True)
    binds, uses, imported = _top_symbols(table)
    top_uses = frozenset(uses)
    declared = _inner_symbols(table, uses)
    changes: set[str] = set()
    opaque = _top_effects(tree, binds, changes, uses)
    opaque = opaque or bool(declared & {"*"}) or bool(uses & OPAQUE_CALLS)
    return CellNames(
        frozenset(binds | {f"global:{n}" for n in declared}),
        frozenset(changes),
        frozenset(uses),
        opaque,
        frozenset(imported),
        top_uses,
    )


def _top_symbols(table: symtable.SymbolTable) -> tuple[set[str], set[str], set[str]]:
    """What the cell's own scope binds, uses, and binds by importing only."""
    binds, uses, imported = set(), set(), set()
    for symbol in table.get_symbols():
        if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace():
            binds.add(symbol.get_name())
        if symbol.is_imported() and not symbol.is_assigned() and not symbol.is_namespace():
            imported.add(symbol.get_name())
        if symbol.is_referenced():
            uses.add(symbol.get_name())
    return binds, uses, imported


def _inner_symbols(table: symtable.SymbolTable, uses: set[str]) -> set[str]:
    """Add to uses the globals the cell's functions and classes read; the names they declare global and assign."""
    declared = set()
    stack = list(table.get_children())
    while stack:
        child = stack.pop()
        stack.extend(child.get_children())
        for symbol in child.get_symbols():
            if symbol.is_global() and symbol.is_referenced():
                uses.add(symbol.get_name())
            if symbol.is_declared_global() and symbol.is_assigned():
                declared.add(symbol.get_name())
    return declared


def _top_effects(tree: ast.AST, binds: set[str], changes: set[str], uses: set[str]) -> bool:
    """Add to changes what the cell's own statements change (attributes, items, setattr, a method's call on a name),
    and to binds, changes and uses what its magics' code does; whether it is opaque (a star import, an opaque call
    or magic)."""
    opaque = False
    for node in scope_nodes(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            opaque = True
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            changes.update(_base(node))
        elif isinstance(node, ast.Call):
            opaque = _call_effects(node, binds, changes, uses) or opaque
    return opaque


def _call_effects(node: ast.Call, binds: set[str], changes: set[str], uses: set[str]) -> bool:
    """_top_effects for one call."""
    changes.update(_base(node.func) if isinstance(node.func, ast.Attribute) else ())
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name in ("setattr", "delattr") and node.args:
        changes.update(_base(node.args[0], bare=True))
    opaque = _opaque_magic(node) or name in OPAQUE_CALLS
    inner = _code_argument(node)
    if inner is not None:
        nested = read_cell(inner)
        binds |= nested.binds
        changes |= nested.changes
        uses |= nested.uses
        opaque = opaque or nested.opaque
    return opaque


def scope_nodes(tree: ast.AST):
    """Every node that runs in this scope (a cell, a function's body), not inside a function, a lambda or
    a class body nested in it."""
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _base(node: ast.AST, bare: bool = False) -> tuple[str, ...]:
    """The name an attribute or item chain starts from (`a` of `a.b[0].c`)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
        bare = True
    return (node.id,) if bare and isinstance(node, ast.Name) else ()


def _magic(node: ast.Call) -> tuple[str, ast.AST | None]:
    """(magic name, its argument) of `get_ipython().run_line_magic(...)`/`run_cell_magic(...)`/`system(...)`."""
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "get_ipython"
    ):
        return "", None
    args = node.args
    if func.attr in ("run_line_magic", "run_cell_magic") and args and isinstance(args[0], ast.Constant):
        return str(args[0].value), args[-1]
    if func.attr in ("system", "getoutput"):
        return "!", args[0] if args else None
    return "", None


def _opaque_magic(node: ast.Call) -> bool:
    name, argument = _magic(node)
    if name == "!":  # a shell line writing a file a test could read
        return isinstance(argument, ast.Constant) and ">" in str(argument.value)
    return name in OPAQUE_MAGICS


def _code_argument(node: ast.Call) -> str | None:
    name, argument = _magic(node)
    if name in CODE_MAGICS and isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    return None


def needed(cells: tuple[tuple[int, str], ...], tests: str | None, seeds: tuple[str, ...]) -> frozenset[int]:
    """The indices of the cells the tests need. tests: the text of the tests file (None when the notebook's
    own test_* functions are the suite); seeds: names the grader itself reads in every run."""
    read = {index: read_cell(source) for index, source in cells}
    wanted = set(seeds) | {n for names in read.values() for n in names.binds if n.startswith("test")}
    if tests is not None:
        wanted |= _names_in(tests)
    if "*" in wanted:
        return frozenset(index for index, _ in cells)
    choice = _Choice(read, _global_binders(read), {index: _imports(source) for index, source in cells}, wanted)
    while True:
        choice.choose_binders()
        if not choice.choose_imports():
            return frozenset(choice.chosen)


def _global_binders(read: dict[int, CellNames]) -> dict[str, set[str]]:
    """A function that declares globals binds them where it is called: function name -> those globals."""
    calls: dict[str, set[str]] = {}
    for names in read.values():
        own = {n.split(":", 1)[1] for n in names.binds if n.startswith("global:")}
        for name in names.binds:
            if own and not name.startswith("global:"):
                calls.setdefault(name, set()).update(own)
    return calls


class _Choice:
    """The cells chosen so far, and the names they make wanted (see needed)."""

    def __init__(self, read: dict[int, CellNames], calls: dict[str, set[str]], imports: dict, wanted: set[str]):
        self.read, self.calls, self.imports, self.wanted = read, calls, imports, wanted
        self.modules = {n for found in imports.values() for n in found}
        self.chosen: set[int] = set()

    def choose(self, index: int) -> None:
        read, calls = self.read, self.calls
        self.chosen.add(index)
        self.wanted.update(read[index].uses | {g for f in read[index].uses for g in calls.get(f, ())})

    def choose_binders(self) -> None:
        """Choose cells that define, or change, a wanted name, until no more do."""
        grew = True
        while grew:
            grew = False
            for index, names in self.read.items():
                if index not in self.chosen and self._binds_wanted(names):
                    self.choose(index)
                    grew = True

    def _binds_wanted(self, names: CellNames) -> bool:
        """Does a cell bind or change a wanted name (or might it: an opaque cell)?"""
        binds = (set(names.binds) - names.imported) | {g for f in names.uses for g in self.calls.get(f, ())}
        return bool(names.opaque or binds & self.wanted or (names.changes - self.modules) & self.wanted)

    def choose_imports(self) -> bool:
        """Choose cells that import a wanted name that no chosen cell imports alike in time for it (a demo cell's
        `import random` is not needed when the engine's cell has it too); whether any was."""
        extra = False
        for index in sorted(self.read, reverse=True):  # the last import of a name first: the earlier ones may repeat
            if index not in self.chosen and any(
                n in self.wanted and not _imported_alike(index, n, self.chosen, self.imports, self.read)
                for n in self.read[index].imported
            ):
                self.choose(index)
                extra = True
        return extra


def _imported_alike(index: int, name: str, chosen: set[int], imports: dict, read: dict) -> bool:
    """Does a chosen cell import name as the cell at index does, before it, or after it with no chosen cell in
    between reading name as it runs?"""
    how = imports[index].get(name)
    alike = sorted(i for i in chosen if how is not None and imports[i].get(name) == how)
    if any(i < index for i in alike):
        return True
    return bool(alike) and not any(index < i < alike[0] and name in read[i].top_uses for i in chosen)


def defined_again(
    cells: tuple[tuple[int, str], ...], names: tuple[str, ...], ran: frozenset[int] = frozenset()
) -> dict[str, int]:
    """Of these names, those that more than one cell binds: name -> the index of the last such cell
    among those that ran (ran: indices of cells that did not run, left out)."""
    binders: dict[str, list[int]] = {}
    for index, source in cells:
        for name in read_cell(source).binds & set(names):
            binders.setdefault(name, []).append(index)
    return {
        name: max(i for i in found if i not in ran)
        for name, found in binders.items()
        if len(found) > 1 and any(i not in ran for i in found)
    }


@functools.lru_cache(maxsize=512)
def _imports(source: str) -> Mapping[str, str]:
    """Names a cell binds by importing, and what each is (modules, whose calls are not counted as changing
    them, and two cells importing one alike bind it alike)."""
    try:
        tree = ast.parse(_transform(source))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return {}
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {
                a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0] for a in node.names
            }
        elif isinstance(node, ast.ImportFrom):
            found |= {a.asname or a.name: f"{'.' * node.level}{node.module}:{a.name}" for a in node.names}
    return MappingProxyType(found)  # cached: read-only


def _names_in(text: str) -> set[str]:
    """Every name and attribute a tests file mentions (what it may take from the student's module)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {"*"}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias) and node.name != "*":
            found.add(node.asname or node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
    return found
