"""The rule checks: each operation's local chain rule (add, mul, pow, tanh, relu, neg_sub), judged on random
expressions (hypothesis) against the reference engine, and where nested expressions cannot put a rule under an
incoming gradient other than 1, by calling the output's own backward alone (direct.py)."""

from __future__ import annotations

from dataclasses import replace

from grader.checks import direct, plans
from grader.checks.cases import SINGLE
from grader.checks.context import Context, reference_run
from grader.checks.evidence import (
    INCOMING,
    Evidence,
    Missing,
    blocked,
    incoming,
    not_judged,
    rule_probed,
    rule_properties,
)
from grader.checks.judging import Probe, judged
from grader.checks.registry import check
from grader.checks.searching import HINTS, rule_probe, run_search
from grader.checks.strategies import Shape
from grader.result import Outcome
from grader.sandbox.inside.ops import METHODS, RULE_CHECK, WORDS

RULE_CHECKS = tuple(dict.fromkeys(RULE_CHECK.values()))
"""The rule checks, in the lesson's order (each operation's rule is judged by one: ops.RULE_CHECK)."""


def _rule_shape(ctx: Context, *ops: str, helpers: tuple[str, ...] = ("add", "mul")) -> Shape:
    """A rule probed on leaves and, where the engine's basics work, inside larger expressions; each
    value used once (a value used twice is accumulate's business), unless nothing else gives the rule an
    incoming gradient other than 1 (no `* k` when * is wrong): then nodes of + used twice do (c + c), where
    the preflight found shared nodes of + right."""
    f = ctx.features
    helpers = tuple(op for op in f.trusted(*helpers) if op not in ops)
    wrap = f.mul and f.depth
    return Shape(
        ops=ops,
        helpers=helpers,
        max_ops=f.nested(),
        wrap=wrap,
        share_nodes=not wrap and f.share and set(ops + helpers) <= set(f.reused_by),
    )


def _blocked(ctx: Context, *ops: str) -> Outcome | None:
    """Skipped when a basic this rule needs is broken: backward() itself, or the op's own value."""
    f = ctx.features
    if f.backward_inert:
        return not_judged(
            "backward() changes no gradient at all, so no rule can be seen through it (see topo_order)", "topo_order"
        )
    wrong = [op for op in ops if op in VALUE_DEPENDENT and f.broken.get(op) == "computes a wrong value"]
    if wrong:
        return not_judged(
            f"{_symbol(wrong[0])} computes a wrong value, and its gradient depends on it (see forward)", "forward"
        )
    return None


VALUE_DEPENDENT = METHODS
"""Operations whose local derivative is read off their own value: with a wrong value it cannot be judged."""


def _symbol(op: str) -> str:
    return WORDS.get(op, op)


def rule_outcome(ctx: Context, check_id: str, *ops: str) -> Outcome:
    """A rule's outcome: judged by its own check, or by accumulate for a rule whose check this grading does not
    run (accumulate asks which rules are right)."""
    stopped = _blocked(ctx, *ops)
    if stopped is not None:
        return stopped
    shape, probe = _rule_shape(ctx, *ops), rule_probe(ctx)
    outcome = run_search(ctx, check_id, shape, probe, note=True)
    return _called_alone(ctx, _rule_evidence(ctx, shape, probe, ops), outcome, check_id)


def _called_alone(ctx: Context, evidence: Evidence, outcome: Outcome, check_id: str) -> Outcome:
    """A passed rule check's outcome, its rules under an incoming gradient other than 1 that nested expressions
    could not probe probed by calling the output's own backward alone, where the engine's nodes carry one
    (direct.py): a wrong result fails the check; one held counts as probed; the rest stay missing."""
    wanted = tuple(m.property for m in evidence.missing)
    ops = tuple(op for op in direct.CASES if incoming(op) in wanted)
    if outcome.status != "passed" or not ops:
        return evidence.settle(outcome)
    probed, failed = direct.called_alone(ctx, ops, dict.fromkeys(ops, HINTS[check_id]))
    if failed is not None:
        return failed
    held = {p.split(",")[0] for p in probed}
    missing = tuple(m for m in evidence.missing if m.property not in held)
    return Evidence(evidence.probed + probed, missing).settle(outcome)


def _rule_evidence(ctx: Context, shape: Shape, probe: Probe, ops: tuple[str, ...]) -> Evidence:
    """What a rule check's search probed: each of its operations, and each under an incoming gradient other
    than 1 (nested, or times k), on the programs it judged."""
    ops = tuple(op for op in ops if op in ctx.assignment.ops)
    plan = plans.programs(shape, ctx.assignment.search.max_examples)
    probed = rule_probed((p for p in plan if judged(p, "grad", probe.distinct)), ops)
    return Evidence(probed, tuple(_rule_missing(ctx, p) for p in rule_properties(ops) if p not in probed))


def _rule_missing(ctx: Context, wanted: str) -> Missing:
    """Why a rule's property was not probed, and the check whose bug stands in the way."""
    f = ctx.features
    if not wanted.endswith(INCOMING):
        return Missing(wanted, "no expression with it could be judged")
    if not f.depth:
        why = "nested expressions do not backpropagate in the right order yet, so no rule is probed inside one"
        return Missing(wanted, blocked(why, "topo_order"), "topo_order")
    if f.equal_data_merged:
        why = (
            "your engine merges nodes of equal value, so only expressions whose numbers all "
            "differ are judged, and none of those tried put it under an incoming gradient other than 1"
        )
        return Missing(wanted, blocked(why, "topo_order"), "topo_order")
    blocker = "mul" if not f.mul_inner else "add" if not f.add else None
    why = "the expressions it is probed inside need + and * to be right, and one is not"
    return Missing(wanted, blocked(why, blocker), blocker)


def not_working(ctx: Context, op: str, wanted: str) -> Missing:
    """A property not probed because op does not work on its own: forward's to charge when op does not build
    or computes a wrong value, its own rule's check's when only its backward raises."""
    if op not in ctx.builds:
        got = ctx.student.run(SINGLE[op], backward=False)
        expected = reference_run(SINGLE[op], False)
        ctx.builds[op] = (
            got.ok
            and expected is not None
            and expected.data is not None
            and got.data is not None
            and ctx.close(expected.data[-1], got.data[-1])
        )
    if ctx.builds[op] and op in RULE_CHECK:
        return Missing(wanted, blocked("its backward raises", RULE_CHECK[op]), RULE_CHECK[op])
    return Missing(wanted, blocked("the operation does not work on its own yet", "forward"), "forward")


@check("add", "+ passes the incoming gradient unchanged to both inputs", backward=True)
def add(ctx: Context) -> Outcome:
    return rule_outcome(ctx, "add", "add")


@check("mul", "* gives each input the other input's data times the incoming gradient", backward=True)
def mul(ctx: Context) -> Outcome:
    return rule_outcome(ctx, "mul", "mul")


@check("pow", "x ** k gives k * x ** (k - 1)", backward=True)
def pow_(ctx: Context) -> Outcome:
    return rule_outcome(ctx, "pow", "pow")


@check("tanh", "tanh's backward is 1 - t**2 on its output t", backward=True)
def tanh(ctx: Context) -> Outcome:
    return rule_outcome(ctx, "tanh", "tanh")


@check("relu", "relu passes the gradient where the input is positive, 0 where negative", backward=True)
def relu(ctx: Context) -> Outcome:
    return rule_outcome(ctx, "relu", "relu")


@check("neg_sub", "-x and x - y have the right gradients", backward=True)
def neg_sub(ctx: Context) -> Outcome:
    outcome = rule_outcome(ctx, "neg_sub", "neg", "sub")
    f = ctx.features
    if outcome.status == "failed" and not f.depth and "neg" not in f.broken and "sub" not in f.broken:
        return not_judged(
            "-x and a - b are usually built from other operations (x * -1, a + (-b)), and nested "
            "operations do not backpropagate in the right order yet (see topo_order)",
            "topo_order",
        )
    broken = [name for name, ok in (("+ (see add)", f.add), ("* (see mul)", f.mul_inner)) if not ok]
    if outcome.status == "failed" and broken:
        note = (
            f" -x and a - b are often built from other operations (x * -1, a + (-b)), and {broken[0]} has a "
            "problem: fix that first, then look here again."
        )
        outcome = replace(outcome, feedback=outcome.feedback + note)
    return outcome
