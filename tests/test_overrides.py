"""An instructor's decisions that survive a regrade (issue 32, item 4): overrides.csv read as untrusted text, what
an override does to a grade (applied, or waiting for a second look once the grader's own result changed), and
`grader override` on a real graded folder: the gradebook, summary.json, the class page, the student's report and
every export apply it. The end-to-end test runs two real batches: a batch, an override, a resubmission and a
second batch, with the Canvas export judged by tests/lms_importers.py's rules of Canvas's importer."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import catalog, csvfile
from grader.batch import overrides as book
from grader.batch.adjust import Graded, adjust, pin_all
from grader.batch.everyone import absent
from grader.errors import UsageError
from grader.lms.identity import Identity
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
