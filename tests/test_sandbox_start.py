"""Does the grader run wherever it is installed, or say so once, up front (issue 21, item 8)?

A sandbox shows student code only the Python that runs it; a Python that needs anything else (a
wrapper or shim that runs another program, a folder the sandbox mounts its own over) cannot start
there. That is the installation's problem: found by starting one sandbox before anyone is graded,
reported once with exit 3 and the fix, never as each student's crash.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BASE_ENGINE, CORRECT_ENGINES

from grader.sandbox import isolation
from grader.sandbox.supervisor import Sandbox, SandboxLimits

needs_bwrap = pytest.mark.skipif(isolation.detect().bwrap is None, reason="bubblewrap cannot create a sandbox here")
LOAD = {"op": "load", "code": {"kind": "py", "file": "micrograd_mine.py"}}


@needs_bwrap
def test_dev_shm_is_capped():
    """Is /dev/shm in a sandbox the small capped tmpfs (8 MB), not the unbounded one bubblewrap's own
    /dev brings, mounted over it when /dev comes after?"""
    code = (
        "written = 0\ntry:\n    for i in range(64):\n        with open(f'/dev/shm/f{i}', 'wb') as f:\n"
        "            f.write(b'x' * (1 << 20))\n        written += 1\nexcept OSError as exc:\n    ERROR = str(exc)\n"
        "class Value: pass\nassert 'No space left' in ERROR and written <= 8, (written, ERROR)\n"
    )
    with Sandbox({"micrograd_mine.py": code.encode()}, SandboxLimits()) as box:
        reply = box.unit("state").exchange(LOAD, 20)
    assert reply["ok"], reply


def wrapper_python(folder: Path) -> Path:
    """A `python` that is a shell script running the real one from a folder beside it, as a pyenv shim
    does: it works on the host, and cannot start in a sandbox, which does not show that folder."""
    (folder / "libexec").mkdir(parents=True)
    (folder / "libexec" / "python").symlink_to(os.path.realpath(sys.executable))
    (folder / "bin").mkdir()
    script = folder / "bin" / "python"
    script.write_text(f'#!/bin/sh\nexec {folder / "libexec" / "python"} "$@"\n')
    script.chmod(0o755)
    return script


@needs_bwrap
def test_a_python_the_sandbox_cannot_run_stops_every_command_once_up_front(tmp_path):
    """With a sandbox Python that cannot start in a sandbox: does a batch stop before grading anyone, with
    exit 3 and one message naming the problem and the fix (no student's result saying 'crash'), and
    does grader check end the same way?"""
    env = dict(os.environ, GRADER_SANDBOX_PYTHON=str(wrapper_python(tmp_path / "shim")))
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i, engine in enumerate(CORRECT_ENGINES[:3]):
        (inputs / f"s{i}.py").write_text(engine.read_text())
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", "batch", str(inputs), "--out", str(out), "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.stderr.count("a sandbox did not start") == 1 and "GRADER_SANDBOX_PYTHON" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and not list(out.glob("students/*/result.json"))
    (tmp_path / "micrograd_mine.py").write_text(BASE_ENGINE.read_text())
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 3 and "a sandbox did not start" in run.stderr, run.stdout + run.stderr
    assert "Score:" not in run.stdout


def test_a_sandbox_python_without_pytest_stops_a_batch_up_front(tmp_path):
    """With a sandbox Python that runs but has no pytest: does a batch stop before grading anyone, with exit 3
    and the fix, rather than give every student an error on the checks of their tests?"""
    venv = tmp_path / "bare"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    for folder in [venv, *venv.parents]:  # pytest's folders are 0700: a sandbox's uid must reach the venv
        if folder == Path("/tmp") or folder == Path("/"):
            break
        folder.chmod(folder.stat().st_mode | 0o055)
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "alice.py").write_text(BASE_ENGINE.read_text())
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", "batch", str(inputs), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, GRADER_SANDBOX_PYTHON=str(venv / "bin" / "python")),
    )
    assert run.returncode == 3 and "pytest" in run.stderr and "GRADER_SANDBOX_PYTHON" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and not list(out.glob("students/*/result.json"))


TRIED = r"""
import pickle, sys
from pathlib import Path
from grader import catalog
from grader.batch import tasks
from grader.sandbox import isolation

instructors = pickle.loads(Path(sys.argv[1]).read_bytes())
mine = isolation.require("batch")
tried, host = {
    "no trial given": (None, tasks.host_id()),
    "another isolation's": (instructors, tasks.host_id()),
    "another machine's": (mine, "elsewhere/0"),
    "this machine's, isolating the same way": (mine, tasks.host_id()),
}[sys.argv[3]]
task = tasks.Task(
    "alice", "micrograd_mine.py", Path(sys.argv[2]).read_bytes(), None, None, catalog.load("micrograd"), b"k",
    tasks.fingerprint(), host=host, tried=tried,
)
print(tasks.grade_task(task).unfit)
"""


@needs_bwrap
def test_a_batchs_one_trial_guards_its_grading_processes_and_only_where_it_holds(tmp_path):
    """A batch tries one sandbox before anyone is graded, and its grading processes take that trial as their own
    (Task.tried). With a sandbox Python that cannot start in a sandbox, does a grading process (a fresh one for each
    task here) still try one itself, and refuse to grade, wherever the trial it is given does not hold for it (none
    given, another isolation's, another machine's)? And where it does hold (this machine, the same isolation), does
    the grading meet the broken sandbox itself and still refuse (the batch stops), rather than grade the student as
    a crash?"""
    given = tmp_path / "tried.pickle"
    given.write_bytes(pickle.dumps(isolation.require("batch")))
    submission = tmp_path / "micrograd_mine.py"
    submission.write_text(BASE_ENGINE.read_text())
    env = dict(os.environ, GRADER_SANDBOX_PYTHON=str(wrapper_python(tmp_path / "shim")))

    def unfit(case: str) -> str:
        run = subprocess.run(
            [sys.executable, "-c", TRIED, str(given), str(submission), case],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert run.returncode == 0, run.stderr
        return run.stdout

    for case in ("no trial given", "another isolation's", "another machine's"):
        said = unfit(case)
        assert "student code cannot run here: a sandbox did not start" in said, (case, said)
    said = unfit("this machine's, isolating the same way")
    assert "cannot start a sandbox" in said and "student code cannot run here" not in said, said
