"""A verified repair shown on the lesson's engine (the reteach notebook), never on a student's file.

The students' repairs were each found in, and verified on, their own code; what the class is shown is the same
edit on the lesson's engine: the misconception planted there by the mutation that plants it for the grader
(a sabotage operator, the replays of checks/diagnose.py; for a reflected operator left out, the method
deleted; for pow's exponent, x**(k - 1) written x**k in __pow__'s backward), then the inverse edit
(inverse.py) found in that mutant, as it would be in a student's file. The edit is shown only when it gives
the lesson's engine back: its own syntax tree, or, where the edit writes the rule another way (a seed line
before the loop), an engine whose gradients are the lesson's on the grader's discriminating programs. The
lines are the lesson's engine as Python's ast writes it back (comments left out).
"""

from __future__ import annotations

import ast
import functools
import math
import types
from collections.abc import Callable

from grader.errors import NotApplicable
from grader.repair.inverse import DELEGATIONS, edit_for
from grader.result import Change
from grader.sabotage.trees import last_class, last_method, unparse

Mutation = Callable[[ast.Module], None]


def _removed(name: str) -> Mutation:
    """A reflected operator left out: the method deleted from the engine's Value."""

    def mutate(tree: ast.Module) -> None:
        cls = last_class(tree)
        found = last_method(cls, name)
        if cls is None or found is None:
            raise NotApplicable(f"no {name}")
        cls.body.remove(found)

    return mutate


def _exponent_kept(tree: ast.Module) -> None:
    """k * x**k for k * x**(k - 1) in __pow__'s backward (the lesson's writes it through a local, which the
    grader's pow_off_by_one operator leaves alone)."""
    pow_ = last_method(last_class(tree), "__pow__")
    inner = [n for n in ast.walk(pow_) if isinstance(n, ast.FunctionDef) and n is not pow_] if pow_ else []
    count = 0
    for node in (n for fn in inner for n in ast.walk(fn)):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)):
            continue
        right = node.right
        if (
            isinstance(right, ast.BinOp)
            and isinstance(right.op, ast.Sub)
            and ast.dump(right.right) == ast.dump(ast.Constant(1))
        ):
            node.right = right.left
            count += 1
    if not count:
        raise NotApplicable("no x ** (k - 1) in __pow__'s backward")


def _mutations(cause: str) -> list[Mutation]:
    """The mutations that plant the cause in a correct engine, in the order tried."""
    from grader.checks.diagnose import SIMULATED  # the grader's replays; imported when a notebook is made
    from grader.sabotage import all_operators

    found = [fn for cause_id, fn in SIMULATED if cause_id == cause]
    found += [op.rewrite for op in all_operators().values() if op.cause.id == cause]
    if cause.removeprefix("missing_") in DELEGATIONS:
        found.append(_removed(cause.removeprefix("missing_")))
    if cause == "pow_off_by_one":
        found.append(_exponent_kept)
    return found


@functools.cache
def on_lesson(cause: str, engine: str) -> tuple[Change, ...]:
    """The changes a verified repair of the cause makes, on the lesson's engine with the cause planted: each
    change's `before` is the line as a student got it wrong, its `after` the line as the repair writes it.
    Empty when the cause cannot be planted in this engine, or its edit there does not give the engine back."""
    try:
        lesson = ast.parse(engine)
    except SyntaxError:
        return ()
    for mutant in _mutants(cause, engine):
        edit = edit_for(mutant, cause)
        if edit is None:
            continue
        try:
            fixed = ast.parse(edit.applied(mutant))
        except (SyntaxError, ValueError):
            continue
        if ast.dump(fixed) == ast.dump(lesson) or _same_gradients(fixed, lesson):
            return edit.changes
    return ()


def _mutants(cause: str, engine: str):
    """The lesson's engine with the cause planted, each way it can be, as text."""
    if cause == "children_not_tuple":  # (self,) written (self): the tree of self, told apart only by its text
        normal = unparse(ast.parse(engine))
        dropped = _one_tuple_dropped(normal)
        if dropped != normal:
            yield dropped
        return
    for mutate in _mutations(cause):
        tree = ast.parse(engine)
        try:
            mutate(tree)
        except NotApplicable:
            continue
        yield unparse(tree)


def _one_tuple_dropped(source: str) -> str:
    """The engine with the children of tanh's output written (self) rather than (self,)."""
    tanh = source.find("def tanh(")
    at = source.find("(self,)", tanh)
    return source if tanh < 0 or at < 0 else source[:at] + "(self)" + source[at + len("(self,)") :]


def _same_gradients(fixed: ast.Module, lesson: ast.Module) -> bool:
    """Does the edited engine (the grader's own code, never a student's) give the lesson's engine's data and
    gradients on every discriminating program, its own backward() seeding the output?"""
    from grader.checks.cases import DISCRIMINATING
    from grader.sandbox.inside import probes

    built = []
    for tree in (fixed, lesson):
        namespace: dict = {}
        try:
            exec(compile(tree, "<lesson>", "exec"), namespace)  # the lesson's engine, edited: never a student's
        except Exception:
            return False
        built.append(types.SimpleNamespace(**namespace))
    for program in DISCRIMINATING:
        try:
            got, want = (probes.evaluate(program, module.Value, True, None, False) for module in built)
        except Exception:
            return False
        pairs = list(zip(got["data"] + got["grad"], want["data"] + want["grad"], strict=True))
        if not all(isinstance(a, float) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in pairs):
            return False
    return True
