"""The grade cells an export writes: the grader's grade where it graded work, the LMS's own cell elsewhere.

An import changes every cell that differs from what the LMS holds (Canvas's importer compares each cell
with the current grade, `EX` included; Moodle's skips a blank or unchanged grade). So a roster student the
grader has no work for gets back the cell the LMS wrote (`EX`, a grade entered by hand, or blank): the
import leaves them as they are. `--zero-missing` writes 0 where that cell is blank, and only there: an
excused student or a grade already in the LMS is never overwritten. A graded student's cell is their
final score scaled to the column's points, written in the column's own number form (`7,50` where the LMS
wrote `10,00`). An excused (`EX`) or not-assigned (`N/A`) cell is left as it is even for a graded student,
and so is the cell of a student whose grading did not finish (a crash of the grader, not their work), unless
an instructor's override (grader/batch/adjust.py) gave them a grade.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from grader.classfiles import NO_SUBMISSION, GradebookRow
from grader.lms import numbers

KEEP = ("ex", "n/a")
BLANK = ("", "-")


@dataclass(frozen=True)
class WriteOptions:
    percent: bool = False
    zero_missing: bool = False


@dataclass
class Tally:
    """What an export changes and leaves alone, for its last line."""

    changed: int = 0
    same: int = 0
    kept: Counter = field(default_factory=Counter)
    """Cells left as the LMS has them, by why."""

    def line(self) -> str:
        kept = sum(self.kept.values())
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.kept.items(), key=lambda kv: (-kv[1], kv[0])))
        return (
            f"{self.changed} grade{'s' if self.changed != 1 else ''} changed, {self.same} already as graded, "
            f"{kept} left as the LMS has them" + (f" ({why})" if why else "")
        )


@dataclass(frozen=True)
class Column:
    """The column a grade goes into: its points (100 with --percent) and how it writes numbers."""

    scale: float
    form: numbers.Form


def decide(row: GradebookRow | None, cell: str, column: Column, options: WriteOptions, tally: Tally, team: str = ""):
    """The cell to write for one roster student: `row` is their gradebook row (None: nothing of theirs),
    `cell` what the LMS wrote; `team` the group the LMS says they are in, if it says."""
    form = column.form
    current = cell.strip()
    overridden = bool(row and row.override)  # an instructor's decision is a grade, work or not
    if row is None or row.status == NO_SUBMISSION and not overridden:
        if options.zero_missing and current in BLANK:
            return _changed(form.write(0.0, options.percent), current, tally)
        tally.kept["in a group the grader could not place" if team else "with no submission"] += 1
        return cell
    if current.lower() in KEEP:
        tally.kept["excused" if current.lower() == "ex" else "not assigned to them in the LMS"] += 1
        return cell
    if row.status == "error" and row.reason.startswith("crash") and not overridden:
        tally.kept["whose grading did not finish"] += 1
        return cell
    grade = round(column.scale * _fraction(row), form.decimals)
    return _changed(form.write(grade, options.percent), current, tally)


def _changed(new: str, current: str, tally: Tally) -> str:
    """Count a written cell as a change unless the LMS would see none (its importer compares at 2 decimals)."""
    old, now = numbers.parse(current), numbers.parse(new)
    if old is not None and now is not None and round(old[0], 2) == round(now[0], 2):
        tally.same += 1
    else:
        tally.changed += 1
    return new


def _fraction(row: GradebookRow) -> float:
    """The share of the points this student earned."""
    score, most = float(row.score), float(row.max_score)
    if not most or score != score or most != most:
        return 0.0
    return min(max(score / most, 0.0), 1.0)
