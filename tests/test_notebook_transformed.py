"""A notebook's cells are transformed by IPython (`%magic`, `!cmd` become Python) once, in the run of the tests
on the student's own engine; the runs on the other engines take those texts instead of tokenizing every cell
again, and run them lean (plain Python in the shell's namespace) once a lean run on the student's own engine
gave what the whole notebook gives. These tests hold the parts to that: the shell uses a given text only while
it transforms as the template's does, the host keeps only claims that fit the cells, a notebook whose needed
cells use magics grades the same through it, and a notebook whose tests read what only run_cell makes (`_`)
goes back to the whole notebook."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import BASE_ENGINE, statuses
from test_notebook_cells import TESTS, write_notebook

from grader.checks.suite import SUITE_CHECKS
from grader.grading import Options, grade
from grader.protocol import Code
from grader.suite_replies import transformed

SHELL_RUN = r"""
import json, sys
from grader.sandbox.inside import notebook
notebook.warm()
cells = json.loads(sys.argv[1])
given = json.loads(sys.argv[2])
lean = len(sys.argv) > 3
if len(sys.argv) > 4:
    notebook.SHELL.ast_transformers.append(__import__("ast").NodeTransformer())
module, statuses = notebook.run(cells, [], 10.0, lambda **event: None, given, lean)
print(json.dumps({"x": getattr(module, "x", None), "made": notebook.transformed(cells),
                  "underscore": repr(module.__dict__.get("_")),
                  "statuses": [s["status"] for s in statuses]}))
"""


def shell_run(cells, given, *flags):
    out = subprocess.run(
        [sys.executable, "-c", SHELL_RUN, json.dumps(cells), json.dumps(given), *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_given_transformation_is_run_while_the_shell_transforms_as_the_templates():
    cell = "x = 1\ny = 2\n"
    ran = shell_run([[0, cell]], [[0, "x = 5\ny = 2\n"]])
    assert ran["x"] == 5 and ran["statuses"] == ["ok"], ran


def test_no_given_text_is_used_once_a_cell_has_changed_the_shells_transformers():
    """A student's cell that adds a transformer changes what every later cell becomes: the later cell is then
    transformed as IPython does, whatever was given for it."""
    adds = "ip = get_ipython()\nip.input_transformers_post.append(lambda lines: lines)\n"
    cell = "x = 1\ny = 2\n"
    ran = shell_run([[0, adds], [1, cell]], [[1, "x = 5\ny = 2\n"]])
    assert ran["x"] == 1, ran
    assert [i for i, _ in ran["made"]] == [0], ran  # what the changed shell made is not offered to later runs


def test_cells_are_recorded_as_ipython_transforms_them():
    magic = "%%capture\nx = 3\n"
    ran = shell_run([[0, magic], [1, "y = 1"]], [])
    assert ran["x"] == 3 and ran["statuses"] == ["ok", "ok"], ran
    made = dict(ran["made"])
    assert list(made) == [0], ran  # a one-line cell depends on the namespace (autocall): never recorded
    assert "run_cell_magic('capture'" in made[0], made


def test_the_host_keeps_only_claims_that_fit_the_cells():
    code = Code("notebook", {}, ((2, "a = 1\nb = 2\n"), (5, "c = 3\nd = 4\n")))
    claims = {
        "transformed": [[2, "a = 1\nb = 2\n"], [7, "elsewhere = 1\n"], ["5", "c = 3\n"], [5, "x" * 10_000], [5], "junk"]
    }
    assert transformed(claims, code) == ((2, "a = 1\nb = 2\n"),)
    assert transformed({"transformed": "junk"}, code) == ()
    assert transformed(claims, Code("py", {})) == ()


def test_a_notebook_whose_needed_cells_use_magics_grades_the_same_on_every_engine(tmp_path, micrograd):
    """The tests need a cell that is a cell magic (%%capture) and one with a line magic: both run, from the
    own engine's transformation, on every engine; the tests pass on the correct ones."""
    constants = "%%capture\nHALF = 0.5\nprint('hidden')\n"
    timed = "%time TWO = 2.0\nTHREE = 3.0\n"
    tests = TESTS + "\n\ndef test_constants():\n    assert HALF * TWO == 1.0 and THREE == 3.0\n"
    demo = "losses = [step * HALF for step in range(50)]\nprint(losses[-1])"
    path = write_notebook(tmp_path / "magics.ipynb", BASE_ENGINE.read_text(), constants, timed, demo, tests)
    suite_only = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in SUITE_CHECKS))
    result = grade(path, suite_only)
    found = statuses(result)
    assert result.status == "graded", result.error
    assert found["student_tests"] == "passed" and found["wheat"] == "passed", result.checks
    student = next(c for c in result.checks if c.id == "student_tests")
    assert student.artifacts["run_once"] == [4], student.artifacts  # code cells (the markdown first is not one)


def test_a_lean_run_is_plain_python_in_the_shells_namespace():
    """run_cell displays a cell's last expression (`_` holds it); a lean run does not, but runs the cell's code, with
    IPython's builtins (get_ipython) in place, and reports what it raised."""
    cells = [
        [0, "x = 41\nx + 1\n"],
        [1, "ip = get_ipython()\nx = x + 1 if ip else 0\n"],
        [2, "y = 1\nraise ValueError('no')\n"],
    ]
    given = [[i, text] for i, text in cells]
    full = shell_run(cells, given)
    lean = shell_run(cells, given, "lean")
    assert full["underscore"] == "42" and lean["underscore"] == repr(""), (full, lean)
    assert lean["x"] == full["x"] == 42 and lean["statuses"] == full["statuses"] == ["ok", "ok", "error"], lean


def test_a_run_is_not_lean_where_the_student_added_an_ast_transformer():
    cells = [[0, "x = 41\nx + 1\n"]]
    ran = shell_run(cells, [[0, "x = 41\nx + 1\n"]], "lean", "ast-transformer")
    assert ran["underscore"] == "42", ran  # run_cell, which applies the student's transformer


def test_a_batch_runs_the_needed_cells_lean_and_judges_every_engine(tmp_path, micrograd):
    demo = "losses = []\nfor step in range(20):\n    losses.append(step)\nprint(losses[-1])"
    path = write_notebook(tmp_path / "lean.ipynb", BASE_ENGINE.read_text(), demo, TESTS)
    suite_only = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in SUITE_CHECKS))
    result = grade(path, suite_only, Options(one_sandbox=True))
    found = statuses(result)
    assert found["student_tests"] == "passed" and found["wheat"] == "passed", result.checks
    assert next(c for c in result.checks if c.id == "student_tests").artifacts["run_once"] == [2]  # code cell 2


def test_tests_that_read_what_only_run_cell_makes_send_every_run_through_the_whole_notebook(tmp_path, micrograd):
    """A needed cell's last expression, read by a test as `_`: the lean run on the student's own engine disagrees
    with the whole notebook's run, so no run is lean and none leaves a cell out, and the tests still pass on every
    correct engine."""
    shown = "SCALE = 2.0\nSCALE * 21"
    demo = "losses = []\nfor step in range(20):\n    losses.append(step)\nprint(losses[-1])"
    tests = TESTS + "\n\ndef test_shown():\n    assert SCALE == 2.0 and Out[2] == 42.0\n"
    path = write_notebook(tmp_path / "shown.ipynb", BASE_ENGINE.read_text(), shown, demo, tests)
    suite_only = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in SUITE_CHECKS))
    result = grade(path, suite_only, Options(one_sandbox=True))
    found = statuses(result)
    assert found["student_tests"] == "passed" and found["wheat"] == "passed", result.checks
    assert next(c for c in result.checks if c.id == "student_tests").artifacts.get("run_once", []) == []
