"""An instructor's overrides applied to a graded class: at the end of each batch (its rows), in each export (the
gradebook as read), and by `grader override` (the class files brought up to date without regrading).

Each reads overrides.csv (grader/batch/overrides.py) and the grader's own results, never a number an earlier
application wrote: what the grader gave each student is their result.json and the late policy's share
(summary.json's `late_percent`), so applying the same overrides twice gives the same grades, and a line taken
out of overrides.csv gives the grader's own back. What one override does is grader/batch/adjust.py's.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from dataclasses import replace
from pathlib import Path

from grader.batch import keys
from grader.batch import overrides as book
from grader.batch.adjust import NO_SUBMISSION, Adjustment, Graded, adjust, by_student, final, pin_all
from grader.batch.earlier import MOST_SUMMARY_BYTES, late_percent, saved_result
from grader.batch.outputs import Row, atomic_write, histogram_of
from grader.classfiles import ClassSummary, Gradebook, GradebookRow, SummaryStudent
from grader.errors import BadResult, UsageError
from grader.files import (
    CLASS_PAGE_FILE,
    GRADEBOOK_FILE,
    GRADESCOPE_FILE,
    OVERRIDES_FILE,
    REPORT_FILE,
    STUDENTS_FOLDER,
    SUMMARY_FILE,
    WORK_FILE,
)
from grader.final import Final
from grader.gradescope.results import results
from grader.render import html
from grader.render.adjusted import restamped
from grader.result import Result
from grader.spec import Assignment

STUDENTS = STUDENTS_FOLDER


class Saved:
    """A graded class as a batch left it in its --out folder: its summary's students, and each one's result."""

    def __init__(self, out: Path, summary: ClassSummary):
        self.out = out
        self.summary = summary
        self.entries: dict[str, SummaryStudent] = {e.student: e for e in summary.students if e.student}
        self.max_score = float(summary.max_score)
        self._graded: dict[str, Graded | None] = {}

    @classmethod
    def read(cls, out: Path) -> Saved:
        """The class in `out`; a UsageError when it holds no summary.json a batch wrote."""
        path = out / SUMMARY_FILE
        try:
            if path.stat().st_size > MOST_SUMMARY_BYTES:
                raise UsageError(f"{path} is larger than {MOST_SUMMARY_BYTES // 2**20} MB: not one a batch wrote")
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError:
            raise UsageError(f"{out} holds no {SUMMARY_FILE}: give the --out folder of a `grader batch`") from None
        except ValueError as exc:
            raise UsageError(f"{path} is not JSON ({exc})") from None
        try:
            return cls(out, ClassSummary.from_dict(data))
        except (BadResult, RecursionError) as exc:
            raise UsageError(f"{path} is not one a batch wrote ({exc})") from None

    @classmethod
    def maybe(cls, out: Path) -> Saved | None:
        """The class an earlier batch left in `out`, or None when there is none to read."""
        try:
            return cls.read(out)
        except UsageError:
            return None

    def graded(self, student: str) -> Graded | None:
        """What the grader gave a student of the class (None: not one of it)."""
        if student not in self._graded:
            self._graded[student] = self._read(student)
        return self._graded[student]

    def _read(self, student: str) -> Graded | None:
        entry = self.entries.get(student)
        if entry is None:
            return None
        result = saved_result(self.out / entry.folder) if _own_folder(entry.folder) else None
        percent = late_percent(entry, result.score if result else 0.0)
        return Graded(student, entry.status or "error", result, self.max_score, percent)

    def known(self) -> book.Known:
        """The students and checks an override may name, with the checks' points (from a graded result)."""
        checks: dict[str, float] = {}
        for student in self.entries:
            graded = self.graded(student)
            if graded is not None and graded.status == "graded" and graded.result is not None:
                checks = {c.id: float(c.max_score) for c in graded.result.checks}
                break
        return book.Known(tuple(self.entries), checks, self.max_score)

    def adjusted_before(self) -> set[str]:
        """The students whose summary.json says an override applied to them, or waits for a look."""
        return {s for s, e in self.entries.items() if e.overrides or e.review}


def _own_folder(folder: str) -> bool:
    """Is this a student's folder as a batch names it, `students/<id>` (never a path out of the --out folder)?"""
    parts = folder.split("/")
    return len(parts) == 2 and parts[0] == STUDENTS and bool(parts[1]) and not parts[1].startswith(".")


# -- a batch ----------------------------------------------------------------------------------------------------


def for_batch(out: Path, assignment: Assignment, names: set[str]) -> tuple[list[book.Override], set[str]]:
    """overrides.csv read before a batch grades anyone: each line checked against the class (`names`: the students
    found now, with the roster's and those an earlier batch graded into `out`) and the assignment's checks, and
    each line a TA added by hand recorded against the result they were looking at (the file written again); and
    the students whose report may say an override was applied (stamp_reports)."""
    overrides = book.read(out)
    saved = Saved.maybe(out)
    before = saved.adjusted_before() if saved else set()
    if not overrides:
        return [], before
    students = names | set(saved.entries if saved else ())
    known = book.Known(tuple(sorted(students)), {c.id: c.points for c in assignment.checks}, assignment.max_score)
    overrides = book.resolve(overrides, known, str(out / OVERRIDES_FILE))
    if saved is not None:
        overrides, changed = pin_all(overrides, {s: g for s in saved.entries if (g := saved.graded(s)) is not None})
        if changed:
            book.write(out, overrides)
    return overrides, before


def graded_of(row: Row, max_score: float) -> Graded:
    return Graded(row.student, row.shown_status, row.result, max_score, row.late_percent)


def on_rows(out: Path, rows: list[Row], overrides: list[book.Override], max_score: float) -> list[Row]:
    """The rows with their overrides applied (or waiting); a line not yet recorded against a result (a student
    graded for the first time now) is recorded against theirs, and the file written again."""
    if not overrides:
        return rows
    graded = {r.student: graded_of(r, max_score) for r in rows}
    overrides, changed = pin_all(overrides, graded)
    if changed:
        book.write(out, overrides)
    mine = by_student(overrides)
    return [replace(r, adjustment=adjust(graded[r.student], mine.get(r.student, []))) for r in rows]


def review_lines(rows: list[Row]) -> list[str]:
    """What a batch says of the overrides: one line per override waiting for a second look, then the count."""
    lines = [f"review: {r.student}: {w.text()}" for r in rows if r.adjustment is not None for w in r.adjustment.waiting]
    applied = sum(len(r.adjustment.applied) for r in rows if r.adjustment is not None)
    if applied or lines:
        lines.append(
            f"overrides: {applied} applied, {len(lines)} waiting for a second look (the gradebook's review column, "
            "the class page)"
        )
    return lines


def stamp_reports(out: Path, rows: list[Row], before: set[str], max_score: float, title: str) -> None:
    """Each student's own report (and Gradescope results) shows their final score and what was adjusted for them,
    or, once nothing is (`before`: those whose report may have said so), no longer says it; a report shared by a
    group says nothing of one member's. `title` is the assignment's, which heads each report."""
    for row in rows:
        if row.adjustment is None and row.student not in before:
            continue
        if row.folder != f"{STUDENTS}/{row.student}" or row.shown_status == NO_SUBMISSION:
            continue
        graded = graded_of(row, max_score)
        stamp(out / row.folder, row.result, final(graded, row.adjustment), row.student, title)


def stamp(folder: Path, result: Result, shown: Final, student: str, title: str) -> None:
    """A graded student's report.html and gradescope.json made to show `shown`, their key resealed."""
    try:
        report = (folder / REPORT_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    stamped = restamped(report, result, shown, student, title)
    if stamped != report:
        keys.rewrite(folder, REPORT_FILE, stamped)
    scores = json.dumps(results(result, shown), indent=2)
    try:
        same = (folder / GRADESCOPE_FILE).read_text(encoding="utf-8") == scores
    except (OSError, UnicodeDecodeError):
        same = False
    if not same:
        keys.rewrite(folder, GRADESCOPE_FILE, scores)


# -- an export, and `grader override` ------------------------------------------------------------------------------


def on_gradebook(graded: Path, rows: dict[str, GradebookRow]) -> dict[str, GradebookRow]:
    """An export's gradebook rows (by LMS id) with overrides.csv applied as it is now: `score`, `override` and
    `review` made again, from the grader's own results, for each student with an override now or before."""
    overrides = book.read(graded)
    before = {r.student for r in rows.values() if r.override or r.review}
    if not overrides and not before:
        return rows
    saved = Saved.read(graded)
    overrides = book.resolve(overrides, saved.known(), str(graded / OVERRIDES_FILE))
    mine = by_student(overrides)
    changed = dict(rows)
    waiting = []
    for key, row in rows.items():
        student = row.student
        g = saved.graded(student) if student in mine or student in before else None
        if g is None:
            continue
        adjusted = adjust(g, mine.get(student, []))
        changed[key] = replace(
            row,
            score=adjusted.score if adjusted else g.final,
            override=adjusted.applied_cell() if adjusted else "",
            review="; ".join(w.cell() for w in adjusted.waiting) if adjusted else "",
        )
        waiting += [f"{student}: {w.text()}" for w in (adjusted.waiting if adjusted else ())]
    for line in waiting:
        print(f"review: {line}", file=sys.stderr)
    return changed


def final_of(student: str, saved: Saved, overrides: list[book.Override]) -> Final | None:
    """A student's final score as their pages show it now, with `overrides` (None: not one of the class)."""
    g = saved.graded(student)
    return final(g, adjust(g, [o for o in overrides if o.student == student])) if g is not None else None


def refresh(out: Path, overrides: list[book.Override], saved: Saved) -> None:
    """grades.csv, summary.json, the class page and the reports of every student with an override now or before,
    brought up to date with `overrides` without regrading anyone."""
    mine = by_student(overrides)
    students = set(mine) | saved.adjusted_before()
    adjusted = {s: adjust(g, mine.get(s, [])) for s in students if (g := saved.graded(s)) is not None}
    graded = {s: g for s in adjusted if (g := saved.graded(s)) is not None}
    atomic_write(out / GRADEBOOK_FILE, _gradebook(out / GRADEBOOK_FILE, adjusted, graded).text())
    entries = []
    for entry in saved.summary.students:
        if entry.student in adjusted:
            a, g = adjusted[entry.student], graded[entry.student]
            data = a.data() if a else {"overrides": [], "review": []}
            entry = replace(
                entry,
                score=a.score if a else g.final,
                late_penalty=a.penalty if a else g.penalty(g.raw),
                overrides=tuple(data["overrides"]),
                review=tuple(data["review"]),
            )
        entries.append(entry)
    summary = replace(
        saved.summary,
        students=tuple(entries),
        histogram=tuple(histogram_of(entries, saved.max_score)),
        overrides={
            "applied": sum(len(a.applied) for a in adjusted.values() if a),
            "waiting": sum(len(a.waiting) for a in adjusted.values() if a),
        },
    )
    atomic_write(out / SUMMARY_FILE, summary.to_json())
    atomic_write(out / CLASS_PAGE_FILE, html.class_report(summary.to_dict(), _sources(out)))
    for student, a in adjusted.items():
        folder, g = saved.entries[student].folder, graded[student]
        if _own_folder(folder) and folder == f"{STUDENTS}/{student}" and g.result is not None:
            stamp(out / folder, g.result, final(g, a), student, saved.summary.title)


def _gradebook(path: Path, adjusted: dict[str, Adjustment | None], graded: dict[str, Graded]) -> Gradebook:
    """grades.csv as read, each adjusted student's row made again: score, late penalty, override, review, and
    their check columns (the grader's points, or the override's)."""
    try:
        text = path.read_text(encoding="utf-8")
        read = Gradebook.read(text, str(path))
    except (OSError, UnicodeDecodeError, BadResult):
        raise UsageError(f"{path} cannot be read: run the batch into this --out folder again") from None
    header = next(csv.reader(io.StringIO(text, newline="")), [])
    if "review" not in header or "override" not in header:
        raise UsageError(f"{path} has no override and review columns: grade the class again with this grader")
    rows = []
    for row in read.rows:
        if row.student in adjusted:
            a, g = adjusted[row.student], graded[row.student]
            points: dict[str, float | None] = (
                {c.id: None if c.max_score == 0 else c.score for c in g.result.checks} if g.result else {}
            )
            points |= a.checks if a else {}
            row = replace(
                row,
                score=a.score if a else g.final,
                late_penalty=a.penalty if a else g.penalty(g.raw),
                override=a.applied_cell() if a else "",
                review="; ".join(w.cell() for w in a.waiting) if a else "",
                checks={check: points.get(check) for check in read.checks},
            )
        rows.append(row)
    return replace(read, rows=tuple(rows))


def _sources(out: Path) -> dict[str, str]:
    """Each student's code as work.json keeps it, for the class page's side-by-side views."""
    try:
        path = out / WORK_FILE
        if path.stat().st_size > MOST_SUMMARY_BYTES:
            return {}
        work = json.loads(path.read_text(encoding="utf-8"))
        return {str(s["student"]): str(s["source"]) for s in work["students"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
