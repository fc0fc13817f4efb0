"""Checks on fixed cases: the lesson's hand-derived examples, a deep chain, and the
student's numerical_grad."""

from __future__ import annotations

import math
from dataclasses import replace

from grader import protocol
from grader.checks.cases import HAND_EXAMPLES
from grader.checks.context import Context, reference_run
from grader.checks.evidence import Evidence
from grader.checks.features import basic_cause
from grader.checks.judging import Verdict, error_message, error_verdict, graph_of, not_written, shown
from grader.checks.registry import check
from grader.feedback import numbers
from grader.protocol import Observation, a_number
from grader.result import Counterexample, Outcome
from grader.sandbox.inside import probes
from grader.sandbox.inside.ops import NEEDS, RULE_CHECK, WORDS

HAND_TOLERANCE = 1e-6


def needed_ops(program) -> set[str]:
    return {NEEDS.get(ins[0], ins[0]) for ins in program if ins[0] != "leaf"}


@check("hand_examples", "The lesson's hand-derived gradients come out", backward=True)
def hand_examples(ctx: Context) -> Outcome:
    """Example by example, the points shared among them: each example whose operations the engine has is judged,
    and earns its share when it gives the lesson's numbers; one that needs an operation the engine does not have,
    or that does not work on its own yet, costs only its own share, naming that operation's check."""
    working = set(ctx.features.working)
    judged = [e for e in HAND_EXAMPLES if needed_ops(e[2]) <= working]
    waiting = [(title, sorted(needed_ops(program) - working)) for title, _, program, _ in HAND_EXAMPLES]
    waiting = [(title, ops) for title, ops in waiting if ops]
    if not judged:
        return Outcome(
            "skipped",
            "Not judged: every hand-derived example needs an operation your engine does not have yet."
            + _later(ctx, waiting),
            artifacts={"probed": [], "blocked_by": _blockers(ctx, waiting)},
        )
    answers = ctx.student.run_many([program for _, _, program, _ in judged])
    wrong = [v for example, got in zip(judged, answers, strict=False) if (v := _judged(ctx, example, got)) is not None]
    right, total = len(judged) - len(wrong), len(HAND_EXAMPLES)
    share = right / total if right else None
    if wrong:
        outcome = wrong[0]
        said = f"\n{right} of {total} examples give the lesson's numbers." if right else ""
        return replace(outcome, feedback=outcome.feedback + said, fraction=share)
    probed = [title for title, _, _, _ in judged]
    if waiting:
        return Outcome(
            "skipped",
            f"{right} of {total} hand-derived examples give the lesson's numbers.{_later(ctx, waiting)}",
            artifacts={"probed": probed, "blocked_by": _blockers(ctx, waiting)},
            fraction=share,
        )
    return Evidence(tuple(probed)).settle(
        Outcome("passed", "All three hand-derived examples give the lesson's numbers.")
    )


def _judged(ctx: Context, example: tuple, got: Observation | None) -> Outcome | None:
    """One example's failed outcome, or None when it gives the lesson's numbers."""
    title, names, program, expected = example
    got = got or ctx.student.run(program)
    cause = basic_cause(ctx.features)
    if not got.ok:
        verdict = error_verdict(program, got, names, f"in {title}, building it and calling backward()")
        return (replace(verdict, cause=cause) if cause else verdict.explained(ctx)).outcome("")
    assert got.grad is not None, "a run that went well, after backward(), has its grads"
    index = {name: i for i, name in enumerate(names)}
    wrong = [n for n, x in expected.items() if not _near(got.grad[index[n]], x)]
    if not wrong:
        return None
    first = wrong[0]
    expected_run = reference_run(program)
    verdict = Verdict(
        program,
        "failed",
        "in {}, {}.grad should be {} (derived by hand in the lesson) but your engine gives {}".format(
            title, first, *numbers(expected[first], shown(got.grad[index[first]]))
        ),
        {f"{n}.grad": x for n, x in expected.items()},
        {f"{n}.grad": shown(got.grad[index[n]]) for n in expected},
        names=tuple(names),
        graph=graph_of(program, names, expected_run, got) if expected_run else None,
        got_grad=tuple(got.grad),
    )
    verdict = replace(verdict, cause=cause) if cause else verdict.explained(ctx)
    return verdict.outcome(
        "Work the example backwards by hand, one node at a time, and compare "
        "each node's grad with yours to find the first rule that differs."
    )


def _later(ctx: Context, waiting: list[tuple[str, list[str]]]) -> str:
    """The examples not judged yet, then the operations they need, each once with the check that charges it."""
    if not waiting:
        return ""
    titles = [title for title, _ in waiting]
    listed = titles[0] if len(titles) == 1 else f"{', '.join(titles[:-1])} and {titles[-1]}"
    needed = dict.fromkeys(op for _, ops in waiting for op in ops)
    ops = ", ".join(f"{WORDS.get(op, op)} (see {_blocker(ctx, op)})" for op in needed)
    return f"\nNot judged yet: {listed}, which need {ops}."


def _blocker(ctx: Context, op: str) -> str:
    """The check that charges an operation the engine lacks: its own rule check when the engine does not have it
    yet (not defined, or not written), forward when it is there but does not work on its own."""
    return RULE_CHECK.get(op, "forward") if op in ctx.features.absent else "forward"


def _blockers(ctx: Context, waiting: list[tuple[str, list[str]]]) -> list[str]:
    return list(dict.fromkeys(_blocker(ctx, op) for _, ops in waiting for op in ops))


def _near(got, expected: float) -> bool:
    return isinstance(got, float) and math.isclose(got, expected, rel_tol=HAND_TOLERANCE, abs_tol=HAND_TOLERANCE)


DEEP_NODES = 10_000


@check("deep_graph", "backward() works on a chain of 10,000 nodes", backward=True)
def deep_graph(ctx: Context) -> Outcome:
    op = ctx.features.chain_op or "add"
    program: list[tuple] = [("leaf", 1.0)]
    for _ in range(DEEP_NODES // 2):
        program += [("leaf", 1.0), (op, len(program) - 1, len(program))]
    want = [0, len(program) - 2]
    got = ctx.student.run_many([tuple(program)], want=want, seed=ctx.features.seed_missing)[0]  # a missing seed is
    # not this check's business: the rule checks seed the output themselves too
    assert got is not None, "the first program is always reached"
    code = (
        f"x = Value(1.0)\nfor _ in range({DEEP_NODES // 2}):\n    x = x {'+' if op == 'add' else '*'} "
        f"Value(1.0)\nx.backward()"
    )
    if not got.ok:
        if got.error and got.error.type == "RecursionError":
            return Outcome(
                "failed",
                f"backward() on a chain of {DEEP_NODES:,} nodes raised RecursionError: a recursive build_topo "
                "goes one Python call deeper per node. Build the topological order with an explicit stack "
                "(a list you push to and pop from) instead of recursion.",
                Counterexample(code, {"first leaf's grad": 1.0}, {"first leaf's grad": "RecursionError"}),
            )
        outcome = error_verdict(tuple(program), got, doing=f"backward() on a chain of {DEEP_NODES:,} nodes").outcome("")
        if outcome.counterexample is None:
            return outcome
        # The chain as its three-line loop, never unrolled: 10,000 lines of `s417 = s416 + v417` teach nothing.
        return replace(outcome, counterexample=replace(outcome.counterexample, code=code))
    assert got.grad is not None, "a run that went well, after backward(), has its grads"
    first = got.grad[0]
    if not _near(first, 1.0):
        return Outcome(
            "failed",
            f"after backward() on a chain of {DEEP_NODES:,} nodes, the first leaf's grad should be 1 "
            f"but is {shown(first)}.",
            Counterexample(code, {"first leaf's grad": 1.0}, {"first leaf's grad": shown(first)}),
        )
    return Evidence((f"a chain of {DEEP_NODES:,} nodes",)).settle(
        Outcome("passed", f"backward() handles a chain of {DEEP_NODES:,} nodes.")
    )


# (function name in the worker, its source, x, h or None for the default)
NUMERICAL_CASES = (
    ("cube", "lambda x: x**3", 2.0, 0.1),
    ("sin", "math.sin", 1.0, 0.01),
    ("poly", "lambda x: 3*x**2 - 4*x + 5", 3.0, None),
)


@check("numerical_grad", "numerical_grad(f, x, h=1e-6) is the central difference")
def numerical_grad(ctx: Context) -> Outcome:
    if missing := ctx.missing("numerical_grad", "a function numerical_grad(f, x, h=1e-6)"):
        return missing
    for name, source, x, h in NUMERICAL_CASES:
        f = probes.FUNCTIONS[name]
        step = 1e-6 if h is None else h
        expected = (f(x + step) - f(x - step)) / (2 * step)
        got = ctx.student.ask(protocol.numerical_grad(name, x, h), {"value": a_number})
        call = f"numerical_grad(f, {x!r}" + (f", h={h!r})" if h is not None else ")")
        code = ("import math\n" if "math." in source else "") + f"f = {source}\nprint({call})"
        if isinstance(got, Observation):
            return Outcome(
                "error",
                error_message(got, f"{call} with f = {source}"),
                Counterexample(code, {"numerical_grad": expected}, {"numerical_grad": "an exception"}),
                not_written=not_written(got),
            )
        value = got.get("value")
        tolerance = 1e-9 if h is not None else 1e-6
        if not (isinstance(value, float) and math.isclose(value, expected, rel_tol=tolerance, abs_tol=tolerance)):
            return Outcome(
                "failed",
                "with f = {}, {} should be {} but gives {}. Use the central ".format(
                    source, call, *numbers(expected, shown(value))
                )
                + "difference (f(x + h) - f(x - h)) / (2 * h): it is far more accurate than the forward "
                "difference (f(x + h) - f(x)) / h.",
                Counterexample(code, {"numerical_grad": expected}, {"numerical_grad": shown(value)}),
            )
    probed = tuple(
        f"numerical_grad(f, {x!r}" + (f", h={h!r})" if h is not None else ")") for _, _, x, h in NUMERICAL_CASES
    )
    return Evidence(probed).settle(
        Outcome("passed", "numerical_grad is the central difference, with h=1e-6 by default.")
    )
