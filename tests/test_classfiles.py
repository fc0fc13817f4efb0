"""The class files as typed values (grader/classfiles.py): a gradebook or a summary read and written again is the
same bytes, and what is read is checked as untrusted data, each wrong field named, as Result.from_dict does."""

from __future__ import annotations

import json

import pytest

from grader.classfiles import COLUMNS, ClassSummary, Gradebook, GradebookRow, SummaryStudent
from grader.errors import BadResult
from grader.result import SubmissionError

CHECKS = ("forward", "add")


def _gradebook() -> Gradebook:
    return Gradebook(
        CHECKS,
        (
            GradebookRow(
                "ada",
                54.0,
                100,
                "graded",
                True,
                "canvas",
                "111",
                "9001",
                60.0,
                6.0,
                "Late: 1 day",
                "",
                "",
                {
                    "forward": 6.0,
                    "add": 0,
                },
            ),
            GradebookRow("=cmd", 0.0, 100.0, "error", reason="-syntax_error: line 1", checks={"forward": None}),
            GradebookRow("bo", 0.0, 100.0, "no_submission", override="the total: 5 (ta): fair", checks={}),
        ),
    )


def test_a_gradebook_read_and_written_again_is_the_same_bytes():
    """Ints stay ints, a text that could start a formula keeps its one quote, a check with no points is empty."""
    text = _gradebook().text()
    lines = text.split("\r\n")
    assert lines[0] == ",".join((*COLUMNS, *CHECKS))
    assert lines[1] == "ada,54.0,100,graded,yes,canvas,111,9001,60.0,6.0,Late: 1 day,,,6.0,0"
    assert lines[2].startswith("'=cmd,0.0,100.0,error,,,,,0.0,0.0,'-syntax_error: line 1,,,,")
    read = Gradebook.read(text)
    assert read.text() == text
    assert read.rows[0].max_score == 100 and isinstance(read.rows[0].max_score, int)
    assert read.rows[1].student == "=cmd" and read.rows[1].checks == {"forward": None, "add": None}
    assert read.rows[0].to_dict()["late"] == "yes" and read.rows[0].late is True


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"score": "lots"}, "line 2.score: expected a number, got 'lots'"),
        ({"score": "nan"}, "line 2.score: expected a number"),
        ({"max_score": "1e999"}, "line 2.max_score: expected a number"),
        ({"late": "maybe"}, "line 2.late"),
        ({"status": "passed"}, "line 2.status"),
        ({"forward": "six"}, "line 2.forward"),
        ({"student": None}, "no 'student'"),
    ],
)
def test_a_gradebook_cell_that_is_not_one_is_named(change, named):
    cells = {name: str(value) for name, value in _gradebook().rows[0].to_dict().items()}
    assert GradebookRow.from_dict(cells) == _gradebook().rows[0]
    cells = {k: v for k, v in {**cells, **change}.items() if v is not None}
    with pytest.raises(BadResult, match=named):
        GradebookRow.from_dict(cells, "grades.csv, line 2")


def test_a_gradebook_without_its_columns_or_with_a_short_row_is_refused():
    with pytest.raises(BadResult, match="no 'score' column"):
        Gradebook.read("student,status\r\nada,graded\r\n")
    with pytest.raises(BadResult, match="line 2: 2 cells, not 4"):
        Gradebook.read("student,score,max_score,status\r\nada,1\r\n")


def _summary() -> ClassSummary:
    return ClassSummary(
        assignment="micrograd",
        title="Micrograd",
        max_score=100.0,
        students=(
            SummaryStudent(
                "ada",
                54.0,
                "graded",
                None,
                True,
                "students/ada",
                ("imports torch",),
                60,
                6.0,
                10.0,
                "Late",
                {
                    "lms": "canvas",
                    "name": "ada",
                    "group": [],
                },
            ),
            SummaryStudent("bo", status="error", error=SubmissionError("syntax_error", "line 1"), late_percent=0.0),
        ),
        histogram=(0, 0, 0, 0, 0, 1, 0, 0, 0, 0),
        overrides={"applied": 0, "waiting": 0},
        identical=(("ada", "cy"),),
        misconceptions=(),
        similarity=None,
        failed_passes={},
        graded=2,
        found=2,
    )


def test_a_summary_read_and_written_again_is_the_same_json():
    text = _summary().to_json()
    data = json.loads(text)
    assert list(data)[:4] == ["assignment", "title", "max_score", "students"]
    assert list(data["students"][0])[:4] == ["student", "score", "status", "error"]
    assert data["students"][1]["error"] == {"kind": "syntax_error", "message": "line 1"}
    assert ClassSummary.from_dict(data).to_json() == text
    assert ClassSummary.from_dict(data).students[0].raw_score == 60  # an int stays one


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d.update(histogram="tall"), "summary.histogram: expected tuple"),
        (lambda d: d["students"][0].update(status="passed"), r"summary.students\[0\].status: 'passed' is not one"),
        (lambda d: d["students"][1]["error"].update(kind="meltdown"), r"students\[1\].error.kind"),
        (lambda d: d["students"][0].update(score="54"), r"students\[0\].score: expected float"),
        (lambda d: d.update(surprise=1), "unknown field 'surprise'"),
        (lambda d: d["students"][0].pop("student"), r"students\[0\]: no 'student'"),
    ],
)
def test_a_summary_field_that_is_not_one_is_named(change, named):
    data = json.loads(_summary().to_json())
    change(data)
    with pytest.raises(BadResult, match=named):
        ClassSummary.from_dict(data)


def test_a_summary_before_the_insight_reads_with_its_defaults():
    """A summary written before misconceptions were counted, or before late_percent was kept, reads: the reteach
    notebook then says it counts none, and a later batch takes the late penalty's share."""
    old = ClassSummary.from_dict({"students": [{"student": "ada", "folder": "students/ada", "lms": None}]})
    assert old.misconceptions is None and old.students[0].late_percent is None and old.students[0].status == ""
