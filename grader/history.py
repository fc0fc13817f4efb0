"""What changed since a student's last check: each `grader check` keeps the result it printed, per file, beside
the reports (reports/.history/<file>.json, never inside the submission), and the next one leads with the
difference ("since your last check: tanh now fails (was passing); add, mul now pass"), a regression first.

The record is a student's own file in a folder they control, so it is read as a claim: capped in size, any
shape that is not the one written here, or any value out of bounds (a number not between 0 and MOST_POINTS, which
Infinity and NaN are not; a hash that is not one), is no history at all, and the check writes its own record in
its place. It never changes a grade, only words the first line of the next check. Only the path, the assignment,
the score and each check's status and points are kept: no feedback, nothing hidden.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from grader import fileio
from grader.errors import GraderError
from grader.feedback import numbers
from grader.result import CHECK_STATUSES, Result

FOLDER = Path("reports") / ".history"
"""Where the records go, as the default report does: under reports/ in the folder grader check runs in."""
MOST_BYTES = 256 * 1024
MOST_POINTS = 1e6
"""The most points a record's score or a check's may be: more is no score the grader wrote."""
SCHEMA = 1


@dataclass(frozen=True)
class Record:
    """One check's result as remembered: enough to say what changed, nothing more."""

    path: str
    assignment: str
    sha256: str | None
    status: str
    score: float
    max_score: float
    checks: dict[str, tuple[str, float, float]]
    """Each check's id -> (status, score, max_score), in the rubric's order."""

    @staticmethod
    def of(result: Result, submission: Path) -> Record:
        return Record(
            str(submission.resolve()),
            result.assignment,
            result.sha256,
            result.status,
            result.score,
            result.max_score,
            {c.id: (c.status, c.score, c.max_score) for c in result.checks},
        )

    def to_json(self) -> str:
        data = {
            "schema": SCHEMA,
            "path": self.path,
            "assignment": self.assignment,
            "sha256": self.sha256,
            "status": self.status,
            "score": self.score,
            "max_score": self.max_score,
            "checks": [{"id": i, "status": s, "score": p, "max_score": m} for i, (s, p, m) in self.checks.items()],
        }
        return json.dumps(data) + "\n"

    @staticmethod
    def from_json(text: str) -> Record | None:
        """The record, or None for anything that is not one as written here (a claim, read defensively)."""
        try:
            data = json.loads(text)
            checks = {}
            for c in data["checks"][:200]:
                if c["status"] not in CHECK_STATUSES or not isinstance(c["id"], str) or len(c["id"]) > 100:
                    return None
                checks[c["id"]] = (c["status"], _number(c["score"]), _number(c["max_score"]))
            record = Record(
                data["path"],
                data["assignment"],
                data["sha256"],
                data["status"],
                _number(data["score"]),
                _number(data["max_score"]),
                checks,
            )
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):  # RecursionError: lists nested deep
            return None
        ok = data.get("schema") == SCHEMA and all(isinstance(v, str) for v in (record.path, record.assignment))
        ok = ok and (
            record.sha256 is None or isinstance(record.sha256, str) and _HASH.fullmatch(record.sha256) is not None
        )
        return record if ok and record.status in ("graded", "error") else None


_HASH = re.compile(r"[0-9a-f]{64}")


def _number(value) -> float:
    """A score or a check's points as the grader writes them: finite, between 0 and MOST_POINTS."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("not a number")
    if not 0 <= value <= MOST_POINTS:  # NaN is not: every comparison with NaN is False
        raise ValueError("not a score")
    return float(value)


def place(submission: Path, base: Path = Path(".")) -> Path:
    """The record of a submission's checks: reports/.history/<file name>.json under `base` (grader check's own
    folder, as for its report)."""
    return base / FOLDER / f"{submission.name}.json"


def recall(submission: Path, assignment: str | None, base: Path = Path(".")) -> Record | None:
    """The record of the last check of this very file for this assignment (None: for any; the caller compares
    it once it knows), if there is one to trust."""
    try:
        record = Record.from_json(fileio.read_regular(place(submission, base), limit=MOST_BYTES).decode("utf-8"))
    except (OSError, GraderError, UnicodeDecodeError):
        return None
    if record is None or record.path != str(submission.resolve()) or assignment not in (None, record.assignment):
        return None  # another file of the same name, graded from here, or another assignment: nothing to compare
    return record


def remember(result: Result, submission: Path, base: Path = Path(".")) -> None:
    """Keep this check's result for the next one (written whole, through no link)."""
    fileio.atomic_write(place(submission, base), Record.of(result, submission).to_json(), mode=0o666, base=base)


@dataclass(frozen=True)
class Since:
    """What changed from one check of a file to the next, in the order a student should read it."""

    before: Record
    after: Record
    broken: tuple[str, ...]
    """Checks that passed last time and do not now (a regression)."""
    fixed: tuple[str, ...]
    """Checks that did not pass last time and do now."""
    moved: tuple[tuple[str, str], ...]
    """Any other check whose status or points changed, with what it says of it."""

    @property
    def same_file(self) -> bool:
        return self.before.sha256 is not None and self.before.sha256 == self.after.sha256

    @property
    def nothing(self) -> bool:
        return not (self.broken or self.fixed or self.moved) and self.before.status == self.after.status

    def parts(self) -> list[str]:
        """The changes, a regression first: 'tanh now fails (was passing)', 'add, mul now pass'..."""
        before, after = self.before, self.after
        if after.status == "error":
            return [f"your file could not be graded this time; last time it scored {_points(before)}"]
        found = []
        for status in ("failed", "error", "skipped"):
            ids = [i for i in self.broken if after.checks[i][0] == status]
            if ids:
                found.append(f"{_ids(ids)} {_now(status, len(ids))} ({'was' if len(ids) == 1 else 'were'} passing)")
        if before.status == "error":
            found.append("your file is graded again (last time it could not be)")
        if self.fixed:
            found.append(f"{_ids(self.fixed)} now pass{'es' if len(self.fixed) == 1 else ''}")
        found += [said for _, said in self.moved]
        return found

    def sentence(self) -> str:
        """One line: 'Since your last check (64 -> 76 / 100): tanh now fails (was passing); add, mul now pass.'"""
        if self.nothing:
            return (
                f"Since your last check: {'your file has not changed and ' if self.same_file else ''}"
                f"no check changed ({_points(self.after)})."
            )
        score = (
            f" ({_score(self.before.score)} -> {_points(self.after)})" if self.before.score != self.after.score else ""
        )
        return f"Since your last check{score}: {'; '.join(self.parts())}."


def compare(before: Record, after: Record) -> Since:
    """What changed between two records of the same file (checks run only once, as with --public-only, are
    left out)."""
    broken, fixed, moved = [], [], []
    for check_id, (status, score, most) in after.checks.items():
        if check_id not in before.checks:
            continue
        was, was_score, _ = before.checks[check_id]
        if was == "passed" and status != "passed":
            broken.append(check_id)
        elif was != "passed" and status == "passed":
            fixed.append(check_id)
        elif was != status:
            moved.append((check_id, f"{check_id} {_now(status, 1)} (was {_WAS[was]})"))
        elif was_score != score:
            moved.append((check_id, f"{check_id} {_score(was_score)} -> {_score(score)} of {_score(most)} points"))
    return Since(before, after, tuple(broken), tuple(fixed), tuple(moved))


_NOW = {
    "failed": ("fails", "fail"),
    "error": ("stops with an error", "stop with an error"),
    "skipped": ("is skipped", "are skipped"),
}
_WAS = {"passed": "passing", "failed": "failing", "error": "an error", "skipped": "skipped"}


def _now(status: str, count: int) -> str:
    if status == "passed":
        return "passes" if count == 1 else "pass"
    one, many = _NOW[status]
    return f"now {one if count == 1 else many}"


def _ids(ids) -> str:
    return ", ".join(ids)


def _score(value: float) -> str:
    return numbers(round(value, 2))[0] if value != int(value) else f"{value:g}"


def _points(record: Record) -> str:
    return f"{_score(record.score)} / {_score(record.max_score)}"
