"""The gradcheck check: the student's analytic gradients against central differences of
the student's own forward pass (the lesson's numerical_grad, done for them). The
sandbox reports the engine's outputs at x + h and x - h; the differences are taken here.
Its sweep holds each operation's edges and the cases the checks it reads found failing."""

from __future__ import annotations

import math
from dataclasses import replace

from grader.checks import plans
from grader.checks.context import Context, reference_run
from grader.checks.evidence import Evidence, Missing, not_judged, ops_probed, word
from grader.checks.features import basic_cause
from grader.checks.fixed import needed_ops
from grader.checks.judging import Verdict, error_verdict, search, shown
from grader.checks.reads import Reads
from grader.checks.registry import check
from grader.checks.reuse import reuse_sweep
from grader.checks.rules import RULE_CHECKS, not_working
from grader.checks.searching import HINTS
from grader.checks.strategies import BOUNDARY_VALUES, Shape
from grader.feedback import numbers
from grader.programs import Program, default_names
from grader.protocol import Observation
from grader.result import Outcome
from grader.sandbox.inside.ops import BINARY, UNARY

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


def boundary_sweep(ops: tuple[str, ...]) -> list[Program]:
    """Each operation at its edges, where a backward may raise or divide: 0, and a negative input (a power's base
    among them, with integer exponents), on leaves and, for **, a base computed to 0."""
    found: list[Program] = []
    for op in ops:
        if op == "pow":
            found += [(("leaf", x), ("pow", 0, k)) for x in BOUNDARY_VALUES for k in (1, 2, 3)]
            if "add" in ops:
                found.append((("leaf", 1.5), ("leaf", -1.5), ("add", 0, 1), ("pow", 2, 2)))
        elif op in UNARY:
            found += [(("leaf", x), (op, 0)) for x in BOUNDARY_VALUES]
        elif op in BINARY:
            found += [(("leaf", 0.0), ("leaf", -1.5), (op, 0, 1)), (("leaf", -1.5), ("leaf", 0.0), (op, 0, 1))]
    return found


def found_cases(reads: Reads, ops: tuple[str, ...]) -> list[Program]:
    """The smallest cases the checks gradcheck reads found failing (a domain error, a 0 under **), of those built
    only from the operations given: one search for all, so no check passes a case another failed."""
    return [p for p in reads.cases() if needed_ops(p) <= set(ops)]


SEARCHED = ("forward", *RULE_CHECKS, "accumulate", "topo_order")
"""The checks gradcheck reads: those whose searches find failing cases, which it judges too."""


@check(
    "gradcheck",
    "Analytic gradients agree with central differences of your own forward pass",
    backward=True,
    reads=SEARCHED,
)
def gradcheck(ctx: Context) -> Outcome:
    f = ctx.features
    ops = tuple(op for op in ctx.assignment.ops if op in f.working)
    if not ops:
        return not_judged("no operation works on its own yet (see forward)", "forward")
    shape = Shape(ops=ops, max_ops=5, reuse_leaves=True, share_nodes=True, wrap="mul" in ops, boundary=True)
    sweep = list(dict.fromkeys(reuse_sweep(ctx, ops) + boundary_sweep(ops) + found_cases(ctx.reads, ops)))
    first = judge_gradcheck_many(ctx, sweep) if sweep else {}
    verdict = next((first[p] for p in sweep if first.get(p) is not None), None)
    if verdict is None:
        verdict = search(
            ctx, shape, lambda program: judge_gradcheck(ctx, program), lambda many: judge_gradcheck_many(ctx, many)
        )
    if verdict is None:
        return _gradcheck_evidence(ctx, sweep + list(plans.programs(shape, ctx.assignment.search.max_examples))).settle(
            Outcome("passed", "Analytic and numerical gradients agree on every expression tried.")
        )
    verdict = replace(verdict, cause=basic_cause(f)) if basic_cause(f) else verdict.explained(ctx)
    return verdict.outcome(HINTS["gradcheck"], "On the smallest failing case, ")


def _gradcheck_evidence(ctx: Context, programs: list[Program]) -> Evidence:
    """gradcheck's evidence: each of the assignment's operations in an expression it judged; one that does not
    work on its own is left out of the search, and blocked by forward; one the engine does not have yet is left
    out, charged once by its own check."""
    probed = ops_probed([p for p in programs if gradcheck_judged(p)], ctx.assignment.ops)
    missing = tuple(
        not_working(ctx, op, word(op))
        if op not in ctx.features.working
        else Missing(word(op), "no expression with it could be judged")
        for op in ctx.assignment.ops
        if word(op) not in probed and op not in ctx.features.absent
    )
    return Evidence(probed, missing)
