"""A generated class for the class-insight pass: misconceptions shared, and copies disguised.

The engines are the project's own correct ones, each written independently in its own style
(tests/zoo/correct, the sabotage detector's wheats, the reference). A student with a
misconception is one of them with the bug planted by the grader's own mutation (the sabotage
operators; `=` for `+=` in a rule's backward as diagnose replays it). A copy is another student's
file with its local names and free attributes renamed, the methods of `Value` in another order,
re-indented by two spaces instead of four, with comments added and blank lines moved: the same
work, in nothing a text diff would match.

`make_class(folder)` writes the test's class and returns what it holds; `many(count, seed)` gives
`count` submissions for the benchmark: every method drawn from one style or another, names
renamed, a few planted misconceptions and copied pairs.
"""

from __future__ import annotations

import ast
import io
import keyword
import random
import tokenize
from dataclasses import dataclass
from pathlib import Path

from grader.sabotage import all_operators
from grader.sabotage.mutate import replace, rule_updates

ROOT = Path(__file__).resolve().parent.parent
ZOO_CORRECT = sorted((ROOT / "tests" / "zoo" / "correct").glob("*.py"))
WHEATS = sorted((ROOT / "grader" / "sabotage" / "engines").glob("wheat_*.py"))
REFERENCE = (
    (ROOT / "reference" / "engine.py").read_text()
    + "\n"
    + (ROOT / "reference" / "nn.py")
    .read_text()
    .replace("from reference.engine import Value\n", "")
    .replace("from __future__ import annotations\n", "")
)


def styles() -> dict[str, str]:
    """Every independently written correct engine, by name."""
    found = {p.stem: p.read_text() for p in [*ZOO_CORRECT, *WHEATS]}
    found["reference"] = REFERENCE
    return found


KEPT = {
    "self",
    "Value",
    "Neuron",
    "Layer",
    "MLP",
    "data",
    "grad",
    "backward",
    "parameters",
    "numerical_grad",
    "tanh",
    "relu",
    "exp",
    "math",
    "random",
    "uniform",
    "seed",
    "isinstance",
    "float",
    "int",
    "len",
    "range",
    "list",
    "tuple",
    "set",
    "dict",
    "sum",
    "zip",
    "reversed",
    "append",
    "add",
    "pop",
    "extend",
    "super",
    "property",
    "staticmethod",
    "classmethod",
    "id",
    "object",
    "print",
    "max",
    "min",
    "abs",
    "sorted",
    "enumerate",
    "map",
    "any",
    "all",
    "type",
    "hash",
    "assert",
    "nin",
    "nouts",
    "field",
    "dataclass",
    "dataclasses",
    "annotations",
    "__future__",
    "_backward",
    "k",
    "items",
    "get",
    "setdefault",
    "copy",
    "other",
    "out",
    "x",
    "f",
    "h",
    "w",
    "b",
    "zero_grad",
    "deque",
    "collections",
    "popleft",
    "defaultdict",
    "__slots__",
    "slots",
    "eq",
    "exponent",
    "label",
    "count",
}
"""Names a copy keeps: the API the grader calls, builtins and what the lesson's library calls."""


def mutate(source: str, cause: str) -> str:
    """The engine with one misconception planted: a sabotage operator's, or `=` for `+=` in a rule."""
    if cause.startswith("assign_in_"):
        tree = ast.parse(source)
        rule = cause.removeprefix("assign_in_")
        updates = rule_updates(tree, rule)
        assert updates, f"no update in {rule}'s backward"
        for update in updates:
            replace(tree, update, ast.Assign([update.target], update.value))
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    return all_operators()[cause].apply(source) + "\n"


def _free_names(source: str) -> set[str]:
    tree = ast.parse(source)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("__"):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr.startswith("_"):
            names.add(node.attr)
    return {n for n in names if n not in KEPT and not keyword.iskeyword(n) and not n.startswith("__")}


def rename(source: str, rng: random.Random) -> str:
    """Every local name, argument, helper and private attribute renamed, consistently (tokens, not text)."""
    free = sorted(_free_names(source))
    words = [
        "node",
        "seen",
        "order",
        "res",
        "acc",
        "tmp",
        "cur",
        "val",
        "kids",
        "prev",
        "lst",
        "stack2",
        "vis",
        "ordering",
        "result",
        "grads",
        "child",
        "parent",
        "item",
        "thing",
        "elem",
        "buf",
        "q",
        "nodes_",
    ]
    rng.shuffle(words)
    mapping = {
        name: f"{words[i % len(words)]}{i}" if not name.startswith("_") else f"_{words[i % len(words)]}{i}"
        for i, name in enumerate(free)
    }
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string in mapping:
            tok = tok._replace(string=mapping[tok.string])
        elif tok.type == tokenize.STRING and tok.string[1:-1] in mapping:  # __slots__ names its attributes
            tok = tok._replace(string=tok.string[0] + mapping[tok.string[1:-1]] + tok.string[-1])
        out.append(tok)
    return tokenize.untokenize(out)


def reorder(source: str, rng: random.Random) -> str:
    """The methods of Value (but __init__) in a shuffled order, each moved whole with its decorators."""
    tree = ast.parse(source)
    lines = source.splitlines()
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Value")
    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name != "__init__"]
    if len(methods) < 3:
        return source
    spans = [(min([m.lineno] + [d.lineno for d in m.decorator_list]) - 1, m.end_lineno) for m in methods]
    first, last = spans[0][0], spans[-1][1]
    blocks = [lines[a:b] for a, b in spans]
    between = [
        line
        for i in range(len(spans) - 1)
        for line in lines[spans[i][1] : spans[i + 1][0]]
        if line.strip() and not line.strip().startswith("#")
    ]  # attributes between methods stay, first
    shuffled = blocks[:]
    while shuffled == blocks:
        rng.shuffle(shuffled)
    body = between + [line for block in shuffled for line in ("", *block)]
    return "\n".join(lines[:first] + body + lines[last:]) + "\n"


COMMENTS = [
    "# chain rule",
    "# local derivative times the gradient flowing in",
    "# TODO tidy",
    "# see lecture",
    "# works now",
    "# careful here",
    "# from my notes",
]


def reformat(source: str, rng: random.Random) -> str:
    """Two-space indents for four (or four for two), comments added and removed, blank lines dropped and added:
    the layout changed."""
    out = []
    unit = min((len(line) - len(line.lstrip(" ")) for line in source.splitlines() if line.startswith(" ")), default=4)
    wider = 2 if unit >= 4 else 4
    for line in source.splitlines():
        stripped = line.lstrip(" ")
        if not stripped:
            if rng.random() < 0.5:
                continue
            out.append("")
            continue
        if stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        indent = indent // unit * wider if indent % unit == 0 else indent
        line = " " * indent + stripped
        if stripped.endswith(":") and rng.random() < 0.2:
            out.append(line)
            out.append(" " * (indent + wider) + rng.choice(COMMENTS))
            continue
        out.append(line)
        if rng.random() < 0.1:
            out.append("")
    return "\n".join(out) + "\n"


def copy_of(source: str, seed: int) -> str:
    """Another student's engine, disguised: renamed, reordered, reformatted. It still compiles."""
    rng = random.Random(seed)
    disguised = reformat(reorder(rename(source, rng), rng), rng)
    ast.parse(disguised)
    return disguised


@dataclass(frozen=True)
class Planted:
    """What a generated class holds, so a test can say what the class page must show."""

    causes: dict[str, list[str]]
    """Each planted misconception's students."""
    copies: list[tuple[str, str]]
    """The copied pairs (original, copy)."""
    honest: list[str]
    """Students with independently written correct engines."""


MISCONCEPTIONS = {
    "assign_in_mul": ["dataclass_style", "kahn"],
    "tanh_grad_from_input": ["wheat_op_table"],
    "pow_off_by_one": ["labels_float_order"],
    "topo_not_reversed": ["wheat_slots_exp"],
    "relu_negative_grad": ["reference"],
}
"""The test class: each of 5 misconceptions planted in engines of different styles (so no two are copies)."""
HONEST = ["list_iterative", "wheat_recursive_set"]
"""The test class's correct engines: the two styles most alike of all (their structure scores highest)."""


def make_class(folder: Path) -> Planted:
    """The test's class, one .py file per student: 6 students with a misconception, 2 of them copied by
    another; 2 honest correct engines and a copy of one."""
    folder.mkdir(parents=True, exist_ok=True)
    every = styles()
    causes: dict[str, list[str]] = {}
    copies = []
    for cause, names in MISCONCEPTIONS.items():
        for name in names:
            student = name.replace("_", "").replace("reference", "refstyle")
            (folder / f"{student}.py").write_text(mutate(every[name], cause))
            causes.setdefault(cause, []).append(student)
    for name in HONEST:
        (folder / f"{name.replace('_', '')}.py").write_text(every[name])
    for seed, original in enumerate(("dataclassstyle", "wheatslotsexp", "listiterative"), 1):
        copy = f"copier{seed}"
        (folder / f"{copy}.py").write_text(copy_of((folder / f"{original}.py").read_text(), seed))
        copies.append((original, copy))
        for students in causes.values():
            if original in students:
                students.append(copy)
    return Planted(causes, copies, [n.replace("_", "") for n in HONEST])


class _Habits(ast.NodeTransformer):
    """A student's own small habits: operands of + and * the other way round, `x = x + y` for `x += y`, a
    stray statement here and there. Each student's differ, so no two honest files are alike everywhere."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, (ast.Add, ast.Mult)) and self.rng.random() < 0.3:
            node.left, node.right = node.right, node.left
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if self.rng.random() < 0.2 and isinstance(node.target, (ast.Name, ast.Attribute)):
            load = ast.parse(ast.unparse(node.target), mode="eval").body
            return ast.Assign([node.target], ast.BinOp(load, node.op, node.value))
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        if self.rng.random() < 0.3:
            stray = ast.parse(self.rng.choice(["assert True", "pass", "_unused = None", "n_calls = 0"])).body[0]
            node.body.insert(self.rng.randrange(len(node.body) + 1), stray)
        return node


def own_version(source: str, rng: random.Random) -> str:
    """The engine as one more student of the same lesson might write it: their habits, names and layout."""
    tree = _Habits(rng).visit(ast.parse(source))
    return copy_of(ast.unparse(ast.fix_missing_locations(tree)) + "\n", rng.randrange(1 << 30))


def many(
    count: int, seed: int = 0, copies: int = 50
) -> tuple[list[tuple[str, str, str | None]], list[tuple[str, str]]]:
    """`count` submissions for the benchmark, [(student, code, planted cause or None)], and the copied pairs:
    each student a style of the lesson in their own version, one in five with a misconception, and `copies`
    students who copied another's file (disguised)."""
    rng = random.Random(seed)
    every = styles()
    names = sorted(every)
    causes = [
        "assign_in_mul",
        "assign_in_add",
        "tanh_grad_from_input",
        "pow_off_by_one",
        "relu_negative_grad",
        "mul_own_data",
        "add_half",
    ]
    students: list[tuple[str, str, str | None]] = []
    for i in range(count - copies):
        source = every[rng.choice(names)]
        cause = rng.choice(causes) if rng.random() < 0.2 else None
        if cause:
            try:
                source = mutate(source, cause)
            except Exception:
                cause = None
        students.append((f"s{i:04d}", own_version(source, rng), cause))
    pairs = []
    for j in range(copies):
        original = rng.choice(students)
        copy = f"c{j:04d}"
        students.append((copy, copy_of(original[1], rng.randrange(1 << 30)), original[2]))
        pairs.append((original[0], copy))
    return students, pairs
