"""The forward check: every operation computes the right value, with plain numbers on either side (2 + a calls
__radd__), each wrong one shown on its smallest case; then a search of nested expressions."""

from __future__ import annotations

from dataclasses import replace

from grader.checks.context import Context
from grader.checks.evidence import Evidence, listed, listed_ops, word
from grader.checks.judging import Probe, Verdict, compare_many, judged
from grader.checks.registry import check
from grader.checks.searching import HINTS, run_search
from grader.checks.strategies import Shape, forward_ops, single_operations
from grader.programs import Program, default_names, expression
from grader.result import Outcome
from grader.sandbox.inside.ops import NEEDS, RULE_CHECK


@check("forward", "Operations compute the right values (with plain numbers on either side)")
def forward(ctx: Context) -> Outcome:
    ops = forward_ops(ctx.assignment.ops)
    sweep = list(single_operations(ops))
    todo = [program for program in sweep if judged(program, "data")]
    verdicts = compare_many(
        ctx, sweep, Probe("data"), dict(zip(todo, ctx.student.run_many(todo, False, every=True), strict=False))
    )
    first: dict[str, Verdict] = {}  # each operation's smallest failing case (the sweep goes simplest first)
    for program in sweep:
        verdict = verdicts.get(program)
        if verdict is not None and verdict.failure is not None:  # the process failed: nothing after it is known
            return verdict.outcome(HINTS["forward"], "On the smallest failing case, ")
        if verdict is not None:
            first.setdefault(program[-1][0], verdict.explained(ctx))
    absent = _charged_elsewhere(ctx, first, todo)
    first = {op: verdict for op, verdict in first.items() if NEEDS.get(op, op) not in absent}
    if first:
        return _counted_elsewhere(_every_operation(list(first.values())), absent)
    ops = tuple(op for op in ops if NEEDS.get(op, op) not in absent)
    outcome = run_search(ctx, "forward", Shape(ops=ops, max_ops=4, reuse_leaves=True, share_nodes=True), Probe("data"))
    forms = (program[-1][0] for program in todo if NEEDS.get(program[-1][0], program[-1][0]) not in absent)
    settled = Evidence(tuple(dict.fromkeys(map(_form, forms))) + ("nested expressions",)).settle(outcome)
    return _counted_elsewhere(settled, absent) if settled.status == "passed" else settled


def _charged_elsewhere(ctx: Context, failing: dict[str, Verdict], probed: list[Program]) -> tuple[str, ...]:
    """The operations forward leaves to their own rule checks: those the engine does not have yet (the
    preflight's finding), each charged once, by the check named for it. None when no operation works: forward
    passes only on what it probed."""
    if not failing:
        return ()
    absent = tuple(op for op in ctx.features.absent if op in RULE_CHECK)
    works = any(NEEDS.get(p[-1][0], p[-1][0]) not in absent and p[-1][0] not in failing for p in probed)
    return absent if works else ()


def _counted_elsewhere(outcome: Outcome, absent: tuple[str, ...]) -> Outcome:
    """forward's outcome, saying which operations it left to their own checks."""
    if not absent:
        return outcome
    one = len(absent) == 1
    checks = listed(list(dict.fromkeys(RULE_CHECK[op] for op in absent)))
    said = (
        f"\n{listed_ops(absent)} cannot be built yet (no method for {'it' if one else 'them'}, or for what "
        f"{'it is' if one else 'they are'} built from, is written yet): counted once, by {checks}."
    )
    return replace(outcome, feedback=outcome.feedback + said)


def _form(op: str) -> str:
    """An operation's name in the forward check's evidence (cadd: + with a plain number)."""
    return f"{word(NEEDS[op])} with a plain number" if op in NEEDS else word(op)


def _every_operation(found: list[Verdict]) -> Outcome:
    """forward's outcome when operations are wrong: every one of them, each once, on its smallest case (one
    line for those that raise the same error); the first one's case is the counterexample, and the first
    recognised cause is the outcome's (the others' are said on their own line, and carried as its artifacts'
    other_causes, so that each is tried by a repair: a missing __rsub__ beside a missing __radd__)."""
    if len(found) == 1 or all(v.not_written for v in found):  # the starter kit: its first method to write
        return found[0].outcome(HINTS["forward"], "On the smallest failing case, ")
    cause = next((v.cause for v in found if v.cause), None)
    cases: dict[str, list[str]] = {}
    said: dict[str, Verdict] = {}
    for verdict in found:
        names = list(verdict.names or default_names(verdict.program))
        values = ", ".join(f"{names[i]} = {ins[1]!r}" for i, ins in enumerate(verdict.program) if ins[0] == "leaf")
        key = (
            "not written"
            if verdict.not_written
            else verdict.what
            if verdict.status == "error"
            else verdict.program[-1][0]
        )
        cases.setdefault(key, []).append(f"{expression(verdict.program[-1], names)} with {values}")
        said.setdefault(key, verdict)
    lines = [
        f"  {'; '.join(cases[key])}: {'not written yet' if verdict.not_written else verdict.what}"
        + (f"\n    Likely cause: {verdict.cause.sentence}." if verdict.cause and verdict.cause != cause else "")
        for key, verdict in said.items()
    ]
    head = found[0].outcome(HINTS["forward"])
    feedback = (
        f"{len(found)} operations compute a wrong value or raise; each on its smallest case:\n"
        + "\n".join(lines)
        + ("" if cause else f"\n{HINTS['forward']}")
    )
    others = list(dict.fromkeys(v.cause.id for v in found if v.cause and v.cause != cause))
    return replace(
        head,
        status="failed" if any(v.status == "failed" for v in found) else "error",
        feedback=feedback,
        cause=cause.id if cause else None,
        artifacts={**head.artifacts, "other_causes": others} if others else head.artifacts,
    )
