"""The students an earlier batch into the same --out graded, so that the gradebook is always the whole class.

A batch grades what its inputs hold now: a late student graded alone into the class's --out, or a second
download holding only resubmissions, would otherwise leave a gradebook and class page of those few while
`students/` holds everyone. So each student of the folder's summary.json that this run did not grade (by
student id, or by LMS id) keeps their row, read back from their own result.json and the summary's entry
(their LMS identity, late penalty, reason). A roster's `no_submission` rows are not carried: the roster
given now decides them (without one now, they are kept, unless the student has work now).
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.batch.everyone import absent
from grader.batch.outputs import Row
from grader.classfiles import NO_SUBMISSION, ClassSummary, SummaryStudent
from grader.errors import BadResult
from grader.files import RESULT_FILE, SUMMARY_FILE
from grader.lms.identity import Identity
from grader.result import Result
from grader.spec import Assignment

MOST_SUMMARY_BYTES = 200 * 2**20


def earlier_rows(
    out: Path, now: list[tuple[str, Identity | None]], roster_given: bool, assignment: Assignment
) -> list[Row]:
    """The rows of students graded into `out` before and not among those this run has a row for (`now`: each
    one's student id and LMS identity)."""
    summary = saved_summary(out)
    if summary is None:
        return []
    ids = {student.lower() for student, _ in now}
    lms_ids = {(who.lms, who.user_id) for _, who in now if who and who.user_id}
    kept = []
    for entry in summary.students:
        row = _row(out, entry, assignment)
        if row is None or row.student.lower() in ids:
            continue
        who = row.identity
        if who is not None and who.user_id and (who.lms, who.user_id) in lms_ids:
            continue
        if row.status == NO_SUBMISSION and roster_given:
            continue
        ids.add(row.student.lower())
        kept.append(row)
    return kept


def saved_summary(out: Path) -> ClassSummary | None:
    """The class summary a batch wrote into `out`, or None when there is none, or it is not one."""
    try:
        path = out / SUMMARY_FILE
        if not path.is_file() or path.stat().st_size > MOST_SUMMARY_BYTES:
            return None
        return ClassSummary.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, BadResult, RecursionError):
        return None


def _row(out: Path, entry: SummaryStudent, assignment: Assignment) -> Row | None:
    """A student's row as an earlier batch wrote it, or None when their files are not there to read."""
    student, folder, status = entry.student, entry.folder, entry.status
    if not student or not status:
        return None
    who = Identity.from_dict(entry.lms)
    if status == NO_SUBMISSION:
        return absent(student, who, assignment) if who is not None else None
    if Path(folder).name != student:  # a group member's: made again from the group's
        return None
    result = saved_result(out / folder)
    if result is None:
        return None
    percent = late_percent(entry, result.score)
    return Row(
        student,
        entry.late,
        result,
        True,
        result.submission,
        folder,
        list(entry.flags),
        who,
        reason=entry.reason,
        penalty=round(result.score * percent / 100, 2),
        late_percent=percent,
    )


def late_percent(entry: SummaryStudent, raw: float) -> float:
    """The share of the points lateness takes from a student, as summary.json says (its `late_percent`, or, as a
    batch before overrides wrote it, the penalty's share of the result's points)."""
    percent, penalty = entry.late_percent, entry.late_penalty
    if percent is not None and 0 <= percent <= 100:
        return float(percent)
    return min(100.0, 100 * penalty / raw) if penalty > 0 and raw > 0 else 0.0


def saved_result(folder: Path) -> Result | None:
    """A student's result.json as written, or None when it is not there or not a result."""
    try:
        return Result.from_dict(json.loads((folder / RESULT_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, BadResult):
        return None
