"""The engines of one grading (the package's docstring says what they are): the wheats, a mutant of a wheat or of
the student's own engine per operator, the decoy, each disguised and rewritten, and the plan that draws and
orders them."""

from __future__ import annotations

import ast
import functools
import gc
import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

from grader.sabotage import operators  # noqa: F401 - registers every operator
from grader.sabotage.disguise import disguise_tree
from grader.sabotage.mutate import REGISTRY, NotApplicable, Operator
from grader.sabotage.rewrite import rewrite_tree
from grader.sabotage.trees import clone, last_class, unparse

HERE = Path(__file__).parent
WHEATS = {
    "recursive_set": "the lesson's style: children in a set, recursive topological sort",
    "op_table": "no closures: each node stores its operation's name, backward() dispatches on it",
    "slots_exp": "__slots__, tanh computed through exp, subtraction as a + (-b), another float order",
}
SWAPPED = ("Value", "Neuron")
"""What a wheat's run, and each of its mutants', swaps into the student's module."""
OWN_BUDGET = 20_000
"""Characters of the student's engine (as own_block gives it) above which no mutant of it is made: mutating
(once per operator), disguising and rewriting (once per mutant drawn) cost the grader's own process time in
proportion to the engine's size (about 0.2 s of CPU for a plan at the budget, for the worst engine
bench/bench_plan.py knows, 0.4x what it took before issue 44; lesson-style engines are under 5,000)."""


@dataclass(frozen=True)
class Wheat:
    id: str
    description: str
    source: str
    """A whole student-style file: Value, Neuron and numerical_grad."""


@dataclass(frozen=True)
class EngineRun:
    """One engine the student's suite runs on, for one grading."""

    id: str
    """wheat:<wheat id>, <operator id>@<wheat id>, own:decoy, or <operator id>@own."""
    kind: str
    """wheat, sabotage (a wheat's mutant), decoy (the student's engine, rewritten), own (its mutant) or spare (a
    wheat's mutant by the same operator as an own one, which counts in its place should the own one not)."""
    wheat: str
    operator: str | None
    block: str
    """The code appended after the student's own: the engine's imports and its classes."""


@functools.cache
def wheats() -> tuple[Wheat, ...]:
    return tuple(
        Wheat(i, d, (HERE / "engines" / f"wheat_{i}.py").read_text(encoding="utf-8")) for i, d in WHEATS.items()
    )


def all_operators() -> dict[str, Operator]:
    return REGISTRY


@functools.cache
def mutant(operator_id: str, wheat_id: str) -> str | None:
    """The wheat with the operator applied, or None where it does not apply."""
    tree = _mutated(operator_id, wheat_id)
    return None if tree is None else unparse(tree)[:-1]


@functools.cache
def _wheat_tree(wheat_id: str) -> ast.Module:
    """A wheat's tree, parsed once a process and never changed: what is made of it is made of a clone."""
    return ast.parse(next(w for w in wheats() if w.id == wheat_id).source)


@functools.cache
def _mutated(operator_id: str, wheat_id: str) -> ast.Module | None:
    """mutant()'s tree, kept (never changed)."""
    return _mutant_tree(operator_id, wheat_id)


def _mutant_tree(operator_id: str, wheat_id: str) -> ast.Module | None:
    """A new tree of the wheat with the operator applied, or None where it does not apply."""
    tree = clone(_wheat_tree(wheat_id))  # a parse of the wheat's code, for less (issue 44)
    try:
        all_operators()[operator_id].rewrite(tree)
    except NotApplicable:
        return None
    return tree


_UNUSED: dict[tuple[str, str], ast.Module] = {}
"""The mutants of the wheats _applies() made, each until an engine is made of it (then it is that engine's to change):
a plan learns whether every operator applies to every wheat, and runs a third of those mutants (issue 44)."""


@functools.cache
def _applies(operator_id: str, wheat_id: str) -> bool:
    """Whether the operator applies to the wheat, learnt by applying it (issue 20: without unparsing the mutant)."""
    tree = _mutant_tree(operator_id, wheat_id)
    if tree is not None:
        _UNUSED[operator_id, wheat_id] = tree
    return tree is not None


@functools.lru_cache(maxsize=256)
def engine_block(source: str, names: tuple[str, ...]) -> str:
    """The imports and the named classes of an engine's source, to append after a student's code."""
    return ast.unparse(ast.Module(body=_kept(ast.parse(source).body, names), type_ignores=[])) + "\n"


def _kept(body: list[ast.stmt], names: tuple[str, ...]) -> list[ast.stmt]:
    """What engine_block keeps of a module's statements: its imports and the named classes."""
    return [
        n
        for n in body
        if isinstance(n, (ast.Import, ast.ImportFrom))
        and not _is_future(n)
        or isinstance(n, ast.ClassDef)
        and n.name in names
    ]


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


VARIANTS = 4
"""Rewrites kept per engine and grading secret: each grading takes one, by its seed (rewriting is the
costly part of a plan; a batch then rewrites each engine at most this many times)."""


@functools.lru_cache(maxsize=4096)
def _variant(wheat_id: str, operator_id: str | None, salt: str) -> str:
    """A wheat (or its mutant by an operator) as an engine block, disguised and rewritten: the block's tree, cut from
    a new tree of the wheat (or of the mutant), goes through the disguise and the rewrite and is written as code once,
    the same code as when each step read the code the last one wrote (issue 44)."""
    if operator_id is None:
        kept = clone(_kept(_wheat_tree(wheat_id).body, SWAPPED))
    else:
        tree = _UNUSED.pop((operator_id, wheat_id), None) or _mutant_tree(operator_id, wheat_id)
        assert tree is not None, "a wheat is usable only where the operator applies to it"
        kept = _kept(tree.body, SWAPPED)
    return unparse(rewrite_tree(disguise_tree(ast.Module(body=kept, type_ignores=[]), salt), salt))


def own_variant(source: str | ast.Module, salt: str) -> str | None:
    """The student's engine (or a mutant of it), as code or as a tree (which this changes), disguised and rewritten;
    None where their code defeats that."""
    try:
        tree = ast.parse(source) if isinstance(source, str) else source
        return unparse(rewrite_tree(disguise_tree(tree, salt), salt))
    except (SyntaxError, ValueError, TypeError, AttributeError, RecursionError):
        return None


class Plan(list):
    """A grading's engine runs, in the order they run, and notes on what the plan left out and why."""

    notes: tuple[str, ...] = ()


def own_block(source: str) -> str | None:
    """The student's engine as a block to append like any other: their imports, their top-level
    functions (tests aside) and their Value class (the last one defined). None if there is none, or if it
    cannot be written back as code (an int literal of over 4,300 digits, which unparse cannot write)."""
    body = _statements(source)  # a notebook's cells joined: its magics left out, as the .py file has none
    value = last_class(ast.Module(body=body, type_ignores=[]))
    if value is None:
        return None
    kept: list[ast.stmt] = [
        n
        for n in body
        if isinstance(n, (ast.Import, ast.ImportFrom))
        and not _is_future(n)
        or isinstance(n, ast.FunctionDef)
        and not n.name.startswith("test")
        or n is value
    ]
    try:
        return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n"
    except (ValueError, RecursionError):
        return None


NORMALISED_CHARS = 1_000_000
"""Characters of code and tests above which the draw follows the texts as they are, not their definitions: parsing
and unparsing run in the grader's own process (a lesson's engine and tests are under 20,000)."""


def normalised(*texts: str) -> str:
    """What the draw follows (plan's seed and shape): the definitions of the student's code and tests (their
    classes and functions, each as ast unparses it, the last of each name, by name), not the file's format.
    The same engine and tests in a .py file beside its test file and in a notebook's cells, whatever their
    comments, blank lines, imports, prints and magics, give the same text; code with no definition, or none
    that parses, is itself."""
    if sum(len(text) for text in texts) > NORMALISED_CHARS:  # parsed in the grader's own process: bounded
        return "\n".join(texts)
    defined: dict[str, str] = {}
    for text in texts:
        for node in _statements(text):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                defined[node.name] = _unparsed_node(node, text)
    return "\n".join(defined[name] for name in sorted(defined)) if defined else "\n".join(texts)


def _statements(text: str) -> list[ast.stmt]:
    """A text's top-level statements; a notebook cell's IPython lines (magics, shell escapes) left out."""
    for source in (text, "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines())):
        try:
            return ast.parse(source).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return []


def _unparsed_node(node: ast.stmt, text: str) -> str:
    """The definition as ast unparses it; its own lines where it cannot (nesting too deep to unparse)."""
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError, MemoryError):
        return "\n".join(text.splitlines()[node.lineno - 1 : node.end_lineno])


def plan(operator_ids: tuple[str, ...], seed: str, pool: str, own: str | None = None, shape: str | None = None) -> Plan:
    """Every wheat, and one mutant per operator, rewritten and shuffled for this grading. A mutant is
    made from a wheat it applies to or, about one time in two where it applies, from the student's own
    engine (own, from own_block), which then also runs unmutated, rewritten (the decoy). seed (this
    grading's) and pool (the rewrites' salt, the same for every grading) are keyed with the grader's
    secret (grader/secret.py), so a student cannot compute their engines' code. Which mutants are made
    from which engine follows shape (the submission's digest, keyed with nothing; seed when not given):
    the same files then meet the same sabotages, and get the same score, on a student's machine, in a
    batch and on Gradescope, whatever secret each keeps (a mutant of the student's engine may not count,
    so which ones there are changes how many count). An engine of the student's larger than OWN_BUDGET is
    not mutated (every mutant is then a wheat's), and a note says so. A mutant of the student's engine is
    disguised, rewritten and written as code only once drawn; one their code keeps from being made gives way to a
    wheat's, drawn as if it had not been. Each mutant of the student's engine comes with a spare: a wheat's mutant
    by the same operator (its wheat drawn apart, so the other draws stay as they were), which counts in its place
    should it not count (whether it does rests on numbers the student's code computed: only a claim), so how many
    sabotaged engines count is the plan's alone (issue 41)."""
    # A plan makes tens of thousands of tree nodes and drops most of them: their allocations would start the cyclic
    # collector over a hundred times, its passes over the whole grader's objects too, for no cycle among them but a
    # mutant's index of its own nodes (collected after). A quarter of the plan's CPU in a grading's process (issue 44).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _planned(operator_ids, seed, pool, own, shape)
    finally:
        _own_tree.cache_clear()  # the student's engine's tree: not kept past their grading's plan
        if collecting:
            gc.enable()


def _planned(operator_ids: tuple[str, ...], seed: str, pool: str, own: str | None, shape: str | None) -> Plan:
    """plan()'s engines."""
    notes: tuple[str, ...] = ()
    if own is not None and len(own) > OWN_BUDGET:
        notes = (
            f"Your engine's code is {len(own) // 1000} KB, over the {OWN_BUDGET // 1000} KB of code the "
            "grader mutates, so every sabotaged engine was made from a correct engine instead of yours.",
        )
        own = None
    rng = random.Random(hashlib.sha256(f"plan:{shape or seed}".encode()).hexdigest())
    key = hashlib.sha256(f"variants:{seed}".encode()).hexdigest()

    def variant(wheat_id: str, operator_id: str | None) -> str:
        engine_id = f"wheat:{wheat_id}" if operator_id is None else f"{operator_id}@{wheat_id}"
        k = int(hashlib.sha256(f"{key}:{engine_id}".encode()).hexdigest(), 16) % VARIANTS
        return _variant(wheat_id, operator_id, f"{pool}:{engine_id}:{k}")

    runs = [EngineRun(f"wheat:{w.id}", "wheat", w.id, None, variant(w.id, None)) for w in wheats()]
    own_mutants: list[EngineRun] = []
    decoy = own_variant(own, f"{seed}:decoy") if own is not None else None
    for op_id in operator_ids:
        op = all_operators()[op_id]
        # (a decoy is made only from an engine of the student's)
        mine = own_mutated(op, own) if own is not None and decoy is not None and op.replaces == ("Value",) else None
        usable = [w.id for w in wheats() if _applies(op_id, w.id)]
        if mine is not None:  # disguised, rewritten and written as code only once drawn (issue 20)
            drawn = rng.getstate()
            if not usable or rng.random() < 0.5:
                rewritten = own_variant(mine, f"{seed}:{op_id}:own")
                if rewritten is not None:
                    own_mutants.append(EngineRun(f"{op_id}@own", "own", "own", op_id, rewritten))
                    own_mutants += _spare(op_id, usable, shape or seed, variant)
                    continue
                rng.setstate(drawn)  # as when there is no mutant: a wheat's, drawn as if nothing was
        if not usable:
            continue
        wheat_id = rng.choice(usable)
        runs.append(EngineRun(f"{op_id}@{wheat_id}", "sabotage", wheat_id, op_id, variant(wheat_id, op_id)))
    if own_mutants:
        assert decoy is not None, "the student's engine is mutated only when its decoy was made"
        runs += own_mutants + [EngineRun("own:decoy", "decoy", "own", None, decoy)]
    rng.shuffle(runs)
    found = Plan(_spares_after(runs))
    found.notes = notes
    return found


def _spares_after(runs: list[EngineRun]) -> list[EngineRun]:
    """The runs in their order, each spare moved after the mutant it stands for and the decoy, if it came before them:
    whether it runs is decided when its turn comes, from their numbers (checks/suite_runs.py's spares_wanted)."""
    ordered: list[EngineRun] = []
    placed: set[str] = set()
    waiting: list[EngineRun] = []
    for run in runs:
        (waiting if run.kind == "spare" else ordered).append(run)
        placed.add(run.id) if run.kind != "spare" else None
        ready = [w for w in waiting if {f"{w.operator}@own", "own:decoy"} <= placed]
        ordered += ready
        waiting = [w for w in waiting if w not in ready]
    return ordered + waiting


def _spare(op_id: str, usable: list[str], shape: str, variant) -> list[EngineRun]:
    """The spare of a mutant of the student's engine: a wheat's mutant by the same operator (none where the operator
    applies to no wheat), its wheat drawn by a generator of its own."""
    if not usable:
        return []
    wheat_id = random.Random(hashlib.sha256(f"spare:{shape}:{op_id}".encode()).hexdigest()).choice(usable)
    return [EngineRun(f"{op_id}@{wheat_id}", "spare", wheat_id, op_id, variant(wheat_id, op_id))]


def own_mutant(op: Operator, own: str) -> str | None:
    """A mutant of the student's engine (own, from own_block) as code, or None where the operator does not apply
    or the student's code keeps it from being made."""
    tree = own_mutated(op, own)
    return None if tree is None else _unparsed(tree)


def own_mutated(op: Operator, own: str) -> ast.Module | None:
    """own_mutant()'s tree, not yet unparsed (a plan unparses only the mutants it draws): op.mutated(own), on a clone of
    own's tree, which a plan parses once for all its operators (issue 44)."""
    try:
        tree = clone(_own_tree(own))
        op.rewrite(tree)
    except (NotApplicable, SyntaxError, ValueError, TypeError):
        return None
    return tree


@functools.lru_cache(maxsize=1)
def _own_tree(own: str) -> ast.Module:
    """The tree of the student's engine (own, from own_block), never changed: each mutant is made of a clone of it.
    Kept for one plan's operators: plan() forgets it when done."""
    return ast.parse(own)


def _unparsed(tree: ast.Module) -> str | None:
    try:
        return unparse(tree)[:-1]
    except (SyntaxError, ValueError, TypeError):
        return None
