"""The preflight: what the student's engine can build, and which of its basics can be trusted.

Each check judges only what the engine can build and charges only the piece it is about.
Probing `tanh` inside `tanh(a*b + c) * k` is only fair when `*`, `+`, nesting and the
output's seed work; otherwise a bug in `*` would fail the tanh check too. So before the
checks, one batch of fixed probes finds out:

- which operations exist and compute the right value on their own (the op inventory: a
  missing `tanh` fails `forward` and `tanh`, and nothing that merely uses tanh);
- whether backward() seeds the output's gradient with 1, or raises unless it is set by hand
  (if not, the rule checks seed it themselves, and the missing seed is charged to the
  lesson's full runs: hand_examples, gradcheck, training);
- whether backward() runs any rule at all, whether two different nodes holding equal
  numbers are told apart, whether nesting, a value used twice, and shared nodes work;
- whether backward() ends at all: when `a + b` runs out of time, a lone Value (no rule to
  run) and `a * b` are tried, and if backward() hangs on those too, every check that calls
  it is skipped with one message instead of each waiting out its own time limit.

A broken basic is still judged, by the check named for it; the others leave it out of
their expressions, or, when they cannot do without it, are skipped and say which basic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grader.causes import CAUSES
from grader.checks import direct
from grader.checks.cases import EQUAL_DATA, LEAVES, SINGLE, chain, diamond
from grader.checks.context import Context, reference_run
from grader.checks.judging import compare_many
from grader.protocol import Observation


@dataclass(frozen=True)
class Features:
    add: bool
    """a + b on two leaves gives both gradient 1."""
    mul: bool
    """a * b on two leaves gives each the other's data."""
    chain_op: str | None
    """The operation the structural probes used (add if it works, else mul)."""
    depth: bool
    """Nested expressions backpropagate in the right order."""
    mul_inner: bool
    """* multiplies by the incoming gradient when it is not 1."""
    reuse: bool
    """A leaf used twice gets both contributions (a + a)."""
    share: bool
    """An intermediate node used twice is processed once, with both contributions."""
    working: tuple[str, ...] = ()
    """Operations that build, compute the right value and backpropagate without raising."""
    broken: dict[str, str] = field(default_factory=dict)
    """Operations that do not: op -> what went wrong, in a few words."""
    seed_missing: bool = False
    """backward() leaves the output's gradient at 0: probes must seed it themselves."""
    backward_inert: bool = False
    """backward() changes no gradient at all, even with the output seeded."""
    equal_data_merged: bool = False
    """Two different nodes holding equal numbers are treated as one (equality or hash by data)."""
    backward_hangs: str = ""
    """backward() never ended on the smallest expressions: the code that shows it, else empty."""
    reused_by: tuple[str, ...] = ()
    """The operations of + and * through which a leaf used twice (a + a, a * a) gets both contributions."""
    add_inner: bool = True
    """+ is not seen to forget the incoming gradient when it is not 1 ((a + b) * c, where * can be trusted)."""
    alone: dict[str, bool] = field(default_factory=dict)
    """Each operation whose rule could be judged on its own (its output's own backward called alone, under
    incoming gradients other than 1: checks/direct.py): whether it is right."""
    absent: tuple[str, ...] = ()
    """Operations the engine does not have yet: not defined at all (Python itself finds no method for them, as `-a`
    with no __neg__) or not written (the kit's NotImplementedError), or that raise only because one of those is
    missing (a - b written a + (-b)). Each is its own rule check's charge, once."""

    def trusted(self, *ops: str) -> tuple[str, ...]:
        """Those of ops that work wherever they appear in an expression: right on two leaves, and right under an
        incoming gradient other than 1, judged on its own where it can be, else inside (a + b) * c, (a * b) * c."""
        usable = {
            "add": self.add and self.alone.get("add", self.add_inner),
            "mul": self.mul_inner and self.alone.get("mul", True),
        }
        return tuple(op for op in ops if usable.get(op, False))

    def wrong(self, op: str) -> bool:
        """Is there evidence that + or * (op) has a wrong rule: on two leaves, on its own under an incoming gradient
        other than 1, or inside (a + b) * c, (a * b) * c where nesting works? (Not trusted is not wrong: where
        nested expressions do not backpropagate in order, nothing is trusted inside them, and nothing is known.)"""
        if op == "add":
            return not self.add or self.alone.get("add") is False or not self.add_inner
        if op == "mul":
            return not self.mul or self.alone.get("mul") is False or (self.depth and not self.mul_inner)
        return False

    def nested(self) -> int:
        return 5 if self.depth else 1

    def limits(self) -> str:
        """A sentence saying which structures were left out, and why, for the feedback."""
        if not self.depth:
            return (
                " (Note: only single operations on leaves were probed, because nested expressions do not "
                "backpropagate correctly: see topo_order.)"
            )
        return ""


def preflight(ctx: Context) -> Features:
    """Judge every probe the preflight may need, in one request (a hang or crash leaves the rest unjudged)."""
    ops = [op for op in ctx.assignment.ops if op in SINGLE]
    singles = [SINGLE[op] for op in ops]
    add2, mul2 = SINGLE["add"], SINGLE["mul"]
    mul_in = LEAVES[:3] + (("mul", 0, 1), ("mul", 3, 2))
    add_in = LEAVES[:3] + (("add", 0, 1), ("mul", 3, 2))
    structural = [mul_in, add_in, EQUAL_DATA] + [
        p for op in ("add", "mul") for p in (chain(op), LEAVES[:1] + ((op, 0, 0),), diamond(op))
    ]
    unseeded = ctx.student.run_many([add2, mul2], every=True)
    hangs = _hangs(ctx, unseeded)
    if hangs:  # nothing else is worth asking: every probe would wait out its time limit
        return Features(False, False, None, False, False, False, False, backward_hangs=hangs)
    seed_missing = _seed_missing(unseeded)
    if not seed_missing and unseeded and all(o is not None and o.error for o in unseeded):
        # backward() raises unless the output's grad is set by hand (the lesson's first half: grad = None and
        # "Missing grad value"): the missing seed again, if seeding it by hand is all it takes.
        seed_missing = any(o is not None and o.ok for o in ctx.student.run_many([add2, mul2], seed=True, every=True))
    probes = list(dict.fromkeys(singles + structural))
    answers = _answered(ctx, probes, seed_missing)
    verdicts = compare_many(ctx, probes, answers=answers)

    def ok(program) -> bool:
        return program in verdicts and verdicts[program] is None

    working, broken = [], {}
    for op, program in zip(ops, singles):
        got = answers.get(program)
        if got is None:
            broken[op] = "not reached"
        elif not got.ok:
            broken[op] = f"raised {got.error.type}" if got.error else "stopped"
        elif not ctx.close(_output(reference_run(program)), _output(got)):
            broken[op] = "computes a wrong value"
        else:
            working.append(op)
    inert = _inert(answers, ops, singles)
    add, mul = ok(add2), ok(mul2)
    chain_op = "add" if add else "mul" if mul else None
    equal_merged = add and mul and ok(mul_in) and not ok(EQUAL_DATA)
    common: dict[str, Any] = dict(
        working=tuple(working),
        broken=broken,
        seed_missing=seed_missing,
        backward_inert=inert,
        equal_data_merged=equal_merged,
        reused_by=tuple(op for op in ("add", "mul") if ok(LEAVES[:1] + ((op, 0, 0),))),
        alone=_alone(ctx, working),
        absent=_absent(ops, singles, answers),
    )
    if chain_op is None:
        return Features(add, mul, None, False, False, False, False, **common)
    depth = ok(chain(chain_op))
    reuse = ok(LEAVES[:1] + ((chain_op, 0, 0),))
    mul_inner = mul and depth and ok(mul_in)
    share = depth and reuse and ok(diamond(chain_op))
    add_inner = not mul_inner or ok(add_in)  # where * cannot be trusted, (a + b) * c shows nothing of +
    return Features(add, mul, chain_op, depth, mul_inner, reuse, share, add_inner=add_inner, **common)


def _alone(ctx: Context, working: list[str]) -> dict[str, bool]:
    """Each working operation's rule judged on its own, where its output's own backward can be called alone."""
    found = {op: direct.right_alone(ctx, op) for op in working if op in direct.CASES}
    return {op: right for op, right in found.items() if right is not None}


ABSENT = {"AttributeError": "has no attribute", "TypeError": "operand type"}
"""What Python itself raises when a class defines no method for an operation: no attribute `tanh`, no
`__neg__` ("bad operand type for unary -"), no `__add__` ("unsupported operand type(s) for +")."""


def _absent(ops: list[str], singles: list, answers: dict) -> tuple[str, ...]:
    """The operations the engine does not have yet: on its smallest case, Python raised that it finds no method,
    from none of the student's own lines, or the student's method said it is not written (the starter kit's
    NotImplementedError); and those that raise the very same error from the student's code (a - b written
    a + (-b), with no __neg__)."""
    errors = {op: got.error for op, p in zip(ops, singles) if (got := answers.get(p)) is not None and got.error}
    none = {
        (e.type, e.message)
        for e in errors.values()
        if e.type == "NotImplementedError"
        or (e.type in ABSENT and ABSENT[e.type] in e.message and 'File "' not in e.traceback and not e.raised_in)
    }
    return tuple(op for op, e in errors.items() if (e.type, e.message) in none)


ROUNDS = 3
"""Requests the preflight makes for its probes: a probe that hangs or kills the process (one rule's loop) is
answered by that failure, and those after it are asked again, so one rule's hang leaves the others known."""


def _answered(ctx: Context, probes: list, seed: bool) -> dict:
    answers: dict = {}
    todo = probes
    for _ in range(ROUNDS):
        got = ctx.student.run_many(todo, seed=seed, every=True)
        answers.update((p, o) for p, o in zip(todo, got, strict=True) if o is not None)
        todo = [p for p, o in zip(todo, got, strict=True) if o is None]
        if not todo:
            break
    return answers


def _hangs(ctx: Context, unseeded) -> str:
    """The code on which backward() never ends, when it ends on neither a lone Value (no rule to run) nor
    both of a + b and a * b; else empty. A hang in one rule alone is that rule check's to report. The code holds
    every case waited for, each its request_s, in the order they were tried (a student waited for each)."""

    def timed_out(observation) -> bool:
        return observation is not None and observation.failure is not None and observation.failure.kind == "timeout"

    if not timed_out(unseeded[0]):
        return ""
    a, b = LEAVES[0][1], LEAVES[1][1]
    add = f"c = Value({a}) + Value({b})\nc.backward()"
    if timed_out(ctx.student.run(LEAVES[:1])):
        return f"{add}\na = Value({a})\na.backward()"
    if timed_out(unseeded[1] if unseeded[1] is not None else ctx.student.run(SINGLE["mul"])):
        return f"{add}\nd = Value({a}) * Value({b})\nd.backward()"
    return ""


def _seed_missing(unseeded) -> bool:
    """Does backward() leave the output's gradient at 0 (where it should be 1)?"""
    grads = [o.grad[-1] for o in unseeded if o is not None and o.ok]
    return bool(grads) and all(g == 0.0 for g in grads)


def _inert(answers, ops, singles) -> bool:
    """Does backward() change no leaf's gradient for any operation that builds?"""
    leaf_grads = [
        g
        for op, program in zip(ops, singles)
        if (got := answers.get(program)) is not None and got.ok
        for i, g in enumerate(got.grad)
        if program[i][0] == "leaf"
    ]
    return bool(leaf_grads) and all(g == 0.0 for g in leaf_grads)


def basic_cause(f: Features):
    """The preflight's own finding, when it explains any wrong gradient of the lesson's full runs."""
    if f.backward_inert:
        return CAUSES["backward_inert"]
    if f.seed_missing:
        return CAUSES["missing_seed"]
    return None


def _output(run: Observation | None) -> Any:
    """The output's data of a run that went well (the reference's on these programs, all in its domain)."""
    assert run is not None and run.data is not None, "a run that went well has its numbers"
    return run.data[-1]
