"""A rule under an incoming gradient other than 1, probed on its own: the output's own backward called alone.

A rule that forgets out.grad is right only when the incoming gradient is 1, which it is on leaves; the rule
checks otherwise probe it inside nested expressions, whose gradients need backward()'s order to be right. Where
the student's nodes carry a backward of their own (the lesson's `_backward` closure, or a `_grad_fn`-style
callable: the same detection topo_order watches), the probe inside the sandbox builds `out = a <op> b`, zeroes
every node's grad, sets out.grad to g and calls out's own backward once, never backward(): the inputs' grads are
judged against g times the reference's local derivative. A wrong order then neither hides a rule's bug nor
blames a right one. The probe counts only where, with g = 1, the output's backward alone gives the inputs their
whole gradient (an operation built from others, a tanh written with exp and /, leaves it to nodes in between):
elsewhere the rule checks fall back to nested expressions (rules.py).
"""

from __future__ import annotations

from grader.causes import CAUSES
from grader.checks.cases import SINGLE
from grader.checks.context import Context, reference_run
from grader.checks.evidence import incoming
from grader.checks.judging import shown
from grader.feedback import numbers
from grader.programs import Program, default_names, to_code
from grader.protocol import Direct, Observation
from grader.result import Counterexample, Outcome

GRADIENTS = (1.0, 2.5, -0.5)
"""The incoming gradients the output's grad is set to: 1 first, to see that the output's backward alone gives the
inputs their whole gradient, then two others, to judge the rule under them."""

CASES: dict[str, tuple[Program, ...]] = {
    "add": (SINGLE["add"],),
    "mul": (SINGLE["mul"],),
    "pow": (SINGLE["pow"], (("leaf", -0.8), ("pow", 0, 3))),
    "tanh": (SINGLE["tanh"],),
    "relu": (SINGLE["relu"], (("leaf", -1.5), ("relu", 0))),
}
"""The operations whose output's own backward holds their whole rule, each on its smallest cases (its inputs'
grads all nonzero on the first, so that one built from others cannot look whole)."""


def called_alone(ctx: Context, ops: tuple[str, ...], hints: dict[str, str]) -> tuple[tuple[str, ...], Outcome | None]:
    """(the properties probed and held by calling each operation's output backward alone, the failed outcome of
    the first rule found wrong under an incoming gradient other than 1, or None). An operation whose output has
    no backward of its own to call, or one that alone does not give its inputs their whole gradient, is left out."""
    probed: list[str] = []
    for op in (op for op in ops if op in CASES):
        alone = _alone(ctx, op)
        if alone is None:
            continue
        for program, reply in zip(CASES[op], alone, strict=True):
            failed = _judge(ctx, program, reply, hints[op])
            if failed is not None:
                return tuple(probed), failed
        probed.append(f"{incoming(op)}, probed by calling the output's own {alone[0].hook} alone")
    return tuple(probed), None


def right_alone(ctx: Context, op: str) -> bool | None:
    """Is op's rule right under every incoming gradient, judged by calling its output's own backward alone (True),
    wrong under one other than 1 (False), or can it not be judged so (None: no backward of its own to call, or
    one that alone does not give the inputs their whole gradient, as an operation built from others)?"""
    alone = _alone(ctx, op) if op in CASES else None
    if alone is None:
        return None
    return all(_wrong(ctx, program, reply) is None for program, reply in zip(CASES[op], alone, strict=True))


def ignoring(ctx: Context) -> tuple[str, ...]:
    """The operations of the assignment, in its order, whose rule, judged on its own, leaves an input's gradient as
    it is under an incoming gradient of 1 when that is another: each forgets out.grad on some side."""
    return tuple(
        op
        for op in ctx.assignment.ops
        if op in CASES
        and any(_ignores(ctx, program, reply) for program, reply in zip(CASES[op], _alone(ctx, op) or (), strict=True))
    )


def _ignores(ctx: Context, program: Program, reply: Direct) -> bool:
    """Is the first input found wrong under an incoming gradient other than 1 given what it gets under 1?"""
    wrong = _wrong(ctx, program, reply)
    expected = reference_run(program)
    if wrong is None or expected is None or expected.grad is None:
        return False
    k, i = wrong
    return ctx.close(expected.grad[i], reply.grads[k][i])


def _alone(ctx: Context, op: str) -> list[Direct] | None:
    """op's replies on its cases, when on each the output's own backward alone gave the inputs their whole
    gradient; None otherwise."""
    seen = _replies(ctx)
    alone = [d for p in CASES[op] if (d := _whole(ctx, p, seen.get(p))) is not None]
    return alone if len(alone) == len(CASES[op]) else None


def _replies(ctx: Context) -> dict[Program, Direct | Observation | None]:
    """The student's engine on every case of the assignment's operations, asked once per grading (the preflight
    asks first, to know which rules can be trusted inside larger expressions; the rule checks read the same)."""
    if ctx.alone is None:
        programs = [program for op in ctx.assignment.ops if op in CASES for program in CASES[op]]
        answers = ctx.student.direct_many(programs, list(GRADIENTS)) if programs else []
        ctx.alone = dict(zip(programs, answers, strict=True))
    return ctx.alone


def _whole(ctx: Context, program: Program, reply: Direct | Observation | None) -> Direct | None:
    """The reply, when the output's own backward, called alone with its grad set to 1, gave each input its whole
    gradient (the reference's); None otherwise."""
    expected = reference_run(program)
    if not isinstance(reply, Direct) or not reply.hook or expected is None or expected.grad is None:
        return None
    whole = all(ctx.close(expected.grad[i], reply.grads[0][i]) for i in _leaves(program))
    return reply if whole else None


def _leaves(program: Program) -> list[int]:
    return [i for i, ins in enumerate(program) if ins[0] == "leaf"]


def _judge(ctx: Context, program: Program, reply: Direct, hint: str) -> Outcome | None:
    """The failed outcome when an input's grad is not g times the reference's local derivative, for an incoming
    gradient g other than 1; None when every one is."""
    wrong = _wrong(ctx, program, reply)
    return None if wrong is None else _failed(ctx, program, reply, wrong, hint)


def _wrong(ctx: Context, program: Program, reply: Direct) -> tuple[int, int] | None:
    """(k, i): the first incoming gradient GRADIENTS[k] other than 1 under which input i's grad is not g times the
    reference's local derivative; None when there is none."""
    expected = reference_run(program)
    assert expected is not None and expected.grad is not None, "_whole judged only what the reference computes"
    for k, g in enumerate(GRADIENTS[1:], 1):
        wrong = [i for i in _leaves(program) if not ctx.close(g * expected.grad[i], reply.grads[k][i])]
        if wrong:
            return k, wrong[0]
    return None


def _failed(ctx: Context, program: Program, reply: Direct, at: tuple[int, int], hint: str) -> Outcome:
    """The outcome of a rule wrong under the incoming gradient GRADIENTS[k], first seen on input i; the case as
    code a student can paste: the expression, out.grad set, out's own backward called."""
    k, i = at
    g, names, expected = GRADIENTS[k], default_names(program), reference_run(program)
    assert expected is not None and expected.grad is not None
    out, leaves = names[len(program) - 1], _leaves(program)
    code = f"{to_code(program, names, backward=False)}\n{out}.grad = {g}\n{out}.{reply.hook}()"
    want = {f"{names[j]}.grad": g * expected.grad[j] for j in leaves}
    got = {f"{names[j]}.grad": shown(reply.grads[k][j]) for j in leaves}
    ignoring = [j for j in leaves if ctx.close(expected.grad[j], reply.grads[k][j])]
    should, gives = numbers(want[f"{names[i]}.grad"], got[f"{names[i]}.grad"])
    what = (
        f"On the smallest failing case, with {out}.grad = {g} and {out}.{reply.hook}() called on its own, "
        f"{names[i]}.grad should be {should} but your engine gives {gives}"
    )
    if i in ignoring:
        whose = "" if len(ignoring) == len(leaves) else f" for {' and '.join(names[j] for j in ignoring)}"
        what += (
            f", as if the incoming gradient were 1{whose}: the rule does not multiply by out.grad there, so it is "
            "right only on the output of backward(), never inside an expression"
        )
    op = program[-1][0]
    cause = f"missing_outgrad_{op}" if i in ignoring and f"missing_outgrad_{op}" in CAUSES else None
    return Outcome(
        "failed",
        f"{what}.{'' if cause else chr(10) + hint}",
        Counterexample(code, want, got),
        cause=cause,
    )
