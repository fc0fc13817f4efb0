"""What a check works with: the student's engine (behind the sandbox), the reference
engine (in this process), tolerances, time limits and the preflight's trusted features."""

from __future__ import annotations

import difflib
import functools
import math
import time
from dataclasses import dataclass
from typing import Any

import reference
from grader.errors import WorkerFailure
from grader.programs import Program
from grader.sandbox import probes
from grader.sandbox.runner import Sandbox
from grader.spec import Assignment


def did_you_mean(name: str, symbols: list[str]) -> str:
    """A sentence suggesting the closest name the student did define, or nothing."""
    close = difflib.get_close_matches(name, symbols, n=1, cutoff=0.5)
    if not close:
        return ""
    case = " Python names are case-sensitive." if close[0].lower() == name.lower() else ""
    return f" Did you mean {name} instead of {close[0]}?{case}"


class CheckTimeout(Exception):
    """A check used up its time limit; it ends with status error."""


@dataclass(frozen=True)
class Observation:
    """Numbers read off one engine for one program: data and grad per node, or what went wrong."""

    data: list[Any] | None = None
    grad: list[Any] | None = None
    error: dict[str, Any] | None = None
    """The student's code raised: type, message, traceback trimmed to their lines."""
    failure: WorkerFailure | None = None
    """The worker hung, ran out of memory or died."""

    @property
    def ok(self) -> bool:
        return self.error is None and self.failure is None


class StudentEngine:
    """The student's module, reached only through requests to the sandboxed worker."""

    def __init__(self, sandbox: Sandbox):
        self.sandbox = sandbox

    def ask(self, message: dict[str, Any], timeout: float | None = None) -> Observation | dict[str, Any]:
        """Send a request; the result dict, or an Observation describing the error or failure."""
        try:
            reply = self.sandbox.request(message, timeout)
        except WorkerFailure as failure:
            return Observation(failure=failure)
        if not reply["ok"]:
            return Observation(error=reply["error"])
        return reply["result"]

    def run(self, program: Program, backward: bool = True) -> Observation:
        result = self.ask({"op": "eval", "program": program, "backward": backward})
        if isinstance(result, Observation):
            return result
        return Observation(data=result["data"], grad=result["grad"])


def reference_run(program: Program, backward: bool = True) -> Observation | None:
    """The reference engine's numbers, or None when the program is outside its domain
    (a negative base to a fractional power, a division by zero, an overflow)."""
    try:
        result = probes.evaluate(program, reference.Value, backward)
    except (ArithmeticError, TypeError, ValueError):
        return None
    numbers = result["data"] + (result["grad"] or [])
    if not all(isinstance(x, float) and math.isfinite(x) and abs(x) < 1e8 for x in numbers):
        return None
    return Observation(data=result["data"], grad=result["grad"])


class Context:
    """Everything a check needs; one per submission."""

    def __init__(self, assignment: Assignment, sandbox: Sandbox, symbols: list[str], tests_file: str | None = None,
                 tests_source: str = ""):
        self.assignment = assignment
        self.student = StudentEngine(sandbox)
        self.symbols = symbols
        self.tests_file = tests_file
        """The student's test file's name in the sandbox, or None when there is none."""
        self.tests_source = tests_source
        """The source of the student's tests (for a notebook, of the whole notebook)."""
        self.deadline = math.inf
        self.cache: dict[str, Any] = {}
        """Work shared by several checks (the student's suite runs once for three checks)."""

    def start_check(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def deadline_left(self) -> float:
        return self.deadline - time.monotonic()

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise CheckTimeout(f"the check ran past its time limit of {self.assignment.limits.check_s:g} s")

    @functools.cached_property
    def features(self):
        from grader.checks.features import preflight

        return preflight(self)

    def close(self, expected: float, got: Any) -> bool:
        """Is got a number equal to expected within the assignment's tolerances?"""
        if not isinstance(got, float):
            return False
        tol = self.assignment.tolerances
        return math.isclose(got, expected, rel_tol=tol.rtol, abs_tol=tol.atol)

    def missing(self, name: str, what: str):
        """A failed outcome when the student's module defines no such name, else None."""
        from grader.result import Outcome

        if name in self.symbols:
            return None
        return Outcome("failed", f"Your module defines no {name} ({what}).{did_you_mean(name, self.symbols)}")
