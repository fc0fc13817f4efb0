"""Does `grader batch` grade a whole class, notebooks and files, zips and LMS names, in
parallel, and never lose or duplicate a student, even when interrupted?"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import BAD, CORRECT_ENGINES, HERE, ZOO, csv_rows, ctrl_c_reaches_it
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

SUITES = HERE / "fixtures" / "suites"
CORRECT = CORRECT_ENGINES
BUGGY = sorted((ZOO / "buggy").glob("*.py"))

# A smaller search, short limits and three sabotages, not twelve (each is one more run of a student's tests;
# test_sabotage.py proves the sabotages): the point here is the batch, not each check.
QUICK_SPEC = (HERE.parent / "assignments" / "micrograd" / "assignment.toml").read_text().replace(
    "max_examples = 100", "max_examples = 15"
).replace("request_s = 5.0 ", "request_s = 3.0 ").replace("tests_s = 30.0 ", "tests_s = 10.0 ").replace(
    'required_symbols = ["Value"]\n',
    'required_symbols = ["Value"]\nsabotages = ["add_half", "mul_own_data", "assign_not_accumulate"]\n',
) + "\n"
assert "sabotages = " in QUICK_SPEC


def notebook(*cells: str) -> nbformat.NotebookNode:
    return new_notebook(cells=[new_markdown_cell("# micrograd")] + [new_code_cell(c) for c in cells])


def write_notebook(path: Path, nb) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def make_class(root: Path) -> dict[str, str]:
    """A class of 33 submissions; the expected status of each student."""
    expected = {}
    engines = CORRECT + BUGGY
    for i, engine in enumerate(engines[:12]):  # plain .py files, some in Canvas's export names
        name = f"student{i:02d}"
        filename = f"{name}_{1000 + i}_{2000 + i}_micrograd_mine.py" if i % 3 == 0 else f"{name}.py"
        (root / "files").mkdir(exist_ok=True)
        (root / "files" / filename).write_text(engine.read_text())
        expected[name] = "graded"
    (root / "files" / "latecomer_late_1100_2100_micrograd_mine.py").write_text(CORRECT[0].read_text())
    expected["latecomer"] = "graded"
    for i, engine in enumerate(engines[12:18]):  # one folder per student, with their tests
        folder = root / "folders" / f"team{i}"
        folder.mkdir(parents=True)
        (folder / "micrograd_mine.py").write_text(engine.read_text())
        (folder / "test_micrograd.py").write_text((SUITES / ("good.py" if i % 2 else "weak.py")).read_text())
        expected[f"team{i}"] = "graded"
    nbs = root / "notebooks"
    good = CORRECT[1].read_text()
    test_cell = (SUITES / "weak.py").read_text().replace("from micrograd_mine import Value\n", "")
    for i in range(4):
        write_notebook(nbs / f"nb{i}.ipynb", notebook(good, test_cell, "print(Value(2.0) * Value(3.0))"))
        expected[f"nb{i}"] = "graded"
    write_notebook(nbs / "looper.ipynb", notebook(good, "while True:\n    pass", "x = Value(1.0)"))
    expected["looper"] = "graded"
    write_notebook(nbs / "shuffled.ipynb", notebook("a = Value(2.0)  # used before its class is defined", good))
    expected["shuffled"] = "graded"
    write_notebook(nbs / "killer.ipynb", notebook(good, "import os\nos._exit(1)", "y = 1"))
    expected["killer"] = "graded"
    write_notebook(nbs / "asker.ipynb", notebook(good, "name = input('your name? ')"))
    expected["asker"] = "graded"
    write_notebook(nbs / "magic.ipynb", notebook("%load_ext autoreload\n!echo hello", good))
    expected["magic"] = "graded"
    v3 = nbformat.convert(notebook(good), 3)
    (nbs / "oldformat.ipynb").write_text(nbformat.writes(v3, version=3))
    expected["oldformat"] = "graded"
    text = nbformat.writes(notebook(good))
    (nbs / "truncated.ipynb").write_text(text[: len(text) // 2])
    expected["truncated"] = "error"
    (nbs / "notanotebook.ipynb").write_text("print('hello')\n")
    expected["notanotebook"] = "error"
    (nbs / "broken.py").write_text((BAD / "syntax_error.py").read_text())
    expected["broken"] = "error"
    with zipfile.ZipFile(root / "late_batch.zip", "w") as zf:  # nested folders inside a zip
        for i in range(3):
            zf.writestr(f"section-a/group{i}/zipped{i}/micrograd_mine.py", CORRECT[i].read_text())
            expected[f"zipped{i}"] = "graded"
    # the same student twice with no LMS ids to tell which is newer: both are graded
    older, newer = root / "dupes" / "twice.py", root / "dupes" / "again" / "twice.py"
    newer.parent.mkdir(parents=True)
    older.write_text(BUGGY[0].read_text())
    newer.write_text(CORRECT[0].read_text())
    os.utime(older, (time.time() - 3600, time.time() - 3600))
    expected["twice"] = expected["twice-2"] = "graded"
    # an older Canvas submission dated in the future: the LMS's submission id decides, not the date
    stale = root / "files" / "student03_1003_1999_micrograd_mine.py"
    stale.write_text((BAD / "syntax_error.py").read_text())
    os.utime(stale, (4102444800, 4102444800))  # 2100-01-01
    return expected


def batch(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", "batch", *args], capture_output=True, text=True, timeout=900, **kwargs
    )


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    (root / "quick").mkdir()
    (root / "quick" / "assignment.toml").write_text(
        QUICK_SPEC.replace("[search]", "[search]", 1).replace("tests_s = 10.0", "tests_s = 10.0\ncell_s = 4.0")
    )
    inputs = root / "inputs"
    inputs.mkdir()
    expected = make_class(inputs)
    out = root / "out"
    run = batch(
        str(inputs / "files"),
        str(inputs / "folders"),
        str(inputs / "notebooks"),
        str(inputs / "late_batch.zip"),
        str(inputs / "dupes"),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--assignment",
        str(root / "quick"),
    )
    return root, expected, out, run


def test_every_student_gets_exactly_one_result(graded_class):
    """Does the gradebook hold exactly one row per student, with the status each deserves?"""
    _, expected, out, run = graded_class
    assert run.returncode == 0, run.stderr[-3000:]
    assert len(expected) >= 30
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["student"] for r in rows) == sorted(expected)
    found = {r["student"]: r["status"] for r in rows}
    wrong = {
        s: (found[s], json.loads((out / "students" / s / "result.json").read_text())["error"])
        for s in expected
        if found.get(s) != expected[s]
    }
    assert found == expected, wrong
    for student in expected:
        result = json.loads((out / "students" / student / "result.json").read_text())
        assert result["schema"] == 1 and (out / "students" / student / "report.html").is_file()


def test_lms_names_late_and_duplicates(graded_class):
    """Are Canvas names read, late work marked, a student's older Canvas submission dropped with a note
    (whatever its date), and two submissions with no LMS ids both graded, with a note?"""
    _, _, out, run = graded_class
    rows = {r["student"]: r for r in csv_rows(out / "grades.csv")}
    assert rows["latecomer"]["late"] == "yes" and rows["student00"]["late"] == ""
    kept = json.loads((out / "students" / "student03" / "result.json").read_text())
    assert kept["submission"] == "student03_1003_2003_micrograd_mine.py"
    assert 'student03_1003_1999_micrograd_mine.py: an older submission of "student03" (LMS id 1999)' in run.stderr
    assert "twice: 2 submissions and no LMS submission ids" in run.stderr
    scores = sorted(float(rows[s]["score"]) for s in ("twice", "twice-2"))
    assert scores[1] > 60 and scores[0] < scores[1]  # the correct file and the buggy one, each graded


def test_notebook_problems_are_reported(graded_class):
    """Are a looping demo cell, input(), a dead kernel and out-of-order cells reported per cell,
    while what the notebook defines is still graded?"""
    _, _, out, _ = graded_class
    looper = json.loads((out / "students" / "looper" / "result.json").read_text())
    assert any("interrupted" in p for p in looper["notebook"]["problems"]), looper["notebook"]
    assert looper["score"] > 0
    asker = json.loads((out / "students" / "asker" / "result.json").read_text())
    assert any("StdinNotImplementedError" in p for p in asker["notebook"]["problems"]), asker["notebook"]
    killer = json.loads((out / "students" / "killer" / "result.json").read_text())
    assert killer["notebook"]["died"] and killer["status"] == "graded", killer["notebook"]
    assert "code cell 2: the kernel died while running it" in killer["notebook"]["problems"]  # markdown first
    shuffled = json.loads((out / "students" / "shuffled" / "result.json").read_text())
    assert any(p.startswith("code cell 1: NameError") for p in shuffled["notebook"]["problems"]), shuffled["notebook"]
    truncated = json.loads((out / "students" / "truncated" / "result.json").read_text())
    assert truncated["error"]["kind"] == "unreadable" and "not valid JSON" in truncated["error"]["message"]


def test_notebook_tests_are_its_suite(graded_class):
    """Are a notebook's test_* functions run as its test suite?"""
    _, _, out, _ = graded_class
    nb = json.loads((out / "students" / "nb0" / "result.json").read_text())
    student_tests = next(c for c in nb["checks"] if c["id"] == "student_tests")
    assert student_tests["status"] == "passed" and len(student_tests["artifacts"]["tests"]) == 3


def test_gradescope_results(graded_class):
    """Does each student's gradescope.json follow Gradescope's format?"""
    _, _, out, _ = graded_class
    data = json.loads((out / "students" / "team1" / "gradescope.json").read_text())
    assert set(data) >= {"score", "execution_time", "tests"}
    for test in data["tests"]:
        advice = test["name"].endswith("(advisory, no points)")  # advice has no status: neither passed nor failed
        assert set(test) == {"name", "score", "max_score", "output", "visibility"} | (set() if advice else {"status"})
        assert advice or test["status"] in ("passed", "failed")
        assert test["visibility"] in ("visible", "hidden")


def test_rerun_skips_unchanged_and_force_regrades_one(graded_class):
    """Does a rerun skip every unchanged submission, and regrade one whose file changed?"""
    root, expected, out, _ = graded_class
    inputs = root / "inputs"
    (inputs / "files" / "student01.py").write_text(BUGGY[1].read_text())
    run = batch(
        str(inputs / "files"),
        str(inputs / "folders"),
        str(inputs / "notebooks"),
        str(inputs / "late_batch.zip"),
        str(inputs / "dupes"),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--assignment",
        str(root / "quick"),
    )
    assert run.returncode == 0
    assert f"{len(expected)} submissions: " in run.stdout
    assert f"({len(expected) - 1} unchanged since the last run)" in run.stdout


def test_interrupted_batch_resumes_without_loss_or_duplicates(tmp_path):
    """Does Ctrl-C keep every finished result, and the rerun finish the rest with one row each?"""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i, engine in enumerate((CORRECT + BUGGY)[:5]):  # Ctrl-C once two are saved: three left to the rerun
        (inputs / f"s{i}.py").write_text(engine.read_text())
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "assignment.toml").write_text(QUICK_SPEC)
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
        str(tmp_path / "quick"),
    ]
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=ctrl_c_reaches_it,
    )
    deadline = time.monotonic() + 120
    while len(list(out.glob("students/*/result.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    done = len(list(out.glob("students/*/key.txt")))  # written last: a student is done once it has a key
    assert proc.returncode == 130 and "interrupted" in err and 1 <= done < 5
    for path in out.glob("students/*/result.json"):
        json.loads(path.read_text())  # every saved result is whole
    rerun = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0
    assert f"({done} unchanged since the last run" in rerun.stdout
    rows = csv_rows(out / "grades.csv")
    assert sorted(r["student"] for r in rows) == [f"s{i}" for i in range(5)]


def test_on_a_dask_cluster(tmp_path):
    """Does --scheduler grade the same way on a real Dask LocalCluster?"""
    distributed = pytest.importorskip("dask.distributed")
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "good.py").write_text(CORRECT[0].read_text())
    (inputs / "bad.py").write_text((BAD / "syntax_error.py").read_text())
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "assignment.toml").write_text(QUICK_SPEC)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        run = batch(
            str(inputs),
            "--out",
            str(tmp_path / "out"),
            "--scheduler",
            cluster.scheduler_address,
            "--assignment",
            str(tmp_path / "quick"),
        )
    assert run.returncode == 0, run.stderr[-2000:]
    rows = {r["student"]: r for r in csv_rows(tmp_path / "out" / "grades.csv")}
    assert rows["bad"]["status"] == "error" and rows["good"]["status"] == "graded"
    assert float(rows["good"]["score"]) > 60


def test_a_grading_process_that_dies_costs_one_student_and_a_new_secret_regrades_all(tmp_path):
    """When a grading process is killed mid-submission, does that one student get an error result that a
    rerun grades again, and everyone else their grade? And does a new engine secret regrade everyone?"""
    psutil = pytest.importorskip("psutil")
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i, engine in enumerate((CORRECT + BUGGY)[:3]):  # one saved, one killed mid-grading, one after it
        (inputs / f"s{i}.py").write_text(engine.read_text())
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "assignment.toml").write_text(QUICK_SPEC)
    out = tmp_path / "out"
    args = [str(inputs), "--out", str(out), "--jobs", "1", "--assignment", str(tmp_path / "quick")]
    env = {**os.environ, "GRADER_SECRET": "first"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "batch", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 120
    killed = None
    while killed is None and time.monotonic() < deadline:
        if list(out.glob("students/*/key.txt")):  # one student saved: the grading process is on the next
            for child in psutil.Process(proc.pid).children(recursive=True):
                try:
                    if "grader.batch.graders" in " ".join(child.cmdline()) and child.children():  # busy grading
                        child.kill()
                        killed = child.pid
                except psutil.Error:  # a sandbox's process that just ended
                    pass
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=300)
    assert killed and proc.returncode == 0, stderr[-3000:]
    rows = {r["student"]: r for r in csv_rows(out / "grades.csv")}
    assert sorted(rows) == ["s0", "s1", "s2"]
    errors = [s for s, r in rows.items() if r["status"] == "error"]
    assert len(errors) == 1, rows
    said = json.loads((out / "students" / errors[0] / "result.json").read_text())["error"]["message"]
    assert "grading process" in said and "again" in said
    assert not (out / "students" / errors[0] / "key.txt").exists()
    rerun = batch(*args, env=env)
    assert rerun.returncode == 0 and "0 could not be graded (2 unchanged since the last run)" in rerun.stdout
    new_secret = batch(*args, env={**os.environ, "GRADER_SECRET": "second"})
    assert new_secret.returncode == 0 and "(0 unchanged since the last run" in new_secret.stdout


def test_a_batch_refuses_to_run_student_code_unisolated_unless_trusted(tmp_path):
    """Without bubblewrap, and with the grader's files readable by any uid (this checkout), does a batch
    refuse to grade anyone (exit 3, saying how to fix it), and grade only when told the code is trusted?"""
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "alice.py").write_text(CORRECT[0].read_text())
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "assignment.toml").write_text(QUICK_SPEC)
    env = {**os.environ, "GRADER_NO_BWRAP": "1", "GRADER_SECRET": "s"}
    args = [str(inputs), "--out", str(tmp_path / "out"), "--assignment", str(tmp_path / "quick")]
    refused = batch(*args, env=env)
    assert refused.returncode == 3, refused.stderr[-2000:]
    assert "cannot be isolated" in refused.stderr and "--trusted-code" in refused.stderr
    assert not (tmp_path / "out" / "students").exists()
    trusted = batch(*args, "--trusted-code", env=env)
    assert trusted.returncode == 0, trusted.stderr[-2000:]
    row = csv_rows(tmp_path / "out" / "grades.csv")[0]
    assert row["student"] == "alice" and float(row["score"]) > 60


def test_a_progress_line_writes_points_as_the_gradebook_does():
    """Issue 40, item 10: a partial score is `72.67/100` in the batch's progress line, as in grades.csv, never
    `72.6666/100`; the starter kit unchanged says so; the progress bar's words count each kind once."""
    from grader.batch.execute import progress_line, standing
    from grader.batch.outputs import KIT_FLAG, Row, flags_for
    from grader.files import template_files
    from grader.result import Result, SubmissionError

    def row(student: str, score: float, flags: list[str], error: bool = False) -> Row:
        failure = SubmissionError("syntax_error", "x") if error else None
        result = Result(
            f"{student}.py", None, "micrograd", "0", "error" if error else "graded", failure, score, 100.0, 4.12, ()
        )
        return Row(student, False, result, False, f"{student}.py", f"students/{student}", flags)

    partial = row("doejohn", 72 + 2 / 3, [])
    assert progress_line(partial, 12, 18) == "[12/18] doejohn 72.67/100 (4.1 s)"
    kit = row("kimkit", 0.0, flags_for(template_files()["micrograd_mine.py"]))
    assert (
        kit.flags == [KIT_FLAG] and progress_line(kit, 2, 18) == "[ 2/18] kimkit 0/100, starter kit unchanged (4.1 s)"
    )
    rows = [partial, kit, row("ada", 100.0, []), row("bob", 0.0, [], error=True)]
    assert standing(rows) == "1 at full marks, 2 below, 1 could not be graded"
