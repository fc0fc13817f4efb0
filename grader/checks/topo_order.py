"""The topo_order check: backward() runs each node's rule once, after every node that uses it. Watched through the
calls of each node's own backward where the engine has one (order.py), else judged from the gradients of graphs
with shared nodes."""

from __future__ import annotations

from dataclasses import replace

from grader.causes import CAUSES, family
from grader.checks import order
from grader.checks.cases import EQUAL_DATA, SINGLE
from grader.checks.context import Context
from grader.checks.evidence import Evidence, Missing, blocked, not_judged, shares
from grader.checks.judging import Probe, Verdict, compare, judged
from grader.checks.registry import check
from grader.checks.searching import HINTS, rule_probe, run_search
from grader.checks.strategies import Shape
from grader.result import Outcome


@check("topo_order", "backward() runs each node's rule once, after every node that uses it", backward=True)
def topo_order(ctx: Context) -> Outcome:
    f = ctx.features
    if f.backward_inert:
        return Verdict(
            SINGLE["add"],
            "failed",
            "after backward(), a.grad should be 1 but your engine leaves it at 0",
            {"a.grad": 1.0, "b.grad": 1.0},
            {"a.grad": 0.0, "b.grad": 0.0},
            cause=CAUSES["backward_inert"],
        ).outcome(HINTS["topo_order"], "On the smallest case, ")
    if f.equal_data_merged:
        verdict = compare(ctx, EQUAL_DATA, Probe(seed=f.seed_missing))
        if verdict is not None:
            return replace(verdict, cause=CAUSES["equal_data_merged"]).outcome(
                HINTS["topo_order"], "On the smallest failing case, "
            )
    watched = _watched_order(ctx)
    if watched is not None:
        return watched
    add = bool(f.trusted("add"))
    ops = tuple(op for op, ok in (("add", add), ("mul", f.mul_inner or f.mul and not add)) if ok)
    if not ops:
        return not_judged(
            "neither + nor * gives correct gradients on two leaves yet (see the add and mul checks), "
            "and the order of backward() is probed with them",
            "add",
            "mul",
        )
    reuse = f.reuse
    if reuse:  # a value used twice only through operations that accumulate: `=` for `+=` is accumulate's alone
        ops, reuse = (
            (tuple(op for op in ops if op in f.reused_by), True) if set(ops) & set(f.reused_by) else (ops, False)
        )
    shape = Shape(ops=ops, max_ops=6, reuse_leaves=reuse, share_nodes=reuse, require_depth=2)
    outcome = run_search(ctx, "topo_order", shape, rule_probe(ctx))
    return _order_evidence(ctx, shape).settle(_order_not_blamed(outcome))


def _watched_order(ctx: Context) -> Outcome | None:
    """topo_order judged on the calls of each node's own backward, when backward()'s calls can be watched:
    operations that build (their rules may be wrong: no gradient is read). None when they cannot be."""
    ops = tuple(op for op in ("add", "mul") if op in ctx.features.working)
    if not ops:
        return None
    shape = order.shape_of(ops)
    watched = order.watch(ctx, ops, shape)
    if watched is None:
        return None
    hook, verdict = watched
    if verdict is not None:
        if verdict.unstable:  # the order changed from try to try: what training points to first
            ctx.finding.changed("topo_order")
        return verdict.outcome(HINTS["topo_order"], "On the smallest failing case, ")
    probed = f"{order.PROPERTY}, watched through each node's {hook}"
    return Evidence((probed,)).settle(
        Outcome(
            "passed", f"backward() calls each node's {hook} once, after every node that uses it, on every graph tried."
        )
    )


def _order_evidence(ctx: Context, shape: Shape) -> Evidence:
    """topo_order's evidence from gradients: graphs with shared nodes, judged; none when `=` for `+=` keeps
    them from being judged and nothing of the engine's own can be watched."""
    probe = rule_probe(ctx)
    if any(shares(p) and judged(p, "grad", probe.distinct) for p in order.planned(ctx, shape)):
        return Evidence((f"{order.PROPERTY}, judged from the gradients",))
    why = (
        "a value used twice keeps only one path's gradient, so gradients cannot show the order on shared "
        "nodes, and your nodes carry no backward of their own (a _backward) the grader can watch"
    )
    return Evidence(missing=(Missing(order.PROPERTY, blocked(why, "accumulate"), "accumulate"),))


def _order_not_blamed(outcome: Outcome) -> Outcome:
    """topo_order's outcome, not failed for another rule's bug: numbers that `=` for `+=` gives on engines whose
    order is right (a replay of the misconception, diagnose.py) show nothing of the order."""
    if outcome.status != "failed" or not outcome.cause or family(outcome.cause) != "assign_in_":
        return outcome
    return not_judged(
        "where a value is used twice, your numbers are those `=` for `+=` gives with the right order (see "
        "accumulate), so the order backward() walks cannot be seen through them yet",
        "accumulate",
    )
