"""What a batch leaves once its grading ends: the class files (the gradebook and the summary, every student's row with
the overrides applied), marked incomplete when it was stopped, and what it says on its way out."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from grader import spec
from grader.batch import applied
from grader.batch import overrides as book
from grader.batch.earlier import earlier_rows
from grader.batch.everyone import everyone
from grader.batch.found import Missing
from grader.batch.notes import Grouped
from grader.batch.outputs import KIT_FLAG, Incomplete, Insight, Row, write_class_outputs
from grader.batch.resume import STUDENTS
from grader.classfiles import NO_SUBMISSION
from grader.files import CLASS_PAGE_FILE, GRADEBOOK_FILE
from grader.lms import roster as rosters
from grader.text import counted


@dataclass(frozen=True)
class Known:
    """What a batch knows of the class besides whom it grades: the notes on how students were found, those found
    with nothing to grade, the instructor's overrides, and what the class-wide passes read."""

    noted: tuple[Grouped, ...]
    missing: tuple[Missing, ...]
    overrides: list[book.Override]
    insight: Insight


def whole_class(
    out: Path,
    assignment: spec.Assignment,
    graded: list[Row],
    class_list: rosters.Roster | None,
    known: Known,
    adjusted_before: set[str],
) -> None:
    """The class files of a finished batch: the rows graded now, those an earlier batch into `out` graded, and the
    roster's students with no submission, with the overrides applied; then what the batch says on its way out."""
    now = [(r.student, r.identity) for r in graded] + [(m.student, m.identity) for m in known.missing]
    before = earlier_rows(out, now, class_list is not None, assignment)  # the whole class, not only this run's
    if before:
        keep = "keeps their row" if len(before) == 1 else "keep their rows"
        print(f"note: {counted(len(before), 'student')} graded into {out} by an earlier batch {keep}", file=sys.stderr)
    rows = everyone(graded + before, known.missing, class_list, out / STUDENTS, assignment)
    rows = sorted(applied.on_rows(out, rows, known.overrides, assignment.max_score), key=lambda r: r.student)
    write_class_outputs(out, assignment, rows, known.noted, known.insight)
    applied.stamp_reports(out, rows, adjusted_before, assignment.max_score, assignment.title)
    for line in applied.review_lines(rows):
        print(line, file=sys.stderr)
    print(summary_line(out, rows))
    for line in ending(graded, rows):
        print(line)


def summary_line(out: Path, rows: list[Row]) -> str:
    """What a finished batch says first, in the class page's counts: what was handed in, how much of it was graded,
    who handed in nothing, and where the gradebook and the class page are. `8 submissions: 6 graded, 1 the starter
    kit unchanged, 1 could not be graded (0 unchanged since the last run); ...`"""
    handed_in = [r for r in rows if r.shown_status != NO_SUBMISSION]
    absent = len(rows) - len(handed_in)
    failed = sum(r.result.status == "error" for r in handed_in)
    kits = sum(KIT_FLAG in r.flags for r in handed_in if r.result.status != "error")
    kit = f", {kits} the starter kit unchanged" if kits else ""
    nothing = (
        f"; {counted(absent, 'student')} on the roster handed in nothing (0 points, status no_submission)"
        if absent
        else ""
    )
    return (
        f"{counted(len(handed_in), 'submission')}: {len(handed_in) - failed - kits} graded{kit}, {failed} could not be "
        f"graded ({sum(r.skipped for r in rows)} unchanged since the last run){nothing}; gradebook: "
        f"{out / GRADEBOOK_FILE} ({counted(len(rows), 'row')}); class summary: {out / CLASS_PAGE_FILE}"
    )


def incomplete(out: Path, assignment: spec.Assignment, rows: list[Row], graded: int, known: Known) -> None:
    """The class outputs for those graded so far (of `graded` to grade) and those found with nothing to grade,
    marked incomplete (grades.incomplete.csv, not grades.csv), with the overrides applied; no roster rows, since a
    student not reached yet is not missing."""
    rows = everyone(rows, known.missing, None, out / STUDENTS, assignment)
    rows = applied.on_rows(out, rows, list(known.overrides), assignment.max_score)
    write_class_outputs(
        out,
        assignment,
        sorted(rows, key=lambda r: r.student),
        known.noted,
        known.insight,
        Incomplete(graded + len(known.missing), finish_command()),
    )


def finish_command() -> str:
    """The command that grades the rest of an interrupted batch: this one as typed, without --force (every
    student a --force run had not reached yet has no key, so is regraded; those it regraded are kept)."""
    args = sys.argv[1:]
    if args[:1] != ["batch"]:  # called from Python, not the command line
        return "the same batch without --force"
    kept = [a for a in args if not (a.startswith("--f") and "--force".startswith(a))]
    return f"`{shlex.join(['grader', *kept])}`"


def ending(graded: list[Row], rows: list[Row]) -> list[str]:
    """The lines after a batch's summary: the slowest of the students graded (those graded in this run), and
    which of the rows could not be graded (not a roster's students with no submission)."""
    lines = []
    graded = sorted((r for r in graded if not r.skipped), key=lambda r: (-r.result.duration_s, r.student))
    if len(graded) > 1:
        lines.append("slowest: " + ", ".join(f"{r.student} ({r.result.duration_s:.1f} s)" for r in graded[:3]))
    # error results, not a roster's no_submission
    errors = [(r.student, r.result.error) for r in rows if r.result.error and r.shown_status == "error"]
    if errors:
        named = ", ".join(f"{student} ({error.kind})" for student, error in errors[:20])
        lines.append(
            f"could not be graded: {named}"
            + (f" and {len(errors) - 20} more" if len(errors) > 20 else "")
            + "; each one's result.json says why"
        )
    return lines
