"""What a check works with: the student's engine (behind the engine lane's sandbox), the
reference engine (in this process), tolerances, time limits and the preflight's trusted
features. Requests are built and replies read by grader/protocol.py: every answer of the
student's engine is an untrusted claim, checked for type and shape, and anything else is
the student's error."""

from __future__ import annotations

import difflib
import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader import protocol
from grader.checks.reads import Finding, Reads
from grader.checks.reference_engine import reference_run
from grader.checks.suite_runs import Catches, Suite
from grader.errors import CheckTimeout, OutOfTime, WorkerFailure
from grader.files import TESTS_FILE
from grader.programs import Program
from grader.protocol import Observation
from grader.result import Outcome
from grader.spec import Assignment

__all__ = ["CHUNK", "Context", "Judged", "StudentEngine", "did_you_mean", "reference_run"]


def did_you_mean(name: str, symbols: list[str]) -> str:
    """A sentence suggesting the closest name the student did define, or nothing."""
    close = difflib.get_close_matches(name, symbols, n=1, cutoff=0.5)
    if not close:
        return ""
    case = " Python names are case-sensitive." if close[0].lower() == name.lower() else ""
    return f" Did you mean {name} instead of {close[0]}?{case}"


class StudentEngine:
    """The student's own engine, reached only through requests to the engine lane."""

    def __init__(self, lane, ctx: Context):
        self.lane = lane
        self.ctx = ctx

    def _request(
        self, message: dict, timeout: float | None = None, on_event: Callable | None = None, gap: float | None = None
    ) -> dict:
        """One request, within its own limit (timeout, default request_s) and the check's deadline
        (itself within the grading's); the check's time running out first is a CheckTimeout."""
        timeout = timeout or self.ctx.assignment.limits.request_s
        until = self.ctx.deadline if math.isfinite(self.ctx.deadline) else None
        try:
            return self.lane.request(message, timeout, until, on_event, gap)
        except WorkerFailure as failure:
            self.ctx.timed |= failure.kind == "timeout"
            if isinstance(failure, OutOfTime) and failure.outer:
                raise CheckTimeout(self.ctx.stopped_by) from None
            raise

    def ask(
        self, message: dict[str, Any], shape: dict[str, Callable[[Any], Any]], timeout: float | None = None
    ) -> Observation | dict[str, Any]:
        """Send a request; the result (each field read through its converter in shape, missing
        fields left out), or an Observation describing the error, the failure, or a malformed reply."""
        try:
            reply = self._request(message, timeout)
        except WorkerFailure as failure:
            return Observation(failure=failure)
        return protocol.fields(reply, shape)

    def run(self, program: Program, backward: bool = True, seed: bool = False) -> Observation:
        found = self.run_many([program], backward, seed=seed)[0]
        assert found is not None, "the first program is always reached"
        return found

    def run_many(
        self,
        programs: list[Program],
        backward: bool = True,
        want: list[int] | None = None,
        stop: Callable[[Program, Observation], bool] | None = None,
        seed: bool = False,
        every: bool = False,
    ) -> list[Observation | None]:
        """Every program built (and backpropagated, the output's grad first set to 1 if seed), a chunk
        of programs per request. None for those never reached: after one on which the student's
        process failed (that one carries the failure), or, with stop, after the chunk holding the first
        program stop says ends the batch. With every, a program that raises does not end it (the
        preflight needs every answer)."""
        sizes = [len(want) if want is not None else len(p) for p in programs]
        return self._many(
            lambda chunk: protocol.eval_many(chunk, backward, want, seed, not every),
            programs,
            lambda i, value: protocol.observation(value, sizes[i], backward),
            stop,
            every,
        )

    def order_many(
        self, programs: list[Program], seed: bool, stop: Callable[[Program, Any], bool] | None = None
    ) -> list[protocol.Order | Observation | None]:
        """The order in which backward() calls each operation node's own backward, per program."""
        return self._many(
            lambda chunk: protocol.order_many(chunk, seed),
            programs,
            lambda i, value: protocol.order(value, programs[i]),
            stop,
            every=True,
        )

    def direct_many(self, programs: list[Program], incoming: list[float]) -> list[protocol.Direct | Observation | None]:
        """Every node's grad after the output's own backward is called alone, per program and incoming gradient."""
        return self._many(
            lambda chunk: protocol.direct_many(chunk, incoming),
            programs,
            lambda i, value: protocol.direct(value, programs[i], len(incoming)),
            None,
            every=True,
        )

    def gradcheck_many(
        self, programs: list[Program], h: float, stop: Callable[[Program, Any], bool] | None = None
    ) -> list[dict | Observation | None]:
        return self._many(
            lambda chunk: protocol.gradcheck_many(chunk, h),
            programs,
            lambda i, value: protocol.gradcheck(value, programs[i]),
            stop,
        )

    def _many(
        self,
        request: Callable[[list[Program]], dict],
        programs: list[Program],
        read: Callable[[int, Any], Any],
        stop: Callable[[Program, Any], bool] | None,
        every: bool = False,
    ) -> list:
        results: list = [None] * len(programs)
        for start in range(0, len(programs), CHUNK):
            chunk = programs[start : start + CHUNK]

            def on_event(event: dict, start=start, n=len(chunk)) -> None:  # noqa: B008 - this chunk's size
                item = event.get("item")
                if (
                    isinstance(item, int)
                    and not isinstance(item, bool)
                    and 0 <= item < n
                    and results[start + item] is None
                ):
                    results[start + item] = read(start + item, event.get("value"))

            request_s = self.ctx.assignment.limits.request_s  # for each program, as if each were a request
            try:
                reply = self._request(request(chunk), request_s * len(chunk), on_event, gap=request_s)
            except WorkerFailure as failure:
                _first_missing(results, start, Observation(failure=failure))
                return results
            if (error := protocol.raised(reply)) is not None:
                _first_missing(results, start, Observation(error=error))
                return results
            for i in range(start, start + len(chunk)):
                if results[i] is None:  # the batch said it was done, yet this one never came
                    results[i] = Observation(error=protocol.UNREADABLE)
                raised = isinstance(results[i], Observation) and results[i].error is not None
                if raised and not every or stop and stop(programs[i], results[i]):
                    return results  # the student's process stops a batch at its first exception, too
        return results


CHUNK = 32
"""Programs per request: a batch stops at the chunk where the student's engine first disagrees."""


def _first_missing(results: list, start: int, value: Observation) -> None:
    first = next((i for i in range(start, len(results)) if results[i] is None), None)
    if first is not None:
        results[first] = value


@dataclass(frozen=True)
class Judged:
    """What the checks judge a submission by besides its engine and tests' runs: its tests' text (None: it has
    none), the seed of the grading's choices, the grading's deadline, and whether only each check's status is
    wanted (a regrade verifying a repair: a failure is not shrunk nor its cause diagnosed)."""

    tests_source: str | None = None
    seed: str = ""
    ends: float = math.inf
    statuses_only: bool = False
    tests_name: str = TESTS_FILE
    """The name the student gave their tests' file (`--tests test_bad.py`): what a message about it says, though the
    sandbox runs it as TESTS_FILE."""


class Context:
    """Everything a check needs; one per submission."""

    def __init__(
        self,
        assignment: Assignment,
        engine,
        symbols: list[str],
        suite=None,
        judged: Judged = Judged(),
        preflight: Callable[[Context], Any] | None = None,
    ):
        self.assignment = assignment
        self.preflight = preflight
        """What finds the engine's basics (checks/features.preflight), given by grading: this module is below it."""
        self.student = StudentEngine(engine, self)
        self.symbols = symbols
        self.suite_lane = suite
        """The suite lane running the student's tests (None when there are no tests)."""
        self.tests_source = judged.tests_source or ""
        """The text of the student's tests (for a notebook, the shim importing its test_* functions)."""
        self.has_tests = judged.tests_source is not None
        self.tests_name = judged.tests_name
        """The student's name for their tests' file."""
        self.seed = judged.seed
        """The submission's hash: what makes this grading's choices, the same at every regrade."""
        self.ends = judged.ends
        """The grading's deadline (time.monotonic()): the end of the submission's time limit."""
        self.statuses_only = judged.statuses_only
        """Only each check's status is wanted (a regrade verifying a repair)."""
        self.deadline = math.inf
        """The check's deadline: its own limit, or the grading's if that comes first."""
        self.stopped_by = ""
        """Which of the two it is, in words, for a check stopped by it."""
        self.timed = False
        """A time limit stopped a request of the check running now (a batch regrades such a student alone)."""
        self.reads = Reads()
        """The results of the checks the running check declares it reads (checks/reads.py; the runner sets it for
        each check): the only way a check sees another's work. Reading any other check's raises."""
        self.finding = Finding()
        """What the running check found so far, which the checks reading it may use (the runner keeps it)."""
        # Work the checks share that is the same whichever check asks first (asked of the engine, or computed, once
        # per grading), each kind in a field of its own:
        self.discriminating: dict[bool, dict[Program, Observation | None]] = {}
        """The student's engine on the discriminating programs, by whether the output's grad was seeded (asked once
        per grading, in one request)."""
        self.groups: dict[str, tuple] = {}
        """Each misconception found in several rules, by its family's prefix: the rules it is in, each in its best
        form (checks/diagnose.py), found once and named with every method it is in. Grown from the first of its
        causes a check names, in the order the checks run."""
        self.alone: dict[Program, Observation | Any] | None = None
        """The student's engine on each operation's smallest cases, its output's own backward called alone under
        several incoming gradients (checks/direct.py): asked once per grading, by the preflight."""
        self.builds: dict[str, bool] = {}
        """Whether each operation builds and computes the right value on its own (asked once, for why a property
        could not be probed)."""
        self.suite_runs: Suite | Outcome | None = None
        """The suite's runs on every engine, collected once for the three suite checks (or why there are none)."""
        self.catches: Catches | None = None
        """What the suite catches, judged once from its runs (sabotage pays for it; it caps student_tests and
        wheat)."""

    def start_check(self, seconds: float) -> None:
        self.timed = False
        own = time.monotonic() + seconds
        self.deadline = min(own, self.ends)
        limits = self.assignment.limits
        self.stopped_by = (
            f"the check ran past its time limit of {seconds:g} s"
            if own <= self.ends
            else f"the submission ran past its time limit of {limits.submission_s:g} s"
        )

    def deadline_left(self) -> float:
        return self.deadline - time.monotonic()

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise CheckTimeout(self.stopped_by)

    @functools.cached_property
    def features(self):
        assert self.preflight is not None, "grading gives every context its preflight"
        return self.preflight(self)

    def close(self, expected: float, got: Any) -> bool:
        """Is got a number equal to expected within the assignment's tolerances?"""
        if not isinstance(got, float):
            return False
        tol = self.assignment.tolerances
        return math.isclose(got, expected, rel_tol=tol.rtol, abs_tol=tol.atol)

    def missing(self, name: str, what: str):
        """A failed outcome when the student's module defines no such name, else None."""
        if name in self.symbols:
            return None
        return Outcome("failed", f"Your module defines no {name} ({what}).{did_you_mean(name, self.symbols)}")
