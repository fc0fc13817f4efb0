"""Compare the student's engine with the reference on a program, and let hypothesis find
and shrink the smallest program on which they disagree."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import hypothesis
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import NoSuchExample, Unsatisfiable

from grader.causes import Cause
from grader.checks import diagnose, plans, strategies
from grader.checks.context import CheckTimeout, Context, reference_run
from grader.errors import WorkerFailure
from grader.feedback import numbers
from grader.programs import Program, ancestors, default_names, inputs, op_label, padded, to_code
from grader.protocol import Observation, StudentError
from grader.result import Counterexample, NotWritten, Outcome
from grader.sandbox.inside import probes

# Hypothesis caches what it learns under ./.hypothesis by default: that would be the
# student's folder. Keep it in the grader's own cache instead (no example database is used).
set_hypothesis_home_dir(plans.cache_dir() / "hypothesis")

RETRIES = 3  # re-runs of a counterexample, to tell an unstable engine from a plainly wrong one


@dataclass(frozen=True)
class Verdict:
    """How the student's engine disagreed with the reference on one program."""

    program: Program
    status: str
    """failed (wrong numbers) or error (the student's code raised, hung or crashed)."""
    what: str
    """One sentence: which number was wrong, or what was raised."""
    expected: dict[str, Any] = field(default_factory=dict)
    got: dict[str, Any] = field(default_factory=dict)
    traceback: str = ""
    failure: WorkerFailure | None = None
    names: tuple[str, ...] = ()
    backward: bool = True
    """Whether the case calls backward() (a forward-only case does not)."""
    graph: dict[str, Any] | None = None
    """The computation graph with each node's numbers, for the report's picture."""
    unstable: bool = False
    """The same expression gave the right answer on another try (an order that follows a set)."""
    not_written: NotWritten | None = None
    """The student's code raised NotImplementedError: a method of the starter kit still to write."""
    raised: StudentError | None = None
    """What the student's code raised, as its process claimed (for the cause: diagnose.from_error)."""
    cause: Cause | None = None
    """The misconception behind it, when one is recognised (diagnose.py)."""
    got_grad: tuple = ()
    """The student's gradient per node, to recognise the misconception by."""

    def counterexample(self) -> Counterexample:
        return Counterexample(to_code(self.program, self.names or None, self.backward), self.expected, self.got)

    def outcome(self, hint: str, lead: str = "") -> Outcome:
        """The failed check's outcome: what happened on the smallest case, and the likely cause
        (the misconception, when recognised, which the result says: grader/causes.py; else the rule's hint)."""
        cause = self.cause.id if self.cause else None
        if self.status == "error":
            feedback = self.what if self.not_written else f"{lead}{self.what}"
            if self.traceback:
                feedback += f"\n{self.traceback.rstrip()}"
            elif not feedback.endswith((".", ")", "!", "?")):
                feedback += "."
            return Outcome(
                "error", feedback, self.counterexample(), self._artifacts(), cause=cause, not_written=self.not_written
            )
        unstable = (
            (
                "\nThe same expression gave the right answer on another try, so the order your backward() "
                "visits nodes in changes from run to run: children kept in a set are visited in an order "
                "that follows memory addresses."
            )
            if self.unstable
            else ""
        )
        return Outcome(  # each sentence after the first on a line of its own: a table's row shows the first
            "failed",
            f"{lead}{self.what}.{unstable}{'' if cause else chr(10) + hint}",
            self.counterexample(),
            self._artifacts(),
            cause=cause,
        )

    def _artifacts(self) -> dict[str, Any]:
        found: dict[str, Any] = {"graph": self.graph} if self.graph else {}
        return found | causes_found(self.cause)

    def explained(self, ctx: Context, seed: bool = False) -> Verdict:
        """The verdict with its misconception, if one is recognised (a hypothesis tested beyond this case)."""
        if self.cause is not None or ctx.statuses_only:  # a regrade verifying a repair wants statuses only
            return self
        if self.status == "error":
            return replace(self, cause=diagnose.from_error(self.raised, self.program))
        if self.got_grad:
            return replace(self, cause=diagnose.diagnosed(ctx, self.program, list(self.got_grad), seed))
        return self


def causes_found(cause: Cause | None) -> dict[str, Any]:
    """An outcome's artifacts naming a misconception found in several methods: every cause id, its own first."""
    return {"causes": [cause.id, *cause.also]} if cause is not None and cause.also else {}


def shown(value: Any) -> Any:
    """A number as the student should see it, or the worker's description of a non-number."""
    if isinstance(value, dict):
        return value.get("bad", str(value))
    if isinstance(value, float) and value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return str(value)
    return value


def error_verdict(program: Program, observed: Observation, names=None, doing="running it", backward=True) -> Verdict:
    if observed.failure:
        return Verdict(
            program,
            "error",
            f"{doing}: your code {observed.failure.message}",
            failure=observed.failure,
            names=tuple(names or ()),
            backward=backward,
        )
    err = observed.error
    assert err is not None, "an observation not ok that did not fail holds what the student's code raised"
    if err.type == "NotImplementedError":  # the starter kit's unfilled methods: a friendly line, no traceback
        return Verdict(
            program,
            "error",
            f"{err.message or 'not written yet'} (needed for {doing})",
            names=tuple(names or ()),
            backward=backward,
            not_written=not_written(observed),
            raised=err,
        )
    return Verdict(
        program,
        "error",
        f"{doing} raised {err.type}: {err.message}",
        traceback=_frames(err.traceback),
        names=tuple(names or ()),
        backward=backward,
        raised=err,
    )


def _frames(traceback: str) -> str:
    """The traceback, or nothing when it holds no line of the student's code: its last line alone would
    repeat the exception the feedback has just named."""
    return traceback if any(line.lstrip().startswith("File ") for line in traceback.splitlines()) else ""


def not_written(observed: Observation) -> NotWritten | None:
    """The method still to write when the student's code raised NotImplementedError (a starter kit's, which the
    reports group by method): where their process said it came from, and its message's first line."""
    err = observed.error
    if err is None or err.type != "NotImplementedError":
        return None
    message = ((err.message or "not written yet").splitlines() or [""])[0][:80]
    return NotWritten(err.raised_in or message, message)


def error_message(observed: Observation, doing: str) -> str:
    """What the student's code did wrong while doing something, with its trimmed traceback."""
    verdict = error_verdict((), observed, doing=doing)
    return verdict.what + (f"\n{verdict.traceback.rstrip()}" if verdict.traceback else "")


def judged(program: Program, quantity: str = "grad", distinct: bool = False) -> bool:
    """Is the program inside the reference's domain, away from relu's kink (and, with distinct,
    free of two different nodes holding the same number)?"""
    expected = reference_run(program, quantity == "grad")
    if expected is None or _at_relu_kink(program, expected):
        return False
    return not distinct or _all_distinct(program)


@functools.lru_cache(maxsize=20_000)
def _all_distinct(program: Program) -> bool:
    """Do all the nodes of the program's graph, those composite operations make inside (-b in a - b,
    the -1 in -x) included, hold different numbers? (Built with the reference, whose - and / are
    composite as the lesson's are.)"""
    import reference

    nodes = probes.build(program, reference.Value)
    values = [round(node.data, 12) for node in reference.engine.topological_order(nodes[-1])]
    return len(set(values)) == len(values)


@dataclass(frozen=True)
class Probe:
    """How a check asks: what it compares, and what it does for a student's broken basics."""

    quantity: str = "grad"
    """grad (gradients after backward(), every node the output depends on) or data (forward values)."""
    seed: bool = False
    """Set the output's grad to 1 before backward() (the engine does not: see hand_examples)."""
    distinct: bool = False
    """Judge only programs whose nodes all hold different numbers (the engine merges equal ones)."""


DEFAULT = Probe()


def compare(
    ctx: Context,
    program: Program,
    probe: Probe = DEFAULT,
    names: list[str] | None = None,
    got: Observation | None = None,
) -> Verdict | None:
    """Run the program on both engines; a Verdict if the student's disagrees, else None.

    Programs outside the reference's domain, or with relu exactly at its kink, are not
    judged. got is the student's answer if already in hand.
    """
    quantity = probe.quantity
    backward = quantity == "grad"
    if not judged(program, quantity, probe.distinct):
        return None
    expected = reference_run(program, backward)
    got = got if got is not None else ctx.student.run(program, backward, seed=probe.seed)
    names = names or default_names(program)
    if not got.ok:
        return error_verdict(
            program,
            got,
            names,
            "building the expression and calling backward()" if backward else "building the expression",
            backward,
        )
    order = ancestors(program)
    order = [i for i in order if program[i][0] == "leaf"] + [i for i in order if program[i][0] != "leaf"]
    wrong = [i for i in order if not ctx.close(getattr(expected, quantity)[i], getattr(got, quantity)[i])]
    if not wrong:
        return None
    suffix = "." + quantity
    shown_nodes = [i for i in order if program[i][0] == "leaf" or i in wrong] if backward else wrong
    first = wrong[0]
    assert expected is not None, "judged() keeps only the programs the reference computes"
    graph = graph_of(program, names, expected, got)
    return Verdict(
        program,
        "failed",
        "{}{} should be {} but your engine gives {}".format(
            names[first], suffix, *numbers(getattr(expected, quantity)[first], shown(getattr(got, quantity)[first]))
        ),
        {names[i] + suffix: getattr(expected, quantity)[i] for i in shown_nodes},
        {names[i] + suffix: shown(getattr(got, quantity)[i]) for i in shown_nodes},
        names=tuple(names),
        backward=backward,
        graph=graph,
        got_grad=tuple(got.grad or ()) if backward else (),  # (an ok run's backward always has them)
    )


def graph_of(program: Program, names, expected: Observation, got: Observation) -> dict[str, Any]:
    """Nodes the output depends on, each with its operation, inputs and both engines' numbers."""
    assert got.data is not None and expected.data is not None, "runs that went well: each has its numbers"
    nodes = []
    for i in ancestors(program):
        node = {
            "id": i,
            "name": names[i],
            "op": op_label(program[i]),
            "inputs": inputs(program[i]),
            "data": shown(got.data[i]),
            "expected_data": expected.data[i],
        }
        if got.grad is not None and expected.grad is not None:
            node.update(grad=shown(got.grad[i]), expected_grad=expected.grad[i])
        nodes.append(node)
    return {"nodes": nodes}


def _at_relu_kink(program: Program, expected: Observation) -> bool:
    data = expected.data
    assert data is not None, "the reference's run: it has its numbers"
    return any(ins[0] == "relu" and data[ins[1]] == 0.0 for ins in program)


def compare_many(
    ctx: Context, programs: list[Program], probe: Probe = DEFAULT, answers: dict | None = None
) -> dict[Program, Verdict | None]:
    """compare() on many programs, with one request to the student's engine for all of them
    (or on the answers already in hand). Programs after one on which the student's process
    failed, or after the first disagreement's chunk, are left out (not judged yet)."""
    todo = [p for p in programs if judged(p, probe.quantity, probe.distinct)]
    if answers is None:
        got_all = ctx.student.run_many(
            todo,
            probe.quantity == "grad",
            seed=probe.seed,
            stop=lambda program, got: compare(ctx, program, probe, got=got) is not None,
        )
        answers = dict(zip(todo, got_all, strict=False))
    asked = set(todo)
    verdicts: dict[Program, Verdict | None] = {p: None for p in programs if p not in asked}
    for program in todo:
        got = answers.get(program)
        if got is None:
            break
        verdicts[program] = compare(ctx, program, probe, got=got)
    return verdicts


def search(
    ctx: Context,
    shape: strategies.Shape,
    judge: Callable[[Program], Verdict | None],
    judge_many: Callable[[list[Program]], dict[Program, Verdict | None]],
) -> Verdict | None:
    """The smallest program the judge rejects, found by hypothesis (derandomised, no database).

    The programs hypothesis would try are known in advance (plans.py) and judged in one
    request; hypothesis itself runs only if one of them disagrees, replaying the answers in
    hand up to it and then shrinking it, one program per request.

    Each program is judged once and remembered: an engine whose order follows memory
    addresses (children in a set) may answer the same program differently later in the
    same process, and hypothesis must see one consistent answer.

    A hang or crash of the student's process, or the check's time running out, ends the
    search at once: the condition then accepts anything, so hypothesis finishes without
    calling the student's code again.
    """
    max_examples = ctx.assignment.search.max_examples
    plan = plans.programs(shape, max_examples)
    verdicts = judge_many(list(plan))
    if all(verdicts.get(p) is None for p in plan) and len(verdicts) == len(plan):
        return None
    first = next((verdicts[p] for p in plan if verdicts.get(p) is not None), None)
    if ctx.statuses_only and first is not None:  # a verifying regrade: the first disagreement fails it, unshrunk
        return first
    disagrees = _Disagrees(ctx, judge, verdicts)
    program = _smallest(shape, disagrees, plan, max_examples)
    if program is None:
        return None
    if disagrees.stopped:
        if isinstance(disagrees.stopped[0], CheckTimeout):
            raise disagrees.stopped[0]
        return disagrees.stopped[0]
    return _confirmed(program, verdicts[program], judge)


class _Disagrees:
    """search()'s condition for hypothesis: whether the judge rejects a program, each judged once and
    remembered in verdicts. A failure of the student's process or the check's time running out is kept in
    stopped, and from then on every program is accepted."""

    def __init__(
        self, ctx: Context, judge: Callable[[Program], Verdict | None], verdicts: dict[Program, Verdict | None]
    ) -> None:
        self.ctx = ctx
        self.judge = judge
        self.verdicts = verdicts
        self.stopped: list[Verdict | CheckTimeout] = []

    def __call__(self, program: Program) -> bool:
        if self.stopped:
            return True
        if program not in self.verdicts:
            try:
                self.ctx.check_time()
            except CheckTimeout as timeout:
                self.stopped.append(timeout)
                return True
            self.verdicts[program] = self.judge(program)
        verdict = self.verdicts[program]
        if verdict is not None and verdict.failure is not None:
            self.stopped.append(verdict)
        return verdict is not None


def _smallest(
    shape: strategies.Shape, disagrees: _Disagrees, plan: tuple[Program, ...], max_examples: int
) -> Program | None:
    """The program hypothesis finds and shrinks; if it finds none, the plan's first rejected one (hypothesis
    went elsewhere), else None."""
    try:
        return hypothesis.find(strategies.programs(shape), disagrees, settings=plans.settings(max_examples))
    except (NoSuchExample, Unsatisfiable):
        return next((p for p in plan if disagrees.verdicts.get(p) is not None), None)


def again(program: Program) -> list[Program]:
    """The program as it is re-run to tell an unstable engine from a plainly wrong one: as it is, then built after
    leaves it never uses, so that its nodes are made at other addresses (an order that follows memory addresses
    may be the same on every try at the same addresses, whatever the machine's layout)."""
    return [program] + [padded(program, count) for count in range(1, RETRIES + 1)]


def _confirmed(program: Program, verdict: Verdict | None, judge: Callable[[Program], Verdict | None]) -> Verdict:
    """The verdict on the program found, marked unstable if a re-run of a wrong answer comes out right."""
    assert verdict is not None, "the program found is one the judge rejected"
    if verdict.status == "failed" and any(judge(retry) is None for retry in again(program)):
        verdict = replace(verdict, unstable=True)
    return verdict
