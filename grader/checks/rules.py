"""The rule checks: each operation's local chain rule, accumulation and ordering, each
judged on random expressions (hypothesis) against the reference engine."""

from __future__ import annotations

from dataclasses import replace

from grader.checks import check
from grader.checks.context import Context
from grader.checks.judging import Verdict, compare, compare_many, search
from grader.checks.strategies import Shape, forward_ops, single_operations
from grader.programs import Program
from grader.result import Outcome

HINTS = {
    "forward": "Check the forward formula of the operation in the smallest case; with a plain number "
    "on the left (2 + a, 2 * a, 1 - a) Python calls __radd__, __rmul__, __rsub__, so those must exist "
    "and wrap the number in a Value.",
    "add": "For out = a + b the local derivative is 1 for both inputs: each input gets `+= out.grad`, "
    "the incoming gradient passed through unchanged.",
    "mul": "For out = a * b each input gets the OTHER input's data times the incoming gradient: "
    "`self.grad += other.data * out.grad` and `other.grad += self.data * out.grad`.",
    "pow": "For out = x ** k the local derivative is k * x ** (k - 1): "
    "`self.grad += k * self.data ** (k - 1) * out.grad`.",
    "tanh": "tanh's local derivative is 1 - t**2 where t is tanh's OUTPUT (out.data), not its input: "
    "`self.grad += (1 - t**2) * out.grad`.",
    "relu": "relu passes the incoming gradient only where its input was positive, and exactly 0 where it "
    "was negative: `self.grad += (out.data > 0) * out.grad`.",
    "neg_sub": "-x is x * -1, so x gets -1 times the incoming gradient; a - b is a + (-b), so b gets "
    "MINUS the incoming gradient.",
    "accumulate": "Use += : a value used twice receives gradient from both paths, and `=` keeps only the "
    "last one.",
    "topo_order": "backward() must call every node's _backward exactly once, after every node that uses "
    "it: build the topological order once (with a visited set) and walk it in reverse.",
    "gradcheck": "Your analytic gradient disagrees with the slope of your own forward pass; find the "
    "operation in the smallest case whose backward rule does not match its forward formula.",
}


def _run_search(ctx: Context, check_id: str, shape: Shape, quantity: str = "grad", note: bool = False) -> Outcome:
    """Search for the smallest disagreement; note=True says which structures were left out and why."""
    def judge(program: Program) -> Verdict | None:
        return compare(ctx, program, quantity)

    verdict = search(ctx, shape, judge, lambda many: compare_many(ctx, many, quantity))
    if verdict is None:
        return Outcome("passed", "Matches the reference engine on every expression tried.")
    return verdict.outcome(HINTS[check_id] + (ctx.features.limits() if note else ""), "On the smallest failing case, ")


def _rule_shape(ctx: Context, *ops: str, helpers: tuple[str, ...] = ("add", "mul")) -> Shape:
    """A rule probed on leaves and, where the engine's basics work, inside larger expressions."""
    f = ctx.features
    return Shape(
        ops=ops,
        helpers=tuple(op for op in f.trusted(*helpers) if op not in ops),
        max_ops=f.nested(),
        reuse_leaves=f.reuse and f.depth,
        share_nodes=f.share,
        wrap=f.mul and f.depth,
    )


def _not_judged(what: str) -> Outcome:
    return Outcome("skipped", "Not judged: neither + nor * gives correct gradients on two leaves yet (see the add "
                   f"and mul checks), and {what} is probed with them.")


@check("forward", "Operations compute the right values (with plain numbers on either side)")
def forward(ctx: Context) -> Outcome:
    ops = forward_ops(ctx.assignment.ops)
    sweep = list(single_operations(ops))
    verdicts = compare_many(ctx, sweep, "data")
    for program in sweep:
        verdict = verdicts.get(program, None) if program in verdicts else compare(ctx, program, "data")
        if verdict is not None:
            return verdict.outcome(HINTS["forward"], "On the smallest failing case, ")
    return _run_search(ctx, "forward", Shape(ops=ops, max_ops=4, reuse_leaves=True, share_nodes=True), "data")


@check("add", "+ passes the incoming gradient unchanged to both inputs")
def add(ctx: Context) -> Outcome:
    return _run_search(ctx, "add", _rule_shape(ctx, "add"), note=True)


@check("mul", "* gives each input the other input's data times the incoming gradient")
def mul(ctx: Context) -> Outcome:
    return _run_search(ctx, "mul", _rule_shape(ctx, "mul"), note=True)


@check("pow", "x ** k gives k * x ** (k - 1)")
def pow_(ctx: Context) -> Outcome:
    return _run_search(ctx, "pow", _rule_shape(ctx, "pow"), note=True)


@check("tanh", "tanh's backward is 1 - t**2 on its output t")
def tanh(ctx: Context) -> Outcome:
    return _run_search(ctx, "tanh", _rule_shape(ctx, "tanh"), note=True)


@check("relu", "relu passes the gradient where the input is positive, 0 where negative")
def relu(ctx: Context) -> Outcome:
    return _run_search(ctx, "relu", _rule_shape(ctx, "relu"), note=True)


@check("neg_sub", "-x and x - y have the right gradients")
def neg_sub(ctx: Context) -> Outcome:
    outcome = _run_search(ctx, "neg_sub", _rule_shape(ctx, "neg", "sub"), note=True)
    f = ctx.features
    broken = [name for name, ok in (("the order of backward() (see topo_order)", f.depth), ("+ (see add)", f.add),
                                    ("* (see mul)", f.mul_inner)) if not ok]
    if outcome.status == "failed" and broken:
        note = (f" -x and a - b are often built from other operations (x * -1, a + (-b)), and {broken[0]} has a "
                "problem: fix that first, then look here again.")
        outcome = replace(outcome, feedback=outcome.feedback + note)
    return outcome


@check("accumulate", "A value used several times gets the sum of every path's gradient (+=)")
def accumulate(ctx: Context) -> Outcome:
    f = ctx.features
    mul_works = f.mul_inner if f.depth else f.mul
    ops = tuple(op for op, ok in (("add", f.add), ("mul", mul_works)) if ok)
    if not ops:
        return _not_judged("accumulation")
    shape = Shape(ops=ops, max_ops=min(f.nested(), 4), reuse_leaves=True, require_reuse=True,
                  wrap=f.mul and f.depth)
    return _run_search(ctx, "accumulate", shape)


@check("topo_order", "backward() runs each node's rule once, after every node that uses it")
def topo_order(ctx: Context) -> Outcome:
    f = ctx.features
    ops = tuple(op for op, ok in (("add", f.add), ("mul", f.mul_inner or f.mul and not f.add)) if ok)
    if not ops:
        return _not_judged("the order of backward()")
    shape = Shape(ops=ops, max_ops=6, reuse_leaves=f.reuse, share_nodes=f.reuse, require_depth=2)
    return _run_search(ctx, "topo_order", shape)


@check("gradcheck", "Analytic gradients agree with central differences of your own forward pass")
def gradcheck(ctx: Context) -> Outcome:
    from grader.checks.gradcheck import judge_gradcheck, judge_gradcheck_many

    shape = Shape(ops=ctx.assignment.ops, max_ops=5, reuse_leaves=True, share_nodes=True, wrap=True)
    verdict = search(ctx, shape, lambda program: judge_gradcheck(ctx, program),
                     lambda many: judge_gradcheck_many(ctx, many))
    if verdict is None:
        return Outcome("passed", "Analytic and numerical gradients agree on every expression tried.")
    return verdict.outcome(HINTS["gradcheck"], "On the smallest failing case, ")
