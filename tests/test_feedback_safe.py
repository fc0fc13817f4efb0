"""Does anything the grader writes for a person carry a path of the grading machine or pytest's insides
(issue 19, "Leaks")? Every output of `grader check` (terminal, --json, --html), of `grader batch`
(gradebook, summary, class page, each student's files) and of the exported Gradescope autograder
(results.json) is searched for the virtual environment, the Python install, the grader's checkout and
the sandbox's folders, on submissions whose tests do not even load: a syntax error, `import torch`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, SANDBOX_PYTHON, ZOO

ENGINE = (ZOO / "correct" / "kahn.py").read_text()
SYNTAX = "from micrograd_mine import Value\n\n\ndef test_add(:\n    assert Value(1.0).data == 1.0\n"
TORCH = (
    "import torch\nfrom micrograd_mine import Value\n\n\ndef test_grad():\n    a = Value(2.0)\n"
    "    (a * a).backward()\n    assert a.grad == torch.tensor(4.0).item()\n"
)


def grader(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env
    )


def machine_paths() -> list[str]:
    """What no feedback may carry: the venv, the Python install (as named and as resolved), the grader's own
    checkout, the sandbox's folders inside and outside, pytest's and importlib's frames."""
    found = {
        sys.prefix,
        sys.base_prefix,
        os.path.realpath(sys.prefix),
        os.path.realpath(sys.base_prefix),
        str(ROOT),
        os.path.realpath(ROOT),
        "/tmp/run",
        "/opt/grader",
        "/sandbox/",
        "grader-sandbox-",
        "grader-task-",
        "site-packages",
        "_pytest",
        "importlib",
        "/run/micrograd-grader",
        "private-grader",
        str(SANDBOX_PYTHON.parent.parent),
    }
    return sorted(p for p in found if p not in ("", "/"))


def leaks(text: str) -> list[str]:
    return [p for p in machine_paths() if p in text]


def outputs(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text(errors="replace")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in (".json", ".html", ".csv", ".txt")
    }


def quick_assignment(folder: Path) -> Path:
    """micrograd with a few engine checks (the leaks are in the tests' feedback, and the class page)."""
    text = (ROOT / "assignments" / "micrograd" / "assignment.toml").read_text()
    keep = ("forward ", "add ", "mul ", "student_tests", "wheat", "sabotage")
    lines = [line for line in text.splitlines() if "{ points" not in line or line.startswith(keep)]
    folder.mkdir()
    text = "\n".join(lines).replace("max_examples = 100", "max_examples = 10")
    text = text.replace(
        'required_symbols = ["Value"]', 'required_symbols = ["Value"]\nsabotages = ["add_half", "mul_own_data"]'
    )
    (folder / "assignment.toml").write_text(text)
    return folder


@pytest.fixture(scope="module")
def students(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("class") / "submissions"
    quick_assignment(root.parent / "quick")
    for name, tests in (("alice", SYNTAX), ("bob", TORCH)):
        (root / name).mkdir(parents=True)
        (root / name / "micrograd_mine.py").write_text(ENGINE)
        (root / name / "test_micrograd.py").write_text(tests)
    return root


@pytest.mark.parametrize("who", ["alice", "bob"])
def test_check_says_what_is_wrong_with_the_tests_and_names_no_machine_path(students, tmp_path, who, run):
    """A test file with a syntax error, or one that imports torch: does `grader check` say so in a few lines
    (the file, the line, the error; for torch, that it is not there and how to test without it), in the
    terminal, the JSON and the HTML, with no path of the machine and no frame of pytest, with bubblewrap and
    without (where the sandbox's folders are the host's)?"""
    if who == "bob" and run.mode == "no-bwrap":
        pytest.skip("torch's stand-in is the same in both modes; the paths are alice's test")
    folder = students / who
    done, _ = run(
        "check",
        "--json",
        str(tmp_path / "r.json"),
        "--html",
        str(tmp_path / "r.html"),
        "--assignment",
        str(students.parent / "quick"),
        cwd=folder,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    texts = {"terminal": done.stdout + done.stderr, **outputs(tmp_path)}
    assert not {name: leaks(text) for name, text in texts.items() if leaks(text)}
    own = next(c for c in json.loads((tmp_path / "r.json").read_text())["checks"] if c["id"] == "student_tests")
    assert own["status"] in ("error", "failed") and len(own["feedback"].splitlines()) <= 8, own["feedback"]
    if who == "alice":
        assert "test_micrograd.py, line 4" in own["feedback"] and "SyntaxError" in own["feedback"], own["feedback"]
    else:  # torch is a stand-in wherever tests are graded, even where it is installed (as here)
        assert "torch is not available where your tests are graded" in own["feedback"], own["feedback"]
        assert "numerical_grad" in own["feedback"] or "central difference" in own["feedback"], own["feedback"]


def test_batch_outputs_name_no_machine_path(students, tmp_path):
    """Does every file `grader batch` writes (gradebook, summary, class page, each student's result, report and
    results.json) leave out the machine's paths and pytest's frames?"""
    done = grader(
        "batch",
        str(students),
        "--out",
        str(tmp_path / "out"),
        "--assignment",
        str(students.parent / "quick"),
        cwd=tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    texts = {"stdout": done.stdout + done.stderr, **outputs(tmp_path / "out")}
    assert len(texts) > 6, sorted(texts)
    assert not {name: leaks(text) for name, text in texts.items() if leaks(text)}


def gradescope(assignment: Path, submission: Path, tmp_path: Path) -> str:
    """results.json of the exported autograder run as Gradescope runs it, on a copy of a student's folder."""
    done = grader(
        "export", "gradescope", "--out", str(tmp_path / "autograder.zip"), "--assignment", str(assignment), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        zf.extractall(root)
    (root / "submission").mkdir()
    for name in ("micrograd_mine.py", "test_micrograd.py"):
        (root / "submission" / name).write_text((submission / name).read_text())
    env = dict(
        os.environ,
        AUTOGRADER_ROOT=str(root),
        GRADER_PYTHON=sys.executable,
        PYTHONPATH=str(root / "source"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    graded = subprocess.run(
        ["bash", str(root / "run_autograder")], capture_output=True, text=True, env=env, timeout=600
    )
    assert graded.returncode == 0, graded.stderr[-3000:]
    return (root / "results" / "results.json").read_text()


def test_gradescope_results_name_no_machine_path(students, tmp_path):
    """Does the exported autograder's results.json, run as Gradescope runs it, leave out the machine's paths
    (the autograder's own folder included) and pytest's frames?"""
    root = tmp_path / "autograder"
    raw = gradescope(students.parent / "quick", students / "bob", tmp_path)
    assert not leaks(raw) and str(root) not in raw, raw[:3000]
    own = next(t for t in json.loads(raw)["tests"] if t["name"].startswith("student_tests"))
    assert "torch is not available where your tests are graded" in own["output"], own["output"]


def test_grader_check_and_gradescope_give_the_same_files_the_same_score(students, tmp_path):
    """An engine with a bug and tests that catch some sabotages, some of which fail on the student's own engine
    (so mutants of it cannot count): do a student's `grader check` (the user's own secret) and the exported
    autograder (the export's secret) give the same score and count the same sabotages? They gave 53.3
    ('7 of 8') and 52.8 ('5 of 6')."""
    folder = tmp_path / "carol"
    folder.mkdir()
    (folder / "micrograd_mine.py").write_text((ZOO / "buggy" / "mul_own_data.py").read_text())
    (folder / "test_micrograd.py").write_text((ROOT / "tests" / "fixtures" / "suites" / "weak.py").read_text())
    quick = tmp_path / "quick"
    text = (students.parent / "quick" / "assignment.toml").read_text()
    quick.mkdir()
    (quick / "assignment.toml").write_text(
        text.replace(
            'sabotages = ["add_half", "mul_own_data"]',
            "sabotages = "
            '["add_half", "sub_as_add", "pow_off_by_one", "relu_negative_grad", '
            '"tanh_grad_from_input", "radd_missing"]',
        )
    )
    done = grader(
        "check",
        "--json",
        str(tmp_path / "local.json"),
        "--assignment",
        str(quick),
        cwd=folder,
        env=dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config")),
    )
    assert done.returncode == 1, done.stderr[-2000:]
    local = json.loads((tmp_path / "local.json").read_text())
    remote = json.loads(gradescope(quick, folder, tmp_path))
    # the same score, as every page writes it (two decimals: Gradescope's is the final score, as the gradebook's)
    assert round(local["score"], 2) == remote["score"], (local["score"], remote["score"])
    said = next(c["feedback"] for c in local["checks"] if c["id"] == "sabotage").splitlines()[0]
    assert said in next(t["output"] for t in remote["tests"] if t["name"].startswith("sabotage:")), said
