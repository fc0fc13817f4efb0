"""Does `grader check` say what changed since the student's last check of the same file, a regression first,
from a record kept beside the reports (reports/.history/), never inside the submission; and does
`grader check --watch` grade again when the file changes, saying what changed, until Ctrl-C (exit 130)?"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ZOO, quick_assignment

from grader import history
from grader.errors import UsageError
from grader.result import CheckResult, Result
from grader.watch import Looked, changed, look

CHECKS = ("forward", "add", "tanh", "accumulate", "gradcheck")
TANH_BUG = "self.grad += (1 - self.data ** 2) * out.grad"
TANH_FIXED = "self.grad += (1 - out.data ** 2) * out.grad"
ADD_ACCUMULATES = "            self.grad += out.grad\n            other.grad += out.grad"
ADD_ASSIGNS = "            self.grad = out.grad\n            other.grad = out.grad"


def grader(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_second_check_leads_with_what_changed_a_regression_first(tmp_path):
    """tanh's bug fixed and `=` for `+=` put into __add__: does the second check's first line after the
    heading say accumulate now fails before saying tanh now passes, with the score before and after; and is
    the record beside the reports, outside the student's folder and its file?"""
    task = quick_assignment(tmp_path / "quick", CHECKS)
    work = tmp_path / "work"
    work.mkdir()
    engine = work / "micrograd_mine.py"
    engine.write_text((ZOO / "buggy" / "tanh_grad_from_input.py").read_text())
    first = grader("check", engine.name, "--assignment", str(task), cwd=work)
    assert first.returncode == 1, first.stderr
    assert "Since your last check" not in first.stdout, first.stdout
    record = work / "reports" / ".history" / "micrograd_mine.py.json"
    assert json.loads(record.read_text())["checks"][2] == {
        "id": "tanh",
        "status": "failed",
        "score": 0.0,
        "max_score": 6.0,
    }
    assert sorted(p.name for p in work.iterdir()) == ["micrograd_mine.py", "reports"]  # nothing else beside it

    edit(engine, TANH_BUG, TANH_FIXED)
    edit(engine, ADD_ACCUMULATES, ADD_ASSIGNS)
    second = grader("check", engine.name, "--assignment", str(task), cwd=work)
    lines = second.stdout.splitlines()
    assert lines[2] == (
        "Since your last check (19 -> 18 / 30): accumulate now fails (was passing); tanh now passes."
    ), second.stdout

    third = grader("check", engine.name, "--assignment", str(task), cwd=work)
    assert third.stdout.splitlines()[2] == (
        "Since your last check: your file has not changed and no check changed (18 / 30)."
    ), third.stdout


def test_a_forged_record_is_ignored_and_written_again(tmp_path):
    """reports/.history/ is the student's: a record whose score is Infinity and one check's status flipped
    (issue 41, item 8) made every later check of the file raise OverflowError before writing a new one. Is it
    ignored (no line on what changed), is the check's table, report and JSON written, and is the record
    written again, so that the next check compares with it?"""
    task = quick_assignment(tmp_path / "quick", CHECKS)
    work = tmp_path / "work"
    work.mkdir()
    engine = work / "micrograd_mine.py"
    engine.write_text((ZOO / "buggy" / "tanh_grad_from_input.py").read_text())
    assert grader("check", engine.name, "--assignment", str(task), cwd=work).returncode == 1
    record = work / "reports" / ".history" / "micrograd_mine.py.json"
    forged = json.loads(record.read_text())
    forged["score"] = float("inf")
    forged["checks"][2]["status"] = "passed"  # tanh, which fails: the comparison reaches the score's words
    record.write_text(json.dumps(forged))
    assert "Infinity" in record.read_text()
    again = grader("check", engine.name, "--assignment", str(task), cwd=work)
    assert again.returncode == 1 and "Traceback" not in again.stderr, again.stderr[-2000:]
    assert "Score: 19 / 30" in again.stdout and "Since your last check" not in again.stdout, again.stdout
    written = json.loads(record.read_text())
    assert written["score"] == 19.0 and written["checks"][2]["status"] == "failed", written
    third = grader("check", engine.name, "--assignment", str(task), cwd=work)
    assert "your file has not changed and no check changed (19 / 30)" in third.stdout, third.stdout


def test_a_record_with_values_out_of_bounds_is_no_history(tmp_path):
    """Every number a record holds is finite and within bounds, or the record is none: the same recall serves
    grader check, --watch and %grade."""
    engine = tmp_path / "micrograd_mine.py"
    engine.write_text("x = 1\n")
    good = {
        "schema": 1,
        "path": str(engine.resolve()),
        "assignment": "micrograd",
        "sha256": None,
        "status": "graded",
        "score": 5.0,
        "max_score": 5.0,
        "checks": [{"id": "add", "status": "passed", "score": 5.0, "max_score": 5.0}],
    }
    place = history.place(engine, tmp_path)
    place.parent.mkdir(parents=True)
    place.write_text(json.dumps(good))
    assert history.recall(engine, "micrograd", tmp_path) is not None
    check = good["checks"][0]
    for bad in (
        {"score": float("inf")},
        {"score": float("nan")},
        {"max_score": -float("inf")},
        {"score": 1e300},
        {"score": -5.0},
        {"score": 10**400},
        {"checks": [{**check, "score": float("nan")}]},
        {"checks": [{**check, "max_score": 1e400}]},
        {"sha256": [[]]},
        {"sha256": "[" * 100_000 + "]" * 100_000},
    ):
        place.write_text(json.dumps({**good, **bad}))
        assert history.recall(engine, "micrograd", tmp_path) is None, bad
    place.write_text('{"schema": 1, "sha256": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert history.recall(engine, "micrograd", tmp_path) is None


def record(**statuses: str) -> history.Record:
    points = {"passed": 5.0, "failed": 0.0, "error": 0.0, "skipped": 0.0}
    return history.Record(
        "/x/micrograd_mine.py",
        "micrograd",
        None,
        "graded",
        sum(points[s] for s in statuses.values()),
        5.0 * len(statuses),
        {i: (s, points[s], 5.0) for i, s in statuses.items()},
    )


def test_what_changed_is_worded_a_regression_first():
    """Each kind of change, in the order a student should read it."""
    before = record(add="passed", mul="failed", tanh="passed", relu="skipped", pow="error", neuron="passed")
    after = record(add="passed", mul="passed", tanh="failed", relu="failed", pow="passed", neuron="error")
    change = history.compare(before, after)
    assert change.sentence() == (
        "Since your last check: tanh now fails (was passing); neuron now stops with an error (was passing); "
        "mul, pow now pass; relu now fails (was skipped)."
    )
    assert history.compare(before, before).sentence() == "Since your last check: no check changed (15 / 30)."
    fewer = history.compare(record(add="passed"), record(add="failed", mul="passed"))  # mul not run before
    assert fewer.sentence() == "Since your last check: add now fails (was passing)."
    unreadable = history.Record("/x/micrograd_mine.py", "micrograd", None, "error", 0.0, 30.0, {})
    assert history.compare(before, unreadable).sentence() == (
        "Since your last check (15 -> 0 / 30): your file could not be graded this time; last time it scored 15 / 30."
    )


def test_a_record_that_is_not_one_is_no_history(tmp_path):
    """A student's folder is theirs: a record they wrote by hand, of another file, another assignment, or
    that is a link, is no history (it never changes a grade, only the first line); a link in its place is
    refused before grading."""
    engine = tmp_path / "micrograd_mine.py"
    engine.write_text("x = 1\n")
    result = Result(
        "micrograd_mine.py",
        None,
        "micrograd",
        "0",
        "graded",
        None,
        5.0,
        5.0,
        0.1,
        (CheckResult("add", "add", "passed", 5.0, 5.0, "visible", "ok", None, {}, 0.1),),
    )
    history.remember(result, engine, tmp_path)
    assert history.recall(engine, "micrograd", tmp_path) == history.Record.of(result, engine)
    assert history.recall(engine, "other", tmp_path) is None
    assert history.recall(tmp_path / "elsewhere.py", "micrograd", tmp_path) is None
    place = history.place(engine, tmp_path)
    for text in (
        "{",
        '{"schema": 1}',
        json.dumps({**json.loads(place.read_text()), "checks": [{"id": 1}]}),
        "x" * 300_000,
    ):
        place.write_text(text)
        assert history.recall(engine, "micrograd", tmp_path) is None
    place.unlink()
    place.symlink_to(tmp_path / "micrograd_mine.py")
    assert history.recall(engine, "micrograd", tmp_path) is None
    with pytest.raises(UsageError, match="symbolic link"):
        history.remember(result, engine, tmp_path)


def test_a_change_is_seen_once_its_bytes_change_and_stand_still(tmp_path):
    """Does the watcher's poll start nothing for a file touched or saved with the same text, and report a
    file whose bytes changed once it has stood still?"""
    watched = tmp_path / "micrograd_mine.py"
    watched.write_text("a = 1\n")
    missing = tmp_path / "test_micrograd.py"
    seen = {watched: look(watched), missing: look(missing)}
    assert seen[missing] == Looked(None, None)
    found: list = []
    waiting = threading.Thread(target=lambda: found.append(changed([watched, missing], seen, 0.02, 0.1)), daemon=True)
    waiting.start()
    os.utime(watched, (time.time() + 5, time.time() + 5))  # touched
    watched.write_text("a = 1\n")  # saved, the same text
    time.sleep(0.4)
    assert not found
    missing.write_text("def test_x():\n    pass\n")  # the tests appear
    waiting.join(5)
    assert found == [[missing]]


def test_a_ctrl_c_python_dropped_still_stops_the_watch_at_its_next_look(tmp_path):
    """A KeyboardInterrupt raised in a garbage collector's callback is dropped by Python (hypothesis installs
    one): the watch notes each Ctrl-C first, and its polling stops on the note though no file changes."""
    watched = tmp_path / "micrograd_mine.py"
    watched.write_text("a = 1\n")
    noted = threading.Event()
    outcome: list = []

    def wait() -> None:
        try:
            changed([watched], {watched: look(watched)}, 0.02, 0.1, stop=noted.is_set)
        except KeyboardInterrupt:
            outcome.append("stopped")

    waiting = threading.Thread(target=wait, daemon=True)
    waiting.start()
    time.sleep(0.2)
    assert waiting.is_alive() and not outcome  # nothing changed, nothing noted: it waits
    noted.set()
    waiting.join(5)
    assert outcome == ["stopped"]


def test_watch_grades_each_change_and_says_what_changed_until_ctrl_c(tmp_path):
    """grader check --watch, the file edited twice: three results (the full table, then two lines), the last
    naming the file and what changed, the card of the check that now fails; Ctrl-C ends it with exit 130."""
    task = quick_assignment(tmp_path / "quick", CHECKS)
    engine = tmp_path / "micrograd_mine.py"
    engine.write_text((ZOO / "buggy" / "tanh_grad_from_input.py").read_text())
    watch = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "check", "--watch", "--assignment", str(task)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []

    def wait_for(text: str) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = watch.stdout.readline()
            assert line, (lines, watch.stderr.read())
            lines.append(line.rstrip("\n"))
            if text in line:
                return
        raise AssertionError(lines)

    try:
        wait_for("Watching micrograd_mine.py and test_micrograd.py")
        assert any(line.startswith("FAIL  tanh") for line in lines), lines
        edit(engine, TANH_BUG, TANH_FIXED)
        wait_for("micrograd_mine.py changed")
        assert lines[-1].endswith("] micrograd_mine.py changed: 30 / 30; tanh, gradcheck now pass"), lines[-1]
        edit(engine, ADD_ACCUMULATES, ADD_ASSIGNS)
        wait_for("micrograd_mine.py changed")
        assert lines[-1].endswith(
            "] micrograd_mine.py changed: 18 / 30; accumulate, gradcheck now fail (were passing)"
        ), lines[-1]
        wait_for("--- gradcheck")
        assert [line for line in lines if line.startswith("--- ")][-2:] == [
            "--- accumulate: A value used several times gets the sum of every path's gradient (+=) (FAIL 0/7)",
            "--- gradcheck: Analytic gradients agree with central differences of your own forward pass (FAIL 0/5)",
        ]
    finally:
        watch.send_signal(signal.SIGINT)
        try:
            out, err = watch.communicate(timeout=60)
        except subprocess.TimeoutExpired as slow:  # said with what the watch printed (and any failure above, chained)
            watch.kill()
            out, err = watch.communicate()
            raise AssertionError(
                ("Ctrl-C did not stop the watch within 60 s", lines, out[-3000:], err[-3000:])
            ) from slow
    assert watch.returncode == 130, err
    assert err.rstrip().endswith("grader: stopped watching") and "Traceback" not in err, err
