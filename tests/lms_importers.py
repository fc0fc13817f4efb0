"""Small re-implementations of the rules each LMS applies when it imports what `grader export` writes, written
from their source (canvas-lms lib/gradebook_importer.rb and Assignment#infer_comment_context_from_filename;
moodle mod/assign/feedback/offline/importgradeslib.php and locallib.php's process_import_grades,
mod/assign/feedback/file/importziplib.php), so the tests can judge every export as the LMS would: which
student each row or file reaches, and which grades change.

Only the matching and change rules are modelled: a course is plain data (its students, assignments and
current grades), and nothing here is shared with the grader's own code.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field

# -- Canvas: the gradebook importer ------------------------------------------------------------------------

NON_ASSIGNMENT = re.compile(
    "Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
    "Override Score|Override Grade|Override Status"
)
MUTED = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)
PURE_NUMBER = re.compile(r"^-?[0-9.,]+%?$")


@dataclass
class CanvasCourse:
    students: dict[int, str]
    """user id -> sortable name."""
    assignments: dict[int, tuple[str, float]]
    """assignment id -> (title, points possible)."""
    grades: dict[tuple[int, int], str] = field(default_factory=dict)
    """(user id, assignment id) -> the current score as a string, `EX` when excused; absent: no grade."""
    attachments: dict[int, set[int]] = field(default_factory=dict)
    """user id -> the ids of the files of their submission (for the comments zip)."""


@dataclass
class CanvasImport:
    assignments: dict[int, str]
    """Each assignment column read (a negative id: one Canvas would create) -> its title."""
    points: dict[int, str]
    """Points possible as the Points Possible row sets them (after the decimal-comma conversion)."""
    changes: dict[tuple[int, int], str]
    """(user id, assignment id) -> the grade the import would set, only where it changes something."""
    new_students: list[str]


def _decimal_comma_to_period(cell: str | None) -> str | None:
    if cell is None or not PURE_NUMBER.match(cell):
        return cell
    parts = re.split(r"[,.]", cell)
    last = parts.pop()
    return last if not parts else "".join(parts) + "." + last


def _separator(lines: list[str]) -> str:
    counts = {}
    for sep in (";", ","):
        sizes = {len(next(csv.reader([line], delimiter=sep), [])) for line in lines}
        counts[sep] = sizes.pop() if len(sizes) == 1 else 0
    return ";" if counts[";"] > counts[","] else ","


def _title_and_id(name: str) -> tuple[str, int | None]:
    match = re.match(r"\A(.*)\s\((\d+)\)\Z", name)
    return (match[1], int(match[2])) if match else (name, None)


def _student_columns(header: list[str]) -> int:
    first_last = header[0] == "LastName" and header[1] == "FirstName"
    n = columns = 4 if first_last else 3
    if re.search(r"SIS\s+Login\s+ID", header[n - 1]):
        columns += 1
    elif re.search(r"SIS\s+User\s+ID", header[n - 1]) and re.search(r"SIS\s+Login\s+ID", header[n]):
        extra = 1 if n + 1 < len(header) and re.search(r"Integration\s+ID", header[n + 1]) else 0
        columns += 2 + extra
        if n + 1 + extra < len(header) and re.search(r"Root\s+Account", header[n + 1 + extra]):
            columns += 1
    return columns


def _no_change(new: str, current: str) -> bool:
    """no_change_to_value? with consider_excused: true."""
    if new == current:
        return True
    if new in ("", "-") and current in ("", "-"):
        return True
    if not new or not current:
        return False
    if new.lower() == "ex" or current.lower() == "ex":
        return False
    return f"{float(new):.2f}" == f"{float(current):.2f}"


def _canvas_rows(text: str) -> list[list[str]]:
    """The CSV's rows as Canvas reads them: its separator guessed, blank lines skipped, decimal commas as periods."""
    text = text.removeprefix("\ufeff")
    sep = _separator(text.splitlines()[:3])
    rows = []
    for line in csv.reader(io.StringIO(text, newline=""), delimiter=sep):
        if re.fullmatch(r"[;, ]+", sep.join(line)) or not line:
            continue  # skip_lines
        rows.append([_decimal_comma_to_period(c) for c in line])
    return rows


def _canvas_student_columns(header: list[str]) -> int:
    """How many columns name the student (raises on an invalid header)."""
    has_headers = (len(header) > 3 and "Student" in header[0] and "ID" in header[1]) or (
        len(header) > 4 and "LastName" in header[0] and "FirstName" in header[1] and "ID" in header[2]
    )
    if not has_headers:
        raise ValueError("Invalid header row")
    columns = _student_columns(header)
    if "Section" not in header[columns - 1]:
        raise ValueError("Invalid header row")
    return columns


def _canvas_assignments(header: list[str], columns: int, course: CanvasCourse) -> tuple[dict, dict]:
    """Each assignment column's (Canvas id, or a new negative one): its position, and its title."""
    indexes, titles, new_id = {}, {}, -1
    for position, name in enumerate(header):
        if position < columns or NON_ASSIGNMENT.search(name):
            continue
        title, aid = _title_and_id(name)
        if aid is None or aid not in course.assignments:
            aid = next((a for a, (t, _) in course.assignments.items() if t == name), None)
        if aid is None:
            aid, new_id = new_id, new_id - 1
        indexes[aid], titles[aid] = position, title if aid < 0 else course.assignments[aid][0]
    return indexes, titles


def _canvas_student(row: list[str], id_at: int, course: CanvasCourse) -> int | None:
    """The course's student a row is for: by its id, else by its name."""
    uid_text = row[id_at] if id_at < len(row) else ""
    uid = int(uid_text) if uid_text.isdigit() and int(uid_text) in course.students else None
    if uid is None:
        name = f"{row[1]} {row[0]}".strip() if id_at == 2 else row[0]
        uid = next((u for u, s in course.students.items() if s == name), None)
    return uid


def _canvas_changes(row: list[str], uid: int, indexes: dict, course: CanvasCourse, changes: dict) -> None:
    """Add to changes the grades of this student's row that differ from the course's."""
    for aid, i in indexes.items():
        grade = (row[i] or "").strip() if i < len(row) else ""
        grade = "EX" if grade.lower() == "ex" else grade
        if not _no_change(grade, course.grades.get((uid, aid), "")):
            changes[(uid, aid)] = grade


def canvas_import(text: str, course: CanvasCourse) -> CanvasImport:
    """What Canvas's gradebook import would do with this CSV in this course (raises on an invalid header)."""
    rows = _canvas_rows(text)
    header = rows[0]
    columns = _canvas_student_columns(header)
    id_at = 2 if header[0] == "LastName" else 1
    indexes, titles = _canvas_assignments(header, columns, course)
    points: dict[int, str] = {}
    changes: dict[tuple[int, int], str] = {}
    new_students = []
    for row in rows[1:]:
        if row[0] and "Points Possible" in row[0]:
            points = {aid: row[i] for aid, i in indexes.items() if i < len(row) and row[i]}
            continue
        if all(MUTED.match(c) for c in row if c is not None):
            continue
        uid = _canvas_student(row, id_at, course)
        if uid is None:
            new_students.append(row[0])
            continue
        _canvas_changes(row, uid, indexes, course, changes)
    return CanvasImport(titles, points, changes, new_students)


def canvas_comments(data: bytes, course: CanvasCourse) -> tuple[dict[int, str], list[str]]:
    """Which student each file of a comments zip reaches ("Upload Submission Comments"): the first two
    all-digit `_` parts of its name are the user and a file of their submission; the rest are ignored."""
    reached, ignored = {}, []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for path in zf.namelist():
            name = path.rsplit("/", 1)[-1]
            parts = name.split("_")
            digits = [p for p in parts if re.fullmatch(r"\d+", p)][:2]
            uid, aid = (int(digits[0]), int(digits[1])) if len(digits) == 2 else (None, None)
            if parts[-1].startswith("link") or name.startswith("._"):
                aid = None
            if uid in course.students and aid in course.attachments.get(uid, set()):
                reached[uid] = path
            else:
                ignored.append(path)
    return reached, ignored


# -- Moodle: the offline grading worksheet and the feedback files zip --------------------------------------


@dataclass
class MoodleAssignment:
    strings: dict[str, str]
    """The site language's strings: grade, recordid, lastmodifiedgrade, hiddenuser (with its space)."""
    decsep: str
    max_grade: float
    participants: dict[int, int]
    """unique participant id -> user id."""
    grades: dict[int, tuple[float | None, str]] = field(default_factory=dict)
    """user id -> (current grade or None, its last-modified time as the worksheet wrote it)."""


def _unformat_float(text: str, decsep: str) -> float | None:
    text = text.strip().replace(" ", "")
    if text == "":
        return None
    text = text.replace(decsep, ".")
    match = re.match(r"[+-]?(\d+(\.\d*)?|\.\d+)", text)
    return float(match[0]) if match else 0.0  # PHP's (float) cast: the leading number, else 0


def moodle_import(text: str, assignment: MoodleAssignment, separator: str = ",") -> dict[int, float]:
    """The grades Moodle's "Upload grading worksheet" would set (user id -> grade), by its rules: the columns
    by their exact localized names, the participant id after the `Participant ` prefix, and a row skipped when
    its grade is blank, negative, unchanged, past the maximum, or stale (graded since the download)."""
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), delimiter=separator))
    header = [h.strip() for h in rows[0]]
    strings = assignment.strings
    try:
        grade_at, id_at = header.index(strings["grade"]), header.index(strings["recordid"])
        modified_at = header.index(strings["lastmodifiedgrade"])
    except ValueError:
        raise ValueError("invalidgradeimport") from None
    updates = {}
    for row in rows[1:]:
        unique = row[id_at][len(strings["hiddenuser"]) :]
        if not unique.isdigit() or int(unique) not in assignment.participants:
            continue
        user = assignment.participants[int(unique)]
        grade = _unformat_float(row[grade_at], assignment.decsep)
        current, modified = assignment.grades.get(user, (None, "-"))
        stale = current is not None and row[modified_at] != modified
        if current is not None and current == grade:
            continue
        if grade is None or grade < 0 or stale or grade > assignment.max_grade:
            continue
        updates[user] = grade
    return updates


def moodle_feedback(data: bytes, participants: dict[int, int]) -> dict[int, str]:
    """Which user each file of a feedback zip reaches ("Upload multiple feedback files in a zip"): in some part
    of its path, five `_` parts at most, the second a participant id, the third and fourth a plugin."""
    plugins = {("assignsubmission", "file"), ("assignsubmission", "onlinetext"), ("assignfeedback", "file")}
    reached = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for path in zf.namelist():
            if path.endswith("/") or path.rsplit("/", 1)[-1].startswith((".", "~")):
                continue
            for part in path.split("/"):
                info = part.split("_", 4)
                if len(info) < 4 or not info[1].isdigit() or int(info[1]) not in participants:
                    continue
                if (info[2], info[3]) in plugins:
                    reached[participants[int(info[1])]] = path
                    break
    return reached
