"""Do the files students really write load and get graded: unused scientific imports, the lecture's
notebook habits (%matplotlib inline, `from __future__` in the first cell), nbgrader-style test
functions that take Value as a parameter, and syntax of a newer Python said as exactly that?"""

from __future__ import annotations

import nbformat
from conftest import BASE_ENGINE, statuses
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.checks.suite import SUITE_CHECKS
from grader.grading import grade

ENGINE = BASE_ENGINE.read_text()


def write_notebook(path, *cells):
    nbformat.write(
        new_notebook(cells=[new_markdown_cell("# micrograd")] + [new_code_cell(c) for c in cells]), str(path)
    )
    return path


def test_unused_scientific_imports_are_stood_in_for(grade_source, micrograd):
    """Is a .py that imports numpy, matplotlib and graphviz (absent here) graded in full, with a note for each?"""
    head = (
        "import numpy as np\nimport matplotlib.pyplot as plt\nfrom graphviz import Digraph\n"
        "xs = np.array([1.0, 2.0])\nplt.plot([1, 2], [3, 4])\n"
    )
    result = grade_source(head + ENGINE, micrograd.without(SUITE_CHECKS))
    assert result.status == "graded" and result.score == result.max_score, result.error
    assert [n.split(",")[0] for n in result.notes] == [
        "Your code imports numpy",
        "Your code imports matplotlib",
        "Your code imports graphviz",
    ]
    assert '"notes"' in result.to_json()


def test_using_a_stood_in_package_says_which_and_where(grade_source, micrograd):
    """Does an engine that really computes with numpy (absent here) fail with a message naming numpy and the use?"""
    source = "import numpy as np\n" + ENGINE.replace("math.tanh(self.data)", "float(np.tanh(self.data))")
    assert source != "import numpy as np\n" + ENGINE
    result = grade_source(source, micrograd.without(SUITE_CHECKS))
    tanh = next(c for c in result.checks if c.id == "tanh")
    assert tanh.status == "error" and "numpy is not installed where your code is graded" in tanh.feedback
    assert "np.tanh" in tanh.feedback or "numpy.tanh" in tanh.feedback


def test_a_notebook_opening_with_a_future_import_and_magics(tmp_path, micrograd):
    """Does a notebook whose first cell is `from __future__ import annotations` (with %matplotlib inline
    and numpy, absent here) run and get graded, its failing magic reported, not the grader's prelude?"""
    path = write_notebook(
        tmp_path / "lesson.ipynb",
        "from __future__ import annotations\nimport numpy as np\n%matplotlib inline",
        ENGINE,
        "def f(x: Value) -> Value:\n    return x * 2",
    )
    result = grade(path, micrograd.without(SUITE_CHECKS))
    assert result.status == "graded", result.error
    assert result.score == result.max_score
    problems = result.notebook["problems"] if result.notebook else []
    assert all("SyntaxError" not in p for p in problems), problems


NBGRADER_TESTS = """
def test_add_grad(Value):
    a, b = Value(2.0), Value(-3.0)
    c = a + b
    c.backward()
    assert a.grad == 1.0 and b.grad == 1.0

test_add_grad(Value)

def test_mul_grad(Value):
    a, b = Value(2.0), Value(-3.0)
    c = a * b
    c.backward()
    assert abs(a.grad - b.data) < 1e-9 and abs(b.grad - a.data) < 1e-9

test_mul_grad(Value)
"""


def test_nbgrader_style_tests_taking_value_run_and_count(tmp_path, micrograd):
    """Do `def test_x(Value): ...` functions (nbgrader style, called in the notebook too) run under pytest,
    with Value bound to the engine under test, pass on the student's engine and the correct ones, and
    catch the sabotages they test for?"""
    path = write_notebook(tmp_path / "nb.ipynb", ENGINE, NBGRADER_TESTS)
    result = grade(path, micrograd)
    found = statuses(result)
    assert found["student_tests"] == "passed" and found["wheat"] == "passed", result.checks[-3:]
    student = next(c for c in result.checks if c.id == "student_tests")
    assert set(student.artifacts["tests"]) == {"test_add_grad", "test_mul_grad"}
    sabotage = next(c for c in result.checks if c.id == "sabotage")
    assert {"add_half", "mul_own_data"} <= set(sabotage.artifacts["caught"])


def test_newer_python_syntax_is_named(grade_source, micrograd):
    """Is an f-string of Python 3.12 (its own quotes inside the braces) named as newer syntax, not a typo?"""
    import sys

    result = grade_source('labels = {"a": 1}\nname = f"{labels["a"]}"\n' + ENGINE, micrograd)
    if sys.version_info >= (3, 12):  # the grading Python accepts it: it is graded
        assert result.status == "graded"
        return
    assert result.error.kind == "syntax_error"
    assert "Python 3.12 accepts" in result.error.message and "line 2" in result.error.message
