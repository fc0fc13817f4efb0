"""`grader export canvas|moodle|gradescope-csv|feedback`: a graded class, as its LMS imports it.

Grades leave as the LMS's own file, keyed by the LMS's own ids from the batch's gradebook
(`lms_user_id`), so no grade is joined by a name: the roster (the LMS's export) gives the
rows, in its order, and the grader only fills the grade.

- canvas: Canvas's gradebook import: `Student, ID, SIS User ID, SIS Login ID, Section`, one
  column named as Canvas names the assignment (`Title (id)`, from the roster; a new title
  makes Canvas create the assignment), the `Points Possible` row, then one row per roster
  student. Points are scaled to the assignment's points possible, 2 decimals (`--percent`:
  `85.5%`).
- moodle: the grading worksheet given back whole, with `Grade` filled (scaled to each row's
  `Maximum Grade`, 2 decimals); every other cell, `Last modified (grade)` included, as read,
  which is what Moodle's offline-grading upload checks.
- gradescope-csv: a plain CSV (`Name, SID, Email, Score, Max Points, Status`), one row per
  roster student (or per gradebook row without a roster).
- feedback: a zip of every student's report, named as their LMS takes bulk feedback back:
  Canvas `lastfirst[_late]_<user id>_<attachment id>_feedback.html` (Canvas matches the first
  two numbers: the user and their submitted file), Moodle `Full Name_<participant
  id>_assignsubmission_file_feedback.html`, otherwise `<student>/feedback.html`.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

from grader import catalog
from grader.errors import BadResult, UsageError
from grader.fileio import atomic_write
from grader.files import REPORT_FILE, RESULT_FILE
from grader.lms import roster as rosters
from grader.render import html
from grader.result import Result, SubmissionError

TARGETS = ("gradescope", "canvas", "moodle", "gradescope-csv", "feedback")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"
ZIP_TIME = (2020, 1, 1, 0, 0, 0)
CRASH_TEXT = "The grader could not finish grading this submission; your instructor has the details."


def main(
    *,
    target: str,
    out: Path,
    assignment: str,
    graded: Path | None = None,
    roster: Path | None = None,
    column: str | None = None,
    percent: bool = False,
) -> int:
    if target == "gradescope":
        from grader.gradescope import export

        return export.main(target=target, out=out, assignment=assignment)
    if graded is None:
        raise UsageError(f"grader export {target} needs --from DIR, the --out folder of a graded batch")
    rows = gradebook(graded)
    if target == "feedback":
        count = feedback(graded, rows, out)
        print(f"feedback for {count} students written to {out}: upload it as the LMS's bulk feedback zip")
        return 0
    class_list = rosters.read(roster) if roster else None
    if target in ("canvas", "moodle") and (class_list is None or class_list.lms != target):
        raise UsageError(
            f"grader export {target} needs --roster FILE, the {target.capitalize()} export "
            f"({'the gradebook export CSV' if target == 'canvas' else 'the grading worksheet'})"
            + (f"; {roster} is a {class_list.lms} roster" if class_list else "")
        )
    max_score = catalog.load(assignment).max_score if not rows else float(next(iter(rows.values()))["max_score"])
    if class_list is not None:
        _check_join(class_list, rows, graded)
    if target == "canvas":
        text = canvas(class_list, rows, max_score, column, percent)
    elif target == "moodle":
        text = moodle(class_list, rows)
    else:
        text = plain_csv(class_list, rows)
    atomic_write(out, text)
    print(f"{target} grades written to {out}")
    return 0


def _check_join(class_list: rosters.Roster, rows: dict, graded: Path) -> None:
    """Refuse a roster that shares no student with the gradebook (another course, another LMS): every grade
    would be 0; otherwise say who is in one and not the other."""
    ids = {s.user_id for s in class_list.students}
    graded_ids = {key for key, row in rows.items() if row.get("status") != "no_submission"}
    if graded_ids and not graded_ids & ids:
        raise UsageError(
            f"none of the {len(graded_ids)} students graded in {graded} is on the roster "
            f"{class_list.path} ({class_list.lms} ids): is it the same course and LMS?"
        )
    left_out = sorted(rows[key]["student"] for key in graded_ids - ids)
    if left_out:
        print(
            f"note: {len(left_out)} graded students are not on the roster, so not in the import: "
            + ", ".join(left_out[:10])
            + (" ..." if len(left_out) > 10 else ""),
            file=sys.stderr,
        )
    absent = sum(s.user_id not in graded_ids for s in class_list.students)
    if absent:
        print(
            f"note: {absent} of the roster's {len(ids)} students have no grade of their own: 0 for each",
            file=sys.stderr,
        )


def gradebook(graded: Path) -> dict[str, dict[str, str]]:
    """The batch's gradebook rows, by LMS user id (or by student id when the LMS gave none)."""
    path = graded / "grades.csv"
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        if (graded / "grades.incomplete.csv").exists():  # an interrupted batch: its gradebook is not a class's
            finish = _finish(graded)
            raise UsageError(
                f"the batch in {graded} was interrupted before every student was graded: "
                f"{finish} grades the rest, then export"
            ) from None
        raise UsageError(f"{path} cannot be read: --from is the --out folder of a graded batch") from None
    if rows and "lms_user_id" not in rows[0]:
        raise UsageError(f"{path} has no lms_user_id column: grade the class again with this grader")
    return {(r["lms_user_id"] or r["student"]): r for r in rows}


def _finish(graded: Path) -> str:
    """The command an interrupted batch said finishes it (summary.json's `finish`)."""
    try:
        finish = json.loads((graded / "summary.json").read_text(encoding="utf-8")).get("finish")
    except (OSError, ValueError, AttributeError):
        finish = None
    return finish if isinstance(finish, str) and finish else "the same grader batch command (without --force)"


def _fraction(row: dict[str, str] | None, max_score: float) -> float:
    """The share of the points this student earned (0 with no row, no submission or an error)."""
    if row is None or not max_score:
        return 0.0
    try:
        return max(0.0, float(row["score"])) / max_score
    except (KeyError, ValueError):
        return 0.0


def canvas(class_list: rosters.Roster, rows: dict, max_score: float, column: str | None, percent: bool) -> str:
    header = list(class_list.header)
    name = column or _canvas_column(header, class_list)
    possible = max_score
    if name in header:
        index = header.index(name)
        for row in class_list.rows:
            if row and "points possible" in row[0].lower() and index < len(row):
                try:
                    possible = float(row[index])
                except ValueError:
                    pass
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CANVAS_COLUMNS, name])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", f"{possible:.2f}"])
    for student in class_list.students:
        share = _fraction(rows.get(student.user_id), max_score)
        grade = f"{round(100 * share, 2):.2f}%" if percent else f"{round(possible * share, 2):.2f}"
        cells = [_cell(header, student.cells, c) for c in CANVAS_COLUMNS]
        writer.writerow([*cells, grade])
    return buffer.getvalue()


def _canvas_column(header: list[str], class_list: rosters.Roster) -> str:
    """The assignment's column in the roster: the only one, or the one --column names."""
    skip = set(CANVAS_COLUMNS) | {"Integration ID"}
    columns = [h for h in header if h not in skip and not any(t in h for t in rosters.CANVAS_TOTALS)]
    if len(columns) == 1:
        return columns[0]
    raise UsageError(
        f"{class_list.path} has {len(columns)} assignment columns"
        + (f" ({', '.join(columns)})" if columns else "")
        + ": name the one to fill with --column (as Canvas names it, 'Title (id)'; a new title makes "
        "Canvas create the assignment)"
    )


def _cell(header, row, name: str) -> str:
    return row[header.index(name)] if name in header and header.index(name) < len(row) else ""


def moodle(class_list: rosters.Roster, rows: dict) -> str:
    header = list(class_list.header)
    for needed in ("Identifier", "Grade", "Maximum Grade", "Last modified (grade)"):
        if needed not in header:
            raise UsageError(f"{class_list.path} has no '{needed}' column: download the grading worksheet again")
    by_row = {s.cells: s for s in class_list.students}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for read in class_list.rows:
        student = by_row.get(read)
        cells = list(read) + [""] * (len(header) - len(read))
        if student is not None:
            try:
                maximum = float(cells[header.index("Maximum Grade")])
            except ValueError:
                maximum = 0.0
            row = rows.get(student.user_id)
            if maximum and row is not None:
                cells[header.index("Grade")] = f"{round(maximum * _fraction(row, float(row['max_score'])), 2):.2f}"
            elif maximum:
                cells[header.index("Grade")] = "0.00"
        writer.writerow(cells)
    return buffer.getvalue()


def plain_csv(class_list: rosters.Roster | None, rows: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["Name", "SID", "Email", "Score", "Max Points", "Status"])
    if class_list is None:
        for key, row in sorted(rows.items(), key=lambda kv: kv[1]["student"]):
            writer.writerow([row["student"], row["lms_user_id"], "", row["score"], row["max_score"], row["status"]])
        return buffer.getvalue()
    for student in class_list.students:
        row = rows.get(student.user_id)
        sid = student.user_id if student.user_id != student.email else ""
        writer.writerow(
            [
                student.name,
                sid,
                student.email,
                row["score"] if row else "0.0",
                row["max_score"] if row else "",
                row["status"] if row else "no_submission",
            ]
        )
    return buffer.getvalue()


def feedback(graded: Path, rows: dict, out: Path) -> int:
    """A zip of every student's report, each named as their LMS takes bulk feedback back."""
    summary = json.loads((graded / "summary.json").read_text(encoding="utf-8"))
    buffer = io.BytesIO()
    count = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for student in sorted(summary.get("students", []), key=lambda s: s["student"]):
            folder = student.get("folder") or ""
            report = graded / folder / REPORT_FILE
            if not folder or not report.is_file():
                continue  # no submission: nothing to give back
            info = zipfile.ZipInfo(feedback_name(student), ZIP_TIME)
            info.external_attr = 0o644 << 16
            zf.writestr(info, student_safe(graded / folder, report))
            count += 1
    atomic_write(out, buffer.getvalue())
    return count


def feedback_name(student: dict) -> str:
    who = student.get("lms") or {}
    lms, name, uid, sub = who.get("lms"), who.get("name", ""), who.get("user_id", ""), who.get("submission_id", "")
    if lms == "canvas" and uid and sub:
        name = "".join(c for c in name.lower() if c.isalnum() or c == "-") or "student"
        return f"{name}{'_late' if who.get('late') else ''}_{uid}_{sub}_feedback.html"
    if lms == "moodle" and uid and name and "_" not in name and "/" not in name:
        return f"{name}_{uid}_assignsubmission_file_feedback.html"
    return f"{student['student']}/feedback.html"


def student_safe(folder: Path, report: Path) -> str:
    """The student's report as written, without the link to the class page, unless the grader itself failed on
    it: then no trace of the grader's own error (that is the instructor's, in result.json), only that it could
    not finish."""
    try:
        result = Result.from_dict(json.loads((folder / RESULT_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, BadResult):
        return html.without_class_link(report.read_text(encoding="utf-8"))
    if result.error is None or result.error.kind != "crash":
        return html.without_class_link(report.read_text(encoding="utf-8"))
    return html.student_report(replace(result, error=SubmissionError("crash", CRASH_TEXT)))
