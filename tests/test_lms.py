"""Does the grader know each student as their LMS knows them, and give the class back in each LMS's
own format? Readers and exports are tested on fixtures written from each LMS's documented format
(tests/fixtures/lms, versions in docs/lms.md); one end-to-end run grades a Canvas class for real."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from conftest import CORRECT_ENGINES, HERE, csv_rows

from grader import catalog, spec
from grader.batch import export
from grader.batch.discover import discover
from grader.batch.everyone import everyone
from grader.batch.outputs import Row
from grader.errors import SpecError, UsageError
from grader.lms import late, roster
from grader.lms.identity import Identity
from grader.render import html
from grader.result import Result, SubmissionError

LMS = HERE / "fixtures" / "lms"
ENGINE = CORRECT_ENGINES[0].read_text()


def _found(found) -> dict:
    return {s.student: s.identity for s in found.submissions}


def test_canvas_names_namesakes_and_late(tmp_path):
    """Two Canvas students named leejohn are told apart by their user ids, never by a suffix; a resubmission
    gives way to the higher attachment id; the late marker is read."""
    cls = tmp_path / "canvas"
    cls.mkdir()
    (cls / "leejohn_22222_50001_micrograd_mine.py").write_text(ENGINE)
    (cls / "leejohn_33333_50002_micrograd_mine.py").write_text(ENGINE)
    (cls / "clarkolivia_late_11111_50003_micrograd_mine.py").write_text("# old\n")
    (cls / "clarkolivia_late_11111_50009_micrograd_mine.py").write_text(ENGINE)
    found = _found(discover([cls], tmp_path / "s"))
    assert set(found) == {"leejohn_22222", "leejohn_33333", "clarkolivia"}
    assert found["clarkolivia"] == Identity("canvas", "clarkolivia", "11111", "50009", late=True)
    assert found["leejohn_33333"].user_id == "33333"


ACCENTED = "garcíamárquezjosé_10005_50005_micrograd_mine.py"


def _unicode_path_field(shown: bytes, name: str) -> bytes:
    """Info-ZIP's Unicode Path extra field (0x7075): version 1, the CRC-32 of the name in the header, the UTF-8
    name (APPNOTE.TXT 4.6.9)."""
    body = b"\x01" + zlib.crc32(shown).to_bytes(4, "little") + name.encode()
    return b"\x75\x70" + len(body).to_bytes(2, "little") + body


def test_a_name_in_a_zip_is_read_as_unzip_reads_it_whatever_made_the_zip(tmp_path):
    """Issue 40, item 2: one person keeps one id, whatever the archive. A Canvas name with accents, zipped on
    Linux by Info-ZIP `zip` (its UTF-8 bytes, no UTF-8 flag), by Python's zipfile (the UTF-8 flag), and as
    Info-ZIP writes it where names are escaped (`#U00ed` in the header, the name itself in a Unicode Path field),
    is the student `garciamarquezjose`, as from a folder; a member whose bytes are not UTF-8 stays cp437."""
    if shutil.which("zip") is None:
        pytest.skip("needs Info-ZIP's zip (.ci/run installs it)")
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / ACCENTED).write_text(ENGINE)
    info_zip = tmp_path / "info-zip.zip"
    subprocess.run(["zip", "-q", str(info_zip), ACCENTED], cwd=folder, check=True)
    with zipfile.ZipFile(info_zip) as zf:
        (member,) = zf.infolist()
    assert not member.flag_bits & 0x800 and member.filename != ACCENTED  # what made the name garbled
    flagged = tmp_path / "flagged.zip"
    with zipfile.ZipFile(flagged, "w") as zf:
        zf.writestr(ACCENTED, ENGINE)
    escaped = tmp_path / "escaped.zip"
    shown = ACCENTED.replace("í", "#U00ed").replace("á", "#U00e1").replace("é", "#U00e9")
    with zipfile.ZipFile(escaped, "w") as zf:
        info = zipfile.ZipInfo(shown)
        info.extra = _unicode_path_field(shown.encode(), ACCENTED)
        zf.writestr(info, ENGINE)
    stale = tmp_path / "stale.zip"  # a field whose CRC is not of the header's name (renamed since): not read
    with zipfile.ZipFile(stale, "w") as zf:
        info = zipfile.ZipInfo("okaforchidi_10006_50006_micrograd_mine.py")
        info.extra = _unicode_path_field(b"another name", ACCENTED)
        zf.writestr(info, ENGINE)
    for source in (folder, info_zip, flagged, escaped):
        found = discover([source], tmp_path / f"s-{source.name}")
        assert _found(found) == {"garciamarquezjose": Identity("canvas", "garcíamárquezjosé", "10005", "50005")}, (
            source.name
        )
    assert set(_found(discover([stale], tmp_path / "s-stale"))) == {"okaforchidi"}
    dos = tmp_path / "dos.zip"  # an old Windows zip: code page 437 bytes (0x81 is ü), not UTF-8
    with zipfile.ZipFile(dos, "w") as zf:
        zf.writestr("mXllerzoe_10003_50003_micrograd_mine.py", ENGINE)
    dos.write_bytes(dos.read_bytes().replace(b"mXllerzoe", b"m\x81llerzoe"))
    assert _found(discover([dos], tmp_path / "s-dos"))["mullerzoe"].name == "müllerzoe"
    both = discover([info_zip, flagged], tmp_path / "s-both")  # a second download: the same student, once
    assert [s.student for s in both.submissions] == ["garciamarquezjose"]


def test_moodle_download_folders_and_flat_files(tmp_path):
    """Moodle's per-participant folders (with and without the trailing `_` of Moodle < 4.1) and flat files
    give the participant id and the full name."""
    cls = tmp_path / "moodle"
    for folder in ("Olivia Clark_881234_assignsubmission_file_", "John Lee_881235_assignsubmission_file"):
        (cls / folder).mkdir(parents=True)
        (cls / folder / "micrograd_mine.py").write_text(ENGINE)
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "Ada Byron_881236_assignsubmission_file_engine.py").write_text(ENGINE)
    (flat / "Ada Byron_881236_assignsubmission_file_test_micrograd.py").write_text("def test_x(): pass\n")
    found = discover([cls, flat], tmp_path / "s")
    who = _found(found)
    assert who["Olivia_Clark"] == Identity("moodle", "Olivia Clark", "881234")
    assert who["John_Lee"].user_id == "881235"
    ada = next(s for s in found.submissions if s.student == "Ada_Byron")
    assert ada.identity.user_id == "881236" and ada.tests is not None


def test_gradescope_export_folder(tmp_path):
    """A Gradescope export's submission_<id> folders are named by submission_metadata.yml: name, SID, email,
    submission time; the metadata file is read, not left out with a note."""
    export_dir = tmp_path / "assignment_777_export"
    for sub in ("submission_150001", "submission_150002", "submission_150003"):
        (export_dir / sub).mkdir(parents=True)
        (export_dir / sub / "engine.py").write_text(ENGINE)
    shutil.copy(LMS / "submission_metadata.yml", export_dir)
    found = discover([export_dir], tmp_path / "s")
    who = _found(found)
    assert who["Olivia_Clark"] == Identity(
        "gradescope",
        "Olivia Clark",
        "1001",
        "150001",
        "olivia.clark@example.edu",
        submitted_at="2026-03-02T00:30:12.123456+00:00",
    )
    assert who["John_Lee"].submitted_at == "2026-03-01T22:05:00-08:00"
    assert not any("submission_metadata" in n.text for n in found.notes)
    # a group submission: the first submitter's, and every other member gets the group's grade
    assert [m.user_id for m in who["Ada_Byron"].group] == ["1004"]
    graded = Result("engine.py", "0" * 64, "micrograd", "0", "graded", None, 17.0, 20.0, 1.0, ())
    rows = [
        Row(s.student, False, graded, False, "engine.py", f"students/{s.student}", [], s.identity)
        for s in found.submissions
    ]
    class_list = roster.read(LMS / "gradescope_roster.csv")
    everyone_rows = everyone(rows, found.missing, class_list, tmp_path / "out" / "students", catalog.load("micrograd"))
    by_id = {r.identity.user_id: r for r in everyone_rows}
    assert set(by_id) == {"1001", "1002", "1003", "1004", "1005"}
    assert by_id["1004"].student == "Alan_Turing" and by_id["1004"].score == 17.0
    assert by_id["1004"].folder == "students/Ada_Byron" and "group submission of Ada_Byron" in by_id["1004"].reason
    assert by_id["1005"].shown_status == "no_submission" and by_id["1005"].score == 0.0


def test_students_found_but_not_gradable_are_kept_with_the_reason(tmp_path):
    """Only tests, a notebook over the size limit, a zip that cannot be read: each is a student with a reason."""
    cls = tmp_path / "class"
    cls.mkdir()
    (cls / "clarkolivia_11111_50001_test_micrograd.py").write_text("def test_x(): pass\n")
    (cls / "bigben_44444_50004_micrograd.ipynb").write_bytes(b" " * (20 * 2**20 + 1))
    (cls / "zed_55555_50005_work.zip").write_text("not a zip")
    (cls / "tom").mkdir()
    (cls / "tom" / "test_micrograd.py").write_text("def test_x(): pass\n")
    found = discover([cls], tmp_path / "s")
    missing = {m.student: (m.identity.user_id, m.reason) for m in found.missing}
    assert missing["clarkolivia"][0] == "11111" and "only test_micrograd.py was found" in missing["clarkolivia"][1]
    assert '"bigben_44444_50004_micrograd.ipynb" is larger than 20 MB' in missing["bigben"][1]
    assert "not a readable zip" in missing["zed"][1] and missing["zed"][0] == "55555"
    assert "only test_micrograd.py was found" in missing["tom"][1]
    assert not found.submissions


def test_rosters_of_each_lms():
    """Canvas's gradebook export (Points Possible row and test student left out), Moodle's grading worksheet
    (Participant ids) and Gradescope's roster (staff left out)."""
    canvas = roster.read(LMS / "canvas_gradebook.csv")
    assert canvas.lms == "canvas" and [s.user_id for s in canvas.students] == ["11111", "22222", "33333"]
    assert canvas.students[0].id_base == "clarkolivia" and "jlee2" in canvas.students[2].aliases
    moodle = roster.read(LMS / "moodle_worksheet.csv")
    assert moodle.lms == "moodle" and [(s.user_id, s.name) for s in moodle.students] == [
        ("881234", "Olivia Clark"),
        ("881235", "John Lee"),
    ]
    gradescope = roster.read(LMS / "gradescope_roster.csv")
    assert gradescope.lms == "gradescope" and [s.user_id for s in gradescope.students] == [
        "1001",
        "1002",
        "1003",
        "1004",
        "1005",
    ]  # the TA is not a student
    with pytest.raises(UsageError, match="not a roster"):
        roster.read(LMS / "submission_metadata.yml")


def _graded(tmp_path: Path, rows: list[tuple[str, str, str, float, str]], max_score: float = 20.0) -> Path:
    """A graded --out folder's gradebook and summary, as a batch writes them: (student, lms, user id, score,
    status)."""
    out = tmp_path / "out"
    out.mkdir(parents=True)
    with open(out / "grades.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "student",
                "score",
                "max_score",
                "status",
                "late",
                "lms",
                "lms_user_id",
                "submission_id",
                "raw_score",
                "late_penalty",
                "reason",
            ]
        )
        for student, lms, uid, score, status in rows:
            writer.writerow([student, score, max_score, status, "", lms, uid, "", score, 0.0, ""])
    (out / "summary.json").write_text(json.dumps({"students": []}))
    return out


def test_canvas_import_file_matches_canvas_format(tmp_path):
    """The Canvas import: the five identity columns, the assignment's column as Canvas names it, the Points
    Possible row, every roster student in its order, points scaled to the assignment's, 2 decimals."""
    out = _graded(
        tmp_path,
        [("clarkolivia", "canvas", "11111", 15.5, "graded"), ("leejohn_22222", "canvas", "22222", 0.0, "error")],
    )
    target = tmp_path / "import.csv"
    assert (
        export.main(
            target="canvas",
            out=target,
            assignment="micrograd",
            graded=out,
            roster=LMS / "canvas_gradebook.csv",
            column="Micrograd engine (4401)",
        )
        == 0
    )
    assert target.read_text() == (
        "Student,ID,SIS User ID,SIS Login ID,Section,Micrograd engine (4401)\n"
        "    Points Possible,,,,,10.00\n"
        '"Clark, Olivia",11111,S0011111,oclark,Section 01,7.75\n'
        '"Lee, John",22222,S0022222,jlee,Section 01,0.00\n'
        '"Lee, John",33333,S0033333,jlee2,Section 02,\n'
    )
    other_course = _graded(tmp_path / "other", [("zed", "canvas", "77777", 20.0, "graded")])
    with pytest.raises(UsageError, match="match no row of the roster"):  # never an import of zeros
        export.main(
            target="canvas",
            out=target,
            assignment="micrograd",
            graded=other_course,
            roster=LMS / "canvas_gradebook.csv",
            column="Micrograd engine (4401)",
        )
    with pytest.raises(UsageError, match="2 assignment columns"):  # which column is ours: never guessed
        export.main(
            target="canvas", out=target, assignment="micrograd", graded=out, roster=LMS / "canvas_gradebook.csv"
        )
    export.main(
        target="canvas",
        out=target,
        assignment="micrograd",
        graded=out,
        roster=LMS / "canvas_gradebook.csv",
        column="Micrograd engine (4401)",
        percent=True,
    )
    assert target.read_text().splitlines()[2].endswith(",77.50%")


def test_moodle_worksheet_comes_back_whole_with_grades(tmp_path):
    """The worksheet is given back as read, with Grade filled, scaled to Maximum Grade."""
    out = _graded(tmp_path, [("Olivia_Clark", "moodle", "881234", 17.0, "graded")], max_score=100.0)
    target = tmp_path / "worksheet.csv"
    export.main(target="moodle", out=target, assignment="micrograd", graded=out, roster=LMS / "moodle_worksheet.csv")
    lines = (LMS / "moodle_worksheet.csv").read_text().splitlines()
    got = list(csv.reader(target.read_text().splitlines()))
    assert got[0] == next(csv.reader([lines[0]]))
    expected = [next(csv.reader([line])) for line in lines[1:]]
    expected[0][4] = "3.40"  # John Lee handed in nothing: his cell as Moodle wrote it
    assert got[1:] == expected


def test_gradescope_csv(tmp_path):
    out = _graded(tmp_path, [("Olivia_Clark", "gradescope", "1001", 12.0, "graded")])
    target = tmp_path / "grades.csv"
    export.main(
        target="gradescope-csv", out=target, assignment="micrograd", graded=out, roster=LMS / "gradescope_roster.csv"
    )
    assert target.read_text() == (
        "Name,SID,Email,Score,Max Points,Status\n"
        "Olivia Clark,1001,olivia.clark@example.edu,12.0,20.0,graded\n"
        "John Lee,1002,john.lee@example.edu,,,no_submission\n"
        "Ada Byron,1003,ada.byron@example.edu,,,no_submission\n"
        "Alan Turing,1004,alan.turing@example.edu,,,no_submission\n"
        "Grace Hopper,1005,grace.hopper@example.edu,,,no_submission\n"
    )


def test_feedback_names_are_the_lms_own():
    """Canvas matches bulk feedback by the first two numbers of a name (user, attachment); Moodle by the
    participant id in `Full Name_<id>_assignsubmission_file_...`."""
    canvas = Identity("canvas", "leejohn", "22222", "50001", late=True)
    assert export.feedback_name("leejohn_22222", canvas) == "leejohn_late_22222_50001_feedback.html"
    moodle = Identity("moodle", "Olivia Clark", "881234")
    assert export.feedback_name("Olivia_Clark", moodle) == "Olivia Clark_881234_assignsubmission_file_feedback.html"
    assert export.feedback_name("alice", None) == "alice/feedback.html"


def test_feedback_zip_is_student_safe(tmp_path):
    """A report is given back as the student saw it; where the grader itself failed, without its trace."""
    out = _graded(tmp_path, [("alice", "plain", "", 0.0, "error")])
    folder = out / "students" / "alice"
    folder.mkdir(parents=True)
    crash = Result(
        "alice.py",
        None,
        "micrograd",
        "0",
        "error",
        SubmissionError("crash", "the grader failed on this submission:\nTraceback (most recent call last)"),
        0.0,
        20.0,
        0.1,
        (),
    )
    (folder / "result.json").write_text(json.dumps(crash.to_dict()))
    (folder / "report.html").write_text(html.student_report(crash))
    (out / "summary.json").write_text(
        json.dumps({"students": [{"student": "alice", "folder": "students/alice", "lms": None}]})
    )
    assert export.main(target="feedback", out=tmp_path / "f.zip", assignment="micrograd", graded=out) == 0
    with zipfile.ZipFile(tmp_path / "f.zip") as zf:
        text = zf.read("alice/feedback.html").decode()
    assert export.CRASH_TEXT in text and "Traceback" not in text


def test_a_roster_that_is_none_is_refused_in_one_line(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "alice.py").write_text(ENGINE)
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(tmp_path / "class"),
            "--out",
            str(tmp_path / "out"),
            "--roster",
            str(tmp_path / "notes.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "is not a roster this grader reads" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "out" / "grades.csv").exists()


@pytest.mark.parametrize("given", ["groups", "roster"])
def test_an_instructors_file_with_a_huge_cell_is_a_usage_error_naming_the_line(tmp_path, given):
    """A groups file whose third line names a group with 200,000 characters (issue 41, item 10), or a roster whose
    third line names a student so: is `grader batch` a usage error (exit 2) naming the file and the line, before
    anything is graded, rather than a traceback and no gradebook?"""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "alice.py").write_text(ENGINE)
    huge = "x" * 200_000
    if given == "groups":
        text = (LMS / "canvas_groups.csv").read_text().splitlines()
        text[2] = text[2].replace("Team Backprop", huge)
    else:
        text = (LMS / "canvas_gradebook.csv").read_text().splitlines()
        text[2] = text[2].replace('"Clark, Olivia"', huge)
    given_file = tmp_path / f"{given}.csv"
    given_file.write_text("\n".join(text) + "\n")
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", "batch", str(tmp_path / "class"), "--out", str(tmp_path / "out")]
        + [f"--{given}", str(given_file)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert f"{given_file}, line 3" in run.stderr and len(run.stderr) < 1000, run.stderr[-2000:]
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_a_group_name_too_long_to_be_one_is_a_usage_error_naming_the_line(tmp_path):
    """A group name within what a CSV cell may hold but longer than any LMS writes one (5,000 characters): the
    line is named, and the name is not echoed whole."""
    from grader.lms import groups

    text = (LMS / "canvas_groups.csv").read_text().splitlines()
    text[3] = text[3].replace("Team Tanh", "T" * 5_000)
    path = tmp_path / "groups.csv"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(UsageError, match=r"groups\.csv, line 4: .* 5,000 characters") as told:
        groups.read(path)
    assert len(str(told.value)) < 500


def test_a_map_with_a_huge_cell_is_a_usage_error_naming_the_line(tmp_path):
    """export's --map, its second line a cell of 200,000 characters: a usage error naming the line."""
    out = _graded(tmp_path, [("clarkolivia", "canvas", "11111", 15.5, "graded")])
    mapping = tmp_path / "map.csv"
    mapping.write_text("student,roster id\n" + "x" * 200_000 + ",11111\n")
    with pytest.raises(UsageError, match=r"map\.csv, line 2") as told:
        export.main(
            target="canvas",
            out=tmp_path / "import.csv",
            assignment="micrograd",
            graded=out,
            roster=LMS / "canvas_gradebook.csv",
            column="Micrograd engine (4401)",
            mapping=mapping,
        )
    assert len(str(told.value)) < 1000


def _policy(text: str) -> spec.LatePolicy:
    raw = {"id": "x", "version": "1", "checks": {"forward": {"points": 1}}, **spec.tomllib.loads(text)}
    return spec.parse(raw, Path("assignment.toml"), checks={"forward"}, operators=set()).late


def test_late_policy():
    """Flag only by default; a time against the deadline decides, past the grace, per day or part of one,
    capped; a marker alone counts as one day; a mistake in [late] names the field."""
    canvas_late = Identity("canvas", "x", "1", "2", late=True)
    assert late.assess(_policy(""), canvas_late) == late.Lateness(True, 0.0, late.assess(_policy(""), canvas_late).text)
    policy = _policy(
        "[late]\ndue = 2026-03-01T23:59:00-08:00\ngrace_minutes = 15\npenalty_per_day = 10\nmax_penalty = 25\n"
    )

    def at(when):
        return late.assess(policy, Identity("gradescope", "x", submitted_at=when))

    assert not at("2026-03-02T00:10:00-08:00").late  # within the grace
    assert at("2026-03-02T00:20:00-08:00").percent == 10  # past it: one day
    assert at("2026-03-03T23:00:00-08:00").percent == 20
    capped = at("2026-03-09T00:00:00-08:00")
    assert capped.percent == 25 and "the most the policy takes" in capped.text
    assert capped.penalty(16.0) == 4.0
    assert (
        late.assess(policy, canvas_late).percent == 10 and "counted as 1 day" in late.assess(policy, canvas_late).text
    )
    in_utc = _policy('[late]\ndue = "2026-03-02T07:59:00Z"\npenalty_per_day = 10\n')  # Z, also on Python 3.10
    assert late.assess(in_utc, Identity("gradescope", "x", submitted_at="2026-03-02T09:00:00Z")).percent == 10
    with pytest.raises(SpecError, match="late.due"):
        _policy('[late]\ndue = "tomorrow"\n')
    with pytest.raises(SpecError, match="late.penalty_per_day"):
        _policy("[late]\npenalty_per_day = 150\n")


TINY = """id = "tiny"
version = "1"
title = "Micrograd engine"
[limits]
request_s = 3.0
[search]
max_examples = 10
[checks]
forward = { points = 10 }
[late]
penalty_per_day = 10
"""


def test_a_canvas_class_round_trip(tmp_path):
    """A Canvas roster of 25 and 19 submissions (one only tests, one notebook over the size limit, two students
    named leejohn): 25 rows whose ids are the roster's, a late penalty in the gradebook and the report, a Canvas
    import file in Canvas's format, and a feedback zip Canvas matches by user and attachment id."""
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "assignment.toml").write_text(TINY)
    names = [(f"student{i:02d}", f"Student{i:02d}, Ann", str(10000 + i)) for i in range(21)]
    names += [
        ("leejohn", "Lee, John", "22222"),
        ("leejohn", "Lee, John", "33333"),
        ("clarkolivia", "Clark, Olivia", "11111"),
        ("bigben", "Ben, Big", "44444"),
    ]
    rows = ["Student,ID,SIS User ID,SIS Login ID,Section,Micrograd engine (4401)", "    Points Possible,,,,,10.00"]
    rows += [f'"{full}",{uid},S{uid},login{uid},Section 01,' for _, full, uid in names]
    (tmp_path / "gradebook.csv").write_text("\n".join(rows) + "\n")
    cls = tmp_path / "submissions"
    cls.mkdir()
    for i, (short, _, uid) in enumerate(names[:15] + names[21:23]):
        late_mark = "_late" if i == 0 else ""
        (cls / f"{short.replace(',', '')}{late_mark}_{uid}_{60000 + i}_micrograd_mine.py").write_text(ENGINE)
    (cls / "clarkolivia_11111_60100_test_micrograd.py").write_text("def test_x(): pass\n")
    (cls / "bigben_44444_60101_micrograd.ipynb").write_bytes(b" " * (20 * 2**20 + 1))
    assert len(list(cls.iterdir())) == 19
    out = tmp_path / "out"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(cls),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--assignment",
            str(tmp_path / "tiny"),
            "--roster",
            str(tmp_path / "gradebook.csv"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "19 submissions: " in run.stdout and "6 students on the roster handed in nothing" in run.stdout, run.stdout
    graded = {r["lms_user_id"]: r for r in csv_rows(out / "grades.csv")}
    assert len(graded) == 25 and set(graded) == {uid for _, _, uid in names}
    assert graded["22222"]["student"] == "leejohn_22222" and graded["33333"]["student"] == "leejohn_33333"
    assert graded["11111"]["status"] == "error" and "only test_micrograd.py was found" in graded["11111"]["reason"]
    assert graded["44444"]["status"] == "error" and "larger than 20 MB" in graded["44444"]["reason"]
    big = (out / "students" / graded["44444"]["student"] / "report.html").read_text()
    assert "larger than 20 MB: nothing could be graded" in big and "clear every output" in big  # what to do
    assert graded["10020"]["status"] == "no_submission" and graded["10020"]["score"] == "0.0"
    first = graded["10000"]
    assert (first["late"], first["raw_score"], first["late_penalty"], first["score"]) == ("yes", "10.0", "1.0", "9.0")
    report = (out / "students" / first["student"] / "report.html").read_text()
    assert "marked late by Canvas" in report and "10 − 1 = <strong>9 / 10</strong>" in report
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
            str(tmp_path / "gradebook.csv"),
            "--out",
            str(target),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    lines = target.read_text().splitlines()
    assert lines[:2] == [
        "Student,ID,SIS User ID,SIS Login ID,Section,Micrograd engine (4401)",
        "    Points Possible,,,,,10.00",
    ]
    expected = {uid: "9.00" if uid == "10000" else "10.00" for _, _, uid in names[:15] + names[21:23]}
    expected |= {"11111": "0.00", "44444": "0.00"}  # found, not gradable: their gradebook score; the absent: blank
    assert lines[2:] == [
        f'"{full}",{uid},S{uid},login{uid},Section 01,{expected.get(uid, "")}' for _, full, uid in names
    ]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "export",
            "feedback",
            "--from",
            str(out),
            "--out",
            str(tmp_path / "feedback.zip"),
        ],
        check=True,
        capture_output=True,
    )
    with zipfile.ZipFile(tmp_path / "feedback.zip") as zf:
        names_in_zip = set(zf.namelist())
    assert "student00_late_10000_60000_feedback.html" in names_in_zip
    assert {"leejohn_22222_60015_feedback.html", "leejohn_33333_60016_feedback.html"} <= names_in_zip
    assert len(names_in_zip) == 19  # everyone something was found for; nothing for those with no submission
