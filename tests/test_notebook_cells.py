"""Notebooks as students write them: a demo cell runs once, not once per engine the tests run on."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import nbformat
from conftest import BASE_ENGINE, ZOO, quick_assignment, statuses, with_limits
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.checks.suite import SUITE_CHECKS
from grader.grading import Options, grade

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
"""


def write_notebook(path, *cells):
    nbformat.write(
        new_notebook(cells=[new_markdown_cell("# micrograd")] + [new_code_cell(c) for c in cells]), str(path)
    )
    return path


def test_a_slow_demo_cell_runs_once_and_every_suite_check_is_judged(tmp_path, micrograd):
    """A demo cell that takes 2.5 s: run again for each of the ~17 engines the tests run on, it would use up
    a 30 s limit; run once, student_tests, wheat and sabotage are all judged, and the report says which
    cells ran once."""
    demo = "import time\nlosses = []\nfor step in range(5):\n    time.sleep(0.5)\n    losses.append(step)"
    path = write_notebook(tmp_path / "lesson.ipynb", ENGINE, demo, "%timeit -n 1 -r 1 Value(1.0) + 2", TESTS)
    suite_only = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in SUITE_CHECKS))
    result = grade(path, with_limits(suite_only, submission_s=30.0))
    found = statuses(result)
    assert result.status == "graded", result.error
    assert found["student_tests"] == "passed" and found["wheat"] == "passed", result.checks[-3:]
    assert found["sabotage"] in ("passed", "failed"), result.checks[-1]
    student = next(c for c in result.checks if c.id == "student_tests")
    assert student.artifacts["run_once"] == [2, 3], student.artifacts  # code cells: the markdown is not counted
    assert not [c.id for c in result.checks if "ran once" in c.feedback], "how the runs went is no student's business"


def test_in_a_students_check_the_engine_lanes_sandbox_joins_a_notebooks_runs(tmp_path, micrograd, monkeypatch):
    """grader check's layout (two sandboxes): the suite lane's one sandbox starts the runs on the cells the tests need
    while the engine lane runs the notebook, and the engine lane's sandbox, once its checks are done, joins them (a
    third sandbox's start saved): are the demo cells still run once, every suite check judged, and did the runs go
    on both sandboxes? (Each run sleeps 0.3 s in a test, so the suite's sandbox is still busy when the other joins.)"""
    from grader.lanes import suite as lane
    from grader.sandbox.supervisor import Sandbox

    made, ran_on, run_tests, start = [], [], lane.run_tests, Sandbox.__init__

    def noted(sandbox, *args):
        ran_on.append(id(sandbox))
        return run_tests(sandbox, *args)

    def counted(sandbox, *args, **kwargs):
        made.append(id(sandbox))
        start(sandbox, *args, **kwargs)

    # every sandbox still started and every run made in its sandbox: only which and where noted
    monkeypatch.setattr(lane, "run_tests", noted)
    monkeypatch.setattr(Sandbox, "__init__", counted)
    demo = "import time\nfor step in range(2):\n    time.sleep(0.5)"
    slow = "def test_slow_but_fine():\n    import time\n    time.sleep(0.3)\n    assert Value(1.0).data == 1.0\n"
    path = write_notebook(tmp_path / "lesson.ipynb", ENGINE, demo, TESTS, slow)
    suite_only = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in SUITE_CHECKS))
    result = grade(path, with_limits(suite_only, submission_s=60.0), Options(suite_sandboxes=2))
    found = statuses(result)
    assert result.status == "graded", result.error
    assert found["student_tests"] == "passed" and found["wheat"] == "passed", result.checks[-3:]
    assert found["sabotage"] in ("passed", "failed"), result.checks[-1]
    student = next(c for c in result.checks if c.id == "student_tests")
    assert student.artifacts["run_once"] == [2], student.artifacts
    assert len(made) == 2 and set(ran_on) == set(made) and len(ran_on) > 10, (made, ran_on)


SMALL_VALUE = '''
import math


class Value:
    """A second, smaller engine an exercise asks for: +, /, exp and log only."""

    def __init__(self, data, _children=()):
        self.data, self.grad, self._prev = data, 0.0, set(_children)
        self._backward = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __truediv__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data / other.data, (self, other))

        def _backward():
            self.grad += out.grad / other.data
            other.grad += -out.grad * self.data / other.data ** 2
        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,))

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,))

        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def backward(self):
        topo, seen, stack = [], set(), [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                topo.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((child, False) for child in node._prev)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()
'''


def test_a_later_cell_defining_value_again_is_named_and_its_engine_graded_on_what_it_can_do(tmp_path, micrograd):
    """An exercise cell defines a second Value with only +, /, exp and log, another rebinds numerical_grad to a
    list: the terminal and the result name each cell, and gradcheck builds only from what that engine can do
    (no `*` to scale the output), so it does not error on the missing `*`: what it could probe (+) held, and the
    assignment's other operations, which that engine does not have, are their own checks' charge, once (issue
    39.2): gradcheck passes on what the engine has; forward charges only its own (no __radd__), saying where the
    rest is counted."""
    from grader.render import terminal

    path = write_notebook(tmp_path / "lesson.ipynb", ENGINE, "print('demo')", SMALL_VALUE, "numerical_grad = [1, 2, 3]")
    keep = {"forward", "add", "gradcheck", "numerical_grad"}
    task = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in keep))
    result = grade(path, task)
    assert result.status == "graded", result.error
    assert "code cell 3 defines `Value` again; the engine graded is that one." in result.notes, result.notes
    assert "code cell 4 defines `numerical_grad` again; the `numerical_grad` graded is that one." in result.notes
    found = statuses(result)
    gradcheck = next(c for c in result.checks if c.id == "gradcheck")
    assert found["gradcheck"] == "passed", gradcheck.feedback
    assert gradcheck.artifacts["probed"] == ["+"], gradcheck.artifacts
    forward = next(c for c in result.checks if c.id == "forward")
    assert found["add"] == "passed" and found["forward"] == "error", forward.feedback  # no __radd__: its own
    assert "cannot be built yet" in forward.feedback and "counted once, by mul, pow" in forward.feedback
    shown = terminal.render(result, task)
    assert "Note: code cell 3 defines `Value` again; the engine graded is that one." in shown


def test_import_torch_beside_numpy_in_the_first_cell_stands_in_and_the_rest_runs(tmp_path, micrograd):
    """`import torch` opening a notebook's first cell, with numpy and matplotlib (absent here) and math after it:
    torch stands in (installed or not, the assignment does not name it), so the cell's other imports run and the
    engine using math is graded; the notes name each package missing, and a cell using torch says so."""
    first = "import torch\nimport numpy as np\nimport matplotlib.pyplot as plt\nimport math"
    path = write_notebook(
        tmp_path / "lesson.ipynb",
        first,
        ENGINE,
        "x = float(torch.tensor([2.0]).item()) * 2",
        "xs = np.linspace(-1, 1, 5)\nplt.plot(xs, xs)",
    )
    task = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in ("forward", "tanh")))
    result = grade(path, task)
    assert result.status == "graded" and result.score == result.max_score, (result.error, result.checks)
    assert result.notes[0].startswith("Your code imports torch, which is not available where it is graded")
    assert [n.split(",")[0] for n in result.notes[1:]] == ["Your code imports numpy", "Your code imports matplotlib"]
    problems = result.notebook["problems"]
    assert len(problems) == 1 and problems[0].startswith("code cell 3: StandInError: torch is not available"), problems


def test_grader_check_of_a_slow_notebook_shows_which_cell_runs(tmp_path):
    """Does `grader check` of a notebook whose cells take a few seconds say on stderr which cell is running
    (code cell K of M, as Jupyter numbers it), and say nothing of a quick one?"""
    import os
    import subprocess
    import sys

    write_notebook(tmp_path / "slow.ipynb", ENGINE, "import time\ntime.sleep(5)", "x = 1")
    write_notebook(tmp_path / "quick.ipynb", ENGINE, "x = 1")
    env = {**os.environ, "PYTHONPATH": str(BASE_ENGINE.parents[3])}
    runs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "grader.cli", "check", name, "--public-only"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("slow.ipynb", "quick.ipynb")
    }
    said = {name: run.communicate(timeout=300)[1] for name, run in runs.items()}
    assert all(run.returncode in (0, 1) for run in runs.values()), said
    assert "running your notebook: code cell 2 of 3" in said["slow.ipynb"], said
    assert "running your notebook" not in said["quick.ipynb"], said


def test_a_demo_cell_the_reading_misses_sends_every_run_through_the_whole_notebook(tmp_path, micrograd):
    """A demo cell that changes the engine through a function call (which no reading of the cells follows):
    the run on the needed cells alone does not give what the whole notebook gives, so every run takes the
    whole notebook, as before, and the student's tests are judged on the notebook as it runs."""
    patch = "def disable_add():\n    Value.__add__ = lambda self, other: Value(0.0)"
    path = write_notebook(tmp_path / "lesson.ipynb", ENGINE, patch, "disable_add()", TESTS)
    task = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in ("student_tests", "wheat")))
    result = grade(path, task)
    student = next(c for c in result.checks if c.id == "student_tests")
    assert "run_once" not in student.artifacts, student.artifacts
    assert student.artifacts["tests"]["test_add_grad"]["outcome"] == "failed", student.artifacts  # as in the notebook
    assert student.artifacts["tests"]["test_mul_grad"]["outcome"] == "passed"


def test_the_cells_the_tests_need():
    """Which cells the runs on other engines take: those defining, changing or importing what the tests use
    (and what those cells use, even a later cell's method patch), never a demo that only uses them; an import
    a later needed cell repeats is not needed unless a cell between reads the name as it runs."""
    from grader import slicing

    cells = (
        (0, "import math\nimport random\nimport numpy as np\n%matplotlib inline"),
        (1, "class Value:\n    def tanh(self):\n        return math.tanh(self.data)"),
        (2, "def numerical_grad(f, x, h=1e-6):\n    return (f(x + h) - f(x - h)) / (2 * h)"),
        (3, "random.seed(0)\nlosses = []\nfor k in range(100):\n    losses.append(Value(k))\nplt.plot(losses)"),
        (4, "%timeit Value(1.0)"),
        (5, "!pip list"),
        (6, "Value.__radd__ = lambda self, other: self"),
        (7, "import math\n\ndef close(a, b):\n    return math.isclose(a, b)"),
        (8, "def test_grad():\n    assert close(numerical_grad(lambda x: x * x, 1.0), 2.0)\n\ntest_grad()"),
    )
    assert slicing.needed(cells, None, ("Value",)) == {1, 2, 6, 7, 8}
    early = ((0, "import math"), (1, "PI = math.pi\nclass Value:\n    pass"), (2, "import math"))
    assert slicing.needed(early, None, ("Value",)) == {0, 1, 2}
    assert slicing.needed(cells, "from micrograd_mine import losses\n", ("Value",)) >= {0, 3}


TRICKY_PLAIN = (
    "total = (1\n% 2)\nflag = (x\n!= 3)\nitems = [1\n, 2]",  # `%`, `!` and `,` start a line inside brackets
    "question = 'why?'\nwhat = len  # what?\nask = f'{question}?'",  # `?` in strings and a comment
    'text = """\n    \n  indented\n\t\n"""\nblank = text.strip()',  # lines of spaces and a tab in a string
    "  # a comment before the code\nvalue = 2\n\n\n",  # a comment indented, trailing blank lines
    "\n\n\nafter = 1\nratio = after % 3\nfactor = 10 % after",  # leading blank lines, `%` as an operator
    "def f(a, b=1, *c, **d):\n    global G\n    G = a % b\n    return not a != b",
)


def test_a_plain_python_cell_is_read_without_ipython_as_ipython_reads_it():
    """The grader's reading of a cell (slicing.read_cell) takes a cell that Python parses, with no prompt IPython
    strips in it, as it is, not importing IPython for it: for every zoo engine, the lesson's suites, a class
    notebook's cells and cells where IPython's syntax looks out of Python's (a `%` or `!` starting a line inside
    brackets, `?` in a string, a string of blank lines), are its names exactly what IPython's reading gives? And is
    a cell that holds a prompt, or does not parse, still read through IPython?"""
    from IPython.core.inputtransformer2 import TransformerManager

    from grader import slicing

    sources = [p.read_text() for p in sorted((ZOO / "correct").glob("*.py")) + sorted((ZOO / "buggy").glob("*.py"))]
    sources += [p.read_text() for p in sorted((ZOO.parent / "fixtures" / "suites").glob("*.py"))]
    sources += [ENGINE, TESTS, *TRICKY_PLAIN]
    for source in sources:
        ipython = TransformerManager().transform_cell(source)
        assert slicing._transform(source) == source, source[:200]  # read as it is
        assert slicing.read_cell(source) == slicing.read_cell(ipython), source[:200]
    prompted = ("mapping = {\n    ...: 1}", ">>> pasted = 1", "In [3]: pasted = 2", "%time slow = 1")
    for source in prompted:
        assert slicing._transform(source) == TransformerManager().transform_cell(source), source
    assert slicing._transform(prompted[0]) == "mapping = {\n1}\n"  # IPython strips `...: ` from its second line
    assert "pasted" in slicing.read_cell(prompted[1]).binds and "pasted" in slicing.read_cell(prompted[2]).binds


def test_a_needed_cell_cut_off_by_its_time_limit_is_not_waited_for_in_every_run(tmp_path, micrograd):
    """The engine's own cell runs a loop past its 2 s limit after defining Value: the runs of the tests leave it
    out, as the engine lane's run shows, rather than each run waiting 2 s for it again (17 runs would use up the
    15 s limit, and wheat and sabotage would be skipped)."""
    path = write_notebook(
        tmp_path / "lesson.ipynb", ENGINE + "\nimport time\nwhile True:\n    time.sleep(0.01)", "print('demo')", TESTS
    )
    suite_only = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in SUITE_CHECKS))
    result = grade(path, with_limits(suite_only, submission_s=15.0, cell_s=2.0))
    found = statuses(result)
    assert found["wheat"] != "skipped" and found["sabotage"] != "skipped", result.checks


def test_timeit_runs_its_statement_once_and_a_note_says_so(tmp_path, micrograd):
    """A kernel repeats a %timeit statement until 0.2 s have passed, 7 times over: as many runs as the machine is
    fast, each with its side effects. Graded, it runs once (deterministic, and no seconds spent on timing), and
    the student is told."""
    calls = "calls = []\ndef step():\n    calls.append(1)\n    return Value(1.0) + 2"
    timed = "%timeit step()"
    counted = "%%timeit -n 100 -r 3\nstep()\nstep()"
    tests = TESTS + "\n\ndef test_each_timed_statement_ran_once():\n    assert len(calls) == 3\n"
    path = write_notebook(tmp_path / "timed.ipynb", ENGINE, calls, timed, counted, tests)
    suite_only = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in SUITE_CHECKS))
    result = grade(path, suite_only)
    assert result.status == "graded", result.error
    assert statuses(result)["student_tests"] == "passed", result.checks
    assert any("%timeit in code cells 3, 4 ran its statement once" in note for note in result.notes), result.notes


def test_a_cell_of_501_magics_is_an_error_result_naming_it(tmp_path):
    """A cell of 501 line magics (issue 41, item 7), which IPython's transformer refuses with RuntimeError: does
    `grader check` give an error result that names the cell (and write it), rather than a traceback and no
    result?"""
    task = quick_assignment(tmp_path / "quick", ("forward", "add"))
    path = write_notebook(tmp_path / "magics.ipynb", ENGINE, "x = 1", "\n".join(["%time x = 1"] * 501))
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", path.name, "--assignment", str(task), "--json", "out.json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    result = json.loads((tmp_path / "out.json").read_text())
    assert result["status"] == "error" and result["error"]["kind"] == "syntax_error", result["error"]
    assert "code cell 3 has 501" in result["error"]["message"], result["error"]
    assert "code cell 3" in done.stdout, done.stdout


def test_a_cell_whose_reading_would_take_long_is_refused_at_once(tmp_path, micrograd):
    """A 154 KB cell of 499 magics, which IPython reads again whole for each one (seconds, in the grader's own
    process, before any deadline), and an 82 KB cell of 50 (8 s): is each grading an error naming the cell, within
    a second or two; and is a cell of a few magics among a page of code still read and graded?"""
    costly = "\n".join(["%time x = 1" + " " * 300] * 499)
    assert len(costly) > 150_000
    path = write_notebook(tmp_path / "slow.ipynb", ENGINE, costly)
    started = time.monotonic()
    result = grade(path, micrograd.without(SUITE_CHECKS))
    took = time.monotonic() - started
    assert result.status == "error" and result.error.kind == "syntax_error", result.error
    assert "code cell 2 has 499 lines" in result.error.message, result.error.message
    assert took < 5, took
    code = "\n".join(f"x{i} = {i} * 2 + 1  # some comment here" for i in range(2_000))
    long = write_notebook(tmp_path / "long.ipynb", ENGINE, "\n".join(["%time x = 1"] * 50) + "\n" + code)
    started = time.monotonic()
    result = grade(long, micrograd.without(SUITE_CHECKS))  # 50 magics in 82 KB: IPython took 8 s to read it
    took = time.monotonic() - started
    assert result.status == "error" and result.error.kind == "syntax_error", result.error
    assert result.error.message.startswith("code cell 2 is 8"), result.error.message
    assert "with 50 magic or shell lines" in result.error.message and took < 5, (took, result.error.message)
    fine = write_notebook(tmp_path / "fine.ipynb", "%matplotlib inline\n" + ENGINE + "\n%time x = 1\n")
    assert grade(fine, with_limits(micrograd, submission_s=60.0).without(SUITE_CHECKS)).status == "graded"


def test_a_notebook_nested_too_deep_for_json_is_unreadable_not_a_crash(tmp_path, micrograd):
    """A .ipynb of 100,000 nested brackets (found by the hostile fuzz's %grade paths): is its grading an
    `unreadable` error saying it is no notebook, rather than RecursionError out of grade()?"""
    path = tmp_path / "nested.ipynb"
    path.write_text("[" * 100_000 + "]" * 100_000)
    result = grade(path, micrograd.without(SUITE_CHECKS))
    assert result.status == "error" and result.error.kind == "unreadable", result.error
    assert "nested.ipynb is not a notebook" in result.error.message, result.error.message


def test_a_notebook_whose_cells_are_not_as_jupyter_saves_them_is_unreadable_not_a_crash(tmp_path, micrograd):
    """A notebook 4 whose code cell has no source, or a source that is no text, or a cell with no type: is each
    grading an `unreadable` error naming the cell, rather than AttributeError out of grade()? And is a source
    saved as a list of lines (as Jupyter saves it) still read as its text?"""
    engine = {"cell_type": "code", "source": ENGINE.splitlines(keepends=True), "metadata": {}, "outputs": []}
    no_source = "cell 3 (markdown cells counted) is a code cell without a source"
    broken = (
        ({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}, no_source),
        ({"cell_type": "code", "source": 5, "metadata": {}, "outputs": []}, no_source),
        ({"source": "x = 1", "metadata": {}}, "cell 3 (markdown cells counted) has no cell_type"),
    )
    for cell, said in broken:
        path = tmp_path / "odd.ipynb"
        cells = [{"cell_type": "markdown", "source": "# micrograd", "metadata": {}}, engine, cell]
        path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
        result = grade(path, micrograd.without(SUITE_CHECKS))
        assert result.status == "error" and result.error.kind == "unreadable", result.error
        assert said in result.error.message, result.error.message
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [engine]}))
    result = grade(path, micrograd.without(SUITE_CHECKS))
    assert result.status == "graded" and statuses(result)["add"] == "passed", result.error
