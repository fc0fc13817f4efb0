"""A graded class's files as typed values: the gradebook (grades.csv, one `GradebookRow` per student) and the class
summary (summary.json, a `ClassSummary` of `SummaryStudent`s), the contract of docs/results.md.

A batch writes them (grader/batch/outputs.py) and `grader override` writes them again (grader/batch/applied.py);
the exports, the reteach notebook and a later batch into the same folder read them back. What is read back is
untrusted (the folder is the instructor's, and a TA may edit it): `from_dict` checks every field against its
type, as `Result.from_dict` does, and anything else is a BadResult naming the field. Each value's `to_dict` is
what its file holds, key for key and in the file's order, so a file read and written again is the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from grader import csvfile
from grader.errors import BadResult
from grader.files import GRADEBOOK_FILE
from grader.result import SubmissionError, from_data

NO_SUBMISSION = "no_submission"
STATUSES = ("graded", "error", NO_SUBMISSION)
"""A student's status in the gradebook and the summary: a roster student nothing was found for is no_submission."""

COLUMNS = (
    "student",
    "score",
    "max_score",
    "status",
    "late",
    "lms",
    "lms_user_id",
    "submission_id",
    "raw_score",
    "late_penalty",
    "reason",
    "override",
    "review",
)
"""grades.csv's columns before one column per check."""
NUMBERS = ("score", "max_score", "raw_score", "late_penalty")
REQUIRED = ("student", "score", "max_score", "status")
"""The columns every gradebook has (one a batch wrote before overrides has no `override` or `review`)."""
LATE = "yes"
NUMBER_CHARS = 40
"""The longest number cell read (a float as Python writes it is at most 24 characters)."""


@dataclass(frozen=True)
class GradebookRow:
    """A student's row of grades.csv."""

    student: str
    score: float
    """The final score: raw_score less late_penalty, or an instructor's override."""
    max_score: float
    status: str
    """graded, error, or no_submission."""
    late: bool = False
    lms: str = ""
    lms_user_id: str = ""
    submission_id: str = ""
    raw_score: float = 0.0
    """The result's score, the grader's own."""
    late_penalty: float = 0.0
    reason: str = ""
    override: str = ""
    """What an instructor's override applied."""
    review: str = ""
    """The overrides waiting for a second look."""
    checks: dict[str, float | None] = field(default_factory=dict)
    """Each check's points (those an override gives, where one is applied), None for no result."""

    def to_dict(self) -> dict[str, Any]:
        """The row's cells by column, as grades.csv holds them (a check's column empty when it has no points)."""
        cells: dict[str, Any] = {name: getattr(self, name) for name in COLUMNS}
        cells["late"] = LATE if self.late else ""
        return cells | {check: "" if points is None else points for check, points in self.checks.items()}

    @classmethod
    def from_dict(cls, data: Any, where: str = "row") -> GradebookRow:
        """The row `to_dict` gave, or a row of grades.csv as read (each cell a text, as csvfile wrote it: a number
        as Python writes it, an int staying one, so the row written again is the row read)."""
        if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
            raise BadResult(f"{where}: expected an object with a value per column")
        missing = [name for name in REQUIRED if data.get(name) is None]
        if missing:
            raise BadResult(f"{where}: no {missing[0]!r}")
        values: dict[str, Any] = {}
        for name in COLUMNS:
            value = data.get(name)
            if value is None:
                continue
            if name in NUMBERS:
                values[name] = _number(value, f"{where}.{name}")
            elif name == "late":
                values[name] = _late(value, f"{where}.late")
            else:
                values[name] = csvfile.uncell(_text(value, f"{where}.{name}"))
        if values["status"] not in STATUSES:
            raise BadResult(f"{where}.status: {values['status']!r} is not one of {STATUSES}")
        checks = {
            name: None if value in ("", None) else _number(value, f"{where}.{name}")
            for name, value in data.items()
            if name not in COLUMNS
        }
        return cls(**values, checks=checks)


def _number(value: Any, where: str) -> float:
    """A number cell: a float or int (to_dict's), or its text (int text stays an int)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    if isinstance(value, str) and 0 < len(value) <= NUMBER_CHARS:
        text = value.strip()
        try:
            number: float = int(text) if text.lstrip("-").isdigit() else float(text)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number
    raise BadResult(f"{where}: expected a number, got {str(value)[:NUMBER_CHARS]!r}")


def _late(value: Any, where: str) -> bool:
    if value is True or value is False or value in (LATE, ""):
        return value is True or value == LATE
    raise BadResult(f"{where}: expected {LATE!r} or nothing, got {str(value)[:NUMBER_CHARS]!r}")


def _text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    raise BadResult(f"{where}: expected a text, got {type(value).__name__}")


@dataclass(frozen=True)
class Gradebook:
    """grades.csv (or grades.incomplete.csv): one row per student, one column per check."""

    checks: tuple[str, ...]
    """The check columns, in the assignment's order."""
    rows: tuple[GradebookRow, ...]

    def text(self) -> str:
        """The file: the header, then each row, every cell through csvfile (data, never a formula)."""
        writer = csvfile.Writer(lineterminator="\r\n")
        writer.writerow([*COLUMNS, *self.checks])
        for row in self.rows:
            cells = row.to_dict()
            writer.writerow([*(cells[name] for name in COLUMNS), *(cells.get(check, "") for check in self.checks)])
        return writer.text()

    @classmethod
    def read(cls, text: str, where: str = GRADEBOOK_FILE) -> Gradebook:
        """The gradebook a text of grades.csv holds; a BadResult naming the line and the cell for anything else."""
        try:
            lines = list(csv.reader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise BadResult(f"{where}: {exc}") from None
        header = lines[0] if lines else []
        missing = [name for name in REQUIRED if name not in header]
        if missing:
            raise BadResult(f"{where}: no {missing[0]!r} column")
        if len(set(header)) != len(header):
            raise BadResult(f"{where}: a column is named twice")
        rows = []
        for number, cells in enumerate(lines[1:], 2):
            if len(cells) != len(header):
                raise BadResult(f"{where}, line {number}: {len(cells)} cells, not {len(header)}")
            rows.append(GradebookRow.from_dict(dict(zip(header, cells, strict=True)), f"{where}, line {number}"))
        return cls(tuple(name for name in header if name not in COLUMNS), tuple(rows))


@dataclass(frozen=True)
class SummaryStudent:
    """A student of summary.json's `students`."""

    student: str
    score: float = 0.0
    """The final score (as the gradebook's)."""
    status: str = ""
    """graded, error, or no_submission; empty in a summary that does not say (read as an error)."""
    error: SubmissionError | None = None
    late: bool = False
    folder: str = ""
    """Their files' folder, relative to the batch's output (`students/<id>`, or a group's)."""
    flags: tuple[str, ...] = ()
    raw_score: float = 0.0
    late_penalty: float = 0.0
    late_percent: float | None = None
    """The share of the points earned that lateness takes (None: a summary written before it was kept)."""
    reason: str = ""
    lms: dict[str, Any] | None = None
    """Who the student is in their LMS, as grader/lms/identity.py's Identity writes itself (`Identity.from_dict`)."""
    overrides: tuple[dict[str, Any], ...] = ()
    """The overrides applied (grader/batch/adjust.py's `Adjustment.data`)."""
    review: tuple[dict[str, Any], ...] = ()
    """The overrides waiting for a second look."""


@dataclass(frozen=True)
class ClassSummary:
    """summary.json: what the class page shows, as data (docs/results.md)."""

    assignment: str = ""
    title: str = ""
    max_score: float = 0.0
    students: tuple[SummaryStudent, ...] = ()
    histogram: tuple[int, ...] = ()
    overrides: dict[str, int] = field(default_factory=dict)
    """How many overrides are `applied`, and how many `waiting`."""
    checks: tuple[dict[str, Any], ...] = ()
    errors: tuple[dict[str, Any], ...] = ()
    identical: tuple[tuple[str, ...], ...] = ()
    notes: tuple[str, ...] = ()
    note_details: tuple[dict[str, Any], ...] = ()
    misconceptions: tuple[dict[str, Any], ...] | None = None
    """The class insight (docs/insight.md); None in a summary written before it was counted."""
    unexplained: tuple[dict[str, Any], ...] = ()
    advisory: tuple[dict[str, Any], ...] = ()
    similarity: dict[str, Any] | None = None
    failed_passes: dict[str, str] = field(default_factory=dict)
    complete: bool = True
    graded: int = 0
    found: int = 0
    finish: str | None = None
    """The command that grades the rest of an interrupted batch."""

    def to_dict(self) -> dict[str, Any]:
        return _plain(asdict(self))

    def to_json(self) -> str:
        """summary.json's text."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: Any) -> ClassSummary:
        """The summary `to_dict` gave `data`, which is untrusted (read from the --out folder): every field checked."""
        return from_data(cls, data, "summary", ALLOWED)

    def entry(self, student: str) -> SummaryStudent | None:
        return next((s for s in self.students if s.student == student), None)


ALLOWED: dict[tuple[type, str], tuple] = {(SummaryStudent, "status"): ("", *STATUSES)}


def _plain(data: Any) -> Any:
    """JSON's data: every tuple a list (as the file holds it)."""
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_plain(v) for v in data]
    return data


__all__ = [
    "COLUMNS",
    "NO_SUBMISSION",
    "ClassSummary",
    "Gradebook",
    "GradebookRow",
    "SummaryStudent",
]
