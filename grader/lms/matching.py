"""Which roster row each graded student's grade goes to, before an export writes anything.

Grades are joined by the LMS's own ids (the gradebook's `lms_user_id`). A graded student whose id is on no
roster row would lose their grade in the import without a word (and the roster row that is theirs would
keep the LMS's cell, or 0 with --zero-missing), so the export stops, naming each such student and the
roster row most like them (difflib, on names and logins); `--map FILE` pairs them (`student,roster id` per
line), `--allow-unmatched` exports without them.
"""

from __future__ import annotations

import difflib
import sys
import unicodedata
from dataclasses import replace
from pathlib import Path

from grader.classfiles import NO_SUBMISSION, GradebookRow
from grader.csvfile import numbered_rows
from grader.errors import UsageError
from grader.lms.roster import Roster, RosterStudent

MOST_MAP_BYTES = 5 * 2**20
SHOWN = 10


def join(
    class_list: Roster, rows: dict[str, GradebookRow], graded: Path, mapping: Path | None, allow_unmatched: bool
) -> dict[str, GradebookRow]:
    """The gradebook's rows by roster id, with --map's pairs applied; a UsageError when a graded student is on no
    roster row (unless allow_unmatched)."""
    rows = _mapped(class_list, rows, mapping) if mapping else rows
    ids = {s.user_id for s in class_list.students}
    handed_in = {key: row for key, row in rows.items() if row.status != NO_SUBMISSION}
    unmatched = sorted((row.student for key, row in handed_in.items() if key not in ids), key=str.lower)
    if len(handed_in) > 1 and not set(handed_in) & ids:
        raise UsageError(
            f"none of the {len(handed_in)} students graded in {graded} is on the roster "
            f"{class_list.path} ({class_list.lms} ids): is it the same course and LMS? (the first: "
            + "; ".join(f"{name} (likely {_likely(class_list, name)})" for name in unmatched[:3])
            + ")"
        )
    if unmatched and not allow_unmatched:
        pairs = [f"{name} (likely {_likely(class_list, name)})" for name in unmatched[:SHOWN]]
        raise UsageError(
            f"{len(unmatched)} graded student{'s' if len(unmatched) > 1 else ''} of {graded} match no row of the "
            f"roster {class_list.path} by {class_list.lms} id, so their grades would not be imported: "
            + "; ".join(pairs)
            + (f"; and {len(unmatched) - SHOWN} more" if len(unmatched) > SHOWN else "")
            + ". Pair each with its roster id in a CSV given as --map FILE (one `student,roster id` per line), "
            "or leave them out of the export with --allow-unmatched"
        )
    if unmatched:
        print(
            f"note: {len(unmatched)} graded students match no roster row and are not in the export: "
            + ", ".join(unmatched[:SHOWN])
            + (" ..." if len(unmatched) > SHOWN else ""),
            file=sys.stderr,
        )
    return rows


def _likely(class_list: Roster, name: str) -> str:
    """The roster row most like a student id, by name or login; or that none is."""
    keys: dict[str, RosterStudent] = {}
    for student in class_list.students:
        for key in (student.name, student.id_base, *student.aliases):
            keys.setdefault(_plain(key), student)
    best = difflib.get_close_matches(_plain(name), list(keys), n=1, cutoff=0.6)
    if not best:
        return "no roster row is like it"
    student = keys[best[0]]
    return f"'{student.name}', {class_list.lms} id {student.user_id}"


def _plain(text: str) -> str:
    """Letters and digits only, lower case, accents dropped: how two spellings of one name are compared."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text[:200]) if not unicodedata.combining(c))
    return "".join(c for c in folded.lower() if c.isalnum())


def _mapped(class_list: Roster, rows: dict[str, GradebookRow], mapping: Path) -> dict[str, GradebookRow]:
    """The rows with each pair of --map FILE applied: the student's grade goes to the roster id named."""
    try:
        data = mapping.read_bytes()
        if len(data) > MOST_MAP_BYTES:
            raise UsageError(f"--map {mapping} is larger than {MOST_MAP_BYTES // 2**20} MB")
        text = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--map {mapping} cannot be read as UTF-8 text ({type(exc).__name__})") from None
    by_student = {row.student: key for key, row in rows.items()}
    out = dict(rows)
    for line, pair in numbered_rows(text, f"--map {mapping}"):
        cells = [c.strip() for c in pair]
        if not any(cells) or (line == 1 and cells[:1] == ["student"]):
            continue
        if len(cells) < 2:
            raise UsageError(f"--map {mapping}, line {line}: expected `student,roster id`, got {','.join(cells)[:200]}")
        student, roster_id = cells[0], cells[1]
        if student not in by_student:
            raise UsageError(f"--map {mapping}, line {line}: no student '{student[:200]}' in the gradebook")
        if class_list.by_id(roster_id) is None:
            raise UsageError(f"--map {mapping}, line {line}: no {class_list.lms} id '{roster_id[:200]}' on the roster")
        row = out.pop(by_student[student])
        out[roster_id] = replace(row, lms=class_list.lms, lms_user_id=roster_id)
    return out
