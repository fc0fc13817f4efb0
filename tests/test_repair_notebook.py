"""Verified repairs for notebooks (issue 31): the line to change named by its cell and its line in that cell.

A notebook is built with nbformat from a buggy engine of tests/repair_bugs.py, split over code cells with markdown
cells between, a magic in its imports' cell and a first draft of `class Value` before the one graded; it is graded
for real. The repair names the last Value's cell and the planted line in it; the test applies the repair to that
cell, writes the notebook again and grades it: the checks the repair says it fixes pass. A correct notebook gets no
repair. The report, the terminal and `%grade`'s output (grader check in a process of its own, its JSON read back)
name the cell.
"""

from __future__ import annotations

import ast
import dataclasses
import html
from pathlib import Path

import nbformat
import pytest
from conftest import quick_assignment
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from repair_bugs import buggy, correct, written

from grader import jupyter, spec
from grader.grading import Grading, grade, read_submission
from grader.protocol import Code
from grader.render.html import student_report
from grader.render.terminal import render
from grader.repair.edits import Edit
from grader.repair.edits import applied as applied_text
from grader.repair.notebook import NotebookCode
from grader.repair.repairs import candidates
from grader.result import Change
from grader.sabotage import all_operators, planning
from grader.sabotage.trees import clone, last_class, last_method

DRAFT = "class Value:\n    def __init__(self, data):\n        self.data = data\n"
"""A first draft of the class, in an earlier cell: the class graded is the last one."""
DEMO = "a = Value(2.0)\nb = (a * a).tanh()\nb.backward()\nprint(a.grad)"
MATH = "%time import math"
"""The engines' `import math`, in a line magic: a cell IPython rewrites, which the text the inverses read leaves out
and the engine needs (a copy graded as a .py file of that text, not as the notebook, would fail with a NameError)."""
ENGINE_CELL = 6
"""The number of the cell holding the engine graded (every cell counted from 1, markdown too)."""
ENGINE_CODE_CELL = 3
"""The same cell as a repair names it: its place among the code cells (`code cell 3`, Jupyter's `In [3]`)."""


def notebook(text: str) -> tuple[nbformat.NotebookNode, int]:
    """The engine's file as a student's notebook, and the line of the file its Value cell starts at."""
    lines = text.split("\n")
    value = next(i for i, line in enumerate(lines) if line.startswith("class Value"))
    neuron = next(i for i, line in enumerate(lines) if line.startswith("class Neuron"))
    cells = [
        new_markdown_cell("# micrograd, by hand"),
        new_code_cell("%matplotlib inline\n" + "\n".join(lines[:value]).strip().replace("import math", MATH)),
        new_markdown_cell("A first try:"),
        new_code_cell(DRAFT),
        new_markdown_cell("## The engine"),
        new_code_cell("\n".join(lines[value:neuron]).rstrip()),
        new_markdown_cell("## A neuron"),
        new_code_cell("\n".join(lines[neuron:]).strip()),
        new_code_cell(DEMO),
        new_code_cell("%load_ext grader\n%grade"),
    ]
    assert cells[ENGINE_CELL - 1].source.startswith("class Value") and MATH in cells[1].source
    return new_notebook(cells=cells), value + 1


def assignment(micrograd: spec.Assignment, checks: tuple[str, ...], level: str = "diff") -> spec.Assignment:
    """The assignment with only these checks, 15 examples per rule, and repairs at `level`."""
    return dataclasses.replace(
        micrograd,
        checks=tuple(c for c in micrograd.checks if c.id in checks),
        search=dataclasses.replace(micrograd.search, max_examples=15),
        feedback=spec.Feedback(level),
    )


def graded(folder: Path, nb: nbformat.NotebookNode, task: spec.Assignment, name: str = "homework.ipynb"):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    nbformat.write(nb, str(path))
    return grade(path, task), path


def applied(source: str, repair: dict) -> str:
    """The repair applied to its cell's source as a reader of the result JSON would: each place's `before` lines
    (lines of the cell) replaced by its `after` lines, from the last line up."""
    lines = source.split("\n")
    for place in sorted([repair, *repair.get("also", [])], key=lambda p: p["line"], reverse=True):
        assert place.get("cell") == repair["cell"]
        old = place["before"].split("\n") if place["before"] else []
        start = place["line"] - 1
        assert lines[start : start + len(old)] == old
        lines[start : start + len(old)] = place["after"].split("\n")
    return "\n".join(lines)


CASES = [
    ("tanh_grad_from_input", "lecture", ("tanh", "hand_examples", "gradcheck")),
    ("assign_in_mul", "slots_gradfn", ("mul", "accumulate", "gradcheck")),
    ("pow_off_by_one", "list_iterative", ("pow", "gradcheck")),
    ("missing___radd__", "lecture", ("forward", "add")),
]


@pytest.mark.parametrize(("cause", "style", "checks"), CASES, ids=[f"{c}@{s}" for c, s, _ in CASES])
def test_a_notebook_gets_the_repair_in_its_cell_and_applying_it_fixes_the_checks(
    tmp_path, micrograd, cause, style, checks
):
    text, line = buggy(cause, style)
    nb, first = notebook(text)
    result, _ = graded(tmp_path / "buggy", nb, assignment(micrograd, checks))
    assert result.status == "graded", result.error
    repairs = written(result)
    assert len(repairs) == 1, [(c.id, c.status, c.cause) for c in result.checks]
    ((check, repair),) = repairs.items()
    assert next(c for c in result.checks if c.id == check).cause == cause
    assert repair["verified"] is True and check in repair["fixes"]
    assert repair["cell"] == ENGINE_CODE_CELL  # the last Value's cell, not the draft's (code cell 2)
    cell = nb.cells[ENGINE_CELL - 1].source
    if cause.startswith("missing___r"):  # the method goes after the one it is written beside
        beside = last_method(last_class(ast.parse(cell)), "__add__")
        assert repair["line"] == beside.end_lineno + 1 and repair["method"] == "__radd__"
    else:
        assert line - first + 1 in [repair["line"]] + [p["line"] for p in repair.get("also", [])]
        assert cell.split("\n")[repair["line"] - 1] == repair["before"].split("\n")[0]

    nb.cells[ENGINE_CELL - 1].source = applied(cell, repair)
    fixed, _ = graded(tmp_path / "fixed", nb, assignment(micrograd, tuple(repair["fixes"])))
    assert {c.id: c.status for c in fixed.checks} == dict.fromkeys(repair["fixes"], "passed")


def test_one_mistake_in_every_method_is_one_repair_of_every_line_in_the_cell(tmp_path, micrograd):
    """`=` for `+=` in every operation's backward: one repair, its every place (`also`) in the engine's cell."""
    text = (Path(__file__).parent.parent / "examples" / "forgot_plus_equals.py").read_text()
    nb, _ = notebook(text)
    result, _ = graded(tmp_path / "buggy", nb, assignment(micrograd, ("add", "mul", "accumulate", "gradcheck")))
    repairs = list(written(result).values())
    assert len(repairs) == 1 and len(repairs[0].get("also", [])) >= 4, repairs
    repair = repairs[0]
    assert {p["cell"] for p in [repair, *repair["also"]]} == {ENGINE_CODE_CELL}
    nb.cells[ENGINE_CELL - 1].source = applied(nb.cells[ENGINE_CELL - 1].source, repair)
    fixed, _ = graded(tmp_path / "fixed", nb, assignment(micrograd, tuple(repair["fixes"])))
    assert {c.id: c.status for c in fixed.checks} == dict.fromkeys(repair["fixes"], "passed")


@pytest.mark.parametrize("style", ["lecture", "slots_gradfn", "list_iterative"])
def test_a_correct_notebook_gets_no_repair_nor_a_regrade(tmp_path, micrograd, style):
    nb, _ = notebook(correct(style))
    result, _ = graded(tmp_path, nb, assignment(micrograd, ("add", "mul", "tanh", "relu", "hand_examples")))
    assert result.score == result.max_score, [(c.id, c.status, c.feedback) for c in result.checks]
    assert not any(c.repair for c in result.checks) and not written(result)
    code = Code("notebook", {}, tuple((i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"))
    found = NotebookCode.of(code, b"", "homework.ipynb")
    assert found is not None and candidates(result, found.text) == []  # nothing to verify: nothing regraded


def test_the_report_the_terminal_and_grade_name_the_cell_and_its_line(tmp_path, micrograd):
    """What the student reads: `where` names the line in the cell, the report shows that cell's code around the
    line with the line marked, and `%grade` (grader check on the saved notebook, its JSON read back and shown as
    the notebook's output) says the same sentence."""
    text, line = buggy("tanh_grad_from_input", "lecture")
    nb, first = notebook(text)
    checks = ("tanh", "hand_examples")
    task = assignment(micrograd, checks, "where")
    result, path = graded(tmp_path / "work", nb, task)
    repair = next(iter(written(result).values()))
    at = line - first + 1
    assert (repair["cell"], repair["line"], repair["after"]) == (ENGINE_CODE_CELL, at, "")
    quoted = repair["before"].strip()  # the line to change, quoted in code style
    said = f"line {at} of code cell {ENGINE_CODE_CELL} (`{quoted}`), in tanh's _backward, is the line to change"
    shown = " ".join(render(result, task).split())
    assert said in shown and "copy of your notebook" in shown and "(1 - t**2) * out.grad" not in shown

    page = student_report(result, path.read_text())
    assert f"Code cell {ENGINE_CODE_CELL} of your notebook" in page
    assert f"<code>{quoted}</code>" in html.unescape(page.split('class="repair"')[1].split("</p>")[0])
    code = page.split('class="code repair-code"')[1].split("</pre>")[0]  # the cell's code around the line
    marked = code.split('<mark class="repair-line">')[1].split("</mark>")[0]
    assert f"{at:>4} " in marked and "data" in marked and code.count('<mark class="repair-line">') == 1
    assert "_backward</span>" in code and "(1 - t**2) * out.grad" not in page

    folder = quick_assignment(tmp_path / "quick", checks, repair="where")
    outcome = jupyter._grade(path, jupyter._request(f"{path} --assignment {folder}"), None)
    inline = " ".join(html.unescape(outcome.html or "").split())
    assert said.replace(f"`{quoted}`", f"<code>{quoted}</code>") in inline, outcome.text
    assert said in " ".join(outcome.text.split())


def test_an_edit_must_land_in_one_cell_and_a_magic_cell_defining_value_stops_repairs():
    """The text the inverses read holds each plain-Python cell after a line marking it; a change is placed in its
    cell's own lines, an edit spanning two cells is none, and a cell IPython rewrites (a magic) that defines Value
    makes the notebook's class unknown to the text: no repair."""
    cells = ((1, "import math"), (2, "%time x = 1"), (3, "class Value:\n    pass\n"), (5, "v = Value()"))
    code = NotebookCode.of(Code("notebook", {}, cells), b"", "n.ipynb")
    assert code is not None and [c.index for c in code.cells] == [1, 3, 5]
    lines = code.text.split("\n")
    assert lines[code.cells[1].first - 1 : code.cells[1].first + 1] == ["class Value:", "    pass"]
    inside = Change(code.cells[1].first + 1, "Value", "Value", "    pass", "    x = 1")
    local = code.local(Edit("c", (inside,)))
    assert local is not None and (local.changes[0].cell, local.changes[0].line) == (3, 2)  # the third code cell
    at_end = Change(code.cells[1].first + 3, "__radd__", "Value", "", "    y = 2")  # after the cell's last line
    assert code.local(Edit("c", (at_end,))).changes[0].line == 4
    across = Change(code.cells[0].first, "x", "x", "import math\n" + lines[code.cells[0].first], "")
    assert code.local(Edit("c", (across,))) is None
    assert code.local(Edit("c", (inside, Change(code.cells[2].first, "", "", "v = Value()", "v = 1")))) is None
    edited = applied_text(code.text, [inside])
    assert code.sources(edited) == {3: "class Value:\n    x = 1\n"}
    last = Change(code.cells[2].first, "", "", "v = Value()", "v = Value()\nprint(v)")
    both = code.sources(applied_text(code.text, [at_end, last]))  # two cells, an insertion at a cell's end
    assert both == {3: "class Value:\n    pass\n\n    y = 2", 5: "v = Value()\nprint(v)"}
    magic = ((1, "%%time\nclass Value:\n    pass"), (2, "class Value:\n    pass"))
    assert NotebookCode.of(Code("notebook", {}, magic), b"", "n.ipynb") is None


# -- which Value: the one Python keeps (issue 42, item 3) ---------------------------------------------------------


def _value_of(text: str) -> str:
    """A style's Value class, as its own cell."""
    return text[text.index("class Value") : text.index("class Neuron")].rstrip()


THRICE_TESTS = """def test_add_and_mul_gradients():
    a, b = Value(2.0), Value(-3.0)
    c = a * b + a
    c.backward()
    assert a.grad == -2.0 and b.grad == 2.0
"""


def thrice() -> tuple[nbformat.NotebookNode, int, int]:
    """A notebook defining Value three times, each in a cell of its own (two correct drafts in other styles, then the
    lesson's with tanh's derivative on its input), the last defining __mul__ twice too (a draft left above the one
    Python keeps); the cell of the last Value (its place among the code cells, as the grader names cells), and the
    line of the planted bug in it."""
    text, _ = buggy("tanh_grad_from_input", "lecture")
    last = _value_of(text)
    mul = last[last.index("    def __mul__") : last.index("    def __pow__")]
    last = last.replace(mul, mul + mul.replace("out = Value(", "out = Value(  # the draft Python drops\n            "))
    cells = [
        new_markdown_cell("# micrograd, three tries"),
        new_code_cell("import math\nimport random"),
        new_code_cell(_value_of(correct("list_iterative"))),
        new_code_cell(_value_of(correct("slots_gradfn"))),
        new_code_cell(last),
        new_code_cell(text[text.index("class Neuron") :].strip()),
        new_code_cell(THRICE_TESTS),
    ]
    bug = last[: last.index("self.grad += (1 - self.data**2) * out.grad")].count("\n") + 1
    return new_notebook(cells=cells), 4, bug  # code cell 4: the markdown cell is not counted


def test_the_mutants_and_the_repair_are_made_of_the_value_python_keeps(tmp_path, micrograd, monkeypatch):
    """A notebook defines Value three times, the bug only in the last, whose __mul__ is defined twice: is the repair
    found in the last Value's cell and line, and is every mutant of the student's engine the grading makes cut from
    the last Value's live methods (the second __mul__), never a draft Python dropped; and does a mutation of the
    notebook's whole code change its last Value and leave the first two alone?"""
    made: list[tuple[str, str, ast.Module]] = []  # each mutant of the student's engine the grading made
    own_mutated = planning.own_mutated

    def watched(op, own):
        tree = own_mutated(op, own)
        if tree is not None:  # as made: the plan disguises and rewrites the tree of each mutant it runs, in place
            made.append((op.id, own, clone(tree)))
        return tree

    monkeypatch.setattr(planning, "own_mutated", watched)
    nb, cell, bug = thrice()
    result, path = graded(tmp_path, nb, assignment(micrograd, ("tanh", "hand_examples", "student_tests", "sabotage")))
    assert result.status == "graded", result.error
    repair = written(result)["tanh"]
    assert (repair["cell"], repair["line"]) == (cell, bug), repair

    muls = [op for op in all_operators().values() if op.check == "mul"]
    assert {op_id for op_id, _, _ in made} >= {op.id for op in muls}, [op_id for op_id, _, _ in made]
    for op_id, own, tree in made:
        before = last_class(ast.parse(own))
        drafts = [ast.dump(n) for n in before.body if isinstance(n, ast.FunctionDef) and n.name == "__mul__"]
        after = [ast.dump(n) for n in last_class(tree).body if isinstance(n, ast.FunctionDef) and n.name == "__mul__"]
        assert len(drafts) == 2 and after[0] == drafts[0], f"{op_id} changed the draft Python drops"
        if op_id in {op.id for op in muls}:
            assert after[1] != drafts[1], f"{op_id} left the __mul__ Python keeps alone"

    code = read_submission(Grading(path, micrograd)).code.text
    whole = ast.parse(code)
    for op in muls:
        mutant = op.mutated(code)
        values = [n for n in mutant.body if isinstance(n, ast.ClassDef) and n.name == "Value"]
        firsts = [n for n in whole.body if isinstance(n, ast.ClassDef) and n.name == "Value"]
        assert [ast.dump(v) for v in values[:2]] == [ast.dump(v) for v in firsts[:2]], op.id
        assert ast.dump(values[2]) != ast.dump(firsts[2]), op.id
