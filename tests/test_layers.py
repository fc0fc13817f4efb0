"""The grader's imports point down a declared map of layers, and form no cycle.

Every module of grader/ is read (ast, not imported), with every import it makes,
function-level ones included, and those guarded by `if TYPE_CHECKING:` too (a type named is
a dependency, even one that never runs: two modules that name each other's types are one room).
A module may import its own layer or any layer it is declared to sit above.

The layers, top to bottom:

- entry: what a user runs: cli, commands/, batch/ (a class graded, and what leaves it: the gradebook as each LMS
  imports it), gradescope/ (the autograder wrapper and its export), jupyter (`%grade` in a notebook), and two
  modules a command uses: hints (selftest's proof of each catch hint) and watch (`grader check --watch`'s eyes).
  commands/ holds command modules only: each has a main() the command line (or `grader export`) runs.
- grading: one submission graded: grading, loading (the student's code loaded), notebooks
  (a notebook turned into code), catalog (an assignment checked against the registries).
- checks: checks/ (the checks, one module per family, and their runner: checks/runner.py runs them in the order
  their declared reads allow), sabotage/ (the engines a suite runs against), repair/ (one object per grading
  finding the inverse edits and the lesson's line for a rule in the student's code, wherever its backward lives,
  verifying them by a regrade the grading passes in, and attaching them to the result), and lanes/ (the sandboxes
  a grading's checks talk to: lanes/engine, the engine lane;
  lanes/suite, the suite lane's stages, scheduling and outcome, with lanes/run, one run of the tests, and
  lanes/shares, what its threads share; checks/suite starts one) with notebook_suite (how the
  suite lane runs a notebook's tests with its demo cells run once).
- lms (beside): lms/, who each student is in an LMS (its names, ids, roster, groups, late policy, and the cells
  it takes grades back in); it sits above the model only, and only entry uses it (a batch, an export).
- render (beside): render/, which turns a result into text and HTML; it sits above the
  model only, and nothing below entry uses it.
- insight (beside): insight/, what a class got wrong and which submissions look alike, from
  results and code as data; it sits above the model only, and nothing below entry uses it.
- model: what the layers above share: spec, result, programs, files, causes (the misconceptions),
  errors, text, feedback (a result made fit to leave the machine), history (a student's last check, for what
  changed), fileio, csvfile (the one writer of every CSV: cells that are data), classfiles (a graded class's
  gradebook and summary as typed values), final (a student's final score, as every page shows it), folders
  (trees walked and removed within bounds, without recursion), secret, cache (the grader's own cache folder),
  slicing (the cells a notebook's tests need), kit (the starter kit's methods a student's code leaves unwritten,
  and which checks need each), and the grader package itself (its version).
- sandbox (beside): sandbox/ on the host; it knows errors and nothing else of the model.
- inside: sandbox/inside/, the code copied into the sandbox: stdlib only, and the one home
  of what both sides must agree on (the op table, the student's file names, the frames).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "grader"

LAYERS = {
    "entry": (
        "grader.cli",
        "grader.commands",
        "grader.batch",
        "grader.gradescope",
        "grader.jupyter",
        "grader.hints",
        "grader.watch",
    ),
    "grading": ("grader.grading", "grader.loading", "grader.catalog"),
    "checks": ("grader.checks", "grader.sabotage", "grader.repair", "grader.lanes", "grader.notebook_suite"),
    "lms": ("grader.lms",),
    "render": ("grader.render",),
    "insight": ("grader.insight",),
    "model": (
        "grader.spec",
        "grader.result",
        "grader.programs",
        "grader.protocol",
        "grader.suite_replies",  # the wire, host end, for a run of the tests: its reply and its first frames
        "grader.files",
        "grader.causes",
        "grader.errors",
        "grader.text",
        "grader.fileio",
        "grader.folders",
        "grader.secret",
        "grader.cache",  # the grader's own cache folder (kept plans, compiled templates)
        "grader.feedback",
        "grader.history",
        "grader.slicing",
        "grader.csvfile",
        "grader.classfiles",
        "grader.final",  # a student's final score with its history: the grader's, the late penalty, an override
        "grader.notebooks",  # a notebook's format: read, its code cells, what a run of it did (no grading in it)
        "grader.kit",  # the starter kit's methods: which a student's code leaves unwritten, which checks need each
        "grader",
    ),
    "sandbox": ("grader.sandbox",),
    "inside": ("grader.sandbox.inside",),
}
"""Each layer's modules, by name or package prefix (the longest prefix decides)."""

MAY_IMPORT = {
    "entry": {"entry", "grading", "checks", "lms", "render", "insight", "model", "sandbox", "inside"},
    "grading": {"grading", "checks", "model", "sandbox", "inside"},
    "checks": {"checks", "model", "sandbox", "inside"},
    "lms": {"lms", "model", "inside"},
    "render": {"render", "model", "inside"},
    "insight": {"insight", "model", "inside"},
    "model": {"model", "inside"},
    "sandbox": {"sandbox", "inside", "model"},
    "inside": {"inside"},
}
"""The layers each layer may import: its own and those below it."""

SANDBOX_MODEL = {"grader.errors", "grader"}
"""All the model the host side of the sandbox may use."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def layer(module: str) -> str:
    best = max(
        (
            prefix
            for prefixes in LAYERS.values()
            for prefix in prefixes
            if module == prefix or module.startswith(prefix + ".")
        ),
        key=len,
    )
    return next(name for name, prefixes in LAYERS.items() if best in prefixes)


def _known(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> set[str]:
    """The grader modules one module imports (a name imported from a package counts as its submodule
    when there is one). Inside the sandbox, a sibling is imported by its plain name."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    inside = layer(module) == "inside"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
            if inside:
                names = [f"grader.sandbox.inside.{n}" if f"grader.sandbox.inside.{n}" in MODULES else n for n in names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if inside and not node.level and f"grader.sandbox.inside.{base}" in MODULES:
                base = f"grader.sandbox.inside.{base}"
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for name in names:
            if name.split(".")[0] == "grader" and (target := _known(name)) and target != module:
                found.add(target)
    return found


PLUGINS = {("grader", "grader.jupyter")}
"""IPython loads an extension by its package's name: `%load_ext grader` calls grader/__init__.py's
load_ipython_extension, which hands it to grader.jupyter, an entry like cli.py (imported only then)."""

GRAPH = {module: imports(module) - {t for m, t in PLUGINS if m == module} for module in MODULES}


def test_every_module_has_a_layer():
    for module in MODULES:
        assert layer(module) in MAY_IMPORT


def test_no_import_points_up():
    upward = []
    for module, targets in sorted(GRAPH.items()):
        for target in sorted(targets):
            if layer(target) not in MAY_IMPORT[layer(module)]:
                upward.append(f"{module} ({layer(module)}) imports {target} ({layer(target)})")
            elif layer(module) == "sandbox" and layer(target) == "model" and target not in SANDBOX_MODEL:
                upward.append(f"{module} (sandbox) imports {target}, a part of the model it is beside")
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    """Depth-first search; a back edge is a cycle, reported with its path."""
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(GRAPH[module]):
            if state.get(target) == 1:
                cycles.append(" -> ".join(stack[stack.index(target) :] + [target]))
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)
    assert not cycles, "\n".join(cycles)


# -- each name once --------------------------------------------------------------------------------

OP_TABLE = "grader.sandbox.inside.ops"
FILE_NAMES = "grader.sandbox.inside.names"
"""The homes of the operation vocabulary and of the student's file names (the host reads both through
grader.sandbox.inside.ops and grader.files)."""
OP_NAMES = {
    "add",
    "mul",
    "pow",
    "neg",
    "sub",
    "tanh",
    "relu",
    "exp",
    "div",
    "cadd",
    "cmul",
    "csub",
    "cdiv",
    "radd",
    "rmul",
    "rsub",
    "rdiv",
}


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _strings(value) -> bool:
    return (
        isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        or isinstance(value, ast.Tuple)
        and all(_strings(e) for e in value.elts)
    )


def _op_lists(tree: ast.AST):
    """Literal lists of operation names: a tuple, list or set naming three or more, or a table keyed by
    nothing but operation names whose values are names too (RULES, NEEDS, SYMBOL...)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            named = {e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in OP_NAMES}
            if len(named) >= 3:
                yield node.lineno, sorted(named)
        elif isinstance(node, ast.Dict) and len(node.keys) >= 3:
            keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
            if all(k in OP_NAMES for k in keys) and all(_strings(v) for v in node.values):
                yield node.lineno, sorted(keys)


def test_the_operation_vocabulary_is_listed_once():
    found = [
        f"{MODULES[m]}:{line}: {names}"
        for m in sorted(MODULES)
        if m != OP_TABLE
        for line, names in _op_lists(ast.parse(MODULES[m].read_text(encoding="utf-8")))
    ]
    assert not found, "operation names listed outside grader/sandbox/inside/ops.py:\n" + "\n".join(found)


def test_the_student_file_names_are_written_once():
    found = []
    for module in sorted(MODULES):
        if module == FILE_NAMES:
            continue
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        found += [
            f"{MODULES[module]}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and ("micrograd_mine" in node.value or "test_micrograd.py" in node.value)
        ]
    assert not found, "the student's file names written outside grader/sandbox/inside/names.py:\n" + "\n".join(found)


# -- boundaries ------------------------------------------------------------------------------------------------------

TESTS = Path(__file__).resolve().parent


def test_commands_holds_only_command_modules():
    """Each module of grader/commands/ is a command's (a main() that cli.py, or `grader export`, runs): what a
    command uses lives elsewhere (grader/hints.py, grader/watch.py)."""
    plain = [
        module
        for module, path in sorted(MODULES.items())
        if module.startswith("grader.commands.")
        and not any(
            isinstance(node, ast.FunctionDef) and node.name == "main"
            for node in ast.parse(path.read_text(encoding="utf-8")).body
        )
    ]
    assert not plain, f"modules of grader/commands/ with no main(): {plain}"


def test_every_package_is_a_face():
    """A package's __init__.py imports and names what the package offers, and holds no machinery of its own (a
    class or a function): that lives in a module (grader/sabotage/planning.py, not sabotage/__init__.py). IPython's
    extension hook (PLUGINS) is the one function a face holds."""
    found = [
        f"{module}: {node.name}"
        for module, path in sorted(MODULES.items())
        if path.name == "__init__.py"
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and (module, node.name) != ("grader", "load_ipython_extension")
    ]
    assert not found, f"machinery in a package's face: {found}"


def test_tests_import_no_private_name():
    """A test uses the grader through its public names (`from grader.x import _y` reaches past the face)."""
    found = [
        f"{path.name}:{node.lineno}: from {node.module} import {alias.name}"
        for path in sorted(TESTS.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "grader"
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert not found, "\n".join(found)
