"""What a batch writes besides each student's files: the gradebook, the class data and the class
summary page, from each student's row (their Result, and what the batch knows of their file).

The gradebook is written first, before any pass over the whole class (the misconceptions, the
similarity pass: grader/batch/insight.py), so that nothing a class-wide pass meets in one student's
code can cost anyone their grade; a pass that fails costs its own section of summary.json and of
the class page, which say so. The class page too is written whatever a section holds: one that
cannot be drawn is left out, and the page says so.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from grader.batch.adjust import Adjustment
from grader.batch.insight import class_insight, unchanged_kit
from grader.batch.notes import Grouped, as_data
from grader.classfiles import NO_SUBMISSION, ClassSummary, Gradebook, GradebookRow, SummaryStudent
from grader.fileio import atomic_write  # every batch output: whole, 0600, never through a link
from grader.files import CLASS_PAGE_FILE, GRADEBOOK_FILE, INCOMPLETE_FILE, SUMMARY_FILE, WORK_FILE
from grader.lms.identity import Identity
from grader.render import html
from grader.result import Result
from grader.spec import Assignment
from grader.text import failure

KIT_FLAG = html.KIT
"""The flag of a submission that is the starter kit as handed out: shown once, not counted as graded work."""
FLAGGED_IMPORTS = ("reference", "micrograd", "torch")
"""Modules whose import is worth an instructor's look: the reference engine, micrograd itself, torch."""
PARSED_CHARS = 50_000
"""Longest code whose imports are read from its syntax tree (an engine is 5 KB; longer code, whose tree would
take a second of the instructor's process, is read line by line)."""
LINE_CHARS = 1_000
"""The most of one line read for an import (an import statement is a few dozen characters)."""
WHY_CHARS = 1_000
"""The longest reason a row gives (the gradebook's `reason`, summary.json's)."""


@dataclass(frozen=True)
class Row:
    """One student in the class outputs: their result, and what the batch knows of their file."""

    student: str
    late: bool
    result: Result
    skipped: bool
    """Graded by an earlier run, and unchanged since."""
    file: str
    folder: str
    """Their files' folder, relative to the batch's output."""
    flags: list[str]
    """Imports worth an instructor's look (flags_for)."""
    identity: Identity | None = None
    """Who the student is in the LMS (grader/lms/identity.py)."""
    status: str = ""
    """`no_submission` for a roster student nothing was found for; else the result's status."""
    reason: str = ""
    """Why the student has no grade of their own (nothing found, only tests, a file too big...)."""
    penalty: float = 0.0
    """Points taken off for lateness (grader/lms/late.py); the score is the result's less these."""
    code: str = ""
    """Their code (a notebook's code cells), for the similarity pass (grader/batch/insight.py)."""
    late_percent: float = 0.0
    """The share of the points earned that lateness costs, in percent (penalty is that share of the result's)."""
    adjustment: Adjustment | None = None
    """Their instructor's overrides, applied or waiting for a second look (grader/batch/adjust.py)."""

    @property
    def shown_status(self) -> str:
        return self.status or self.result.status

    @property
    def score(self) -> float:
        if self.adjustment is not None:
            return self.adjustment.score
        return round(max(self.result.score - self.penalty, 0.0), 2)

    @property
    def late_penalty(self) -> float:
        """The late penalty taken from the final score (from the points an override leaves, if one does)."""
        return self.adjustment.penalty if self.adjustment is not None else self.penalty

    @property
    def why(self) -> str:
        if self.reason:
            return _capped(self.reason)
        error = self.result.error
        first = error.message.partition("\n")[0] if error and error.message else ""
        return _capped(f"{error.kind}: {first}") if error else ""


def _capped(text: str) -> str:
    return text if len(text) <= WHY_CHARS else text[: WHY_CHARS - 1] + "…"


@dataclass(frozen=True)
class Incomplete:
    """A batch stopped before every student was graded."""

    found: int
    """Students found, graded or not."""
    finish: str
    """The command that grades the rest."""


def flags_for(source: str) -> list[str]:
    """What is worth an instructor's look in a student's code: KIT_FLAG for the starter kit as handed out, and
    imports (FLAGGED_IMPORTS), anywhere in the code (`import os, torch` and `from micrograd.engine import Value`
    too). Read from the syntax tree; code that does not parse (a notebook's magics, a syntax error) or is too long
    to parse is read line by line with str methods, never with a regular expression, so that no student's text
    can make it take more than linear time. Never raises."""
    try:
        if unchanged_kit(source):
            return [KIT_FLAG]
        return sorted(f"imports {m}" for m in sorted(_imported(source) & set(FLAGGED_IMPORTS)))
    except Exception:
        return []


def graded_work(row: Row) -> bool:
    """Is the row graded work, counted in the class's histogram, pass rates and misconceptions (not the starter kit
    unchanged, not work that could not be graded, not a roster's student who handed in nothing)?"""
    return row.shown_status == "graded" and KIT_FLAG not in row.flags


def histogram_of(students: Iterable[SummaryStudent], max_score: float) -> list[int]:
    """summary.json's histogram: the final scores of the graded work only (see graded_work), by tenth of the points."""
    return histogram([s.score for s in students if s.status == "graded" and KIT_FLAG not in s.flags], max_score)


def _imported(source: str) -> set[str]:
    """The top-level modules the code imports."""
    if len(source) <= PARSED_CHARS:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        else:
            found = set()
            for node in ast.walk(tree):  # ast.walk keeps a queue: no recursion
                if isinstance(node, ast.Import):
                    found |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
            return found
    return _imported_by_line(source)


def _imported_by_line(source: str) -> set[str]:
    """The top-level modules named by lines that are import statements: each line holding 'import' read once."""
    found: set[str] = set()
    at = 0
    while (i := source.find("import", at)) != -1:
        newline = source.rfind("\n", at, i)
        start = newline + 1 if newline != -1 else at
        end = source.find("\n", i)
        end = len(source) if end == -1 else end
        words = source[start : min(end, start + LINE_CHARS)].split()
        if len(words) > 1 and words[0] == "import":
            for part in " ".join(words[1:]).split(","):
                named = part.split()
                if named:
                    found.add(named[0].split(".")[0])
        elif len(words) > 3 and words[0] == "from" and words[2] == "import":
            found.add(words[1].split(".")[0])
        at = end + 1
    return found


def gradebook_row(row: Row) -> GradebookRow:
    """A student's row of the gradebook: their final score, the grader's own, and each check's points (those an
    override gives, where one is applied)."""
    result, adjusted = row.result, row.adjustment
    scores: dict[str, float | None] = {c.id: None if c.max_score == 0 else c.score for c in result.checks}  # advice
    if adjusted is not None:
        scores |= adjusted.checks
    who = row.identity or Identity("plain", row.student)
    return GradebookRow(
        row.student,
        row.score,
        result.max_score,
        row.shown_status,
        row.late,
        who.lms,
        who.user_id,
        who.submission_id,
        float(result.score),
        row.late_penalty,
        row.why,
        adjusted.applied_cell() if adjusted else "",
        "; ".join(w.cell() for w in adjusted.waiting) if adjusted else "",
        scores,
    )


def gradebook(rows: list[Row], check_ids: list[str]) -> Gradebook:
    """grades.csv: one row per student, one column per check, readable by a spreadsheet or an LMS import."""
    return Gradebook(tuple(check_ids), tuple(gradebook_row(row) for row in rows))


def summary_student(row: Row) -> SummaryStudent:
    """A student as summary.json holds them."""
    adjusted = row.adjustment.data() if row.adjustment else {"overrides": [], "review": []}
    return SummaryStudent(
        student=row.student,
        score=row.score,
        status=row.shown_status,
        error=row.result.error,
        late=row.late,
        folder=row.folder,
        flags=tuple(row.flags),
        raw_score=row.result.score,
        late_penalty=row.late_penalty,
        late_percent=row.late_percent,
        reason=row.why,
        lms=asdict(row.identity) if row.identity else None,
        overrides=tuple(adjusted["overrides"]),
        review=tuple(adjusted["review"]),
    )


def class_data(rows: list[Row], assignment: Assignment, notes: tuple[Grouped, ...]) -> ClassSummary:
    """Everything the class summary shows (summary.json), but its insight. `notes` come one per student and
    kind, the important kinds first: `notes` holds their lines, `note_details` the same with their kind,
    whether it is important, the student, the count and a few example names."""
    check_ids = [c.id for c in assignment.checks if c.points > 0]  # an advisory check is no bug: `advisory` has it
    graded = [r for r in rows if graded_work(r)]
    checks = []
    for cid in check_ids:
        statuses = [next((c.status for c in r.result.checks if c.id == cid), None) for r in graded]
        passed = sum(s == "passed" for s in statuses)
        checks.append(
            {
                "id": cid,
                "passed": passed,
                "total": len(graded),
                "rate": round(passed / len(graded), 4) if graded else None,
            }
        )
    checks.sort(key=lambda c: (c["rate"] if c["rate"] is not None else 1.0, c["id"]))
    by_hash: dict[str, list[str]] = {}
    for r in rows:
        if r.result.sha256:
            by_hash.setdefault(r.result.sha256, []).append(r.student)
    identical = [students for students in by_hash.values() if len(students) > 1]
    max_score = assignment.max_score
    adjusted = [r.adjustment for r in rows if r.adjustment is not None]
    students = tuple(summary_student(r) for r in rows)
    return ClassSummary(
        assignment=assignment.id,
        title=assignment.title,
        max_score=max_score,
        students=students,
        histogram=tuple(histogram_of(students, max_score)),
        overrides={
            "applied": sum(len(a.applied) for a in adjusted),
            "waiting": sum(len(a.waiting) for a in adjusted),
        },
        checks=tuple(checks),
        errors=tuple(
            {
                "student": r.student,
                "kind": r.result.error.kind,
                "message": r.reason or (r.result.error.message.splitlines() or [""])[0],
            }
            for r in rows
            if r.result.error is not None and r.result.status == "error" and r.shown_status != NO_SUBMISSION
        ),
        identical=tuple(tuple(students) for students in identical),
        notes=tuple(n.text for n in notes),
        note_details=tuple(as_data(notes)),
    )


def histogram(scores: list[float], max_score: float) -> list[int]:
    """How many scores fall in each tenth of the points."""
    bins = Counter(min(int(10 * score / max_score), 9) if max_score else 0 for score in scores)
    return [bins.get(i, 0) for i in range(10)]


@dataclass(frozen=True)
class Insight:
    """What the class-wide passes read beyond the rows: an earlier term's batch, and the lesson's own code."""

    previous: Path | None = None
    base: str | None = None


def write_class_outputs(
    out: Path,
    assignment: Assignment,
    rows: list[Row],
    notes: tuple[Grouped, ...],
    insight: Insight = Insight(),
    incomplete: Incomplete | None = None,
) -> None:
    """The class's files, the gradebook first: then the class data with its insight (each class-wide pass in a
    guard of its own: grader/batch/insight.py), work.json, and the class page."""
    name, stale = (INCOMPLETE_FILE, GRADEBOOK_FILE) if incomplete else (GRADEBOOK_FILE, INCOMPLETE_FILE)
    atomic_write(out / name, gradebook(rows, [c.id for c in assignment.checks]).text())
    (out / stale).unlink(missing_ok=True)
    found, sources, work = class_insight(
        [(r.student, r.result, r.code) for r in rows if r.shown_status != NO_SUBMISSION],  # what was handed in
        insight.previous,
        insight.base,
        frozenset(r.student for r in rows if KIT_FLAG in r.flags),
    )
    summary = replace(
        class_data(rows, assignment, notes),
        misconceptions=tuple(found["misconceptions"]),
        unexplained=tuple(found["unexplained"]),
        advisory=tuple(found["advisory"]),
        similarity=found["similarity"],
        failed_passes=found["failed_passes"],
        complete=incomplete is None,
        graded=len(rows),
        found=incomplete.found if incomplete else len(rows),
        finish=incomplete.finish if incomplete else None,
    )
    page, summary = class_page(summary, sources)
    atomic_write(out / SUMMARY_FILE, summary.to_json())
    atomic_write(out / WORK_FILE, work)
    atomic_write(out / CLASS_PAGE_FILE, page)


def class_page(summary: ClassSummary, sources: dict[str, str]) -> tuple[str, ClassSummary]:
    """The class page, and the summary it shows; if drawing the similarity section (the only one showing
    students' code) fails, the page without it, saying why (as the summary's `failed_passes` then does)."""
    try:
        return html.class_report(summary.to_dict(), sources), summary
    except Exception as exc:
        print(f"note: the class page's similar work could not be drawn ({failure(exc)})", file=sys.stderr)
        summary = replace(
            summary,
            failed_passes={
                **summary.failed_passes,
                "similarity": f"its section of the class page could not be drawn ({failure(exc)}); its pairs are "
                f"in {SUMMARY_FILE}",
            },
        )
        return html.class_report({**summary.to_dict(), "similarity": None}, {}), summary
