"""What the engine checks' searches share: each check's hint, and a search for the smallest case on which the
student's engine disagrees with the reference (a sweep of fixed programs, then hypothesis), its case recorded among
what the check found (ctx.finding: gradcheck judges it too, training names an unstable one first)."""

from __future__ import annotations

from grader.checks.context import Context
from grader.checks.judging import Probe, compare, compare_many, search
from grader.checks.strategies import Shape
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
    "accumulate": "Use += : a value used twice receives gradient from both paths, and `=` keeps only the last one.",
    "topo_order": "backward() must call every node's _backward exactly once, after every node that uses "
    "it: build the topological order once (with a visited set) and walk it in reverse.",
    "gradcheck": "Your analytic gradient disagrees with the slope of your own forward pass; find the "
    "operation in the smallest case whose backward rule does not match its forward formula.",
}


MATCHES = "Matches the reference engine on every expression tried."

GRADIENTS = Probe()
"""The probe most searches use: gradients after backward()."""


def run_search(
    ctx: Context,
    check_id: str,
    shape: Shape,
    probe: Probe = GRADIENTS,
    note: bool = False,
    sweep: list[Program] | tuple[Program, ...] = (),
) -> Outcome:
    """A sweep of fixed programs first, then hypothesis's search for the smallest disagreement;
    note=True says which structures were left out and why."""
    verdicts = compare_many(ctx, list(sweep), probe) if sweep else {}
    verdict = next((verdicts[p] for p in sweep if verdicts.get(p) is not None), None)
    if verdict is None and (not sweep or len(verdicts) == len(sweep)):
        verdict = search(
            ctx, shape, lambda program: compare(ctx, program, probe), lambda many: compare_many(ctx, many, probe)
        )
    if verdict is None:
        return Outcome("passed", MATCHES)
    verdict = verdict.explained(ctx, probe.seed)
    ctx.finding.case(verdict.program)  # gradcheck judges them too
    if verdict.unstable:  # the check whose numbers changed from try to try: what training points to first
        ctx.finding.changed(check_id)
    return verdict.outcome(HINTS[check_id] + (ctx.features.limits() if note else ""), "On the smallest failing case, ")


def rule_probe(ctx: Context) -> Probe:
    """Rule checks seed the output themselves when backward() does not, and keep equal numbers
    apart when the engine merges them: each of those is charged once, elsewhere."""
    f = ctx.features
    return Probe(seed=f.seed_missing, distinct=f.equal_data_merged)
