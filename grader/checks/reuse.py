"""accumulate's evidence through an operation whose own rule is wrong: the sum of the engine's own paths.

A value used twice must get the sum of what each use gives it, whatever each use's rule computes. So
where an operation's rule is wrong (its own check fails), a value used twice through it is still judged:
the same program with the second use read from a new leaf of the same value gives, on the student's own
engine, each path's gradient apart; used twice, the value must get their sum. A rule that is wrong but
adds (+=) keeps this; `=` for `+=` breaks it. The rule's own mistake is its check's to charge, never
accumulate's.
"""

from __future__ import annotations

import math

from grader.checks.context import Context
from grader.checks.judging import Verdict, error_verdict, shown
from grader.feedback import numbers
from grader.programs import Program, default_names
from grader.sandbox.inside.ops import BINARY, CONSTANT_FIRST


def _slots(ins: tuple) -> list[int]:
    """The positions in an instruction that hold node indices."""
    op = ins[0]
    if op == "leaf":
        return []
    if op in BINARY:
        return [1, 2]
    return [2] if op in CONSTANT_FIRST else [1]


def split(program: Program, node: int = 0) -> tuple[Program, int] | None:
    """The program with the last read of the leaf `node` taken from a new leaf of the same value, placed just
    before the instruction reading it, and that new leaf's index; None when the leaf is read only once."""
    reads = [(k, slot) for k, ins in enumerate(program) for slot in _slots(ins) if ins[slot] == node]
    if len(reads) < 2 or program[node][0] != "leaf":
        return None
    at, last = reads[-1]
    out: list[tuple] = list(program[:at]) + [("leaf", program[node][1])]
    for k, ins in enumerate(program[at:], at):
        moved = list(ins)
        for slot in _slots(ins):
            moved[slot] = ins[slot] + 1 if ins[slot] >= at else ins[slot]
        if k == at:
            moved[last] = at
        out.append(tuple(moved))
    return tuple(out), at


def judge_many(ctx: Context, programs: list[Program], seed: bool) -> tuple[Verdict | None, list[Program]]:
    """The first program on which the value used twice (node 0) does not get the sum of its paths' gradients,
    as the student's engine computes each path apart (None when every one does), and the programs judged."""
    pairs = [(p, s) for p in programs if (s := split(p)) is not None]
    answers = ctx.student.run_many([q for p, (s, _) in pairs for q in (p, s)], seed=seed, every=True)
    judged: list[Program] = []
    for k, (program, (apart, new)) in enumerate(pairs):
        together, each = answers[2 * k], answers[2 * k + 1]
        if together is None or each is None:
            break  # the student's process stopped: nothing after it is known
        verdict = _verdict(ctx, program, apart, new, together, each)
        if verdict is not None:
            return verdict, judged
        if not _unbounded(each, new):
            judged.append(program)
    return None, judged


def _unbounded(each, new: int) -> bool:
    """Did a path, computed apart, give the value used twice nan or an infinite gradient: no sum to judge
    against? A rule whose numbers are nan or infinite (its own check's to charge) leaves nothing of accumulate
    to see."""
    return each.grad is not None and any(
        isinstance(g, float) and not math.isfinite(g) for g in (each.grad[0], each.grad[new])
    )


def _verdict(ctx: Context, program: Program, apart: Program, new: int, together, each) -> Verdict | None:
    names = default_names(program)
    for got, built in ((together, program), (each, apart)):
        if got.failure is not None or got.error is not None:
            return error_verdict(built, got, default_names(built), "building the expression and calling backward()")
    first, second = each.grad[0], each.grad[new]
    if not (isinstance(first, float) and isinstance(second, float)):
        return None  # not numbers: the rule checks say so
    if _unbounded(each, new):
        return None  # nan or inf through a path: no sum to judge against (the rule checks say so), and no evidence
    summed, got = first + second, together.grad[0]
    if ctx.close(summed, got):
        return None
    a = names[0]
    one, two = numbers(shown(first))[0], numbers(shown(second))[0]
    should, gives = numbers(summed, shown(got))
    what = (
        f"{a} is used twice, so {a}.grad should be the sum of what each use gives it: your engine gives {a} {one} "
        f"through one use and {two} through the other (each computed apart, the other use reading a Value of the "
        f"same number), so {a}.grad should be {should}, but it gives {gives}"
    )
    return Verdict(
        program,
        "failed",
        what,
        {f"{a}.grad": shown(summed)},
        {f"{a}.grad": shown(got)},
        names=tuple(names),
    )


# A value used twice through each operation: x op x for the binary ones, f(x) combined with x
# for the others. Built only from operations that work on their own.
def reuse_sweep(ctx: Context, ops: tuple[str, ...]) -> list[Program]:
    f = ctx.features
    working = set(ops)
    found: list[Program] = []
    for op in BINARY if f.depth else ("add", "mul"):  # - and / are nested inside
        if op in working:
            found.append((("leaf", 1.5), (op, 0, 0)))
    if not f.depth:
        return found
    combine = next((op for op in ("add", "mul") if op in working), None)
    if combine is None:
        return found
    for op, ins in (
        ("pow", ("pow", 0, 2)),
        ("tanh", ("tanh", 0)),
        ("relu", ("relu", 0)),
        ("exp", ("exp", 0)),
        ("neg", ("neg", 0)),
    ):
        if op in working and op in ctx.assignment.ops:
            found.append((("leaf", 1.5), ins, (combine, 1, 0)))
            found.append(
                (("leaf", 0.7), ins, ("leaf", -2.0), (combine, 1, 2), ("mul" if "mul" in working else combine, 3, 0))
            )
    return found
