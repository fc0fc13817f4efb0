"""What the instructor's process accepts from a grading process or a cluster, judged on real values:
an outcome must be for the task's student and whole; a failure on the cluster is an error result that a
rerun retries; a scheduler gone is not anyone's result. And the engine secret is never empty."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import subprocess
import sys

from grader import catalog, secret
from grader.batch.cluster import outcome_of
from grader.batch.tasks import OUTPUTS, Task, TaskOutcome, checked, fingerprint, host_id
from grader.checks.suite import SUITE_CHECKS
from grader.result import CheckResult, Result


def task(student: str = "alice") -> Task:
    return Task(
        student,
        "micrograd_mine.py",
        b"x = 1\n",
        None,
        None,
        catalog.load("micrograd"),
        b"k",
        fingerprint(),
        False,
        host_id(),
        (),
    )


GRADED = Result(
    "micrograd_mine.py",
    "0" * 64,
    "micrograd",
    "1",
    "graded",
    None,
    1.0,
    1.0,
    0.5,
    (CheckResult("add", "+", "passed", 1.0, 1.0, "visible", "", None, {"caught": [1]}, 0.1),),
)


def outcome(student: str = "alice", result=GRADED) -> TaskOutcome:
    return TaskOutcome(student, result, dict.fromkeys(OUTPUTS, "{}"))


def test_an_outcome_for_the_task_is_kept_and_anything_else_is_that_students_error():
    assert checked(outcome(), task()) == outcome()
    assert checked(dataclasses.asdict(outcome()), task()) == outcome()  # as it comes back from a grading process
    not_a_result = {**GRADED.to_dict(), "score": "100"}
    for bad in (
        outcome("bob"),
        TaskOutcome("alice", GRADED, {"result.json": "{}"}),
        {"student": "alice"},
        "100/100",
        None,
        outcome(result={"status": "graded"}),
        outcome(result=not_a_result),
    ):
        got = checked(bad, task())
        assert got.student == "alice" and got.result.status == "error", bad
        assert set(got.texts) == set(OUTPUTS)


def test_what_arrives_from_the_cluster_is_judged_by_its_value():
    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker

    assert outcome_of(task(), outcome()) == (outcome(), True)
    assert outcome_of(task(), FutureCancelledError("grade-alice", "scheduler-connection-lost"))[0] is None
    assert outcome_of(task(), concurrent.futures.CancelledError())[0] is None
    killed, final = outcome_of(task(), (KilledWorker, KilledWorker("grade-alice", "tcp://10.0.0.7:1234", 3), None))
    assert not final and "died before it finished" in killed.result.error.message
    failed, final = outcome_of(task(), (OSError, OSError(2, "No such file", "/srv/worker/tmp/x"), None))
    assert not final and "/srv/worker" not in str(failed.result)  # a worker's folders stay in its log


def test_an_empty_secret_counts_as_none(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("GRADER_SECRET", "  ")
    (tmp_path / secret.FILE_NAME).write_text("\n")
    made = secret.key(tmp_path)
    assert len(made) == 64 and secret.key(tmp_path) == made  # made once, kept
    (tmp_path / "config" / "micrograd-grader" / secret.FILE_NAME).write_text("")
    assert len(secret.key(tmp_path)) == 64


def test_a_scheduler_address_that_is_not_one_is_a_clear_error(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "alice.py").write_text("x = 1\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(tmp_path / "in"),
            "--out",
            str(tmp_path / "out"),
            "--scheduler",
            "nowhere://?",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GRADER_SECRET": "s"},
    )
    assert run.returncode == 1 and "cannot reach the Dask scheduler at nowhere://?" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_a_catch_that_the_clock_decided_sends_the_student_to_be_graded_again_alone():
    """A crash on a sabotaged engine counts as a catch only when the suite ran fast on the correct engines,
    by the wall clock, which a classmate's processes can stretch: such a result is regraded alone."""
    from grader.batch.tasks import timed_out
    from grader.checks.suite_runs import Run, Suite, catches

    def run(outcome: str, kind: str | None, duration: float) -> Run:
        return Run(
            True,
            {"test_mul": {"outcome": outcome, "kind": kind, "message": "", "duration": 0.1}},
            [],
            "",
            False,
            duration,
        )

    def judged(wheat_s: float):
        wheats = {w: run("passed", None, wheat_s) for w in ("a", "b", "c")}
        return catches(
            Suite(run("passed", None, 1.0), wheats, {"mul_own_data": run("failed", "exception", 1.0)}, {}),
            set(),
            set(),
            30.0,
        )

    quick, fast, slow = judged(0.1), judged(5.0), judged(20.0)
    assert quick.caught and fast.caught and not slow.caught
    assert not quick.timing, "far inside the limit even if four times slower: the clock decided nothing"
    assert fast.timing and slow.timing
    by_assertion = catches(
        Suite(
            run("passed", None, 1.0),
            {"a": run("passed", None, 20.0)},
            {"mul_own_data": run("failed", "assertion", 1.0)},
            {},
        ),
        set(),
        set(),
        30.0,
    )
    assert by_assertion.caught and not by_assertion.timing
    check = CheckResult(
        "sabotage", "", "passed", 1.0, 1.0, "visible", "Your tests catch 1 of 1", None, {}, 1.0, timing=True
    )
    assert timed_out(dataclasses.replace(GRADED, checks=(check,)))
    assert not timed_out(dataclasses.replace(GRADED, checks=(dataclasses.replace(check, timing=False),)))


def test_a_time_limit_is_a_typed_mark_not_words_in_the_feedback(grade_source, quick):
    """A batch regrades alone a student whose grade a time limit touched. Is that read from a mark the
    grader sets where the limit stopped something (the check's typed `timing`; `artifacts.timing` in JSON),
    so that a relu whose backward never returns is marked, and a message that only says "time limit" is not?"""
    from conftest import REFERENCE_SOURCE

    from grader.batch.tasks import timed_out

    engine = quick.without(SUITE_CHECKS)
    hang = REFERENCE_SOURCE.replace(
        "def relu(self)", "def relu(self):\n        while True:\n            pass\n\n    def _relu_unused(self)"
    )
    hung = grade_source(hang, engine)
    marked = {c.id for c in hung.checks if c.timing}
    assert "relu" in marked and "mul" not in marked, marked
    assert timed_out(hung)
    words = REFERENCE_SOURCE.replace(
        "def __add__(self, other: Value | Real) -> Value:",
        "def __add__(self, other):\n        raise RuntimeError('my time limit: "
        "did not finish')\n\n    def _add_unused(self, other):",
    )
    said = grade_source(words, engine)
    assert any("did not finish" in c.feedback for c in said.checks), "the words are in the feedback"
    assert not timed_out(said), [c.artifacts for c in said.checks]


def test_the_batch_command_starts_its_grading_processes_before_it_imports_the_grader():
    """`grader batch` starts this machine's grading processes and its trial sandbox first, so that they get ready
    while the instructor's process imports the rest of the grader and finds the class (issue 44.4). Does its entry
    module, with what it needs to start them, leave the grading stack (grading, the checks, the lanes, the batch's
    own steps) unimported until then?"""
    probe = (
        "import sys, grader.cli, grader.batch.command\n"
        "heavy = ('grader.grading', 'grader.checks', 'grader.lanes', 'grader.sabotage', 'grader.batch.run', "
        "'grader.batch.tasks', 'grader.render')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", run.stdout
