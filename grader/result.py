"""The results the grader produces: small frozen dataclasses that serialise to the contract's JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

SCHEMA = 1
CHECK_STATUSES = ("passed", "failed", "error", "skipped")
ERROR_KINDS = ("not_found", "unreadable", "syntax_error", "import_error", "missing_symbol", "timeout", "memory", "crash")


@dataclass(frozen=True)
class Counterexample:
    """The smallest failing case found, as code a student can paste under their own class."""

    code: str
    """Python that builds the expression and calls backward()."""
    expected: dict[str, Any]
    """What the reference engine gives, by name (`"a.grad": 2.0`)."""
    got: dict[str, Any]
    """What the student's engine gave for the same names (a number, or a description)."""


@dataclass(frozen=True)
class Outcome:
    """What a check function returns; the check runner adds id, points and timing."""

    status: str
    """One of passed, failed, error, skipped."""
    feedback: str
    """One or more sentences for the student: expected, got, the smallest case, the likely cause."""
    counterexample: Counterexample | None = None
    artifacts: dict[str, Any] = field(default_factory=dict)
    """The check's own data for reports (loss curves, caught sabotages, per-test outcomes)."""
    fraction: float | None = None
    """Partial credit in [0, 1]; None means all (passed) or nothing (anything else)."""
    cause: str | None = None
    """The id of the misconception recognised (grader/causes.py), said when the result is made."""

    def __post_init__(self):
        if self.status not in CHECK_STATUSES:
            raise ValueError(f"status must be one of {CHECK_STATUSES}, got {self.status!r}")


@dataclass(frozen=True)
class CheckResult:
    id: str
    title: str
    status: str
    score: float
    max_score: float
    visibility: str
    """visible, or hidden (run only when the instructor grades)."""
    feedback: str
    counterexample: Counterexample | None
    artifacts: dict[str, Any]
    duration_s: float
    cause: str | None = None
    """The id of the misconception recognised (grader/causes.py), which the feedback says."""


@dataclass(frozen=True)
class SubmissionError:
    """Why a submission could not be graded at all; kind is one of ERROR_KINDS."""

    kind: str
    message: str


@dataclass(frozen=True)
class Result:
    submission: str
    sha256: str | None
    assignment: str
    grader_version: str
    status: str
    """graded, or error when the submission could not be graded at all."""
    error: SubmissionError | None
    score: float
    max_score: float
    duration_s: float
    checks: tuple[CheckResult, ...]
    schema: int = SCHEMA
    notebook: dict[str, Any] | None = None
    """For a notebook: the cells that raised, timed out or never ran when it was executed."""
    notes: tuple[str, ...] = ()
    """What the student should know about how their file was graded (a package stood in for)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        order = ["schema", "submission", "sha256", "assignment", "grader_version", "status", "error",
                 "score", "max_score", "duration_s", "checks"] + (["notebook"] if self.notebook is not None else []) \
            + (["notes"] if self.notes else [])
        return {key: list(data[key]) if key == "notes" else data[key] for key in order}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False, default=str)

    def redacted(self) -> Result:
        """The result as a student may see it: hidden checks keep their status and points only."""
        hidden = "Hidden check: it runs when your instructor grades, and its details are shown to them only."
        checks = tuple(replace(c, feedback=hidden, counterexample=None, artifacts={}, cause=None)
                       if c.visibility == "hidden" else c for c in self.checks)
        return replace(self, checks=checks)

    @property
    def passed(self) -> bool:
        """Every check that carries points passed (the contract's exit code 0)."""
        return self.status == "graded" and all(c.status == "passed" for c in self.checks if c.max_score > 0)
