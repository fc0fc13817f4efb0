"""The check runner: a grading's checks, each run under its own time limit, in an order their declared reads allow.

Two phases: the engine checks, then the suite checks (with one sandbox, the suite's runs end the engine's process:
it is not loaded again). Within each, a check runs after every check it reads (`@check(..., reads=...)`), and
otherwise in the assignment's order; reads that form a cycle are refused. A check reads the results of the checks it
declares, and those alone (`ctx.reads`, checks/reads.py); what it finds on its way (`ctx.finding`) is kept in its
result for the checks that read it. Once every check has run, one pass says each cause once (attribution.py) and
the results keep the assignment's order.

Everything keeps to the grading's deadline (ctx.ends): a check that cannot start in time is skipped, naming the
limit; one that calls backward(), once backward() is known never to end, is skipped without waiting for it.
"""

from __future__ import annotations

import graphlib
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from grader.checks.attribution import alone, attributed
from grader.checks.context import Context
from grader.checks.reads import Finding, Ran, Reads
from grader.checks.registry import REGISTRY, Check
from grader.checks.suite import SUITE_CHECKS
from grader.errors import CheckTimeout, MiswiredChecks, ReadCycle, WorkerFailure, without_host_paths
from grader.result import CheckResult, Outcome
from grader.spec import CheckSpec

OnCheck = Callable[[CheckResult, int, int], None]
"""Told of each check as it ends: its result, how many are done, how many there are (grader check's progress)."""


def run_checks(
    ctx: Context,
    specs: list[CheckSpec],
    on_check: OnCheck | None = None,
    registry: Mapping[str, Check] = REGISTRY,
    between: Callable[[], None] | None = None,
) -> list[CheckResult]:
    """Steps 3 and 4: each check with its own time limit, and none started once the grading's time (ctx.ends) is up;
    the engine checks first and the suite checks last, whatever their order in the assignment, each after the checks
    it reads. The results keep the assignment's order, and the first check of that order to fail from a cause
    explains it. on_check hears of each check as it ends (its result as run alone, the checks done, the checks to
    run); between is called once, when the engine checks are done and before the suite checks (while the suite's
    runs go: a grading verifies its repairs there)."""
    engine, suite = ordered(specs, registry)
    hidden = frozenset(c.id for c in ctx.assignment.checks if c.visibility == "hidden")
    runner = _Runner(ctx, registry, on_check, len(specs), hidden)
    for spec in engine:
        runner.run(spec)
    # The engine checks are done here: what a grading does once they are, while the suite's runs go, goes here.
    if between is not None:
        between()
    for spec in suite:
        runner.run(spec)
    return attributed(specs, runner.ran, {s.id: registry[s.id].title for s in specs}, hidden)


def ordered(
    specs: Sequence[CheckSpec], registry: Mapping[str, Check] = REGISTRY
) -> tuple[list[CheckSpec], list[CheckSpec]]:
    """The checks in the order they run, in two phases: the engine checks, then the suite's. Within each, a check
    runs after every check it reads, and otherwise in the assignment's order. Reads that name no registered check,
    that form a cycle (among any checks, this grading's or not), or that have an engine check read a suite check
    (which runs after it) are refused: MiswiredChecks, ReadCycle."""
    _refuse_miswired([s.id for s in specs], registry)
    engine = [s for s in specs if s.id not in SUITE_CHECKS]
    suite = [s for s in specs if s.id in SUITE_CHECKS]
    return _in_order(engine, registry), _in_order(suite, registry)


def _refuse_miswired(ids: list[str], registry: Mapping[str, Check]) -> None:
    """Raise when the reads of these checks, and of every check they read in turn, cannot be met."""
    graph: dict[str, tuple[str, ...]] = {}
    todo = list(ids)
    while todo:  # every check reachable through reads, the grading's or not
        check_id = todo.pop()
        if check_id in graph:
            continue
        reads = registry[check_id].reads
        unknown = [r for r in reads if r not in registry]
        if unknown:
            raise MiswiredChecks(f"the check {check_id!r} reads {unknown[0]!r}, which no module registers")
        later = [r for r in reads if r in SUITE_CHECKS and check_id not in SUITE_CHECKS]
        if later:
            raise MiswiredChecks(
                f"the engine check {check_id!r} reads the suite check {later[0]!r}, which runs after every engine check"
            )
        graph[check_id] = reads
        todo.extend(reads)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as cycle:
        raise ReadCycle(f"the checks' reads form a cycle: {' reads '.join(cycle.args[1][::-1])}") from None


def _in_order(specs: list[CheckSpec], registry: Mapping[str, Check]) -> list[CheckSpec]:
    """The specs, each after those of them it reads, and otherwise in the order given (no cycle: checked)."""
    position = {s.id: i for i, s in enumerate(specs)}
    sorter = graphlib.TopologicalSorter({s.id: [r for r in registry[s.id].reads if r in position] for s in specs})
    sorter.prepare()
    ready: list[str] = []
    found: list[CheckSpec] = []
    while sorter.is_active():
        ready = sorted([*ready, *sorter.get_ready()], key=position.__getitem__)
        first, ready = ready[0], ready[1:]
        found.append(specs[position[first]])
        sorter.done(first)
    return found


@dataclass
class _Runner:
    """One grading's run of its checks: their results so far, and the checks skipped because backward() never
    ends (the first explaining why)."""

    ctx: Context
    registry: Mapping[str, Check]
    on_check: OnCheck | None
    total: int
    hidden: frozenset[str]
    """The assignment's hidden checks, which a visible check's feedback never names."""
    ran: dict[str, Ran] = field(default_factory=dict)
    hung: list[str] = field(default_factory=list)

    def run(self, spec: CheckSpec) -> None:
        """Run one check, reading only the results of the checks it declares, and keep its result."""
        check, ctx = self.registry[spec.id], self.ctx
        t0 = time.monotonic()
        ctx.reads, ctx.finding = Reads(spec.id, check.reads, self.ran), Finding()
        outcome, timed = self._outcome(check, t0)
        if timed:  # a typed mark, not words: a batch regrades alone a student whose grade a time limit touched
            outcome = replace(outcome, timing=True)
        self.ran[spec.id] = Ran(spec.id, outcome, ctx.finding.frozen(), time.monotonic() - t0)
        ctx.reads, ctx.finding = Reads(), Finding()
        if self.on_check is not None:
            self.on_check(alone(spec, check.title, self.ran[spec.id], self.hidden), len(self.ran), self.total)

    def _outcome(self, check: Check, t0: float) -> tuple[Outcome, bool]:
        """The check's outcome (or why it did not run), and whether a time limit touched it."""
        ctx, limits = self.ctx, self.ctx.assignment.limits
        out_of_time = f"Not run: the submission used up its time limit of {limits.submission_s:g} s"
        if t0 >= ctx.ends:
            return Outcome("skipped", f"{out_of_time}."), True
        if _suite_cut(ctx, check.id):
            return Outcome(
                "skipped", f"{out_of_time} before your tests had run on every engine they are judged on."
            ), True
        ctx.start_check(limits.check_s)
        hangs = _backward_hangs(ctx) if check.backward else ""
        if hangs:
            outcome = _hang_skipped(hangs, self.hung, limits.request_s)
            self.hung.append(check.id)
            return outcome, True
        outcome = _run_one(check.run, ctx)
        return outcome, ctx.timed or _suite_timed(ctx, check.id)


def _backward_hangs(ctx: Context) -> str:
    """The code on which the student's backward() never ends (the preflight's finding), or empty; a
    preflight that could not finish leaves it to the check, which meets the same problem and says so."""
    try:
        return ctx.features.backward_hangs
    except Exception:
        return ""


def _hang_skipped(code: str, hung: list[str], request_s: float) -> Outcome:
    """A check calling backward(), once backward() is known never to end: the first is an error saying why (each
    case the preflight waited for, and how long in all: the time the student waited), the others are skipped,
    pointing at it."""
    if hung:
        return Outcome("skipped", f"Not run: backward() does not finish (see {hung[0]}).")
    shown = "\n".join(f"    {line}" for line in code.splitlines())
    waited = code.count(".backward()")
    return Outcome(
        "error",
        f"backward() did not finish within {request_s:g} s on {'either' if waited == 2 else 'any'} of these "
        f"({waited * request_s:g} s in all):"
        f"\n{shown}\nso every check that calls backward() is skipped instead of each "
        "waiting for it. Make backward() end: build the topological order once, marking each node "
        "visited so none is added twice, then call each node's _backward once, in reverse order.",
    )


def _suite_timed(ctx: Context, check_id: str) -> bool:
    """Did a time limit stop one of the suite's runs this check reads?"""
    if check_id not in SUITE_CHECKS or ctx.suite_lane is None:
        return False
    outcome = ctx.suite_lane.result()
    runs = [outcome.own, *outcome.runs] if check_id != "student_tests" else [outcome.own]
    return outcome.cut or any(r is not None and r.failure is not None and r.failure.kind == "timeout" for r in runs)


def _suite_cut(ctx: Context, check_id: str) -> bool:
    """Did the grading's time run out before the suite's runs this check needs were made?"""
    if check_id not in SUITE_CHECKS or ctx.suite_lane is None:
        return False
    outcome = ctx.suite_lane.result()
    return outcome.cut and (check_id != "student_tests" or outcome.own is None)


def _run_one(run: Callable[[Context], Outcome], ctx: Context) -> Outcome:
    try:
        return run(ctx)
    except CheckTimeout as timeout:
        ctx.timed = True
        return Outcome("error", f"Stopped: {timeout}. Your engine may be very slow, or stuck in a loop.")
    except WorkerFailure as failure:
        return Outcome("error", f"Your code {failure.message}.")
    except Exception:
        trace = without_host_paths(traceback.format_exc())
        return Outcome("error", f"Internal grader error (not your fault; tell your instructor):\n{trace}")
