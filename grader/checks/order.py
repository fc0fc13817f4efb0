"""topo_order's own evidence: the order in which backward() calls each node's own backward.

Where the student's nodes carry a backward of their own (the lesson's `_backward` closure, or a
`_grad_fn`-style callable), the probe inside the sandbox puts a recorder in its place and calls
backward(): the grader sees the sequence of calls, and judges it alone: each operation node's
backward once, after the backward of every node that uses it. No gradient is read, so a rule
written with `=` neither hides a backward() that merely recurses nor blames one whose order is
right. Where nothing can be watched (a backward() that dispatches on the op name), topo_order
falls back to gradients (topo_order.py).
"""

from __future__ import annotations

from dataclasses import replace

from grader.causes import CAUSES
from grader.checks import plans
from grader.checks.cases import diamond
from grader.checks.context import Context
from grader.checks.judging import Verdict, again, error_verdict, search
from grader.checks.strategies import Shape
from grader.programs import Program, ancestors, default_names, inputs
from grader.protocol import Observation, Order

PROPERTY = "the order of backward() on shared nodes"


def watch(ctx: Context, ops: tuple[str, ...], shape: Shape) -> tuple[str, Verdict | None] | None:
    """(the attribute watched, the smallest program whose order is wrong, or None), or None when backward()'s
    calls cannot be watched on the engine's nodes (no backward of their own, or one backward() does not call)."""
    seed = ctx.features.seed_missing
    sweep = [diamond(op) for op in ops]
    first = ctx.student.order_many(sweep, seed)
    seen = [o for o in first if isinstance(o, Order) and o.hook and o.calls]
    if len(seen) != len(sweep):
        return None
    for program, order in zip(sweep, seen, strict=True):
        found = judge(program, order)
        if found is not None:
            return seen[0].hook, _confirmed(ctx, program, found)

    def judge_many(programs: list[Program]) -> dict[Program, Verdict | None]:
        replies = ctx.student.order_many(programs, seed, stop=lambda p, reply: _judged(p, reply) is not None)
        verdicts: dict[Program, Verdict | None] = {}
        for program, reply in zip(programs, replies, strict=False):
            if reply is None:
                break
            verdicts[program] = _judged(program, reply)
        return verdicts

    verdict = search(ctx, shape, lambda program: judge_many([program]).get(program), judge_many)
    return seen[0].hook, verdict


def _confirmed(ctx: Context, program: Program, found: Verdict) -> Verdict:
    """The sweep's verdict, marked unstable when the same graph, built again, is walked in a right order (an
    order that follows memory addresses, as children kept in a set do), as the search marks its own."""
    tries = again(program)
    replies = ctx.student.order_many(tries, ctx.features.seed_missing)
    if any(isinstance(r, Order) and r.hook and judge(p, r) is None for p, r in zip(tries, replies, strict=False)):
        return replace(found, unstable=True)
    return found


def _judged(program: Program, reply: Order | Observation) -> Verdict | None:
    if isinstance(reply, Observation):
        return error_verdict(program, reply, default_names(program), "building the expression and calling backward()")
    return judge(program, reply) if reply.hook else None


def judge(program: Program, seen: Order) -> Verdict | None:
    """A Verdict when backward() did not call each operation node's backward exactly once, after every node
    that uses it; None when it did."""
    names = default_names(program)
    nodes = [i for i in ancestors(program) if program[i][0] != "leaf"]
    calls = [i for i in seen.calls if i in nodes]
    what = _once(nodes, calls, names, seen.hook) or _after_users(program, nodes, calls, names, seen.hook)
    if what is None:
        return None
    key = f"order of the {seen.hook} calls"
    twice = any(calls.count(i) > 1 for i in nodes)
    cause = (
        "visited_dropped"
        if twice
        else "topo_not_reversed"
        if _after_users(program, nodes, calls[::-1], names, seen.hook) is None
        else None
    )
    return Verdict(
        program,
        "failed",
        what,
        {key: ", ".join(names[i] for i in reversed(nodes))},
        {key: ", ".join(names[i] for i in calls) or "none"},
        names=tuple(names),
        cause=CAUSES[cause] if cause else None,
    )


def _once(nodes: list[int], calls: list[int], names: list[str], hook: str) -> str | None:
    for i in reversed(nodes):
        count = calls.count(i)
        if count == 0:
            return f"backward() never ran {names[i]}.{hook}, so no gradient flowed back through {names[i]}"
        if count > 1:
            return (
                f"backward() ran {names[i]}.{hook} {count} times, where each node's rule must run exactly once "
                f"(it adds {names[i]}'s gradient to its inputs again each time)"
            )
    return None


def _after_users(program: Program, nodes: list[int], calls: list[int], names: list[str], hook: str) -> str | None:
    """Why the calls are out of order: a node's backward ran before that of a node using it; None if in order."""
    at = {i: calls.index(i) for i in nodes if i in calls}
    for j in reversed(nodes):  # the output first: the first user found too early is the nearest the output
        for i in inputs(program[j]):
            if i in at and j in at and at[i] < at[j]:
                return (
                    f"backward() ran {names[i]}.{hook} before {names[j]}.{hook}, though {names[j]} uses "
                    f"{names[i]}: {names[i]}'s gradient was not complete when it passed it on"
                )
    return None


def shape_of(ops: tuple[str, ...]) -> Shape:
    """The graphs the order is judged on: operations whose results several others use (diamonds, fan-out,
    branches that join again), nested at least two deep."""
    return Shape(ops=ops, max_ops=6, reuse_leaves=True, share_nodes=True, require_depth=2)


def planned(ctx: Context, shape: Shape) -> tuple[Program, ...]:
    return plans.programs(shape, ctx.assignment.search.max_examples)
