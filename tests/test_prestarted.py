"""Sandboxes started before their grading knows its files (grader check starts them while it imports the
grader): a lane takes one that matches, with the submission written in after the start, and one no lane takes
is closed unused."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import BASE_ENGINE, statuses

from grader.grading import Options, grade
from grader.sandbox import isolation
from grader.sandbox.limits import SandboxLimits
from grader.sandbox.prestarted import Prestarted, layout

LOAD = {"op": "load", "code": {"kind": "py", "file": "micrograd_mine.py"}}
GOOD_TESTS = "from micrograd_mine import Value\n\n\ndef test_add():\n    assert (Value(1.0) + 2).data == 3.0\n"


def test_a_sandbox_started_before_its_files_loads_them():
    iso, limits = isolation.detect(), SandboxLimits()
    with Prestarted([(limits, ())], iso) as pool:
        assert pool.take({"a.py": b""}, limits, ("pytest",), iso) is None  # other warm imports: not this one
        assert pool.take({"a.py": b""}, SandboxLimits(memory_mb=512), (), iso) is None  # other limits
        box = pool.take({"micrograd_mine.py": BASE_ENGINE.read_bytes()}, limits, (), iso)
        assert box is not None and pool.free == []
        with box:
            reply = box.unit("state").exchange(LOAD, 10)
    assert reply["ok"] and "Value" in reply["result"]["symbols"], reply


def test_a_sandbox_no_lane_takes_is_closed_with_its_processes():
    iso = isolation.detect()
    pool = Prestarted([(SandboxLimits(), ())], iso)
    box = pool.free[0]
    box.wait_ready()
    pids = box.processes()
    assert pids
    pool.close()
    deadline = time.monotonic() + 5
    while any(os.path.exists(f"/proc/{pid}") for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids) and not box.root.exists()


def test_a_grading_takes_every_matching_sandbox(tmp_path, micrograd):
    (tmp_path / "micrograd_mine.py").write_bytes(BASE_ENGINE.read_bytes())
    (tmp_path / "test_micrograd.py").write_text(GOOD_TESTS)
    given = micrograd.limits
    limits = SandboxLimits.for_grading(given.request_s, given.memory_mb, given.submission_s)
    iso = isolation.detect()
    engine, suites, join = layout("py", True, 2)
    assert join and engine == ("pytest",) and suites == [("pytest",)]  # the engine's sandbox joins the suite's
    with Prestarted([(limits, warm) for warm in (engine, *suites)], iso) as pool:
        result = grade(
            tmp_path / "micrograd_mine.py", micrograd, Options(isolation=iso, suite_sandboxes=2, prestarted=pool)
        )
        assert pool.free == []
    assert result.status == "graded" and statuses(result)["student_tests"] == "passed", result.checks


def test_grader_check_grades_with_its_sandboxes_started_first(tmp_path):
    """The whole command, as a student runs it: the same score as ever."""
    (tmp_path / "micrograd_mine.py").write_bytes(BASE_ENGINE.read_bytes())
    (tmp_path / "test_micrograd.py").write_text(GOOD_TESTS)
    out = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "micrograd_mine.py", "--json", "-"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode in (0, 1), out.stderr
    assert '"status": "graded"' in out.stdout and '"student_tests"' in out.stdout, out.stdout[-2000:]


def test_the_layouts_of_a_gradings_sandboxes():
    assert layout("py", False, 2) == ((), [], False)  # no tests: the engine's alone
    assert layout("py", True, 1) == ((), [("pytest",)], False)  # one core: no sandbox to spare
    # a notebook's runs start beside its load on the suite's sandbox; the engine's joins them once its checks are done
    assert layout("notebook", True, 2) == (("pytest", "ipython"), [("pytest", "ipython")], True)
    assert layout("notebook", True, 1) == (("ipython",), [("pytest", "ipython")], False)
    assert layout("notebook", True, 2, one_sandbox=True) == (("pytest", "ipython"), [], False)  # a batch's one
