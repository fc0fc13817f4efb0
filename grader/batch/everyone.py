"""Every student a row: those found but not gradable, and, with a roster, those nothing was found for.

A gradebook with fewer rows than the class hides students: an instructor joining it to the
LMS by hand cannot tell "did not submit" from "the grader lost them". So a student whose
work cannot be graded (only tests, a notebook over the size limit, a zip that cannot
be read) gets a row with status `error`, 0 points and the reason, and their own
result.json and report.html saying what was found and what to hand in; and every student
on the roster nothing was found for gets a row with status `no_submission` and 0. Each other member of a group
submission (Gradescope's other submitters, or a member --groups names) gets a row with the group's grade and
report, unless they have a row of their own. Work
from a plain folder that the roster names (by login, SIS id or email) takes the roster's
LMS id, so that the export can give it back; work the roster does not name keeps its row,
and a note says so.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from grader import __version__
from grader.batch.found import Ungradable
from grader.batch.outputs import Row, atomic_write
from grader.classfiles import NO_SUBMISSION
from grader.files import GRADESCOPE_FILE, KEY_FILE, MODULE_FILE, REPORT_FILE, RESULT_FILE
from grader.gradescope.results import results
from grader.lms.identity import Identity
from grader.lms.names import safe_id
from grader.lms.roster import Roster
from grader.render import html
from grader.result import Result, SubmissionError
from grader.spec import Assignment


def everyone(
    rows: list[Row], missing: tuple[Ungradable, ...], roster: Roster | None, students: Path, assignment: Assignment
) -> list[Row]:
    """The graded rows, a row for each student found but not gradable, and, with a roster, one for each
    roster student nothing was found for; `students` is the folder of the students' own folders."""
    rows = list(rows)
    rows += _group_members(rows)
    for m in missing:
        result = _error(assignment, m.reason, m.source or m.student)
        folder = students / m.student
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder, result, assignment)
        rows.append(
            Row(
                m.student,
                m.identity.late,
                result,
                False,
                "",
                f"{students.name}/{m.student}",
                [],
                m.identity,
                reason=m.reason,
            )
        )
    if roster is None:
        return rows
    matched: set[str] = set()
    for i, row in enumerate(rows):
        who = row.identity
        found = roster.match(who, row.student) if who else None
        if who is None or found is None:
            print(
                f"note: {row.student} is not on the roster {roster.path.name}; graded, but no {roster.lms} import "
                "will carry it",
                file=sys.stderr,
            )
            continue
        if found.user_id in matched:
            print(
                f"note: {row.student} is a second submission for {found.name} ({roster.lms} id {found.user_id}); "
                "only the first is exported",
                file=sys.stderr,
            )
            continue
        matched.add(found.user_id)
        if who.lms != roster.lms:  # a plain folder the roster names: the LMS's id, to give the grade back
            rows[i] = replace(row, identity=replace(found.identity(), late=who.late))
    taken = {r.student.lower() for r in rows}
    for student in roster.students:
        if student.user_id in matched:
            continue
        sid = student.id_base
        if sid.lower() in taken:
            sid = f"{sid}_{student.user_id}"
        taken.add(sid.lower())
        rows.append(absent(sid, student.identity(), assignment))
    return rows


def absent(sid: str, who: Identity, assignment: Assignment) -> Row:
    """The row of a roster student nothing was found for."""
    why = f"no submission was found for {who.name} ({who.lms} id {who.user_id})"
    result = _error(assignment, why, sid, "not_found")
    return Row(sid, False, result, False, "", "", [], who, status=NO_SUBMISSION, reason="no submission")


def _group_members(rows: list[Row]) -> list[Row]:
    """A row for each other member of a group submission (Gradescope's other submitters, or --groups' members):
    the group's grade and report; never for a member with a row of their own, and once for each member."""
    taken = {r.student.lower() for r in rows}
    placed = {(r.identity.lms, r.identity.user_id) for r in rows if r.identity and r.identity.user_id}
    extra = []
    for row in rows:
        for member in row.identity.group if row.identity else ():
            if member.user_id and (member.lms, member.user_id) in placed:
                continue
            placed.add((member.lms, member.user_id))
            sid = safe_id(member.name) or f"{member.lms}-{safe_id(member.user_id)}"
            if sid.lower() in taken:
                sid = f"{sid}_{safe_id(member.user_id)}"
            taken.add(sid.lower())
            extra.append(
                replace(
                    row,
                    student=sid,
                    identity=member,
                    reason=row.reason or f"graded with the group submission of {row.student}",
                )
            )
    return extra


def _error(assignment: Assignment, why: str, name: str, kind: str | None = None) -> Result:
    """A result saying why nothing could be graded, and what to hand in instead."""
    if "larger than" in why:
        kind, advice = (
            "unreadable",
            (
                "Hand in a smaller file: a notebook's saved outputs and pictures are most of "
                "its size (clear every output, save, and hand it in again)."
            ),
        )
    elif "readable zip" in why:
        kind, advice = "unreadable", "Zip your files again, or hand in your .py file or notebook itself."
    else:
        kind, advice = kind or "not_found", f"Hand in your engine ({MODULE_FILE}, or a notebook) beside your tests."
    message = f"{why[:1].upper()}{why[1:]}: nothing could be graded. {advice}"
    return Result(
        Path(name).name,
        None,
        assignment.id,
        __version__,
        "error",
        SubmissionError(kind, message),
        0.0,
        assignment.max_score,
        0.0,
        (),
    )


def _write(folder: Path, result: Result, assignment: Assignment) -> None:
    atomic_write(folder / RESULT_FILE, json.dumps(result.to_dict(), indent=2))
    atomic_write(folder / GRADESCOPE_FILE, json.dumps(results(result), indent=2))
    atomic_write(folder / REPORT_FILE, html.student_report(result, None, assignment.title))
    (folder / KEY_FILE).unlink(missing_ok=True)  # looked at again on every run
