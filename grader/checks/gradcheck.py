"""The gradient check: the student's analytic gradients against central differences of
the student's own forward pass (the lesson's numerical_grad, done for them). The
sandbox reports the engine's outputs at x + h and x - h; the differences are taken here."""

from __future__ import annotations

import math

from grader.checks.context import Context, reference_run
from grader.checks.judging import Verdict, error_verdict, shown
from grader.feedback import numbers
from grader.programs import Program, default_names
from grader.protocol import Observation

H = 1e-5
ABS_TOL = 1e-6
KINK_MARGIN = 1e-3  # relu and the like are not differentiable near 0: such cases are not judged


def gradcheck_judged(program: Program) -> bool:
    """Inside the reference's domain, away from relu's kink, and with no fractional power of a base so near 0
    that a nudge makes it negative (a complex number, on any engine)."""
    expected = reference_run(program)
    data = expected.data if expected is not None else None
    return data is not None and not any(
        (ins[0] == "relu" or ins[0] == "pow" and not float(ins[2]).is_integer()) and abs(data[ins[1]]) < KINK_MARGIN
        for ins in program
    )


def judge_gradcheck(ctx: Context, program: Program) -> Verdict | None:
    if not gradcheck_judged(program):
        return None
    reply = ctx.student.gradcheck_many([program], H)[0]
    assert reply is not None, "the first program is always reached"
    return _verdict(ctx, program, reply)


def judge_gradcheck_many(ctx: Context, programs: list[Program]) -> dict[Program, Verdict | None]:
    todo = [p for p in programs if gradcheck_judged(p)]
    asked = set(todo)
    verdicts: dict[Program, Verdict | None] = {p: None for p in programs if p not in asked}
    replies = ctx.student.gradcheck_many(todo, H, stop=lambda program, reply: _verdict(ctx, program, reply) is not None)
    for program, reply in zip(todo, replies, strict=False):
        if reply is None:
            break
        verdicts[program] = _verdict(ctx, program, reply)
    return verdicts


def _verdict(ctx: Context, program: Program, reply: dict | Observation) -> Verdict | None:
    names = default_names(program)
    if isinstance(reply, Observation):
        return error_verdict(program, reply, names, "building the expression and calling backward()")
    expected = reference_run(program)
    assert expected is not None and expected.data is not None, "gradchecked programs are in the reference's domain"
    rtol = ctx.assignment.tolerances.gradcheck_rtol
    out = names[len(program) - 1]
    if not ctx.close(expected.data[-1], reply["output"]):
        return Verdict(
            program,
            "failed",
            "the output {}.data should be {} but your engine gives {}; ".format(
                out, *numbers(expected.data[-1], shown(reply["output"]))
            )
            + "gradients can only be checked on a correct forward pass (see forward)",
            expected={f"{out}.data": expected.data[-1]},
            got={f"{out}.data": shown(reply["output"])},
            names=tuple(names),
            backward=False,
        )
    leaves, analytic = reply["leaves"], reply["analytic"]
    numeric = [
        (hi - lo) / (2 * H)
        if isinstance(hi, float) and isinstance(lo, float)
        else (hi if not isinstance(hi, float) else lo)
        for hi, lo in zip(reply["up"], reply["down"], strict=False)
    ]
    for index, a, n in zip(leaves, analytic, numeric, strict=False):
        if not (isinstance(a, float) and isinstance(n, float) and math.isclose(a, n, rel_tol=rtol, abs_tol=ABS_TOL)):
            grads = {f"{names[i]}.grad": shown(x) for i, x in zip(leaves, analytic, strict=False)}
            slopes = {f"{names[i]}.grad": shown(x) for i, x in zip(leaves, numeric, strict=False)}
            by_node = [None] * len(program)
            for i, x in zip(leaves, analytic, strict=False):
                by_node[i] = x
            return Verdict(
                program,
                "failed",
                f"backward() gives {names[index]}.grad = {numbers(shown(a), shown(n))[0]}, but nudging "
                f"{names[index]} by ±{H:g} changes the output at a rate of {numbers(shown(n), shown(a))[0]} "
                "(central difference)",
                expected=slopes,
                got=grads,
                names=tuple(names),
                got_grad=tuple(by_node),
            )
    return None
