"""Same work, same score: the sabotage draw follows the engine and tests, normalised, not the file's format
(issue 30, item 6). The same engine and tests as a .py file beside its test file and as a notebook's cells
(with a magic, a print, comments and the test cell first) meet the same engines and get the same score."""

from __future__ import annotations

import nbformat
from conftest import BASE_ENGINE, with_limits
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.checks.suite import SUITE_CHECKS
from grader.grading import Grading, Options, grade, read_submission
from grader.sabotage import normalised

ENGINE = BASE_ENGINE.read_text()
TESTS = """
def test_add_grad():
    a, b = Value(2.0), Value(-3.0)
    c = a + b
    c.backward()
    assert a.grad == 1.0 and b.grad == 1.0


def test_mul_grad():
    a, b = Value(2.0), Value(-3.0)
    c = a * b
    c.backward()
    assert abs(a.grad - b.data) < 1e-9 and abs(b.grad - a.data) < 1e-9


def test_tanh_grad():
    a = Value(0.5)
    b = a.tanh()
    b.backward()
    assert abs(a.grad - (1 - b.data ** 2)) < 1e-9
"""


def _forms(folder, engine: str = ENGINE):
    """The same work twice: micrograd_mine.py beside test_micrograd.py, and a notebook of it."""
    py = folder / "py"
    py.mkdir(parents=True)
    (py / "micrograd_mine.py").write_text(engine)
    (py / "test_micrograd.py").write_text("from micrograd_mine import *\n" + TESTS)
    nb = folder / "nb"
    nb.mkdir(parents=True)
    cells = [
        new_markdown_cell("# my engine"),
        new_code_cell("%matplotlib inline\n# the engine, as in the lecture\n" + engine),
        new_code_cell(TESTS.replace("    c.backward()", "    c.backward()  # walk the graph")),
        new_code_cell("print(Value(2.0) * 3)"),
    ]
    nbformat.write(new_notebook(cells=cells), str(nb / "lesson.ipynb"))
    return py / "micrograd_mine.py", nb / "lesson.ipynb"


def test_a_py_file_and_a_notebook_of_the_same_work_draw_alike(tmp_path, micrograd):
    """Do the same engine and tests give the same seed and shape (what the draw follows) as a .py file and as a
    notebook, and a different engine a different one?"""
    py, nb = _forms(tmp_path)
    grading = {form: Grading(path, micrograd, Options()) for form, path in (("py", py), ("nb", nb))}
    read = {form: read_submission(g) for form, g in grading.items()}
    assert read["py"].source != read["nb"].source
    assert read["py"].normal == read["nb"].normal
    assert read["py"].shape == read["nb"].shape
    assert read["py"].seed(grading["py"]) == read["nb"].seed(grading["nb"])
    other, _ = _forms(tmp_path / "other", ENGINE.replace("(1 - t ** 2)", "(1 - t * t)"))
    assert read_submission(Grading(other, micrograd, Options())).shape != read["py"].shape


def test_normalised_keeps_what_the_code_defines_and_nothing_of_its_format():
    """Comments, blank lines, imports, prints and magics say nothing; a definition's body does; a later
    definition of a name replaces an earlier one; code that defines nothing is itself."""
    a = normalised("import math\n# a comment\ndef f(x):\n    return x + 1\n\nprint(f(2))\n")
    assert a == normalised("%time f(1)\ndef  f(x) :  return x+1  # the same\n")
    assert a != normalised("def f(x):\n    return x + 2\n")
    assert normalised("def f(x):\n    return 0\n", "def f(x):\n    return x + 1\n") == a
    assert normalised("print(1)") == "print(1)"


def test_a_py_file_and_a_notebook_of_the_same_work_score_alike(tmp_path, micrograd):
    """Graded for real, the suite's checks: the same sabotages met and caught, the same score."""
    suite_only = with_limits(
        micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in SUITE_CHECKS)), submission_s=60.0
    )
    py, nb = _forms(tmp_path)
    results = {form: grade(path, suite_only) for form, path in (("py", py), ("nb", nb))}
    for result in results.values():
        assert result.status == "graded", result.error
    checks = {form: {c.id: c for c in result.checks} for form, result in results.items()}
    assert results["py"].score == results["nb"].score, [(c.id, c.score) for r in results.values() for c in r.checks]
    for key in ("caught", "missed", "of_your_engine"):
        assert checks["py"]["sabotage"].artifacts.get(key) == checks["nb"]["sabotage"].artifacts.get(key), key
