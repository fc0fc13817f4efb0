"""One student's files never stop or stall the class in the grader's own process (issue 28, part A).

Each example of the issue is a hostile submission or class in tests/adversarial/, put through the
real pass it broke: a correct engine holding an int literal too long to write as text (the
similarity pass, the suite's plan), a zip of a few files 1,600 folders deep (the staging folder's
removal, discovery's count of a hidden folder), text that met a regular expression with nested or
overlapping quantifiers (path cleaning, import flags), and an LMS name longer than a file name (the
staging folder). Then the hostile-class fuzz: seeded classes of every kind of hostile work
(bench/hostilegen.py), and the files beside them (bench/hostilefiles.py: Gradescope metadata of aliases
and tags, groups and override files, history records, %grade lines, code that baits the repairs' reading;
issue 41), through every pass a batch, an export, `grader check` and `%grade` make in the grader's own
process, and one class, with each example in it, through the real `grader batch`: it ends within a bound,
gives every student exactly one row and writes every class file. bench/bench_hostile.py runs the same
generator for longer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CORRECT_ENGINES, HERE, csv_rows

from grader import __version__, catalog
from grader.batch import outputs
from grader.batch.discover import discover
from grader.batch.outputs import Insight, Row, flags_for, write_class_outputs
from grader.folders import MAX_DEPTH, Walk, count_files, remove_tree, temporary_folder
from grader.result import Result
from grader.sabotage import own_block

HOSTILE = HERE / "adversarial"
sys.path.insert(0, str(HOSTILE))
sys.path.insert(0, str(HERE.parent / "bench"))
import blank_lines  # noqa: E402  (hostile fixtures, not a package)
import deep_zip  # noqa: E402
import long_lms_name  # noqa: E402
from hostilegen import drive, make_class, problems  # noqa: E402

HUGE_LITERAL = (HOSTILE / "huge_literal.py").read_text()
ENGINE = CORRECT_ENGINES[0].read_text()
SPEC = """id = "hostile"
version = "1"
title = "A hostile class"
required_symbols = ["Value"]
sabotages = ["add_half", "mul_own_data"]
[limits]
request_s = 3.0
tests_s = 10.0
[search]
max_examples = 10
[checks]
forward = { points = 6 }
add = { points = 6 }
student_tests = { points = 2 }
wheat = { points = 1 }
sabotage = { points = 1 }
"""


@pytest.fixture(scope="module")
def assignment(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile") / "hostile"
    folder.mkdir()
    (folder / "assignment.toml").write_text(SPEC)
    return folder


def _row(student: str, code: str) -> Row:
    result = Result(f"{student}.py", None, "hostile", __version__, "graded", None, 12.0, 16.0, 1.0, ())
    return Row(student, False, result, False, f"{student}.py", f"students/{student}", flags_for(code), code=code)


def _in_a_process(code: str, seconds: float) -> float:
    """Run `code` in a fresh Python, killed after `seconds`; the seconds it says it took."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=seconds)
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.strip().splitlines()[-1])


# -- the examples, each through the pass it broke ---------------------------------------------------


def test_a_huge_int_literal_costs_no_one_their_grade(tmp_path, assignment):
    """A correct engine holding a 20,000-bit int literal (6,000 digits written out): are the gradebook, the
    class data, the class page and work.json written for the class, with the pair compared, rather than
    ValueError from the similarity pass before any class file (and does the suite's plan read the engine
    without writing the literal back)?"""
    task = catalog.load(str(assignment))
    rows = [_row("alice", ENGINE), _row("mallory", HUGE_LITERAL)]
    write_class_outputs(tmp_path, task, rows, ())
    assert [r["student"] for r in csv_rows(tmp_path / "grades.csv")] == ["alice", "mallory"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["similarity"]["compared"] == 2 and summary["failed_passes"] == {}
    assert (tmp_path / "index.html").is_file() and (tmp_path / "work.json").is_file()
    assert own_block(HUGE_LITERAL) is None  # the plan makes no mutant of it, and says nothing it cannot write


def test_a_class_wide_pass_that_fails_costs_its_section_never_the_gradebook(tmp_path, assignment):
    """A class-wide pass that fails (here --previous names a folder whose work.json was damaged since): is the
    gradebook written all the same, with summary.json and the class page saying which section is missing and
    why, the other sections there?"""
    task = catalog.load(str(assignment))
    earlier = tmp_path / "last-term"
    earlier.mkdir()
    (earlier / "work.json").write_text('{"students": [{"student": "x"}]}')
    out = tmp_path / "out"
    write_class_outputs(out, task, [_row("alice", ENGINE), _row("bob", ENGINE)], (), Insight(previous=earlier))
    assert len(csv_rows(out / "grades.csv")) == 2
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["similarity"] is None
        and "the similarity pass could not finish" in summary["failed_passes"]["similarity"]
    )
    assert "misconceptions" in summary and "misconceptions" not in summary["failed_passes"]
    page = (out / "index.html").read_text()
    assert "the similarity pass could not finish" in page and 'id="histogram"' in page


def test_trees_a_thousand_folders_deep_are_read_and_removed_without_recursion(tmp_path):
    """Zips whose members are 400, 800, 1,200 and 1,600 folders deep (under a hidden folder too), and a hidden
    folder on disk 1,200 deep: are the three students found, the deep files left out with a note, the hidden
    folder's files counted within bounds, and the staging folder removed, rather than RecursionError with
    nobody graded?"""
    cls = tmp_path / "class"
    cls.mkdir()
    deep_zip.write(cls / "mallory.zip")
    deep_zip.write(cls / "eve.zip", hidden=True)
    (cls / "oscar").mkdir()
    (cls / "oscar" / "micrograd_mine.py").write_text(ENGINE)
    try:
        _deep(cls / "oscar" / ".cache", 1_200)
        with temporary_folder("grader-batch-") as staging:
            found = discover([cls], staging)
            assert sorted(s.student for s in found.submissions) == ["eve", "mallory", "oscar"]
        assert not staging.exists()
        notes = [n.text for n in found.notes]
        assert sum(f"nested more than {MAX_DEPTH} folders deep; skipped" in n for n in notes) == 8, notes
        assert any("a hidden folder; skipped (more than 2 files in it)" in n for n in notes), notes
        assert count_files(cls / "oscar" / ".cache") == "more than 2"
        walk = Walk(cls / "oscar" / ".cache", depth=10)
        assert max(level for *_, level in walk) == 10 and walk.too_deep == 1
    finally:
        assert remove_tree(cls) and not cls.exists()


def _deep(top: Path, depth: int) -> None:
    """A tree `depth` folders deep with a file every 25, made by descriptor (its paths are too long to name)."""
    top.mkdir()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for level in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
            if level % 25 == 0:
                os.close(os.open("x.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def test_a_tree_deeper_than_the_recursion_limit_is_removed(tmp_path):
    """remove_tree on 1,200 nested folders (deeper than Python's recursion limit), with a read-only folder and a
    link to a folder outside in it: is it all gone, and the link's target kept?"""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("kept")
    _deep(tmp_path / "tree", 1_200)
    (tmp_path / "tree" / "link").symlink_to(outside, target_is_directory=True)
    (tmp_path / "tree" / "locked").mkdir()
    (tmp_path / "tree" / "locked" / "f").write_text("x")
    (tmp_path / "tree" / "locked").chmod(0o555)
    assert remove_tree(tmp_path / "tree")
    assert not (tmp_path / "tree").exists() and (outside / "keep.txt").read_text() == "kept"
    assert remove_tree(tmp_path / "never-was")


def test_path_cleaning_and_import_flags_take_linear_time():
    """Messages a student's code can make (a path of 64 folders, slashes, a sandbox's folder over and over) and
    a file of two megabytes of blank lines: are they cleaned of the machine's paths, and the file's imports
    read, in well under a second each, rather than in hours (nested quantifiers: exponential; `^\\s*` over
    blank lines: quadratic)? Run in a process of its own, killed after a minute."""
    took = _in_a_process(
        "import time\n"
        "from grader import feedback\n"
        "from grader.batch.outputs import flags_for\n"
        "texts = ['/a' * 64, '/' * 10**6 + 'x', '/a' * 200_000, '/tmp/grader-sandbox-1/' * 50_000,\n"
        "         'ImportError: ' + '/lib/python3.' * 50_000, ('x' * 3_000 + '\\n') * 500]\n"
        "started = time.monotonic()\n"
        "for text in texts:\n"
        "    feedback.said(text)\n"
        "    feedback.without_paths(text, [])\n"
        "flags = flags_for('\\n' * 2 * 2**20 + 'import torch\\n')\n"
        "assert flags == ['imports torch'], flags\n"
        "print(time.monotonic() - started)\n",
        60,
    )
    assert took < 5, took


def test_cleaning_keeps_its_meaning():
    """The linear cleaning takes out what the patterns did: a library's path up to its last library folder, a
    path through a sandbox's or a grading's folder up to the file's name; a line cut drops its partial word."""
    from grader.feedback import CUT_CHARS, without_paths

    assert without_paths('File "/usr/lib/python3.11/importlib/__init__.py", line 126', []) == (
        'File "importlib/__init__.py", line 126'
    )
    assert without_paths("(/tmp/grader-task-x1/s/alice/micrograd_mine.py:3) /v/site-packages/_pytest/a.py:1", []) == (
        "(micrograd_mine.py:3) _pytest/a.py:1"
    )
    assert without_paths("/a/site-packages/b/site-packages/c.py grader-task-1/x /grader-sandbox-/y", []) == (
        "c.py grader-task-1/x /grader-sandbox-/y"
    )
    cut = without_paths("x " * (CUT_CHARS // 2 - 10) + "/home/instructor/.venv/lib/python3.11/" * 10, [])
    assert "/home" not in cut and cut.endswith("...")


def test_imports_are_flagged_wherever_they_are_written():
    assert flags_for("import os, torch.nn as nn\nfrom micrograd.engine import Value\n") == [
        "imports micrograd",
        "imports torch",
    ]
    assert flags_for("%pip install x\n  import reference.engine  # a notebook's cells\n") == ["imports reference"]
    assert flags_for("x = 'import torch'\nimportant = 1\n") == []
    assert flags_for("\n" * (outputs.PARSED_CHARS + 1) + "if x:\n\timport\ttorch\n") == ["imports torch"]


def test_an_lms_name_longer_than_a_file_name_is_graded(tmp_path):
    """A Gradescope export naming a student with 300 characters, and one whose metadata gives an int of 5,000
    digits: is every student staged under an id a folder can have, rather than OSError (or ValueError) with
    nobody in the export graded?"""
    export = long_lms_name.write(tmp_path / "export")
    broken = tmp_path / "broken"
    (broken / "submission_7").mkdir(parents=True)
    (broken / "submission_7" / "micrograd_mine.py").write_text(ENGINE)
    (broken / "submission_metadata.yml").write_text(f"submission_7:\n  :submitters:\n  - :sid: {'7' * 5000}\n")
    with temporary_folder("grader-batch-") as staging:
        found = discover([export, broken], staging)
        ids = [s.student for s in found.submissions]
        assert len(ids) == 3 and all(
            len(i) <= 100 and s.path.is_file() for i, s in zip(ids, found.submissions, strict=True)
        )
    assert "Alice_Archer" in ids and "submission_7" in ids
    assert any("cannot be read (ValueError" in n.why for n in found.notes)


def test_each_students_discovery_and_staging_is_guarded(tmp_path):
    """A staging folder nothing can be written in (a file stands in its place): is each student found a row with
    the reason (a zip that could not be extracted, work that could not be copied for grading), rather than the
    first OSError stopping discovery for the class?"""
    cls = tmp_path / "class"
    (cls / "alice").mkdir(parents=True)
    (cls / "alice" / "micrograd_mine.py").write_text(ENGINE)
    deep_zip.write(cls / "bob.zip")
    (tmp_path / "staging").write_text("not a folder")
    found = discover([cls], tmp_path / "staging")
    assert found.submissions == ()
    why = {m.student: m.reason for m in found.missing}
    assert sorted(why) == ["alice", "bob"], why
    assert why["alice"].startswith("micrograd_mine.py: could not be copied for grading (") and "Error" in why["alice"]
    assert why["bob"].startswith("bob could not be read (") and "Error" in why["bob"], why


# -- the hostile-class fuzz ----------------------------------------------------------------------------------

SEEDS = range(12)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_hostile_class_gets_one_row_per_student_from_every_pass(tmp_path, assignment, seed):
    """A seeded class of eight hostile students (bench/hostilegen.py), through every pass a batch makes in its
    own process (discovery, extraction and staging, each student's result cleaned and rendered, the class
    outputs with the similarity pass, the exports and the reteach notebook), with real files, and the files
    beside it through the passes that read them (a groups file, overrides.csv, history records, %grade lines,
    the repairs' reading of every student's code): does it end within a bound, with no pass raising but an
    instructor's file refused as a usage error, exactly one row per student and every class file written?"""
    cls = make_class(tmp_path / "class", seed, students=8)
    try:
        took = drive(cls, tmp_path / "out", catalog.load(str(assignment)), tmp_path / "exports")
        assert problems(cls, tmp_path / "out", tmp_path / "exports") == []
        assert took < 20, (took, cls.kinds)
    finally:
        remove_tree(cls.root)


def test_grader_batch_on_a_hostile_class(tmp_path, assignment):
    """The real `grader batch` (sandboxes, grading processes) on a class holding each of the issue's examples
    (a correct engine with a huge literal, with its tests; a zip 1,600 folders deep; a message of 64 folders;
    a megabyte of blank lines; a Gradescope name of 300 characters) and a seeded class of hostile students
    beside them: does it end within a bound, exit 0, give every student exactly one row and write every
    class file, grading the correct engine with the huge literal as correct?"""
    cls = make_class(tmp_path / "class", 1000, students=4)
    folder = cls.inputs[0]
    (folder / "mallory").mkdir()
    (folder / "mallory" / "micrograd_mine.py").write_text(HUGE_LITERAL)
    (folder / "mallory" / "test_micrograd.py").write_text((HERE / "fixtures" / "suites" / "good.py").read_text())
    deep_zip.write(folder / "trudy.zip", hidden=True)
    (folder / "slasher.py").write_text((HOSTILE / "slashes.py").read_text())
    blank_lines.write(folder / "blanky.py", megabytes=1)
    inputs = [*cls.inputs, long_lms_name.write(tmp_path / "gradescope-long")]
    expected = cls.rows + 4 + 2
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grader.cli", "batch", *map(str, inputs), "--out", str(out)]
    command += ["--assignment", str(assignment), "--jobs", "2"] + (["--roster", str(cls.roster)] if cls.roster else [])
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    finally:
        remove_tree(cls.root)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    cls.rows = expected
    assert problems(cls, out) == [], done.stderr[-3000:]
    rows = {r["student"]: r for r in csv_rows(out / "grades.csv")}
    assert rows["mallory"]["forward"] == "6.0" and rows["mallory"]["add"] == "6.0", rows["mallory"]
    assert rows["slasher"]["status"] == "error" and "/a/a" in rows["slasher"]["reason"], rows["slasher"]
    assert rows["blanky"]["status"] == "graded" and rows["trudy"]["status"] == "graded"
    assert took < 240, took
