"""Do the files students really write load and get graded: unused scientific imports, the lecture's
notebook habits (%matplotlib inline, `from __future__` in the first cell), nbgrader-style test
functions that take Value as a parameter, and syntax of a newer Python said as exactly that?"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

import nbformat
from conftest import BASE_ENGINE, LECTURES, quick_assignment, statuses
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


def test_a_number_is_what_float_reads_exactly():
    """A .data that float() reads exactly is a number (a Fraction or Decimal that round-trips, an object whose
    __float__ says so); one it reads only approximately, text and truth values are not; and of an object whose
    __eq__ always says yes, only the float it converts to is claimed."""
    from decimal import Decimal
    from fractions import Fraction

    from grader.sandbox.inside.probes import number

    class Liar(float):
        def __eq__(self, other):
            return True

        __hash__ = float.__hash__

    class Claims:
        def __float__(self):
            return 0.25

        def __eq__(self, other):
            return True

        __hash__ = object.__hash__

    assert [number(x) for x in (Fraction(1, 2), Decimal("-0.75"), Liar(0.5), Claims(), Decimal("NaN"))][:4] == [
        0.5,
        -0.75,
        0.5,
        0.25,
    ]
    assert math.isnan(number(Decimal("NaN")))
    assert number(Fraction(1, 3)) == {
        "bad": "a Fraction that float() reads only approximately (as 0.3333333333333333), not a number"
    }
    assert [number(x) for x in ("2.0", True, 1j, [1.0])] == [
        {"bad": "a str, not a number"},
        {"bad": "a bool, not a number"},
        {"bad": "a complex, not a number"},
        {"bad": "a list, not a number"},
    ]


NUMPY_NUMBERS = """
import json, numpy as np
from probes import number
print(json.dumps([number(x) for x in (np.float64(2.5), np.float32(0.5), np.int64(3), np.array(1.5), np.bool_(True),
                                      np.array([1.5, 2.5]), np.longdouble(1) / 3)]))
"""


def test_numpy_scalars_and_0d_arrays_are_numbers(author_python):
    """Where numpy is installed: its scalars and 0-d arrays are numbers, its arrays of several numbers and a long
    double that float() rounds are not, nor its truth values."""

    inside = BASE_ENGINE.parents[2].parent / "grader" / "sandbox" / "inside"
    done = subprocess.run(
        [str(author_python), "-c", NUMPY_NUMBERS], capture_output=True, text=True, timeout=60, cwd=inside, check=True
    )
    said = json.loads(done.stdout)
    assert said[:4] == [2.5, 0.5, 3.0, 1.5], said
    assert said[4] == {"bad": "a bool, not a number"} and said[5] == {"bad": "a ndarray, not a number"}, said
    assert said[6]["bad"].startswith("a longdouble that float() reads only approximately"), said


ENGINE_CHECKS = [
    "forward",
    "add",
    "mul",
    "pow",
    "tanh",
    "relu",
    "neg_sub",
    "accumulate",
    "topo_order",
    "hand_examples",
    "gradcheck",
    "neuron",
    "training",
]


def _graded(out) -> dict[str, dict]:
    return {d.name: json.loads((d / "result.json").read_text()) for d in sorted((out / "students").iterdir())}


def test_lecture_notebooks_grade_as_with_their_authors_packages(tmp_path, author_python):
    """The lecture notebooks (a Value redefined four times, `%matplotlib inline`, graphviz drawings; solved
    exercises opening with `from rich import print`; rich and numpy around a plain engine) and an engine keeping its
    numbers in 0-d numpy arrays, batched where the sandbox's Python lacks numpy, matplotlib, rich and graphviz (they
    stand in) and where it has them (AUTHOR_PYTHON's): each notebook gets the same points check by check, the points
    its engine deserves; the notes name the packages stood in for, and none where they were installed; and
    `grader check` of the exercises gives its batch row. The numpy engine is graded in full where numpy is, and
    where it is not, its checks say numpy is needed."""

    task = quick_assignment(tmp_path / "task")
    folder = tmp_path / "class"
    folder.mkdir()
    for notebook in LECTURES.glob("*.ipynb"):
        shutil.copy(notebook, folder / notebook.name)
    zero_d = ENGINE.replace("self.data = float(data)", "self.data = np.asarray(data, dtype=float)  # a 0-d array")
    assert zero_d != ENGINE
    (folder / "zero_d_arrays.py").write_text("import numpy as np\n" + zero_d)

    def batch(out, **env):
        done = subprocess.run(
            [sys.executable, "-m", "grader.cli", "batch", str(folder), "--out", str(out), "--assignment", str(task)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, **env},
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return _graded(out)

    stood, real = batch(tmp_path / "stood"), batch(tmp_path / "real", GRADER_SANDBOX_PYTHON=str(author_python))
    points = {
        run: {s: {c["id"]: c["score"] for c in r["checks"]} for s, r in found.items()}
        for run, found in (("stood", stood), ("real", real))
    }
    notebooks = ("exercises_solved", "lecture_draw_dot", "rich_numpy_plots")
    assert all(points["stood"][s] == points["real"][s] for s in notebooks), points
    deserved = {
        "exercises_solved": {
            **dict.fromkeys(ENGINE_CHECKS, "passed"),
            "numerical_grad": "passed",
            "deep_graph": "passed",
            "student_tests": "passed",
        },
        "lecture_draw_dot": {
            **dict.fromkeys(ENGINE_CHECKS, "passed"),
            "numerical_grad": "failed",
            "deep_graph": "failed",
            "student_tests": "failed",
        },
        "rich_numpy_plots": {
            **dict.fromkeys(ENGINE_CHECKS, "passed"),
            "numerical_grad": "failed",
            "deep_graph": "passed",
            "student_tests": "failed",
        },
    }
    for student, expected in deserved.items():
        for run in (stood, real):
            got = {c["id"]: c["status"] for c in run[student]["checks"]}
            assert {k: got[k] for k in expected} == expected, (student, got)
    sabotage = next(c for c in stood["exercises_solved"]["checks"] if c["id"] == "sabotage")
    assert sabotage["feedback"].startswith("Your tests catch 10 of 12 sabotaged engines"), sabotage["feedback"]
    assert "relu_negative_grad" in sabotage["feedback"] and "sub_as_add" in sabotage["feedback"]
    # what was true where the code ran: stood in for here, installed there
    assert [n.split(",")[0] for n in stood["lecture_draw_dot"]["notes"]] == [
        "Your code imports numpy",
        "Your code imports matplotlib",
        "Your code imports graphviz",
        "code cell 13 defines `Value` again; the engine graded is that one.",  # its markdown cells not counted
    ]
    assert not any("not installed" in n for r in real.values() for n in r.get("notes") or []), real
    problems = {
        s: r["notebook"]["problems"]
        for run in (stood, real)
        for s, r in run.items()
        if s in notebooks and r["notebook"]["problems"]
    }
    assert list(problems) == ["rich_numpy_plots"] and len(problems["rich_numpy_plots"]) == 1, problems
    assert problems["rich_numpy_plots"][0].startswith("code cell 8: StandInError: numpy is not installed"), problems
    # the engine computing in numpy: in full where numpy is, and saying numpy is needed where it is not
    real_zero_d = {c["id"]: c["status"] for c in real["zero_d_arrays"]["checks"]}
    assert {k: real_zero_d[k] for k in ENGINE_CHECKS} == dict.fromkeys(ENGINE_CHECKS, "passed"), real_zero_d
    add = next(c for c in stood["zero_d_arrays"]["checks"] if c["id"] == "add")
    assert add["status"] == "error" and "StandInError: numpy is not installed" in add["feedback"], add
    # grader check gives the exercises their batch row
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "check",
            str(folder / "exercises_solved.ipynb"),
            "--assignment",
            str(task),
            "--json",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert {c["id"]: c["score"] for c in json.loads(checked.stdout)["checks"]} == points["stood"]["exercises_solved"]


def test_a_value_cell_that_does_not_compile_is_named_in_the_first_line(tmp_path, micrograd):
    """A notebook whose Value cell has a syntax error defines no Value: the message's first line (all a gradebook
    and a class page show of it) names the cell, the error, its line in the cell and the text there."""
    broken = ENGINE.replace("    def __mul__(self, other):", "    def __mul__(self, other)", 1)
    assert broken != ENGINE
    result = grade(write_notebook(tmp_path / "lesson.ipynb", "import math", broken, "a = Value(2.0)"), micrograd)
    assert result.status == "error" and result.error.kind == "missing_symbol", result.error
    assert result.error.message.splitlines()[0] == (
        "lesson.ipynb defines no Value: a syntax error in code cell 2 stopped it, SyntaxError: expected ':' "
        "(line 34 of the cell: def __mul__(self, other))."
    ), result.error.message
