"""overrides.csv: an instructor's decisions about grades, in a plain file beside the gradebook that a TA can edit.

Each line is one decision: a `student` (the gradebook's id), a `check` (a check id, or `total` for the final
score), the `points` that count instead of the grader's, the `reason` the student is shown, who decided (`by`)
and when (`date`). Two more columns record what the grader gave when the decision was made: `grader_points`
(the check's points, or the final score for `total`) and the submission's `sha256`. A line a TA adds by hand
leaves them blank; the next batch, or `grader override`, fills them from the result the TA was looking at.

The file is read as untrusted text: at most MOST_BYTES, UTF-8, only the columns above (a column this module
does not know would be dropped when the file is written again, so it is refused instead), every cell of
bounded length; a number is read as the LMS's numbers are (`3.5` or `3,5`), and a cell is never a formula: a
leading `'` that the project's CSV writer puts before `=`, `+`, `-` or `@` is taken off again, and nothing
else is done with it. A line that cannot be read stops the command that reads it (exit 2), naming the line
and the cell, before anything is written. What an override does to a grade is grader/batch/adjust.py's.
"""

from __future__ import annotations

import csv
import difflib
import io
import string
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from grader import csvfile
from grader.errors import Refused, UsageError
from grader.fileio import atomic_write, read_regular
from grader.files import OVERRIDES_FILE
from grader.final import TOTAL
from grader.lms import numbers

FILE = OVERRIDES_FILE
REQUIRED = ("student", "check", "points", "reason")
OPTIONAL = ("by", "date", "grader_points", "sha256")
COLUMNS = REQUIRED + OPTIONAL
MOST_BYTES = 5 * 2**20
MOST_REASON = 1000
MOST_CELL = 200
HEX = frozenset(string.hexdigits.lower())


@dataclass(frozen=True)
class Override:
    """One decision: the points that count for a student's check (or their total), and why."""

    student: str
    check: str
    """A check id, or TOTAL."""
    points: float
    reason: str
    by: str = ""
    date: str = ""
    grader_points: float | None = None
    """What the grader gave for this check (the final score for TOTAL) when the decision was made; None until
    recorded (a line added by hand)."""
    sha256: str = ""
    """The submission's sha256 then ("" when there was no submission, or it could not be read)."""
    line: int = 0
    """Its line in overrides.csv (0: not read from the file)."""

    @property
    def key(self) -> tuple[str, str]:
        return self.student.lower(), self.check

    @property
    def pinned(self) -> bool:
        return self.grader_points is not None

    @property
    def what(self) -> str:
        """The check's id, or `the total`, for a sentence."""
        return "the total" if self.check == TOTAL else self.check

    def cells(self) -> list[str]:
        return [
            self.student,
            self.check,
            number(self.points),
            self.reason,
            self.by,
            self.date,
            "" if self.grader_points is None else number(self.grader_points),
            self.sha256,
        ]


@dataclass(frozen=True)
class Known:
    """What an override may name: the class's students and the checks with their points."""

    students: tuple[str, ...]
    checks: dict[str, float]
    """Each check id and its points."""
    total: float
    """The assignment's points: the most a `total` override may give."""

    def student(self, name: str) -> str | None:
        """The student id a name stands for (ids differ by more than case), or None."""
        by_lower = {s.lower(): s for s in self.students}
        return by_lower.get(name.strip().lower())

    def most(self, check: str) -> float | None:
        return self.total if check == TOTAL else self.checks.get(check)


def number(value: float) -> str:
    """A number as overrides.csv holds it: whole numbers without a point, others exactly (repr)."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def read(out: Path) -> list[Override]:
    """The overrides of a batch's --out folder, in the file's order ([] when it has none); a UsageError naming
    the line and the cell for anything that is not an override."""
    path = out / FILE
    try:
        data = read_regular(path, limit=MOST_BYTES)
    except FileNotFoundError:
        return []
    except Refused:
        raise UsageError(
            f"{path} cannot be read as overrides: it must be a regular file (not a link or a folder) of at most "
            f"{MOST_BYTES // 2**20} MB"
        ) from None
    except OSError as exc:
        raise UsageError(f"{path} cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{path}, line {line}: not UTF-8 text; save the file as CSV (UTF-8)") from None
    return parse(text, path)


def parse(text: str, path: Path) -> list[Override]:
    """The overrides in a text of overrides.csv (path names it in messages)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    found: list[Override] = []
    seen: dict[tuple[str, str], int] = {}
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise UsageError(f"{path}, line {start}: not a CSV line ({exc})") from None
        if not any(c.strip() for c in cells):
            continue
        if header is None:
            header = _header(cells, path, start)
            continue
        if any(c.strip() for c in cells[len(header) :]):
            raise UsageError(
                f"{path}, line {start}, cell {len(header) + 1}: the line has {len(cells)} cells where the header "
                f"names {len(header)} columns (a reason holding a comma needs quotes around it)"
            )
        override = _line({name: cells[at] if at < len(cells) else "" for at, name in enumerate(header)}, path, start)
        if override.key in seen:
            raise UsageError(
                f"{path}, line {start}: a second override of {override.what} for {override.student} (the first is on "
                f"line {seen[override.key]}): keep one line per student and check"
            )
        seen[override.key] = start
        found.append(override)
    return found


def _header(cells: list[str], path: Path, line: int) -> list[str]:
    names = [csvfile.uncell(c).strip().lower() for c in cells]
    for name in names:
        if name not in COLUMNS:
            raise UsageError(
                f"{path}, line {line}: the header names a column '{name[:MOST_CELL]}' overrides.csv does not have "
                f"(its columns: {', '.join(COLUMNS)}; the first four are needed)"
            )
    missing = [c for c in REQUIRED if c not in names]
    if missing or len(set(names)) != len(names):
        raise UsageError(
            f"{path}, line {line}: the header must name each of {', '.join(REQUIRED)} once (and may name "
            f"{', '.join(OPTIONAL)}); it names {', '.join(names)[:500]}"
        )
    return names


def _line(row: dict[str, str], path: Path, line: int) -> Override:
    def bad(column: str, why: str) -> UsageError:
        return UsageError(f"{path}, line {line}, column {column}: {why}")

    cell = {name: csvfile.uncell(row.get(name, "")).strip() for name in COLUMNS}
    for name in COLUMNS:
        most = MOST_REASON if name == "reason" else MOST_CELL
        if len(cell[name]) > most:
            raise bad(name, f"longer than {most} characters")
    if not cell["student"]:
        raise bad("student", "blank: name the student as the gradebook's `student` column does")
    if not cell["check"]:
        raise bad("check", f"blank: name a check id, or `{TOTAL}` for the final score")
    if not cell["reason"]:
        raise bad("reason", "blank: say why, in words the student will read in their report")
    points = _points(cell["points"], "points", bad)
    if points is None:
        raise bad("points", "blank: give the points that count (4, or 3.5)")
    grader_points = _points(cell["grader_points"], "grader_points", bad)
    sha = cell["sha256"].lower()
    if sha and (len(sha) != 64 or not set(sha) <= HEX):
        raise bad(
            "sha256", f"'{cell['sha256'][:80]}' is not a SHA-256 (64 hex digits); leave it blank to have it filled"
        )
    if sha and grader_points is None:
        raise bad("grader_points", "blank while sha256 is filled: fill both, or leave both blank to have them filled")
    return Override(
        cell["student"],
        cell["check"].lower(),
        points,
        cell["reason"],
        cell["by"],
        cell["date"],
        grader_points,
        sha,
        line,
    )


def _points(text: str, column: str, bad) -> float | None:
    if not text:
        return None
    parsed = numbers.parse(text) if not text.endswith("%") else None
    if parsed is None:
        raise bad(column, f"'{text[:80]}' is not a number of points (write 4, or 3.5); a formula is not read")
    if parsed[0] < 0:
        raise bad(column, f"{text} is below 0: points are 0 or more")
    return parsed[0]


def write(out: Path, overrides: Iterable[Override]) -> None:
    """overrides.csv, whole, through the project's one CSV writer (no cell is a formula)."""
    writer = csvfile.Writer()
    writer.writerow(COLUMNS)
    for override in overrides:
        writer.writerow(override.cells())
    atomic_write(out / FILE, writer.text())


def resolve(overrides: list[Override], known: Known, where: str) -> list[Override]:
    """The overrides with each student named by their id, once each is checked against the class: a student
    and a check that exist, points within the check's (or the assignment's); otherwise a UsageError naming the
    line, the cell and the nearest match. `where` names the file (or the command line) in messages."""
    resolved = []
    for o in overrides:
        at = f"{where}, line {o.line}" if o.line else where
        student = known.student(o.student)
        if student is None:
            raise UsageError(
                f"{at}, column student: no student '{o.student}' in the gradebook{nearest(o.student, known.students)}"
            )
        most = known.most(o.check)
        if most is None:
            checks = (*known.checks, TOTAL)
            raise UsageError(
                f"{at}, column check: no check '{o.check}' in this assignment{nearest(o.check, checks)}; the checks: "
                + ", ".join(checks)
            )
        if o.points > most + 1e-9:
            raise UsageError(
                f"{at}, column points: {number(o.points)} is more than the {number(most)} points of {o.what}: "
                "an override gives between 0 and those"
            )
        resolved.append(o if student == o.student else replace(o, student=student))
    return resolved


def nearest(name: str, names: Iterable[str]) -> str:
    """`(did you mean 'x'?)`, by difflib, or that nothing is like it."""
    by_lower = {n.lower(): n for n in names}
    best = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return f" (the nearest: '{by_lower[best[0]]}')" if best else " (none is like it)"
