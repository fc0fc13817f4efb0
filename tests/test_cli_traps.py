"""The command line's small traps (issue 21, item 7): each ends in one line and the right exit code,
never a traceback, a file named `-`, or a failing grade reported as exit 0.

Every grading here uses a three-check assignment with a small search (a second or two each): the
point is the command line, not the checks."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import BUGGY_ENGINES, CORRECT_ENGINES, HERE, REFERENCE_SOURCE, csv_rows, ctrl_c_reaches_it
from nbformat.v4 import new_code_cell, new_notebook

BUGGY = next(p for p in BUGGY_ENGINES if p.stem == "assign_not_accumulate")
MICROGRAD = (HERE.parent / "assignments" / "micrograd" / "assignment.toml").read_text()
TINY_SPEC = (
    MICROGRAD.split("[checks]")[0].replace("max_examples = 100", "max_examples = 10")
    + "[checks]\nforward = { points = 6 }\nadd = { points = 6 }\naccumulate = { points = 7 }\n"
    + "\n[training]"
    + MICROGRAD.split("\n[training]")[1]
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("tiny")
    (folder / "assignment.toml").write_text(TINY_SPEC)
    return str(folder)


def grader(*args: str, cwd: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=300, **kwargs
    )


def one_line(run: subprocess.CompletedProcess) -> str:
    """stderr, which must be one line and no traceback."""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, words",
    [
        (["check", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["batch", "in"], "the following arguments are required: --out"),
        (["frobnicate"], "invalid choice"),
        (["batch", "in", "--out", "out", "--jobs", "0"], "--jobs"),
        (["batch", "in", "--out", "out", "--jobs", "-1"], "--jobs"),
        (["batch", "in", "--out", "README.md"], "README.md is a file"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, words, tmp_path):
    """Does each usage error (argparse's own, --jobs 0 or -1, --out naming an existing file) end with exit 2
    and one line on stderr, saying what was wrong, with no usage block and no traceback?"""
    (tmp_path / "in").mkdir()
    (tmp_path / "README.md").write_text("# notes\n")
    run = grader(*args, cwd=tmp_path)
    assert run.returncode == 2 and words in one_line(run)
    assert (tmp_path / "README.md").read_text() == "# notes\n" and not (tmp_path / "out").exists()


@pytest.mark.parametrize("make", ["empty folder", "fake zip", "only notes"])
def test_a_batch_with_no_submissions_says_so_and_fails(make, tmp_path):
    """Does a batch over an empty folder, a zip that is not one, or a folder of .txt files say 'no
    submissions found under X' and exit non-zero, rather than 'graded 0 submissions' and 0?"""
    if make == "empty folder":
        target = tmp_path / "emptydir"
        target.mkdir()
    elif make == "fake zip":
        target = tmp_path / "fake.zip"
        target.write_text("not a zip")
    else:
        target = tmp_path / "notes"
        target.mkdir()
        (target / "notes.txt").write_text("hello")
    run = grader("batch", str(target), "--out", str(tmp_path / "out"))
    assert run.returncode != 0 and f"no submissions found under {target}" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "out").exists()
    if make == "empty folder":
        one_line(run)


def test_only_py_and_ipynb_are_graded(tmp_path):
    """Is `grader check notes.txt` refused in one line naming the kinds it grades, instead of being
    graded as Python?"""
    (tmp_path / "notes.txt").write_text(REFERENCE_SOURCE)
    run = grader("check", "notes.txt", cwd=tmp_path)
    line = one_line(run)
    assert run.returncode == 2 and "notes.txt" in line and ".py" in line and ".ipynb" in line
    assert not (tmp_path / "reports").exists()


def test_check_a_folder_grades_the_engine_in_it(tmp_path, tiny):
    """Does `grader check kit/` grade kit/micrograd_mine.py, and `grader check nb/` the one notebook there;
    and is a folder holding neither refused in one line?"""
    kit = tmp_path / "kit"
    kit.mkdir()
    shutil.copy(BUGGY, kit / "micrograd_mine.py")
    run = grader("check", "kit", "--assignment", tiny, "--json", "kit.json", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert json.loads((tmp_path / "kit.json").read_text())["submission"] == "micrograd_mine.py"
    assert "FAIL  accumulate" in run.stdout
    nb = tmp_path / "nb"
    nb.mkdir()
    nbformat.write(new_notebook(cells=[new_code_cell(CORRECT_ENGINES[0].read_text())]), str(nb / "lesson.ipynb"))
    run = grader("check", "nb", "--assignment", tiny, "--json", "nb.json", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads((tmp_path / "nb.json").read_text())["submission"] == "lesson.ipynb"
    (tmp_path / "none").mkdir()
    run = grader("check", "none", cwd=tmp_path)
    assert run.returncode == 2 and "micrograd_mine.py" in one_line(run)


def test_json_dash_writes_the_result_to_stdout(tmp_path, tiny):
    """Does `--json -` put the result JSON (and only it) on stdout, with no file named '-'?"""
    shutil.copy(BUGGY, tmp_path / "micrograd_mine.py")
    run = grader("check", "--json", "-", "--assignment", tiny, cwd=tmp_path)
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["status"] == "graded" and result["score"] < result["max_score"]
    assert not (tmp_path / "-").exists() and "FAIL  accumulate" in run.stderr


def test_a_closed_pipe_keeps_a_failing_grade_failing(tmp_path, tiny):
    """`grader check FILE | head -3` with head gone before the table is printed: does the command still
    exit 1 for a failing engine (not 0), and still write the report?"""
    shutil.copy(BUGGY, tmp_path / "micrograd_mine.py")
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "check", "--assignment", tiny],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone before the first line
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert b"Traceback" not in err and (tmp_path / "reports" / "micrograd_mine.html").exists()


def _interrupt(args: list[str], out: Path, since: float) -> tuple[int, str]:
    """Run a batch and send it Ctrl-C once a student has been graded (a key written after since); its exit
    code and stderr."""
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=ctrl_c_reaches_it,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if any(k.stat().st_mtime > since for k in out.glob("students/*/key.txt")):
            break
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def _finish(err: str) -> list[str]:
    """The command the interrupted batch says finishes it, as arguments to run."""
    line = next(line for line in err.splitlines() if "grader batch" in line)
    command = shlex.split(line[line.index("grader batch") :].split("`")[0])
    return [sys.executable, "-m", "grader.cli", *command[1:]]


def test_an_interrupted_batch_writes_an_incomplete_gradebook_and_the_command_that_finishes_it(tmp_path, tiny):
    """Ctrl-C mid-batch: is a gradebook written for those graded, marked incomplete (grades.incomplete.csv,
    summary.json's complete false), with the exact command that finishes it, never with --force (an LMS
    export of it refused, naming that command); and after
    an interrupted --force run, does that command regrade only the students the --force run had not
    reached, and write the whole gradebook (grades.csv, every student once)?"""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i, engine in enumerate((CORRECT_ENGINES[0], BUGGY, CORRECT_ENGINES[1])):
        (inputs / f"s{i}.py").write_text(engine.read_text())
    out = tmp_path / "out"
    args = [
        sys.executable,
        "-m",
        "grader.cli",
        "batch",
        str(inputs),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--assignment",
        tiny,
    ]
    code, err = _interrupt(args, out, 0.0)
    assert code == 130, err
    done = sorted(p.parent.name for p in out.glob("students/*/key.txt"))
    rows = sorted(r["student"] for r in csv_rows(out / "grades.incomplete.csv"))
    assert set(done) <= set(rows) and 1 <= len(rows) < 3 and not (out / "grades.csv").exists()  # a key comes last
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["graded"] == len(rows) and summary["found"] == 3
    assert "incomplete" in (out / "index.html").read_text().lower()
    assert _finish(err) == args  # the same command, as typed
    export = grader("export", "canvas", "--from", str(out), "--out", str(tmp_path / "canvas.csv"))
    assert (
        export.returncode == 2 and "interrupted" in export.stderr and shlex.join(["grader", *args[3:]]) in export.stderr
    )  # an LMS import of half a class would give the rest 0

    started = time.time()
    time.sleep(0.05)
    code, err = _interrupt([*args, "--force"], out, started)
    regraded = [p.parent.name for p in out.glob("students/*/key.txt") if p.stat().st_mtime > started]
    assert code == 130 and len(regraded) < 3, err
    finish = _finish(err)
    assert "--force" not in finish
    rerun = subprocess.run(finish, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0 and f"({len(regraded)} unchanged since the last run" in rerun.stdout, rerun.stderr
    rows = csv_rows(out / "grades.csv")
    assert sorted(r["student"] for r in rows) == [f"s{i}" for i in range(3)]
    assert not (out / "grades.incomplete.csv").exists()
    assert json.loads((out / "summary.json").read_text())["complete"] is True


def test_an_output_that_is_a_device_or_pipe_is_refused_not_replaced(tmp_path, tiny):
    """`--json /dev/null` as root once renamed a regular file over /dev/null (the atomic write replaces what
    it writes to), and every sandbox on the machine stopped starting. Is an output that is not a regular file
    (here a named pipe, which takes the same path without risking the machine's /dev/null) refused with exit 2
    before anything is graded, and left as it was? And is the same refused by the writer itself?"""
    from grader import fileio
    from grader.errors import UsageError

    shutil.copy(CORRECT_ENGINES[0], tmp_path / "micrograd_mine.py")
    pipe = tmp_path / "out.json"
    os.mkfifo(pipe)
    run = grader("check", str(tmp_path / "micrograd_mine.py"), "--assignment", tiny, "--json", str(pipe))
    assert run.returncode == 2 and "not a regular file" in one_line(run), run.stderr
    assert pipe.is_fifo() and not (tmp_path / "reports").exists()
    with pytest.raises(UsageError, match="not a regular file"):
        fileio.atomic_write(pipe, "{}")
    assert pipe.is_fifo()
