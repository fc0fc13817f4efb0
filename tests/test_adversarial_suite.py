"""Points and secrets around the student's own tests and the training replay, against hostile
submissions (tests/adversarial/), graded through the real command line in both modes (with
bubblewrap and without, the `run` fixture of test_adversarial.py):

- tests that assert nothing earn nothing, since they catch no sabotaged engine;
- a model that picks saturating weights cannot pass training with a backward() that does nothing;
- a suite that fails on other engines with pieces of them in its messages, exception names, test
  ids, skip reasons or collection errors gets no byte of any engine into the feedback.
"""

from __future__ import annotations

from dataclasses import replace

from conftest import BASE_ENGINE
from test_adversarial import HOSTILE, check, private_install, run, scores, statuses  # noqa: F401 - fixtures

# -- item 3: training from the grader's start ---------------------------------------------------------------


def test_saturated_weights_and_no_backward_do_not_pass_training(run, tmp_path):
    """Does a Neuron whose weights start at +-100 (loss 0 from the first step, every gradient 0) with a
    backward() that does nothing fail training, because the grader sets the starting weights itself,
    and is the student told that backward() left every gradient at 0?"""
    result, html, done, _ = check(run, tmp_path, HOSTILE / "saturated_neuron.py")
    training = next(c for c in result["checks"] if c["id"] == "training")
    assert statuses(result)["neuron"] == "passed"  # its forward pass is right: only training can tell
    assert training["status"] == "failed" and training["score"] == 0, training["feedback"]
    assert "grad is still 0" in training["feedback"], training["feedback"]
    assert "p.data = v" in training["counterexample"]["code"]  # the pasted loop starts where the grader did


def test_a_training_set_that_starts_converged_is_not_judged(grade_source, micrograd):
    """Is a correct engine's training skipped, not passed, when the assignment's threshold is above the
    loss the grader's start already has (nothing there would tell a working backward() from none)?"""
    lax = replace(micrograd, training=replace(micrograd.training, threshold=100.0))
    result = grade_source(BASE_ENGINE.read_text(), lax)
    training = next(c for c in result.checks if c.id == "training")
    assert training.status == "skipped" and training.score == 0, training.feedback
    assert "cannot tell a working backward()" in training.feedback


# -- item 2: tests that assert nothing earn nothing ---------------------------------------------------------


def test_tests_that_assert_nothing_earn_nothing(run, tmp_path):
    """Does a stub engine (every operation raises NotImplementedError) with tests that assert nothing earn
    0 for its tests, since they catch none of the sabotaged engines, and is the student told why?"""
    result, html, done, _ = check(run, tmp_path, HOSTILE / "stub_engine.py", HOSTILE / "asserts_nothing_tests.py")
    found = statuses(result)
    assert found["student_tests"] == "passed" and found["wheat"] == "passed"  # they do pass, everywhere
    assert scores(result)["student_tests"] == scores(result)["wheat"] == 0, scores(result)
    assert result["score"] == 0, scores(result)
    for check_id in ("student_tests", "wheat"):
        feedback = next(c["feedback"] for c in result["checks"] if c["id"] == check_id)
        assert "catch 0 of" in feedback and "earn 0 of 4 points" in feedback, feedback
        assert "must check values and gradients" in feedback


def test_tests_earn_at_most_the_share_of_sabotages_they_catch(tmp_path, micrograd):
    """Does a forward-only suite that catches few sabotaged engines earn that share of student_tests and
    wheat, while the sabotage check's own pay is unchanged?"""
    import shutil

    from conftest import HERE
    from grader.grading import grade

    shutil.copy(BASE_ENGINE, tmp_path / "micrograd_mine.py")
    shutil.copy(HERE / "fixtures" / "suites" / "weak.py", tmp_path / "test_micrograd.py")
    checks = {c.id: c for c in grade(tmp_path / "micrograd_mine.py", micrograd).checks}
    share = len(checks["sabotage"].artifacts["caught"]) / len(checks["sabotage"].artifacts["bugs"])
    assert 0 < share < 1
    assert checks["sabotage"].score == round(checks["sabotage"].max_score * share, 4)
    for check_id in ("student_tests", "wheat"):
        assert checks[check_id].status == "passed"
        assert checks[check_id].score == round(checks[check_id].max_score * share, 4), checks[check_id].feedback
