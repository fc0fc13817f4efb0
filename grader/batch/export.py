"""`grader export canvas|moodle|gradescope-csv|feedback`: a graded class, as its LMS imports it.

Grades leave as the LMS's own file, keyed by the LMS's own ids from the batch's gradebook
(`lms_user_id`), so no grade is joined by a name: the roster (the LMS's export) gives the
rows, in its order, and the grader only fills the grade.

- canvas: Canvas's gradebook import: the roster's student columns as read (`Student` or
  `LastName, FirstName`, `ID`, ... `Section`), one column named as Canvas names the assignment
  (`Title (id)`, from the roster), the `Points Possible` row as read, then one row per roster
  student, separated as the roster was (`,` or `;`). Points are scaled to the column's points
  possible and written as the roster writes numbers (`7,50`; `--percent`: `85,50%`).
- moodle: the grading worksheet given back whole, with the grade cell filled (scaled to each row's
  maximum grade, in its number form); every other cell, the grade's last-modified time included,
  as read, which is what Moodle's offline-grading upload checks.
- gradescope-csv: a plain CSV (`Name, SID, Email, Score, Max Points, Status`), one row per
  roster student (or per gradebook row without a roster).

Which cell each roster student gets (their grade, or the LMS's own cell where the grader has no work of
theirs) is grader/lms/writeback.py's; which row a graded student's grade goes to, grader/lms/matching.py's.
Every file is written through grader/csvfile.py, so no cell is a formula. Each export applies overrides.csv as it
is when it runs (grader/batch/applied.py), whatever the gradebook held.
- feedback: a zip of every student's report (saying what their instructor adjusted), named as their LMS takes bulk
  feedback back: Canvas `lastfirst[_late]_<user id>_<attachment id>_feedback.html` (Canvas matches the first
  two numbers: the user and their submitted file), Moodle `Full Name_<participant
  id>_assignsubmission_file_feedback.html`, otherwise `<student>/feedback.html`.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

from grader import catalog, csvfile
from grader.batch import applied
from grader.batch import overrides as book
from grader.batch.earlier import saved_summary
from grader.classfiles import NO_SUBMISSION, Gradebook, GradebookRow
from grader.errors import BadResult, UsageError
from grader.fileio import atomic_write
from grader.files import GRADEBOOK_FILE, INCOMPLETE_FILE, OVERRIDES_FILE, REPORT_FILE, RESULT_FILE
from grader.lms import matching, numbers, writeback
from grader.lms import roster as rosters
from grader.lms.identity import Identity
from grader.lms.names import safe_id
from grader.render import html
from grader.render.adjusted import restamped
from grader.result import Result, SubmissionError
from grader.sandbox.trial import require_closed
from grader.text import counted

TARGETS = ("gradescope", "canvas", "moodle", "gradescope-csv", "feedback")
POINTS_POSSIBLE = "    Points Possible"
ZIP_TIME = (2020, 1, 1, 0, 0, 0)
CRASH_TEXT = "The grader could not finish grading this submission; your instructor has the details."


@dataclass(frozen=True)
class ExportRequest:
    """What `grader export` was asked (its options, by the names cli.py gives them)."""

    target: str
    out: Path
    assignment: str
    graded: Path | None = None
    """The --out folder of a graded batch (--from)."""
    roster: Path | None = None
    column: str | None = None
    percent: bool = False
    zero_missing: bool = False
    allow_unmatched: bool = False
    mapping: Path | None = None


def main(**options) -> int:
    request = ExportRequest(**options)
    target, out, graded, roster = request.target, request.out, request.graded, request.roster
    if target == "gradescope":
        from grader.gradescope import export

        return export.main(target=target, out=out, assignment=request.assignment)
    if graded is None:
        raise UsageError(f"grader export {target} needs --from DIR, the --out folder of a graded batch")
    require_closed(tuple(p for p in (graded, roster, request.mapping) if p is not None and p.exists()))
    rows = applied.on_gradebook(graded, gradebook(graded))  # overrides.csv as it is now
    if target == "feedback":
        count = feedback(graded, out)
        print(f"feedback for {counted(count, 'student')} written to {out}: upload it as the LMS's bulk feedback zip")
        return 0
    class_list = rosters.read(roster) if roster else None
    if target in ("canvas", "moodle") and (class_list is None or class_list.lms != target):
        raise UsageError(
            f"grader export {target} needs --roster FILE, the {target.capitalize()} export "
            f"({'the gradebook export CSV' if target == 'canvas' else 'the grading worksheet'})"
            + (f"; {roster} is a {class_list.lms} roster" if class_list else "")
        )
    if request.mapping is not None and class_list is None:
        raise UsageError("--map pairs graded students with roster rows: give the roster with --roster FILE")
    max_score = catalog.load(request.assignment).max_score if not rows else _max_score(rows)
    if class_list is not None:
        rows = matching.join(class_list, rows, graded, request.mapping, request.allow_unmatched)
    writing = writeback.WriteOptions(request.percent, request.zero_missing)
    tally = writeback.Tally()
    if target == "canvas" and class_list is not None:
        text = canvas(class_list, rows, max_score, request.column, writing, tally)
    elif target == "moodle" and class_list is not None:
        text = moodle(class_list, rows, writing, tally)
    else:
        text = plain_csv(class_list, rows, writing, tally)
    atomic_write(out, text)
    print(f"{target} grades written to {out}: {tally.line()}")
    return 0


def _max_score(rows: dict[str, GradebookRow]) -> float:
    return next((float(row.max_score) for row in rows.values() if row.max_score > 0), 0.0)


def gradebook(graded: Path) -> dict[str, GradebookRow]:
    """The batch's gradebook rows, by LMS user id (or by student id when the LMS gave none); of two rows with
    one id, the one with work wins over a roster's no_submission."""
    path = graded / GRADEBOOK_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        if (graded / INCOMPLETE_FILE).exists():  # an interrupted batch: its gradebook is not a class's
            finish = _finish(graded)
            raise UsageError(
                f"the batch in {graded} was interrupted before every student was graded: "
                f"{finish} grades the rest, then export"
            ) from None
        raise UsageError(f"{path} cannot be read: --from is the --out folder of a graded batch") from None
    if "lms_user_id" not in next(csv.reader(io.StringIO(text, newline="")), ["lms_user_id"]):
        raise UsageError(f"{path} has no lms_user_id column: grade the class again with this grader")
    try:
        rows = Gradebook.read(text, str(path)).rows
    except BadResult as bad:
        raise UsageError(f"{bad}: --from is the --out folder of a graded batch, as it wrote it") from None
    found: dict[str, GradebookRow] = {}
    for row in rows:
        key = row.lms_user_id or row.student
        if key not in found or found[key].status == NO_SUBMISSION:
            found[key] = row
    return found


def _finish(graded: Path) -> str:
    """The command an interrupted batch said finishes it (summary.json's `finish`)."""
    summary = saved_summary(graded)
    finish = summary.finish if summary is not None else None
    return finish or "the same grader batch command (without --force)"


def canvas(
    class_list: rosters.Roster,
    rows: dict[str, GradebookRow],
    max_score: float,
    column: str | None,
    options: writeback.WriteOptions,
    tally: writeback.Tally,
) -> str:
    header = list(class_list.header)
    info = _canvas_info(header)
    name = column or _canvas_column(header, class_list)
    index = header.index(name) if name in header else -1
    possible, form, points_cell = _points_possible(class_list, name, index, max_score)
    target = writeback.Column(100.0 if options.percent else possible, form)
    writer = csvfile.Writer(class_list.delimiter)
    writer.writerow([*header[:info], name])
    writer.writerow([POINTS_POSSIBLE, *[""] * (info - 1), points_cell])
    for student in class_list.students:
        cell = student.cells[index] if 0 <= index < len(student.cells) else ""
        grade = writeback.decide(rows.get(student.user_id), cell, target, options, tally)
        writer.writerow([*(list(student.cells[:info]) + [""] * info)[:info], grade])
    return writer.text()


def _canvas_info(header: list[str]) -> int:
    """How many leading columns are the student's (up to and including `Section`, as Canvas's importer
    counts them)."""
    count = 0
    for cell in header:
        if cell.strip() not in rosters.CANVAS_ID_COLUMNS:
            break
        count += 1
    return count


def _points_possible(
    class_list: rosters.Roster, name: str, index: int, max_score: float
) -> tuple[float, numbers.Form, str]:
    """The column's points possible, their number form and the cell to write back (as read). A new column
    (not in the roster: Canvas creates the assignment) takes the grader's maximum, in the file's form."""
    rows = [r for r in class_list.rows if r and "points possible" in r[0].lower()]
    usual = numbers.Form("," if class_list.delimiter == ";" else ".")
    if index < 0:
        forms = [numbers.parse(c) for r in rows for c in r[1:]]
        form = next((f[1] for f in forms if f and f[1].decimals), usual)
        return max_score, form, form.write(max_score)
    cell = rows[0][index] if rows and index < len(rows[0]) else ""
    parsed = numbers.parse(cell)
    if parsed is None or parsed[0] <= 0:
        where = (
            f"the Points Possible row of column '{name}'"
            if rows
            else f"column '{name}' (it has no Points Possible row)"
        )
        raise UsageError(
            f"{class_list.path}: {where} holds {cell.strip()!r}, not points this export can scale grades to: "
            "export the gradebook from Canvas again, or set the assignment's points in Canvas first"
        )
    value, form = parsed
    return value, form if form.decimals else usual, cell


def _canvas_column(header: list[str], class_list: rosters.Roster) -> str:
    """The assignment's column in the roster: the only one, else the only one named `Title (id)`, or the one
    --column names."""
    columns = [
        h for h in header[_canvas_info(header) :] if not any(t in h for t in rosters.CANVAS_TOTALS) and h.strip()
    ]
    titled = [h for h in columns if _title_id(h)]
    if len(columns) == 1:
        return columns[0]
    if len(titled) == 1:
        return titled[0]
    raise UsageError(
        f"{class_list.path} has {len(columns)} assignment columns"
        + (f" ({', '.join(columns)[:500]})" if columns else "")
        + ": name the one to fill with --column (as Canvas names it, 'Title (id)'; a title without an id "
        "first matches an assignment of that title, else Canvas creates one)"
    )


def _title_id(header: str) -> bool:
    """Is a header Canvas's `Title (id)`?"""
    text = header.strip()
    if not text.endswith(")") or " (" not in text:
        return False
    return text[text.rindex(" (") + 2 : -1].isdigit()


def moodle(
    class_list: rosters.Roster, rows: dict[str, GradebookRow], options: writeback.WriteOptions, tally: writeback.Tally
) -> str:
    header = list(class_list.header)
    where = class_list.columns
    if "grade" not in where or "maximum" not in where:
        raise UsageError(
            f"{class_list.path} has no column of maximum grades (a worksheet of an assignment graded on a scale, "
            "or not downloaded from Moodle's Download grading worksheet): this export writes points only"
        )
    grade_at, most_at = where["grade"], where["maximum"]
    by_row = {s.cells: s for s in class_list.students}
    writer = csvfile.Writer(class_list.delimiter)
    writer.writerow(header)
    for read in class_list.rows:
        student = by_row.get(read)
        cells = list(read) + [""] * (len(header) - len(read))
        if student is not None:
            row = rows.get(student.user_id)
            parsed = numbers.parse(cells[most_at])
            if parsed is None or parsed[0] <= 0:
                if row is not None and row.status != NO_SUBMISSION or options.zero_missing:
                    raise UsageError(
                        f"{class_list.path}: the maximum grade of {cells[0].strip()} (column "
                        f"'{header[most_at]}') is {cells[most_at].strip()!r}, not a number: download the "
                        "grading worksheet again"
                    )
                tally.kept["with no submission"] += 1
            else:
                value, form = parsed
                column = writeback.Column(value, numbers.Form(form.separator, form.decimals or 2))
                cells[grade_at] = writeback.decide(row, cells[grade_at], column, options, tally, student.team)
        writer.writerow(cells)
    return writer.text()


def plain_csv(
    class_list: rosters.Roster | None,
    rows: dict[str, GradebookRow],
    options: writeback.WriteOptions,
    tally: writeback.Tally,
) -> str:
    writer = csvfile.Writer()
    writer.writerow(["Name", "SID", "Email", "Score", "Max Points", "Status"])
    if class_list is None:
        for each in sorted(rows.values(), key=lambda r: r.student):
            writer.writerow([each.student, each.lms_user_id, "", each.score, each.max_score, each.status])
            tally.changed += 1
        return writer.text()
    for student in class_list.students:
        row = rows.get(student.user_id)
        sid = student.user_id if student.user_id != student.email else ""
        score: str | float
        if row is None or row.status == NO_SUBMISSION and not row.override:
            score = "0.0" if options.zero_missing else ""
            tally.changed += bool(score)
            tally.kept["with no submission"] += not score
        else:
            score = row.score
            tally.changed += 1
        status = row.status if row else NO_SUBMISSION
        writer.writerow([student.name, sid, student.email, score, row.max_score if row else "", status])
    return writer.text()


def feedback(graded: Path, out: Path) -> int:
    """A zip of every student's report, each named as their LMS takes bulk feedback back, each showing the
    student's final score as the gradebook has it (overrides.csv as it is now)."""
    saved = applied.Saved.read(graded)
    overrides = book.resolve(book.read(graded), saved.known(), str(graded / OVERRIDES_FILE))
    buffer = io.BytesIO()
    count = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for student in sorted(saved.summary.students, key=lambda s: s.student):
            report = graded / student.folder / REPORT_FILE
            if not student.folder or not report.is_file():
                continue  # no submission: nothing to give back
            info = zipfile.ZipInfo(feedback_name(student.student, Identity.from_dict(student.lms)), ZIP_TIME)
            info.external_attr = 0o644 << 16
            page, result = student_safe(graded / student.folder, report)
            shown = applied.final_of(student.student, saved, overrides) if result is not None else None
            if result is not None and shown is not None:
                page = restamped(page, result, shown, student.student, saved.summary.title)
            zf.writestr(info, page)
            count += 1
    atomic_write(out, buffer.getvalue())
    return count


def feedback_name(student: str, who: Identity | None) -> str:
    """A report's name in the feedback zip, as the student's LMS matches it, of safe characters only (ASCII
    letters and digits, `_`, `-`, `.` and, for Moodle, spaces): Canvas reads the first two all-digit `_` parts
    (the user and their attached file), Moodle the second of five `_` parts (the participant)."""
    lms, name = (who.lms, who.name) if who else ("", "")
    uid, sub = (who.user_id, who.submission_id) if who else ("", "")
    if lms == "canvas" and _digits(uid) and _digits(sub):
        short = _ascii(name).lower()
        short = short if short and not short.isdigit() else "student"
        return f"{short}{'_late' if who and who.late else ''}_{uid}_{sub}_feedback.html"
    if lms == "moodle" and _digits(uid):
        full = " ".join(_ascii(part) for part in name.split()).strip() or "Participant"
        return f"{full}_{uid}_assignsubmission_file_feedback.html"
    return f"{safe_id(student) or 'student'}/feedback.html"


def _digits(text: str) -> bool:
    return 0 < len(text) <= 20 and text.isascii() and text.isdigit()


def _ascii(text: str) -> str:
    """Letters and digits of a name, accents dropped, anything else (other scripts too) left out; at most 60."""
    folded = unicodedata.normalize("NFKD", text[:200])
    return "".join(c for c in folded if c.isascii() and c.isalnum())[:60]


def student_safe(folder: Path, report: Path) -> tuple[str, Result | None]:
    """The student's report as written, without the link to the class page, unless the grader itself failed on
    it: then no trace of the grader's own error (that is the instructor's, in result.json), only that it could
    not finish; and the result it was written from (None: result.json cannot be read)."""
    try:
        result = Result.from_dict(json.loads((folder / RESULT_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, BadResult):
        return html.without_class_link(report.read_text(encoding="utf-8")), None
    if result.error is None or result.error.kind != "crash":
        return html.without_class_link(report.read_text(encoding="utf-8")), result
    return html.student_report(replace(result, error=SubmissionError("crash", CRASH_TEXT))), result
