"""Budgets that close (issue 17, items 10 and 13): whatever a student's code does, each request
ends at its own limit, which frames sent meanwhile never extend, a notebook ends at what is left
of the submission's limit, and a whole grading ends within `submission_s` and a small fixed
margin (grading.OVERRUN_S). Each hostile submission is graded through the real command line,
with bubblewrap and without it, on an assignment with small limits so that the tests stay short;
what is asserted is the result's own account (its status, feedback and duration_s)."""

from __future__ import annotations

import nbformat
from conftest import BASE_ENGINE
from test_adversarial import HOSTILE, check, statuses, tight

from grader.grading import OVERRUN_S


def test_keep_alive_frames_do_not_keep_an_import_going(run, tmp_path):
    """Does a module whose import never ends, while it writes a well-formed progress frame for the
    load request once a second, fail to import at the request's limit (3 s), as a timeout?"""
    grader, limits = tight(run, tmp_path, request_s=3.0, submission_s=30.0)
    result, html, _, _ = check(grader, tmp_path, HOSTILE / "keepalive.py")
    assert result["status"] == "error" and result["error"]["kind"] == "timeout", result["error"]
    assert f"your code did not finish within {limits.request_s:g} s" in result["error"]["message"], result["error"]
    assert result["duration_s"] <= limits.submission_s + OVERRUN_S, result["duration_s"]
    assert "<html" in html


def test_keep_alive_frames_do_not_keep_a_test_run_going(run, tmp_path):
    """Does a test that never ends, while it writes a well-formed event frame for its run's request
    once a second, stop at the run's limit (tests_s), costing the checks on the student's tests only,
    with the grading ending within its own limit?"""
    grader, limits = tight(run, tmp_path, tests_s=5.0, submission_s=60.0)
    result, _, _, _ = check(grader, tmp_path, BASE_ENGINE, HOSTILE / "keepalive_tests.py")
    found = {c["id"]: c for c in result["checks"]}
    assert result["status"] == "graded"
    assert found["student_tests"]["status"] == "error", found["student_tests"]
    assert f"did not finish within {limits.tests_s:g} s" in found["student_tests"]["feedback"], found["student_tests"]
    assert found["wheat"]["status"] == found["sabotage"]["status"] == "error"
    assert statuses(result)["add"] == "passed", statuses(result)
    assert result["duration_s"] <= limits.submission_s + OVERRUN_S, result["duration_s"]


def test_a_suite_slow_on_every_engine_ends_with_the_submissions_limit(run, tmp_path):
    """Does a suite that runs just under its limit on every engine of the plan, one after another,
    stop when the submission's time runs out, the checks that needed the runs not made skipped with
    a message naming the limit, and the grading ending within that limit?"""
    grader, limits = tight(run, tmp_path, tests_s=8.0, submission_s=10.0)
    result, _, _, _ = check(grader, tmp_path, BASE_ENGINE, HOSTILE / "slow_tests.py")
    found = {c["id"]: c for c in result["checks"]}
    assert result["status"] == "graded"
    assert found["student_tests"]["status"] == "passed", found["student_tests"]
    for check_id in ("wheat", "sabotage"):
        assert found[check_id]["status"] == "skipped", found[check_id]
        assert f"time limit of {limits.submission_s:g} s" in found[check_id]["feedback"], found[check_id]
    assert result["duration_s"] <= limits.submission_s + OVERRUN_S, result["duration_s"]


def test_a_notebooks_cells_stop_at_the_submissions_limit(run, tmp_path):
    """Does a notebook whose 24 cells each sleep just under cell_s stop when the submission's limit runs
    out (not at cell_s x (cells + 2) + 60 s), its report naming the cell that was cut off and why, and
    every cell after it as not run?"""
    grader, limits = tight(run, tmp_path, cell_s=2.0, submission_s=8.0)
    result, html, _, _ = check(grader, tmp_path, HOSTILE / "slow_cells.ipynb", name="slow_cells.ipynb")
    assert result["status"] == "error" and result["error"]["kind"] == "timeout", result["error"]
    message = result["error"]["message"]
    assert f"time limit of {limits.submission_s:g} s" in message, message
    cells = result["notebook"]["cells"]
    cut = [c for c in cells if c["status"] == "timeout"]
    assert len(cut) == 1, cells
    number = cut[0]["number"]
    assert f"cell {number}" in message, message
    assert f"time limit of {limits.submission_s:g} s" in cut[0]["error"], cut
    code_cells = sum(c.cell_type == "code" for c in nbformat.read(HOSTILE / "slow_cells.ipynb", as_version=4).cells)
    assert [c["number"] for c in cells if c["status"] == "not_run"] == list(range(number + 1, code_cells + 1)), cells
    assert any(f"cell {number}:" in p and "time limit" in p for p in result["notebook"]["problems"]), result["notebook"]
    assert result["duration_s"] <= limits.submission_s + OVERRUN_S, result["duration_s"]
    assert "<html" in html
