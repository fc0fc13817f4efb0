"""An instructor's decisions that survive a regrade (issue 32, item 4): overrides.csv read as untrusted text, what
an override does to a grade (applied, or waiting for a second look once the grader's own result changed), and
`grader override` on a real graded folder: the gradebook, summary.json, the class page, the student's report and
every export apply it. The end-to-end test runs two real batches: a batch, an override, a resubmission and a
second batch, with the Canvas export judged by tests/lms_importers.py's rules of Canvas's importer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import CORRECT_ENGINES, ZOO, csv_rows
from lms_importers import CanvasCourse, canvas_import
from test_lms_roundtrip import TINY

from grader import catalog, csvfile
from grader.batch import export, keys
from grader.batch import overrides as book
from grader.batch.adjust import Graded, adjust, pin_all
from grader.batch.everyone import absent
from grader.batch.outputs import Row, write_class_outputs
from grader.cli import main as cli
from grader.commands import override
from grader.errors import UsageError
from grader.files import REPORT_FILE, RESULT_FILE
from grader.final import Final
from grader.lms.identity import Identity
from grader.render import html
from grader.result import CheckResult, Result, SubmissionError

MICROGRAD = catalog.load("micrograd")
HEADER = "student,check,points,reason,by,date,grader_points,sha256\n"
SHA_A, SHA_B = "a" * 64, "b" * 64


def _result(name: str, sha: str | None, lost: dict[str, float] | None = None, error: str | None = None) -> Result:
    """A micrograd result: every check passed with full points, except those in `lost` (check -> points kept)."""
    if error:
        return Result(name, sha, "micrograd", "0", "error", SubmissionError(error, "x"), 0.0, 100.0, 1.0, ())
    checks = tuple(
        CheckResult(
            c.id,
            c.id,
            "failed" if c.id in (lost or {}) else "passed",
            (lost or {}).get(c.id, c.points),
            c.points,
            "visible",
            "",
            None,
            {},
            0.1,
        )
        for c in MICROGRAD.checks
    )
    return Result(name, sha, "micrograd", "0", "graded", None, sum(c.score for c in checks), 100.0, 1.0, checks)


def _parse(text: str) -> list[book.Override]:
    return book.parse(text, Path("graded/overrides.csv"))


@pytest.mark.parametrize(
    "text, words",
    [
        ("student,check,points\nx,mul,3\n", "line 1: the header must name each of student, check, points, reason"),
        ("student,check,points,reason,notes\n", "line 1: the header names a column 'notes'"),
        (HEADER + "leejohn,mul,four,ok\n", "line 2, column points: 'four' is not a number of points"),
        (HEADER + "leejohn,mul,=1+1,ok\n", "line 2, column points: '=1+1' is not a number of points"),
        (HEADER + "leejohn,mul,-2,ok\n", "line 2, column points: -2 is below 0"),
        (HEADER + "leejohn,mul,50%,ok\n", "line 2, column points: '50%' is not a number"),
        (HEADER + "\nleejohn,mul,4,\n", "line 3, column reason: blank"),
        (HEADER + "leejohn,,4,ok\n", "line 2, column check: blank"),
        (HEADER + "leejohn,mul,4,ok,ta,,3,xyz\n", "line 2, column sha256: 'xyz' is not a SHA-256"),
        (HEADER + f"leejohn,mul,4,ok,ta,,,{SHA_A}\n", "line 2, column grader_points: blank while sha256"),
        (HEADER + "leejohn,mul,4,ok\nLeeJohn,MUL,5,again\n", "line 3: a second override of mul for LeeJohn"),
        ("student,check,points,reason\nleejohn,mul,4,a reason, with a comma\n", "line 2, cell 5: the line has 5 cells"),
        (HEADER + "leejohn,mul,4," + "x" * 1001 + "\n", "line 2, column reason: longer than 1000"),
        (HEADER + 'leejohn,mul,4,"unterminated\n', "line 2"),
    ],
)
def test_a_line_that_is_not_an_override_names_its_line_and_cell(text, words):
    with pytest.raises(UsageError) as raised:
        _parse(text)
    assert str(raised.value).startswith("graded/overrides.csv, line") and words in str(raised.value)


def test_overrides_csv_round_trips_through_the_one_csv_writer(tmp_path):
    """What `write` writes reads back the same (a reason that would start a formula is quoted, then unquoted;
    `3,5` is a number as the LMS writes it); a BOM and blank lines are fine; a link, a file too large and bytes
    that are not UTF-8 are refused, naming the file (and the line)."""
    lines = [
        book.Override("leejohn", "mul", 3.5, '=HYPERLINK("x") is what they wrote', "ta", "2026-03-02", 3.0, SHA_A),
        book.Override("okaforchidi", "total", 40.0, "-5 for style, graded by hand", "", "", 0.0, ""),
        book.Override("ada", "add", 2.0, "accepted regrade"),
    ]
    book.write(tmp_path, lines)
    text = (tmp_path / book.FILE).read_text()
    assert "'=HYPERLINK" in text and "'-5 for style" in text
    assert [(o.student, o.check, o.points, o.reason, o.grader_points, o.sha256) for o in book.read(tmp_path)] == [
        (o.student, o.check, o.points, o.reason, o.grader_points, o.sha256) for o in lines
    ]
    assert csvfile.uncell("'it's") == "'it's" and csvfile.uncell("'=1") == "=1" and csvfile.uncell("'-1.5") == "'-1.5"
    (tmp_path / book.FILE).write_text('\ufeffStudent,Check,Points,Reason\n\n ada , Total ,"3,5", ok \n')
    (read,) = book.read(tmp_path)
    assert (read.student, read.check, read.points, read.reason, read.pinned, read.line) == (
        "ada",
        "total",
        3.5,
        "ok",
        False,
        3,
    )
    (tmp_path / book.FILE).write_bytes(HEADER.encode() + b"ada,total,3,ok\nada,add,1,caf\xe9\n")
    with pytest.raises(UsageError, match=r"overrides.csv, line 3: not UTF-8"):
        book.read(tmp_path)
    (tmp_path / book.FILE).unlink()
    (tmp_path / book.FILE).symlink_to(tmp_path / "elsewhere.csv")
    (tmp_path / "elsewhere.csv").write_text(HEADER)
    with pytest.raises(UsageError, match="not a link"):
        book.read(tmp_path)
    (tmp_path / book.FILE).unlink()
    (tmp_path / book.FILE).write_text(HEADER + "x" * book.MOST_BYTES)
    with pytest.raises(UsageError, match="at most 5 MB"):
        book.read(tmp_path)


def test_what_an_override_does_to_a_grade():
    """A check override replaces the check's points and the late penalty is taken from the new total; `total` is
    the final score; either waits for a second look, unapplied, once the grader gives another number or the work
    is another; a line not yet recorded is made against the result now."""
    result = _result("m.py", SHA_A, {"mul": 3.0})  # 97 points
    graded = Graded("leejohn", "graded", result, 100.0, late_percent=10.0)
    assert graded.final == 87.3
    mul = book.Override("leejohn", "mul", 5.0, "accepted regrade", grader_points=3.0, sha256=SHA_A)
    got = adjust(graded, [mul])
    assert (got.raw, got.penalty, got.score, got.checks, got.waiting) == (99.0, 9.9, 89.1, {"mul": 5.0}, ())
    total = book.Override("leejohn", "total", 95.0, "late by agreement", grader_points=87.3, sha256=SHA_A)
    got = adjust(graded, [mul, total])
    assert (got.score, got.penalty, len(got.applied)) == (95.0, 0.0, 2)
    assert adjust(graded, []) is None
    regraded = Graded("leejohn", "graded", _result("m.py", SHA_A, {"mul": 4.0}), 100.0, 10.0)
    got = adjust(regraded, [mul])
    assert got.score == regraded.final and not got.applied and got.checks == {}
    (waiting,) = got.waiting
    assert waiting.now == 4.0 and not waiting.resubmitted
    assert "the grader now gives 4 for mul (it gave 3 when the override was made)" in waiting.text()
    resubmitted = Graded("leejohn", "graded", _result("m.py", SHA_B, {"mul": 3.0}), 100.0, 10.0)
    (waiting,) = adjust(resubmitted, [mul]).waiting
    assert waiting.resubmitted and waiting.why() == "new work was handed in since"
    broken = Graded("leejohn", "error", _result("m.py", SHA_A, error="syntax_error"), 100.0)
    (waiting,) = adjust(broken, [mul]).waiting
    assert waiting.now is None and "no result for mul now" in waiting.text()
    by_hand = book.Override("leejohn", "mul", 6.0, "by hand")
    assert adjust(graded, [by_hand]).checks == {"mul": 6.0}
    (pinned,), changed = pin_all([by_hand], {"leejohn": graded})
    assert changed and (pinned.grader_points, pinned.sha256) == (3.0, SHA_A) and pinned.date
    nothing = absent("zoe", Identity("canvas", "Müller, Zoë", "40003"), MICROGRAD)
    zoe = Graded("zoe", "no_submission", nothing.result, 100.0)
    (pinned,), _ = pin_all([book.Override("zoe", "total", 50.0, "handed in on paper")], {"zoe": zoe})
    assert (pinned.grader_points, pinned.sha256, adjust(zoe, [pinned]).score) == (0.0, "", 50.0)


LATE_TEXT = "Late: marked late by Canvas, which gives no submission time: counted as 1 day late."
GRADEBOOK = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Micrograd (7701)\n    Points Possible,,,,,10.00\n"
    '"García Márquez, José",40001,,jgarcia,A,\n"王, 小明",40002,,xwang,A,\n"Müller, Zoë",40003,,zmuller,A,\n'
    '"Okafor, Chidi",40004,,cokafor,A,4.00\n'
)
COURSE = CanvasCourse(
    {40001: "García Márquez, José", 40002: "王, 小明", 40003: "Müller, Zoë", 40004: "Okafor, Chidi"},
    {7701: ("Micrograd", 10.0)},
    {(40004, 7701): "4"},
    {40001: {95001}, 40002: {95002}, 40004: {95004}},
)


def _graded_class(tmp_path: Path) -> Path:
    """A graded --out folder, as a batch writes it (each student's result.json, report and key, then the class files
    through the batch's own writer): José lost 3 points on mul and was late (10%), 王's file could not be graded,
    Zoë handed in nothing, Chidi has full marks."""
    out = tmp_path / "graded"
    who = {
        "garciamarquezjose": Identity("canvas", "garcíamárquezjosé", "40001", "95001", late=True),
        "wangxiaoming": Identity("canvas", "王小明", "40002", "95002"),
        "okaforchidi": Identity("canvas", "okaforchidi", "40004", "95004"),
    }
    results = {
        "garciamarquezjose": _result("micrograd_mine.py", SHA_A, {"mul": 3.0}),
        "wangxiaoming": _result("micrograd_mine.py", SHA_B, error="syntax_error"),
        "okaforchidi": _result("micrograd_mine.py", "c" * 64),
    }
    rows = []
    for student, result in results.items():
        folder = out / "students" / student
        folder.mkdir(parents=True)
        (folder / RESULT_FILE).write_text(json.dumps(result.to_dict()))
        (folder / "gradescope.json").write_text("{}")
        late = student == "garciamarquezjose"
        shown = Final.of(result, round(result.score / 10, 2), LATE_TEXT) if late else Final.of(result)
        (folder / REPORT_FILE).write_text(html.student_report(result, None, MICROGRAD.title, shown, student=student))
        keys.seal(folder, f"key of {student}")
        rows.append(
            Row(
                student,
                late,
                result,
                True,
                "micrograd_mine.py",
                f"students/{student}",
                [],
                who[student],
                penalty=round(result.score / 10, 2) if late else 0.0,
                late_percent=10.0 if late else 0.0,
            )
        )
    rows.append(absent("mullerzoe", Identity("canvas", "Müller, Zoë", "40003"), MICROGRAD))
    write_class_outputs(out, MICROGRAD, sorted(rows, key=lambda r: r.student), ())
    (tmp_path / "gradebook.csv").write_text(GRADEBOOK)
    return out


def _grades(out: Path) -> dict[str, dict[str, str]]:
    return {r["student"]: r for r in csv_rows(out / "grades.csv")}


def _canvas(tmp_path: Path, out: Path) -> dict:
    target = tmp_path / "canvas.csv"
    export.main(target="canvas", out=target, assignment="micrograd", graded=out, roster=tmp_path / "gradebook.csv")
    return canvas_import(target.read_text(), COURSE).changes


def test_grader_override_updates_the_class_and_every_export(tmp_path, capsys):
    """`grader override` records a decision against the result now and brings grades.csv, summary.json, the class
    page and the student's report up to date at once (the report's key resealed, so the next batch still skips
    them); the Canvas, gradescope-csv and feedback exports apply it; a student or check that does not exist, or
    points out of range, are refused (exit 2) naming the nearest match; a TA's line added by hand is applied by
    the next export, and a TA's typo stops the export, naming its line and cell, before anything is written."""
    out = _graded_class(tmp_path)
    assert _canvas(tmp_path, out) == {(40001, 7701): "8.73", (40002, 7701): "0.00", (40004, 7701): "10.00"}
    jose = out / "students" / "garciamarquezjose"
    code = cli(["override", "--out", str(out), "garciamarquezjose", "mul", "--points", "5", "--reason", "regrade: a b"])
    assert code == 0 and "instead of the grader's 3" in capsys.readouterr().out
    (line,) = book.read(out)
    assert (line.check, line.points, line.grader_points, line.sha256, line.by != "", line.date != "") == (
        "mul",
        5.0,
        3.0,
        SHA_A,
        True,
        True,
    )
    grades = _grades(out)
    jose_row = grades["garciamarquezjose"]
    assert (jose_row["score"], jose_row["raw_score"], jose_row["late_penalty"], jose_row["mul"]) == (
        "89.1",
        "97.0",
        "9.9",
        "5.0",
    )
    assert jose_row["override"].startswith("mul: 5 instead of the grader's 3") and jose_row["review"] == ""
    assert grades["okaforchidi"]["score"] == "100.0" and grades["okaforchidi"]["override"] == ""
    summary = json.loads((out / "summary.json").read_text())
    entry = next(s for s in summary["students"] if s["student"] == "garciamarquezjose")
    assert entry["score"] == 89.1 and entry["overrides"][0]["reason"] == "regrade: a b" and entry["review"] == []
    assert (
        summary["overrides"] == {"applied": 1, "waiting": 0}
        and "adjusted by an override" in (out / "index.html").read_text()
    )
    report = (jose / REPORT_FILE).read_text()
    assert "Adjusted by your instructor: regrade: a b" in report and "5 / 6 points (the grader gave 3)" in report
    assert "89.1 / 100" in report and keys.unchanged(jose, "key of garciamarquezjose")
    assert _canvas(tmp_path, out) == {(40001, 7701): "8.91", (40002, 7701): "0.00", (40004, 7701): "10.00"}

    for args, words in [
        (["garciamarqez", "mul"], "no student 'garciamarqez' in .* \\(the nearest: 'garciamarquezjose'\\)"),
        (["garciamarquezjose", "mull"], "no check 'mull' in this assignment \\(the nearest: 'mul'\\)"),
        (["garciamarquezjose", "mul", "--points", "7"], "7 is more than the 6 points of mul"),
        (["wangxiaoming", "mul"], "wangxiaoming has no result for mul .*status is error.*override the total"),
        (["okaforchidi", "total", "--points", "101"], "101 is more than the 100 points of the total"),
        (["okaforchidi", "add", "--remove"], "has no override of add for okaforchidi"),
    ]:
        options = ["--points", "1"] if "--points" not in args and "--remove" not in args else []
        assert cli(["override", "--out", str(out), *args, *options, "--reason", "r"]) == 2
        assert re.search(words, capsys.readouterr().err), words
    assert len(book.read(out)) == 1

    # 王's syntax error graded by hand, and Zoë's work handed in on paper: the total, which the exports write
    assert override.main(out=out, student="WangXiaoming", check=None, points=60.0, reason="graded by hand") == 0
    with open(out / book.FILE, "a") as f:
        f.write("mullerzoe,total,45,handed in on paper,ta,,,\n")
    changes = _canvas(tmp_path, out)
    assert changes == {(40001, 7701): "8.91", (40002, 7701): "6.00", (40003, 7701): "4.50", (40004, 7701): "10.00"}
    plain = tmp_path / "plain.csv"
    export.main(target="gradescope-csv", out=plain, assignment="micrograd", graded=out)
    scores = {r["Name"]: r["Score"] for r in csv_rows(plain)}
    assert scores["wangxiaoming"] == "60.0" and scores["mullerzoe"] == "45.0" and scores["garciamarquezjose"] == "89.1"
    feedback = tmp_path / "feedback.zip"
    export.main(target="feedback", out=feedback, assignment="micrograd", graded=out)
    with zipfile.ZipFile(feedback) as zf:
        texts = {re.findall(r"_(\d+)_\d+_", name)[0]: zf.read(name).decode() for name in zf.namelist()}
    assert "Adjusted by your instructor: graded by hand" in texts["40002"] and "60 / 100" in texts["40002"]
    assert "Adjusted by your instructor: regrade: a b" in texts["40001"]
    assert "Adjusted by your instructor" not in texts["40004"]

    with open(out / book.FILE, "a") as f:
        f.write("okafor_chidi,add,3,accepted regrade,ta,,,\n")
    target = tmp_path / "after-typo.csv"
    with pytest.raises(
        UsageError, match=r"overrides.csv, line 5, column student: no student 'okafor_chidi'.*'okaforchidi'"
    ):
        export.main(target="canvas", out=target, assignment="micrograd", graded=out, roster=tmp_path / "gradebook.csv")
    assert not target.exists()

    (out / book.FILE).write_text("".join((out / book.FILE).read_text().splitlines(keepends=True)[:-1]))
    assert override.main(out=out, student="garciamarquezjose", check="mul", remove=True) == 0
    assert _grades(out)["garciamarquezjose"]["score"] == "87.3" and _grades(out)["garciamarquezjose"]["mul"] == "3.0"
    assert "Adjusted by your instructor" not in (jose / REPORT_FILE).read_text()
    assert keys.unchanged(jose, "key of garciamarquezjose")


def _batch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", "batch", *args], capture_output=True, text=True, timeout=600
    )


def test_an_override_survives_a_regrade_and_waits_for_a_look_after_a_resubmission(tmp_path, capsys):
    """Issue 32's case, with two real batches: a class is graded; an override is recorded for José (forward, which
    his engine without __radd__ fails) and for Chidi (his total), and a TA adds one by hand for 王; José hands in
    new work, and a second batch (--force) grades his new file, 王's same file again and Zoë's late one, while
    Chidi keeps his earlier row. The gradebook and the Canvas export apply Chidi's and 王's overrides; José's is
    not applied (the grader's new 10 is shown) and his row is flagged in the gradebook, on the class page and on
    stderr; each report says what was adjusted, and only where it was."""
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "assignment.toml").write_text(TINY)
    (tmp_path / "gradebook.csv").write_text(GRADEBOOK)
    correct, buggy = CORRECT_ENGINES[0].read_text(), (ZOO / "buggy" / "missing_radd.py").read_text()
    first, second = tmp_path / "download", tmp_path / "resubmitted"
    first.mkdir()
    second.mkdir()
    (first / "garcíamárquezjosé_40001_95001_micrograd_mine.py").write_text(buggy)
    (first / "王小明_40002_95002_micrograd_mine.py").write_text(buggy)
    (first / "okaforchidi_40004_95004_micrograd_mine.py").write_text(correct)
    out = tmp_path / "graded"
    common = ["--out", str(out), "--assignment", str(tmp_path / "tiny"), "--roster", str(tmp_path / "gradebook.csv")]
    done = _batch(str(first), *common, "--jobs", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert [_grades(out)[s]["score"] for s in ("garciamarquezjose", "okaforchidi")] == ["0.0", "10.0"]
    assert (
        cli(
            [
                "override",
                "--out",
                str(out),
                "garciamarquezjose",
                "forward",
                "--points",
                "6",
                "--reason",
                "only __radd__",
            ]
        )
        == 0
    )
    assert cli(["override", "--out", str(out), "okaforchidi", "--points", "8", "--reason", "copied a cell"]) == 0
    with open(out / book.FILE, "a") as f:
        f.write("canvas-40002,forward,5,partial credit: __add__ is right,ta,,,\n")
    (second / "garcíamárquezjosé_40001_95009_micrograd_mine.py").write_text(correct)
    (second / "王小明_40002_95002_micrograd_mine.py").write_text(buggy)
    (second / "müllerzoë_LATE_40003_95010_micrograd_mine.py").write_text(correct)
    done = _batch(str(second), *common, "--jobs", "2", "--force")
    assert done.returncode == 0, done.stderr[-3000:]
    review = [line for line in done.stderr.splitlines() if line.startswith("review: ")]
    assert len(review) == 1 and review[0].startswith("review: garciamarquezjose: the override of forward (6 points")
    assert "new work was handed in since and the grader now gives 10 for forward (it gave 0" in review[0]
    assert "overrides: 2 applied, 1 waiting for a second look" in done.stderr
    grades = _grades(out)
    assert {s: (r["score"], r["forward"]) for s, r in grades.items()} == {
        "garciamarquezjose": ("10.0", "10.0"),
        "canvas-40002": ("5.0", "5.0"),
        "mullerzoe": ("10.0", "10.0"),
        "okaforchidi": ("8.0", "10.0"),
    }
    assert grades["garciamarquezjose"]["override"] == "" and "not applied" in grades["garciamarquezjose"]["review"]
    assert grades["okaforchidi"]["override"].startswith("the total: 8 instead of the grader's 10")
    assert all(grades[s]["review"] == "" for s in ("canvas-40002", "mullerzoe", "okaforchidi"))
    wang = next(o for o in book.read(out) if o.student == "canvas-40002")
    assert wang.grader_points == 0.0 and len(wang.sha256) == 64  # made against the result the TA was looking at
    page = (out / "index.html").read_text()
    assert "override waits for a look" in page and 'class="review">garciamarquezjose: the override of forward' in page
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overrides"] == {"applied": 2, "waiting": 1}
    reports = {s: (out / "students" / s / REPORT_FILE).read_text() for s in grades if s != "mullerzoe"}
    assert "Adjusted by your instructor: copied a cell" in reports["okaforchidi"]
    assert "Adjusted by your instructor: partial credit: __add__ is right" in reports["canvas-40002"]
    assert "Adjusted by your instructor" not in reports["garciamarquezjose"]
    target = tmp_path / "canvas.csv"
    assert (
        cli(["export", "canvas", "--from", str(out), "--roster", str(tmp_path / "gradebook.csv"), "--out", str(target)])
        == 0
    )
    assert "review: garciamarquezjose: the override of forward" in capsys.readouterr().err
    assert canvas_import(target.read_text(), COURSE).changes == {
        (40001, 7701): "10.00",
        (40002, 7701): "5.00",
        (40003, 7701): "10.00",
        (40004, 7701): "8.00",
    }


def test_after_an_override_every_page_shows_the_final_score_and_what_was_adjusted(tmp_path, open_page):
    """Issue 40, item 1: José (97 points from the grader, 87.3 after the late policy's 10%) has mul set to 5, then
    his total set to 70. grades.csv, the Canvas import, his report in the feedback zip (opened in Chromium: its
    title, its headline, mul's card and row), his Gradescope results and the class page all say 70, say the grader
    gave 97, and mark mul as adjusted; the late penalty is not taken from a score the instructor set. Taking the
    total back gives 89.1 everywhere (5 for mul, less 10%), and taking mul back the grader's own 87.3."""
    out = _graded_class(tmp_path)
    jose = out / "students" / "garciamarquezjose"
    assert override.main(out=out, student="garciamarquezjose", check="mul", points=5.0, reason="a b, by hand") == 0
    assert override.main(out=out, student="garciamarquezjose", check=None, points=70.0, reason="oral exam") == 0

    def pages(expected: str, grader_gave: str | None) -> None:
        assert _grades(out)["garciamarquezjose"]["score"] == expected
        assert _canvas(tmp_path, out)[(40001, 7701)] == f"{float(expected) / 10:.2f}"
        feedback = tmp_path / "feedback.zip"
        export.main(target="feedback", out=feedback, assignment="micrograd", graded=out)
        with zipfile.ZipFile(feedback) as zf:
            (name,) = [n for n in zf.namelist() if "_40001_" in n]
            report = zf.read(name).decode()
        page = open_page(report, f"override-{expected}")
        shown = f"{float(expected):g}"
        assert page.title() == f"garciamarquezjose: {shown} / 100 ({MICROGRAD.title})"
        assert page.locator("#score").inner_text() == f"{shown} / 100 points"
        if grader_gave is None:
            assert page.locator("#score-from").inner_text() == "The grader gave 97; the late policy took 9.7."
            assert page.locator("#adjusted").count() == 0 and "adjusted" not in page.locator("#row-mul").inner_text()
        else:
            said = page.locator("#score-from").inner_text()
            assert said.startswith("The grader gave 97; your instructor adjusted mul (5 / 6 points instead of 3)")
            assert page.locator("#adjusted").is_visible()
            assert "5 / 6, adjusted by your instructor (the grader gave 3)" in page.locator("#row-mul").inner_text()
            assert "5 / 6, adjusted by your instructor" in page.locator("#check-mul h2").inner_text()
        scores = json.loads((jose / "gradescope.json").read_text())
        assert scores["score"] == float(expected)
        mul = next(t for t in scores["tests"] if t["name"].startswith("mul:"))
        assert mul["score"] == (5.0 if grader_gave else 3.0)
        assert ("Adjusted by your instructor to 5 / 6 points (the grader gave 3)" in mul["output"]) == bool(grader_gave)
        row = open_page((out / "index.html").read_text(), f"override-class-{expected}").locator(
            "#student-table tr", has_text="garciamarquezjose"
        )
        assert f"{shown} / 100" in row.inner_text()
        assert ("adjusted by an override (the grader gave 97)" in row.inner_text()) == bool(grader_gave)

    pages("70.0", "97")
    assert "Your instructor set your score, and no late penalty is taken" in (jose / REPORT_FILE).read_text()
    assert override.main(out=out, student="garciamarquezjose", check=None, remove=True) == 0
    pages("89.1", "97")
    assert "Your score: 99 − 9.9 = <strong>89.1 / 100</strong> points." in (jose / REPORT_FILE).read_text()
    assert override.main(out=out, student="garciamarquezjose", check="mul", remove=True) == 0
    pages("87.3", None)
    assert keys.unchanged(jose, "key of garciamarquezjose")
