"""`grader override --out DIR STUDENT [CHECK] --points P --reason TEXT`: an instructor's decision about a grade.

It is recorded in DIR/overrides.csv (grader/batch/overrides.py), made against what the grader gives the student
now (their check's points, or their final score for `total`, and their submission's sha256), and the class
files are brought up to date at once, without regrading anyone: grades.csv, summary.json, the class page and
the student's report. Every later batch and export applies it, for as long as the grader's own result is the
one it was made against (grader/batch/adjust.py). The same command again replaces the decision (and makes it
against the result now: how an override waiting for a second look is kept); `--remove` takes it out.
"""

from __future__ import annotations

import csv
import getpass
import math
from dataclasses import dataclass
from pathlib import Path

from grader.batch import applied
from grader.batch import overrides as book
from grader.batch.adjust import adjust, pinned
from grader.batch.overrides import Override
from grader.errors import ExitCode, UsageError
from grader.files import GRADEBOOK_FILE, INCOMPLETE_FILE, OVERRIDES_FILE, SUMMARY_FILE


@dataclass(frozen=True)
class Decision:
    """What `grader override` was asked (its options, by the names cli.py gives them)."""

    out: Path
    student: str
    check: str | None = None
    points: float | None = None
    reason: str | None = None
    by: str | None = None
    remove: bool = False


def main(**options) -> int:
    asked = Decision(**options)
    out = asked.out
    saved = _graded_class(out)
    known = saved.known()
    where = str(out / OVERRIDES_FILE)
    lines = book.resolve(book.read(out), known, where)  # a TA's typo elsewhere in the file is said first
    name = known.student(asked.student)
    if name is None:
        raise UsageError(
            f"no student '{asked.student}' in {out / GRADEBOOK_FILE}{book.nearest(asked.student, known.students)}"
        )
    check = (asked.check or book.TOTAL).strip().lower()
    if known.most(check) is None:
        checks = (*known.checks, book.TOTAL)
        raise UsageError(
            f"no check '{check}' in this assignment{book.nearest(check, checks)}; the checks: {', '.join(checks)}"
        )
    key = (name.lower(), check)
    before = next((o for o in lines if o.key == key), None)
    what = "the total" if check == book.TOTAL else check
    if asked.remove:
        if before is None:
            raise UsageError(f"{where} has no override of {what} for {name}: nothing to remove")
        lines = [o for o in lines if o.key != key]
        book.write(out, lines)
        applied.refresh(out, lines, saved)
        print(f"removed the override of {what} for {name} ({book.number(before.points)} points: {before.reason})")
        return _told(out, name, saved, lines)
    decided = _decision(name, check, asked)
    graded = saved.graded(name)
    if graded is None:  # listed in summary.json, so never; said plainly all the same
        raise UsageError(f"{name} has no result in {out}: grade them with `grader batch` first")
    if graded.points(check) is None:
        raise UsageError(
            f"{name} has no result for {check} (their submission's status is {graded.status}): override the total "
            f"instead (`grader override --out {out} {name} total --points P --reason TEXT`)"
        )
    book.resolve([decided], known, "grader override")  # points within the check's
    decided = pinned(decided, graded)
    lines = [decided if o.key == key else o for o in lines] if before else [*lines, decided]
    book.write(out, lines)
    applied.refresh(out, lines, saved)
    most = known.most(check) or 0.0
    print(
        f"recorded in {where}: {name}, {what}: {book.number(decided.points)} / {book.number(most)} points instead of "
        f"the grader's {book.number(decided.grader_points or 0.0)} ({decided.reason})"
        + (f"; it replaces {book.number(before.points)} ({before.reason})" if before else "")
    )
    return _told(out, name, saved, lines)


def _graded_class(out: Path) -> applied.Saved:
    if not (out / GRADEBOOK_FILE).is_file():
        if (out / INCOMPLETE_FILE).is_file():
            raise UsageError(
                f"the batch in {out} was interrupted before every student was graded: finish it (the same "
                "`grader batch` command), then record the override"
            )
        raise UsageError(f"{out} holds no {GRADEBOOK_FILE}: give the --out folder of a `grader batch`")
    with open(out / GRADEBOOK_FILE, newline="", encoding="utf-8", errors="replace") as f:
        header = next(csv.reader(f), [])
    if "override" not in header or "review" not in header:
        raise UsageError(
            f"{out / GRADEBOOK_FILE} has no override and review columns: grade the class again with this grader (the "
            "same `grader batch` command), then record the override"
        )
    return applied.Saved.read(out)


def _decision(student: str, check: str, asked: Decision) -> Override:
    points, reason, by = asked.points, asked.reason, asked.by
    if points is None or reason is None or not reason.strip():
        raise UsageError(
            "an override needs --points P (the points that count) and --reason TEXT (what the student reads in "
            "their report); --remove takes one out"
        )
    if not math.isfinite(points) or points < 0:
        raise UsageError(f"--points {points:g}: points are a number of 0 or more")
    reason = reason.strip()
    if len(reason) > book.MOST_REASON:
        raise UsageError(f"--reason is {len(reason)} characters: at most {book.MOST_REASON}")
    who = (by if by is not None else _login()).strip()[: book.MOST_CELL]
    return Override(student, check, float(points), reason, who)


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return ""


def _told(out: Path, name: str, saved: applied.Saved, lines: list[Override]) -> int:
    """Say the student's grade now, and what waits for a look."""
    graded = saved.graded(name)
    if graded is None:
        return ExitCode.OK
    adjusted = adjust(graded, [o for o in lines if o.student == name])
    score = adjusted.score if adjusted else graded.final
    print(
        f"{name}'s score: {book.number(score)} / {book.number(graded.max_score)} (the grader's own: "
        f"{book.number(graded.final)}); {GRADEBOOK_FILE}, {SUMMARY_FILE}, the class page and their report are updated"
    )
    for waiting in adjusted.waiting if adjusted else ():
        print(f"review: {name}: {waiting.text()}")
    return ExitCode.OK
