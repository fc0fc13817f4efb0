"""Does `grader check` behave as the contract says: table, JSON, exit codes, determinism?"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import BAD, BUGGY_ENGINES, HERE, REFERENCE_SOURCE

from grader.checks import REGISTRY

REFERENCE = HERE.parent / "reference" / "engine.py"


def grader(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def without_durations(data):
    """The result with every timing (duration_s of the result and checks, duration of each test) left out."""
    if isinstance(data, dict):
        return {k: without_durations(v) for k, v in data.items() if k not in ("duration_s", "duration")}
    if isinstance(data, list):
        return [without_durations(v) for v in data]
    return data


@pytest.fixture(scope="module")
def reference_runs(tmp_path_factory):
    """The reference engine, submitted as a student's file, graded twice."""
    folder = tmp_path_factory.mktemp("student")
    (folder / "micrograd_mine.py").write_text(REFERENCE_SOURCE)
    shutil.copy(HERE / "fixtures" / "suites" / "good.py", folder / "test_micrograd.py")
    runs = [grader("check", "micrograd_mine.py", "--json", f"run{i}.json", cwd=folder) for i in (1, 2)]
    return folder, runs


def test_reference_gets_full_marks_twice_with_identical_json(reference_runs):
    """Is a correct submission graded 100%, the same way on every run, and is no hypothesis database written?"""
    folder, runs = reference_runs
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    first, second = (json.loads((folder / f"run{i}.json").read_text()) for i in (1, 2))
    assert first["score"] == first["max_score"] == 100
    assert without_durations(first) == without_durations(second)
    assert not (folder / ".hypothesis").exists()


def test_result_json_follows_the_contract(reference_runs):
    """Does the result JSON carry every field of the contract, each check with a registered id?"""
    folder, _ = reference_runs
    result = json.loads((folder / "run1.json").read_text())
    assert set(result) == {
        "schema",
        "submission",
        "sha256",
        "assignment",
        "grader_version",
        "status",
        "error",
        "score",
        "max_score",
        "duration_s",
        "checks",
    }
    assert result["schema"] == 1 and result["status"] == "graded" and result["error"] is None
    assert len(result["sha256"]) == 64
    for check in result["checks"]:
        assert check["id"] in REGISTRY
        assert set(check) == {
            "id",
            "title",
            "status",
            "score",
            "max_score",
            "visibility",
            "feedback",
            "counterexample",
            "artifacts",
            "duration_s",
        }


def test_html_report_written_by_default(reference_runs):
    """Does grader check write reports/<submission>.html by default, and say where?"""
    folder, runs = reference_runs
    report = folder / "reports" / "micrograd_mine.html"
    assert report.is_file() and "Report: reports/micrograd_mine.html" in runs[0].stdout
    assert "100 / 100 points" in report.read_text()


def test_table_names_every_check(reference_runs):
    """Does the printed table show each check with its status and points?"""
    _, runs = reference_runs
    for check_id in ("forward", "accumulate", "topo_order", "numerical_grad"):
        assert check_id in runs[0].stdout
    assert "Score: 100 / 100" in runs[0].stdout


def test_failed_check_exits_1_and_shows_the_counterexample(tmp_path):
    """Does a buggy engine exit 1 and print code the student can paste?"""
    engine = next(p for p in BUGGY_ENGINES if p.stem == "assign_not_accumulate")
    run = grader("check", str(engine), "--json", str(tmp_path / "r.json"))
    assert run.returncode == 1
    assert "FAIL  accumulate" in run.stdout and "a + a" in run.stdout and "use += " in run.stdout.lower()
    check = next(c for c in json.loads((tmp_path / "r.json").read_text())["checks"] if c["id"] == "accumulate")
    assert check["counterexample"]["got"] == {"a.grad": 1.0}


def test_submission_error_exits_1_with_reason(tmp_path):
    """Is a submission that cannot be graded reported with its reason, exit code 1 and an error result?"""
    run = grader("check", str(BAD / "syntax_error.py"), "--json", str(tmp_path / "r.json"))
    assert run.returncode == 1 and "SyntaxError" in run.stdout and "line 6" in run.stdout  # in words, not a kind
    assert json.loads((tmp_path / "r.json").read_text())["error"]["kind"] == "syntax_error"


@pytest.mark.parametrize(
    "args, words",
    [
        (["check", "does_not_exist.py"], "does not exist"),
        (["check", "--assignment", "nope", str(REFERENCE)], "unknown assignment 'nope'"),
        (["check", "--frobnicate"], "unrecognized arguments"),
    ],
)
def test_usage_errors_exit_2(args, words, tmp_path):
    """Do a missing file, an unknown assignment and an unknown option exit 2 with a clear message?"""
    run = grader(*args, cwd=tmp_path)
    assert run.returncode == 2
    assert words in run.stderr


def test_the_gradescope_autograder_installs_what_the_grader_ran_its_tests_with(tmp_path):
    """Issue 40, item 11: the same autograder zip grades the same way next term. It carries constraints.txt, every
    package the grader needs pinned (`name==version`) to the version installed where it was exported (where its
    tests ran: pytest, hypothesis, IPython, nbclient, jinja2 and what they need), and every `pip install` of its
    setup.sh, the grader's and the student code's Python alike, installs under those pins."""
    from importlib import metadata

    from packaging.utils import canonicalize_name

    from grader.cli import main

    assert main(["export", "gradescope", "--out", str(tmp_path / "autograder.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        setup = zf.read("setup.sh").decode()
        pins = zf.read("source/constraints.txt").decode().splitlines()
    pinned = dict(line.split("==") for line in pins if line and not line.startswith("#"))
    for name in ("pytest", "hypothesis", "ipython", "ipykernel", "nbclient", "nbformat", "jinja2", "pluggy", "jedi"):
        assert pinned[name] == metadata.version(name), name
    assert all(canonicalize_name(name) == name and pinned[name] == metadata.version(name) for name in pinned)
    assert "micrograd-grader" not in pinned and "torch" not in pinned  # the grader itself, and a test-only package
    installs = [line for line in setup.splitlines() if "pip install" in line]
    assert len(installs) == 2 and all("-c /autograder/source/constraints.txt" in line for line in installs), installs
    assert ">=" not in setup


def test_each_command_s_help_says_what_it_does_with_examples():
    """Issue 40, item 10: `grader COMMAND --help`, as a terminal of 80 columns shows it, says what the command does
    (a paragraph wrapped to the width), names every argument with a description, and ends with examples of it,
    each a whole line."""
    from grader.cli import COMMANDS

    for name in COMMANDS:
        shown = subprocess.run(
            [sys.executable, "-m", "grader.cli", name, "--help"],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "80"},
            timeout=60,
        )
        assert shown.returncode == 0, shown.stderr
        usage, about, *rest = shown.stdout.split("\n\n")
        assert usage.startswith(f"usage: grader {name}") and len(about) > 60 and "positional" not in about, about
        assert all(len(line) <= 80 for line in about.splitlines()), about
        examples = shown.stdout.split("\nexamples:\n", 1)[1].splitlines()
        assert examples and all(line.startswith(f"  grader {name}") for line in examples), examples
        lines = "\n\n".join(rest).split("\nexamples:")[0].splitlines()
        for at, line in enumerate(lines):  # an argument's line: its name, then its words there or on the next line
            if line.startswith("  ") and not line.startswith("   ") and len(line.split()) == 1:
                assert at + 1 < len(lines) and lines[at + 1].startswith("    "), (name, line)
