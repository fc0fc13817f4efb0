"""The accumulate check: a value used several times gets the sum of every path's gradient (+=). Probed through the
operations whose rule is right (it reads their checks' results: a wrong rule is charged to its own check, not to
accumulation too), and through those whose rule is wrong against the sum of the engine's own paths (reuse.py)."""

from __future__ import annotations

from grader.checks import reuse
from grader.checks.context import Context
from grader.checks.evidence import Evidence, Missing, blocked, not_judged, word
from grader.checks.judging import judged
from grader.checks.registry import check
from grader.checks.reuse import reuse_sweep
from grader.checks.rules import RULE_CHECKS, not_working, rule_outcome
from grader.checks.searching import HINTS, MATCHES, rule_probe, run_search
from grader.checks.strategies import Shape
from grader.result import Outcome, Status
from grader.sandbox.inside.ops import RULE_CHECK

RULE_OF = {
    op: (check_id, tuple(o for o, c in RULE_CHECK.items() if c == check_id)) for op, check_id in RULE_CHECK.items()
}
"""Each operation's rule check, and the operations that check judges."""


def sound(ctx: Context) -> tuple[str, ...]:
    """The operations that work on their own and whose rule is right (its check passes), in the
    assignment's order: a value used twice is probed only through those, so that a wrong rule is
    charged to its own check and not to accumulation too."""
    statuses: dict[str, Status] = {}
    found = []
    for op in ctx.assignment.ops:
        if op not in ctx.features.working:
            continue
        if op in RULE_OF and _rule_status(ctx, *RULE_OF[op], statuses) != "passed":
            continue
        found.append(op)
    return tuple(found)


def _rule_status(ctx: Context, check_id: str, ops: tuple[str, ...], statuses: dict[str, Status]) -> Status:
    """The status of the check judging a rule: read from its result, or, where this grading does not run that check
    (the assignment lacks it, or runs only the visible ones), judged here, once (its cases and causes are then
    among what accumulate found)."""
    ran = ctx.reads.get(check_id)
    if ran is not None:
        return ran.outcome.status
    if check_id not in statuses:
        statuses[check_id] = rule_outcome(ctx, check_id, *ops).status
    return statuses[check_id]


@check(
    "accumulate",
    "A value used several times gets the sum of every path's gradient (+=)",
    backward=True,
    reads=RULE_CHECKS,  # which rules are right
)
def accumulate(ctx: Context) -> Outcome:
    f = ctx.features
    if f.backward_inert:
        return not_judged("backward() changes no gradient at all (see topo_order)", "topo_order")
    ops = tuple(op for op in sound(ctx) if f.depth or op in ("add", "mul"))
    apart = tuple(op for op in ctx.assignment.ops if op not in ops and _judged_apart(f, op))
    missing = tuple(_reuse_missing(ctx, op) for op in ctx.assignment.ops if op not in ops + apart + f.absent)
    if "add" in f.absent:
        return not_judged("the lesson's a + a needs +, which your Value does not define yet (see add)", "add")
    if not ops + apart:
        every = {m.blocker for m in missing} == {"forward"}  # the starter kit: one short line
        return (
            not_judged("no operation works on its own yet (see forward)", "forward")
            if every
            else Evidence(missing=missing).skipped()
        )
    probe = rule_probe(ctx)
    sweep = reuse_sweep(ctx, ops)
    covered = {p[1][0] for p in sweep}  # through a right rule, where a right + or * combines f(x) with x
    apart += tuple(op for op in ops if op not in covered and _judged_apart(f, op))
    if ops:
        shape = Shape(
            ops=ops, max_ops=min(f.nested(), 4), reuse_leaves=True, require_reuse=True, wrap=f.mul and f.depth
        )
        outcome = run_search(ctx, "accumulate", shape, probe, sweep=sweep)
        if outcome.status != "passed":
            return outcome
    helpers = tuple(op for op in ("add", "mul") if _judged_apart(f, op) or op in ops)
    summed = [p for p in reuse_sweep(ctx, apart + helpers) if p[1][0] in apart]
    verdict, summed = reuse.judge_many(ctx, summed, probe.seed) if apart else (None, [])
    if verdict is not None:
        return verdict.outcome(HINTS["accumulate"], "On the smallest failing case, ")
    reused = {p[1][0] for p in sweep if judged(p, "grad", probe.distinct)} | {p[1][0] for p in summed}
    probed = tuple(_reused(op) for op in ctx.assignment.ops if op in reused)
    missing += tuple(_unjudged_reuse(ctx, op) for op in ops + apart if op not in reused)
    said = "A value used twice gets the sum of every path's gradient, through every operation tried."
    return Evidence(probed, missing).settle(Outcome("passed", said if apart else MATCHES))


def _judged_apart(f, op: str) -> bool:
    """Can a value used twice through op be judged against the sum of the engine's own paths: op builds and
    backpropagates (its value or rule may be wrong), and where it needs nesting, nesting works?"""
    builds = op in f.working or f.broken.get(op) == "computes a wrong value"
    return builds and (f.depth or op in ("add", "mul")) and not f.equal_data_merged


def _unjudged_reuse(ctx: Context, op: str) -> Missing:
    """Why a value used twice through op, tried, was judged on no case. On an engine that merges nodes of equal
    value, every such case of relu holds two equal numbers (relu(x) is x where x > 0, and 0 added to or
    multiplied by a node repeats a number), so only that merge, topo_order's bug, keeps it from being judged."""
    if ctx.features.equal_data_merged:
        return _reuse_missing(ctx, op)
    return Missing(_reused(op), "no case of it could be judged")


def _reused(op: str) -> str:
    return f"a value used twice through {word(op)}"


def _reuse_missing(ctx: Context, op: str) -> Missing:
    """Why a value used twice through op is not probed: op does not build, nested expressions do not
    backpropagate right (the use inside f(x) gets no gradient in the right order), or equal numbers merge."""
    f = ctx.features
    if op not in f.working and f.broken.get(op) != "computes a wrong value":
        return not_working(ctx, op, _reused(op))
    if not (f.depth or op in ("add", "mul")):
        why = "it is probed nested, f(x) combined with x, and nested expressions do not backpropagate right yet"
        return Missing(_reused(op), blocked(why, "topo_order"), "topo_order")
    why = "your engine merges nodes of equal value, and the cases probing it hold equal numbers"
    return Missing(_reused(op), blocked(why, "topo_order"), "topo_order")
