"""What a check works with: the student's engine (behind the engine lane's sandbox), the
reference engine (in this process), tolerances, time limits and the preflight's trusted
features. Everything the student's engine answers is read here as an untrusted claim:
numbers are checked for type and shape, and anything else is the student's error."""

from __future__ import annotations

import difflib
import functools
import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import reference
from grader.errors import CheckTimeout, OutOfTime, WorkerFailure
from grader.programs import Program
from grader.result import Outcome
from grader.sandbox.inside import probes
from grader.spec import Assignment


def did_you_mean(name: str, symbols: list[str]) -> str:
    """A sentence suggesting the closest name the student did define, or nothing."""
    close = difflib.get_close_matches(name, symbols, n=1, cutoff=0.5)
    if not close:
        return ""
    case = " Python names are case-sensitive." if close[0].lower() == name.lower() else ""
    return f" Did you mean {name} instead of {close[0]}?{case}"


UNREADABLE = {"type": "UnreadableReply", "message": "your code answered the grader with something it cannot read "
              "(did it replace the grader's code in its process?)", "traceback": ""}


@dataclass(frozen=True)
class Observation:
    """Numbers read off one engine for one program: data and grad per node, or what went wrong."""

    data: list[Any] | None = None
    grad: list[Any] | None = None
    error: dict[str, Any] | None = None
    """The student's code raised: type, message, traceback trimmed to their lines."""
    failure: WorkerFailure | None = None
    """The student's process hung, ran out of memory, died, or broke the protocol."""

    @property
    def ok(self) -> bool:
        return self.error is None and self.failure is None


def number(x: Any) -> Any:
    """A number as claimed by the sandbox (a float, or {"bad": description}), or None if it is neither."""
    if isinstance(x, float) or (isinstance(x, int) and not isinstance(x, bool)):
        return float(x)
    if isinstance(x, dict) and isinstance(x.get("bad"), str):
        return {"bad": x["bad"][:300]}
    return None


def numbers(xs: Any, n: int) -> list[Any] | None:
    """n claimed numbers, or None if the claim is malformed."""
    if not isinstance(xs, list) or len(xs) != n:
        return None
    read = [number(x) for x in xs]
    return None if any(x is None for x in read) else read


def a_number(x: Any) -> Any:
    read = number(x)
    if read is None:
        raise ValueError(x)
    return read


def an_int(x: Any) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise ValueError(x)
    return x


def a_bool(x: Any) -> bool:
    if not isinstance(x, bool):
        raise ValueError(x)
    return x


def a_name(x: Any) -> str:
    if not isinstance(x, str):
        raise ValueError(x)
    return x[:100]


def list_of(read: Callable[[Any], Any], cap: int = 100_000) -> Callable[[Any], list]:
    def convert(xs: Any) -> list:
        if not isinstance(xs, list) or len(xs) > cap:
            raise ValueError(xs)
        return [read(x) for x in xs]

    return convert


def student_error(err: Any) -> dict[str, Any]:
    """What the student's code raised, as claimed: three strings, capped."""
    if not isinstance(err, dict):
        return dict(UNREADABLE)
    info = {key: str(err.get(key, ""))[:4000] for key in ("type", "message", "traceback")}
    for key in ("lineno", "offset", "text"):
        if key in err:
            info[key] = err[key] if isinstance(err[key], int) else str(err[key])[:400]
    return info


def observation(value: Any, n: int, backward: bool) -> Observation:
    if not isinstance(value, dict):
        return Observation(error=dict(UNREADABLE))
    if "error" in value:
        return Observation(error=student_error(value["error"]))
    data = numbers(value.get("data"), n)
    grad = numbers(value.get("grad"), n) if backward else None
    if data is None or (backward and grad is None):
        return Observation(error=dict(UNREADABLE))
    return Observation(data=data, grad=grad)


class StudentEngine:
    """The student's own engine, reached only through requests to the engine lane."""

    def __init__(self, lane, ctx: Context):
        self.lane = lane
        self.ctx = ctx

    def _request(self, message: dict, timeout: float | None = None, on_event: Callable | None = None,
                 gap: float | None = None) -> dict:
        """One request, within its own limit (timeout, default request_s) and the check's deadline
        (itself within the grading's); the check's time running out first is a CheckTimeout."""
        timeout = timeout or self.ctx.assignment.limits.request_s
        until = self.ctx.deadline if math.isfinite(self.ctx.deadline) else None
        try:
            return self.lane.request(message, timeout, until, on_event, gap)
        except OutOfTime as failure:
            if failure.outer:
                raise CheckTimeout(self.ctx.stopped_by) from None
            raise

    def ask(self, message: dict[str, Any], shape: dict[str, Callable[[Any], Any]],
            timeout: float | None = None) -> Observation | dict[str, Any]:
        """Send a request; the result (each field read through its converter in shape, missing
        fields left out), or an Observation describing the error, the failure, or a malformed reply."""
        try:
            reply = self._request(message, timeout)
        except WorkerFailure as failure:
            return Observation(failure=failure)
        if not reply.get("ok"):
            return Observation(error=student_error(reply.get("error")))
        result = reply.get("result")
        if not isinstance(result, dict):
            return Observation(error=dict(UNREADABLE))
        try:
            return {key: read(result[key]) for key, read in shape.items() if key in result}
        except (TypeError, ValueError):
            return Observation(error=dict(UNREADABLE))

    def run(self, program: Program, backward: bool = True, seed: bool = False) -> Observation:
        return self.run_many([program], backward, seed=seed)[0]

    def run_many(self, programs: list[Program], backward: bool = True, want: list[int] | None = None,
                 stop: Callable[[Program, Observation], bool] | None = None, seed: bool = False,
                 every: bool = False) -> list[Observation | None]:
        """Every program built (and backpropagated, the output's grad first set to 1 if seed), a chunk
        of programs per request. None for those never reached: after one on which the student's
        process failed (that one carries the failure), or, with stop, after the chunk holding the first
        program stop says ends the batch. With every, a program that raises does not end it (the
        preflight needs every answer)."""
        sizes = [len(want) if want is not None else len(p) for p in programs]
        return self._many("eval_many", {"backward": backward, "want": want, "seed": seed, "stop_on_error": not every},
                          programs, lambda i, value: observation(value, sizes[i], backward), stop, every)

    def gradcheck_many(self, programs: list[Program], h: float,
                       stop: Callable[[Program, Any], bool] | None = None) -> list[dict | Observation | None]:
        return self._many("gradcheck_many", {"h": h}, programs, lambda i, value: _gradcheck_reply(value, programs[i]),
                          stop)

    def _many(self, op: str, extra: dict, programs: list[Program], read: Callable[[int, Any], Any],
              stop: Callable[[Program, Any], bool] | None, every: bool = False) -> list:
        results: list = [None] * len(programs)
        for start in range(0, len(programs), CHUNK):
            chunk = programs[start:start + CHUNK]

            def on_event(event: dict, start=start, n=len(chunk)) -> None:
                item = event.get("item")
                if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < n \
                        and results[start + item] is None:
                    results[start + item] = read(start + item, event.get("value"))

            request_s = self.ctx.assignment.limits.request_s  # for each program, as if each were a request
            try:
                reply = self._request({"op": op, "programs": chunk, **extra}, request_s * len(chunk), on_event,
                                      gap=request_s)
            except WorkerFailure as failure:
                _first_missing(results, start, Observation(failure=failure))
                return results
            if not reply.get("ok"):
                _first_missing(results, start, Observation(error=student_error(reply.get("error"))))
                return results
            for i in range(start, start + len(chunk)):
                if results[i] is None:  # the batch said it was done, yet this one never came
                    results[i] = Observation(error=dict(UNREADABLE))
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


def _gradcheck_reply(value: Any, program: Program) -> dict | Observation:
    if isinstance(value, dict) and "error" in value:
        return Observation(error=student_error(value["error"]))
    leaves = [i for i, ins in enumerate(program) if ins[0] == "leaf"]
    if not isinstance(value, dict) or value.get("leaves") != leaves:
        return Observation(error=dict(UNREADABLE))
    analytic, up, down = (numbers(value.get(k), len(leaves)) for k in ("analytic", "up", "down"))
    output = number(value.get("output"))
    if analytic is None or up is None or down is None or output is None:
        return Observation(error=dict(UNREADABLE))
    return {"leaves": leaves, "analytic": analytic, "up": up, "down": down, "output": output}


@functools.lru_cache(maxsize=50_000)
def reference_run(program: Program, backward: bool = True) -> Observation | None:
    """The reference engine's numbers, or None when the program is outside its domain
    (a negative base to a fractional power, a division by zero, an overflow)."""
    try:
        result = probes.evaluate(program, reference.Value, backward)
    except (ArithmeticError, TypeError, ValueError):
        return None
    numbers_ = result["data"] + (result["grad"] or [])
    if not all(isinstance(x, float) and math.isfinite(x) and abs(x) < 1e8 for x in numbers_):
        return None
    return Observation(data=result["data"], grad=result["grad"])


class Context:
    """Everything a check needs; one per submission."""

    def __init__(self, assignment: Assignment, engine, symbols: list[str], suite=None, tests_source: str | None = None,
                 seed: str = "", ends: float = math.inf, preflight: Callable[[Context], Any] | None = None):
        self.assignment = assignment
        self.preflight = preflight
        """What finds the engine's basics (checks/features.preflight), given by grading: this module is below it."""
        self.student = StudentEngine(engine, self)
        self.symbols = symbols
        self.suite_lane = suite
        """The suite lane running the student's tests (None when there are no tests)."""
        self.tests_source = tests_source or ""
        """The text of the student's tests (for a notebook, the shim importing its test_* functions)."""
        self.has_tests = tests_source is not None
        self.seed = seed
        """The submission's hash: what makes this grading's choices, the same at every regrade."""
        self.ends = ends
        """The grading's deadline (time.monotonic()): the end of the submission's time limit."""
        self.deadline = math.inf
        """The check's deadline: its own limit, or the grading's if that comes first."""
        self.stopped_by = ""
        """Which of the two it is, in words, for a check stopped by it."""
        self.cache: dict[str, Any] = {}
        """Work shared by several checks (the student's suite runs once for three checks)."""

    def start_check(self, seconds: float) -> None:
        own = time.monotonic() + seconds
        self.deadline = min(own, self.ends)
        limits = self.assignment.limits
        self.stopped_by = f"the check ran past its time limit of {seconds:g} s" if own <= self.ends else \
            f"the submission ran past its time limit of {limits.submission_s:g} s"

    def deadline_left(self) -> float:
        return self.deadline - time.monotonic()

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise CheckTimeout(self.stopped_by)

    @functools.cached_property
    def features(self):
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
