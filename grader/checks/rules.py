"""The rule checks: each operation's local chain rule (add, mul, pow, tanh, relu, neg_sub), judged on random
expressions (hypothesis) against the reference engine, and where nested expressions cannot put a rule under an
incoming gradient other than 1, by calling the output's own backward alone (direct.py)."""

from __future__ import annotations

from dataclasses import replace

from grader.causes import CAUSES, family
from grader.checks import direct, plans
from grader.checks.cases import SINGLE
from grader.checks.context import Context, reference_run
from grader.checks.evidence import (
    INCOMING,
    Evidence,
    Missing,
    blocked,
    incoming,
    listed_ops,
    not_judged,
    rule_probed,
    rule_properties,
    word,
)
from grader.checks.judging import Probe, judged
from grader.checks.registry import check
from grader.checks.searching import HINTS, rule_probe, run_search
from grader.checks.strategies import Shape
from grader.result import Outcome
from grader.sandbox.inside.ops import METHODS, RULE_CHECK, RULES, WORDS

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
    run (accumulate asks which rules are right). On its own first (the output's own backward called alone, where
    the nodes carry one), then inside expressions built only of operations shown right, and never failed for
    another operation's wrong rule."""
    stopped = _blocked(ctx, *ops) or _wrong_alone(ctx, check_id, ops) or _built_on_wrong(ctx, ops)
    if stopped is not None:
        return stopped
    shape, probe = _rule_shape(ctx, *ops), rule_probe(ctx)
    outcome = run_search(ctx, check_id, shape, probe, note=True)
    return _not_defined(ctx, ops, _called_alone(ctx, _rule_evidence(ctx, shape, probe, ops), outcome, check_id))


def _wrong_alone(ctx: Context, check_id: str, ops: tuple[str, ...]) -> Outcome | None:
    """The failed outcome of a rule found wrong on its own, under an incoming gradient other than 1 (the
    preflight's finding: checks/direct.py), which names the cause; None when none of ops is."""
    wrong = tuple(op for op in ops if ctx.features.alone.get(op) is False)
    if not wrong:
        return None
    failed = direct.called_alone(ctx, wrong, dict.fromkeys(wrong, HINTS[check_id]))[1]
    if failed is None or family(failed.cause or "") != "missing_outgrad_":
        return failed
    group = tuple(f"missing_outgrad_{op}" for op in direct.ignoring(ctx) if f"missing_outgrad_{op}" in CAUSES)
    if len(group) < 2 or failed.cause not in group:  # one method forgets out.grad: its own cause
        return failed
    return replace(failed, cause=group[0], artifacts={**failed.artifacts, "causes": list(group)})


METHOD = {**{op: name for op, (name, _) in RULES.items()}, "neg": "__neg__"}
"""The method of Value each operation is written in."""


def _not_defined(ctx: Context, ops: tuple[str, ...], outcome: Outcome) -> Outcome:
    """A rule check's error, saying first which of its operations the engine does not define at all (charged here,
    once: forward, accumulate and gradcheck leave them out)."""
    absent = [op for op in ops if op in ctx.features.absent]
    if outcome.status != "error" or not absent or outcome.not_written:  # a method to write says so itself
        return outcome
    methods = " and ".join(word(op) if word(op) == METHOD[op] else f"{word(op)} ({METHOD[op]})" for op in absent)
    one = len(absent) == 1
    said = (
        f"Your Value has no method for {methods} yet (or for what {'it is' if one else 'they are'} built from): "
        f"write {'it' if one else 'them'} as the lesson does."
    )
    return replace(outcome, feedback=f"{said}\n{outcome.feedback}")


BASICS = ("add", "mul")
"""The operations every larger expression is built with, and others are often built from (a - b is a + (-b))."""


def _built_on_wrong(ctx: Context, ops: tuple[str, ...]) -> Outcome | None:
    """Skipped, naming their checks, when + or * has a rule wrong inside larger expressions and ops may be built
    from them: ops that work on their own, of which none is a basic nor seen to hold its whole rule in its own
    node (a - b written a + (-b) carries +'s bug, and no case of it could tell its own rule apart). None
    otherwise: the rule is judged, inside expressions built only of operations shown right."""
    f = ctx.features
    wrong = [op for op in BASICS if op not in ops and op in f.working and f.wrong(op)]
    own = any(op in BASICS or op in f.alone for op in ops)
    if not wrong or own or not all(op in f.working for op in ops):
        return None
    names = " and ".join(f"{word(op)} (see {op})" for op in wrong)
    return not_judged(
        f"{listed_ops(ops)} may be built from other operations (-x as x * -1, a - b as a + (-b), tanh with exp "
        f"and /), and {names} {'is' if len(wrong) == 1 else 'are'} wrong inside larger expressions: fix that first, "
        "then look here again",
        *wrong,
    )


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
    blocker = "mul" if not f.trusted("mul") else "add" if not f.trusted("add") else None
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
    return outcome
