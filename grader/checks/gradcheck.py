"""The gradient check: the student's analytic gradients against central differences of
the student's own forward pass (the lesson's numerical_grad, done for them)."""

from __future__ import annotations

import math

from grader.checks.context import Context, reference_run
from grader.checks.judging import Verdict, error_verdict, shown
from grader.programs import Program, default_names

H = 1e-5
ABS_TOL = 1e-6
KINK_MARGIN = 1e-3  # relu and the like are not differentiable near 0: such cases are not judged


def judge_gradcheck(ctx: Context, program: Program) -> Verdict | None:
    expected = reference_run(program)
    if expected is None or any(ins[0] == "relu" and abs(expected.data[ins[1]]) < KINK_MARGIN for ins in program):
        return None
    reply = ctx.student.ask({"op": "gradcheck", "program": program, "h": H})
    names = default_names(program)
    if not isinstance(reply, dict) or "leaves" not in reply:
        return error_verdict(program, reply, names, "building the expression and calling backward()")
    rtol = ctx.assignment.tolerances.gradcheck_rtol
    leaves, analytic, numeric = reply["leaves"], reply["analytic"], reply["numeric"]
    out = names[len(program) - 1]
    if not ctx.close(expected.data[-1], reply["output"]):
        return Verdict(
            program, "failed",
            f"the output {out}.data should be {expected.data[-1]:.6g} but your engine gives {shown(reply['output'])}; "
            "gradients can only be checked on a correct forward pass (see forward)",
            expected={f"{out}.data": expected.data[-1]}, got={f"{out}.data": shown(reply["output"])}, names=tuple(names),
            backward=False,
        )
    for index, a, n in zip(leaves, analytic, numeric):
        if not (isinstance(a, float) and isinstance(n, float) and math.isclose(a, n, rel_tol=rtol, abs_tol=ABS_TOL)):
            grads = {f"{names[i]}.grad": shown(x) for i, x in zip(leaves, analytic)}
            slopes = {f"{names[i]}.grad": shown(x) for i, x in zip(leaves, numeric)}
            return Verdict(
                program,
                "failed",
                f"backward() gives {names[index]}.grad = {shown(a)!r}, but nudging {names[index]} by "
                f"±{H:g} changes the output at a rate of {shown(n)!r} (central difference)",
                expected=slopes,
                got=grads,
                names=tuple(names),
            )
    return None
