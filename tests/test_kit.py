"""Do the starter kit, hidden checks and the Gradescope export work as students and instructors expect?"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import HERE, ZOO

from grader import catalog, spec
from grader.commands.template import FILES
from grader.grading import grade

SUITES = HERE / "fixtures" / "suites"


def grader(*args: str, cwd: Path | None = None, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env
    )


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("kit") / "mine"
    run = grader("template", str(folder))
    assert run.returncode == 0, run.stderr
    return folder


def test_template_copies_the_kit_and_never_overwrites(kit):
    """Does `grader template DIR` copy every file of the kit, and refuse to overwrite a student's work?"""
    assert sorted(p.name for p in kit.iterdir()) == sorted(FILES)
    again = grader("template", str(kit))
    assert again.returncode == 2 and "not overwriting" in again.stderr


@pytest.mark.parametrize("name", ["micrograd_mine.py", "micrograd.ipynb"])
def test_unfilled_kit_grades_to_zero_with_a_friendly_line_per_check(kit, name, micrograd):
    """Does the unfilled starter kit, file or notebook, grade cleanly to 0 with one friendly line per check?"""
    result = grade(kit / name, micrograd)
    assert result.status == "graded" and result.score == 0
    for check in result.checks:
        assert check.status in ("failed", "error", "skipped"), check
        assert "Traceback" not in check.feedback and 'File "' not in check.feedback, check.feedback
    add = next(c for c in result.checks if c.id == "add")
    assert add.feedback.startswith("Value.__add__ is not written yet")


def test_a_method_still_to_write_is_named_by_where_it_raised_not_by_its_words(tmp_path, micrograd):
    """The reports group the checks waiting for a method by the method the student's process says the
    NotImplementedError came out of, never by parsing its message: a kit whose __add__ says only "later" is still
    grouped under Value.__add__, and the message is the row's words, kept as written (JSON: not_written and
    not_written_in under artifacts, read back the same)."""
    from grader.feedback import not_written
    from grader.files import MODULE_FILE, template_files
    from grader.result import Result

    source = template_files()[MODULE_FILE].replace('"Value.__add__ is not written yet"', '"later"')
    assert 'NotImplementedError("later")' in source
    (tmp_path / MODULE_FILE).write_text(source)
    result = grade(tmp_path / MODULE_FILE, micrograd.without(("student_tests", "wheat", "sabotage")))
    add = next(c for c in result.checks if c.id == "add")
    assert add.not_written is not None and add.not_written.method == "Value.__add__", add
    assert add.not_written.message == "later" and add.feedback.startswith("later (needed for ")
    assert "add" in not_written(result)[0]["Value.__add__"]
    data = json.loads(result.to_json())
    artifacts = next(c for c in data["checks"] if c["id"] == "add")["artifacts"]
    assert (artifacts["not_written"], artifacts["not_written_in"]) == ("later", "Value.__add__")
    assert Result.from_dict(data) == result


def test_the_first_check_of_the_kit_is_short(tmp_path):
    """Is a student's first `grader check` of the unfilled kit short (into a pipe; on a terminal it fits 80x24:
    test_one_truth.py), saying where to start? Every method still to write is named once, not a card per check
    (it printed 135 lines); deep_graph's smallest case is its three-line loop, never the 10,000-node chain
    unrolled (it printed 10,130 lines)."""
    kit = tmp_path / "mine"
    assert grader("template", str(kit)).returncode == 0
    run = grader("check", "--public-only", "--json", "first.json", cwd=kit)
    assert run.returncode == 1, run.stderr
    assert len(run.stdout.splitlines()) < 24, run.stdout
    assert "Next: write Value.__add__ and Value.backward, which add needs" in run.stdout, run.stdout
    assert "  Value: __add__, __mul__, __pow__, tanh, relu, __neg__, __sub__" in run.stdout, run.stdout
    deep = next(c for c in json.loads((kit / "first.json").read_text())["checks"] if c["id"] == "deep_graph")
    assert deep["status"] == "error" and len(deep["counterexample"]["code"].splitlines()) <= 4, deep["counterexample"]


def test_the_kits_methods_still_to_write_are_read_from_the_code():
    """Every stub of the kit (a body that only raises NotImplementedError) is found, in the file's order, and the
    notebook's the same; a method written, or redefined later, is not; code too long to read gives nothing."""
    from grader import kit
    from grader.files import MODULE_FILE, NOTEBOOK_FILE, template_files

    files = template_files()
    found = kit.unwritten(files[MODULE_FILE])
    assert found[:2] == ("Value.__add__", "Value.__mul__") and len(found) == 15, found
    assert {"Value.backward", "Value.__rsub__", "Neuron.__call__", "Neuron.parameters", "numerical_grad"} <= set(found)
    assert kit.unwritten(files[NOTEBOOK_FILE], notebook=True) == found
    assert set(found) == {m for needs in kit.NEEDS.values() for m in needs}, found  # every stub is some check's need
    later = files[MODULE_FILE] + "\n\ndef numerical_grad(f, x, h=1e-6):\n    return 0.0\n"
    assert "numerical_grad" not in kit.unwritten(later)
    assert kit.unwritten("x = 1\n" * kit.PARSED_CHARS) == ()
    begin = kit.start({"forward": "Value.__mul__", "add": "Value.backward", "mul": "Value.__mul__"}, found[1:])
    assert begin is not None and (begin.next_methods, begin.next_check) == (("Value.backward",), "add"), begin


def test_public_only_leaves_hidden_checks_out_and_says_so(tmp_path, micrograd):
    """Does a student's --public-only run leave hidden checks out, saying they run when the instructor grades?"""
    folder = tmp_path / "hidden"
    folder.mkdir()
    text = (spec.assignments_root() / "micrograd" / "assignment.toml").read_text()
    (folder / "assignment.toml").write_text(
        text.replace("tanh           = { points = 6 }", 'tanh           = { points = 6, visibility = "hidden" }')
    )
    engine = tmp_path / "micrograd_mine.py"
    engine.write_text((ZOO / "buggy" / "tanh_grad_from_input.py").read_text())
    public = grader(
        "check", str(engine), "--assignment", str(folder), "--public-only", "--json", "public.json", cwd=tmp_path
    )
    assert "FAIL  tanh" not in public.stdout
    assert "1 hidden check(s) worth 6 points run only when your instructor grades" in public.stdout
    assert "tanh" not in [c["id"] for c in json.loads((tmp_path / "public.json").read_text())["checks"]]
    full = grader(
        "check", str(engine), "--assignment", str(folder), "--json", "full.json", "--html", "full.html", cwd=tmp_path
    )
    tanh = next(c for c in json.loads((tmp_path / "full.json").read_text())["checks"] if c["id"] == "tanh")
    assert tanh["status"] == "failed" and tanh["counterexample"] is None and "Hidden check" in tanh["feedback"]
    instructor = next(c for c in grade(engine, catalog.load(folder)).checks if c.id == "tanh")
    probe = instructor.counterexample.code
    assert probe not in full.stdout and probe not in (tmp_path / "full.html").read_text()


def test_gradescope_export_grades_a_fake_autograder_tree(tmp_path):
    """Does the exported autograder's run_autograder grade /autograder/submission into results.json?"""
    run = grader("export", "gradescope", "--out", str(tmp_path / "autograder.zip"))
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "autograder.zip").stat().st_mode & 0o077 == 0, "it holds the engines' secret: the owner's only"
    root = tmp_path / "autograder"
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        names = zf.namelist()
        zf.extractall(root / "source-zip")
    assert {
        "setup.sh",
        "run_autograder",
        "source/grader/cli.py",
        "source/assignments/micrograd/assignment.toml",
        "source/reference/engine.py",
        "source/pyproject.toml",
    } <= set(names)
    (root / "source").mkdir()
    os.replace(root / "source-zip" / "source", root / "source" / "tmp")
    for item in (root / "source" / "tmp").iterdir():
        os.replace(item, root / "source" / item.name)
    (root / "submission").mkdir()
    (root / "submission" / "micrograd_mine.py").write_text((ZOO / "buggy" / "add_half.py").read_text())
    (root / "submission" / "test_micrograd.py").write_text((SUITES / "good.py").read_text())
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), PYTHONPATH=str(root / "source"), GRADER_PYTHON=sys.executable)
    script = root / "source-zip" / "run_autograder"
    graded = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert graded.returncode == 0, graded.stderr
    data = json.loads((root / "results" / "results.json").read_text())
    assert set(data) >= {"score", "execution_time", "tests"} and 0 < data["score"] < 100
    assert all(set(t) == {"name", "score", "max_score", "status", "output", "visibility"} for t in data["tests"])
    add = next(t for t in data["tests"] if t["name"].startswith("add:"))
    assert add["status"] == "failed" and "Smallest case" in add["output"]
    # The bundle alone is a complete grader (here the development install would win the import, so hide it).
    probe = (
        "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
        f"sys.path.insert(0, {str(root / 'source')!r}); import grader.gradescope, grader.checks, reference; "
        "from grader import catalog; print(grader.__file__, len(catalog.load('micrograd').checks))"
    )
    which = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert which.stdout.startswith(str(root / "source")), which.stderr
