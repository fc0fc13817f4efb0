"""Verified repair hints (issue 31): the line to change, found in the student's own file and proven by a regrade.

Each misconception with an inverse edit is planted by hand on one line of three correct engines in different
styles (tests/repair_bugs.py): the inverse must find that line. End to end, the grading offers the repair on
the check naming the cause, and the test applies its `after` itself and grades the result again: the checks
the repair says it fixes pass. No correct engine gets a repair, nor costs a regrade.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest
from conftest import CORRECT_ENGINES, REFERENCE_SOURCE, quick_assignment
from repair_bugs import BUGS, NOT_PLANTED, PRIORITY, STYLES, buggy, correct, written

from grader import spec
from grader.checks.diagnose import SIMULATED
from grader.classfiles import ClassSummary
from grader.commands.reteach import lesson_engine
from grader.errors import NotApplicable, SpecError
from grader.grading import grade
from grader.insight.misconceptions import tally
from grader.render.html import student_report
from grader.render.terminal import render
from grader.repair.inverse import DELEGATIONS, INVERSES, edit_for
from grader.repair.lesson import on_lesson
from grader.repair.repairs import candidates
from grader.sabotage import all_operators, wheats
from grader.sabotage.trees import last_class, last_method, unparse

QUICK = (
    "forward",
    "add",
    "mul",
    "pow",
    "tanh",
    "relu",
    "neg_sub",
    "accumulate",
    "hand_examples",
    "gradcheck",
    "neuron",
)
"""The engine checks the end-to-end tests grade with (topo_order and training are slow, and repeat these)."""


CHECKS = {
    # the most common causes (PRIORITY): the checks they fail, and some they must not break
    "assign_in_add": ("add", "mul", "accumulate", "gradcheck"),
    "assign_in_mul": ("add", "mul", "accumulate", "gradcheck"),
    "missing_outgrad_mul": ("mul", "neg_sub", "gradcheck"),
    "tanh_": ("tanh", "hand_examples", "gradcheck"),
    "relu_flipped": ("relu", "gradcheck"),
    "pow_": ("pow", "gradcheck"),
    # every other cause, in three styles: the one check that names it (measured, the smallest that does)
    "assign_in_": ("accumulate",),
    "add_half": ("add",),
    "missing_outgrad_": ("add", "mul", "pow", "tanh", "relu"),
    "mul_own_data": ("mul",),
    "relu_negative_grad": ("relu",),
    "topo_not_reversed": ("hand_examples",),
    "missing_seed": ("hand_examples",),
    "children_not_tuple": ("tanh",),
    "missing___r": ("forward",),
    "sub_as_add": ("neg_sub",),
    "neuron_no_bias": ("neuron", "training"),  # training too: it names the cause on its own evidence
}
"""The checks each cause's end-to-end test grades with (the first entry its id starts with): those it fails,
and for the common causes some it must not break. Fewer checks, a quicker test."""


def checks_for(cause: str) -> tuple[str, ...]:
    return next(checks for start, checks in CHECKS.items() if cause.startswith(start))


def assignment(
    micrograd: spec.Assignment, level: str = "diff", hidden: tuple[str, ...] = (), checks: tuple[str, ...] = QUICK
) -> spec.Assignment:
    checks = tuple(
        dataclasses.replace(c, visibility="hidden" if c.id in hidden else "visible")
        for c in micrograd.checks
        if c.id in checks
    )
    return dataclasses.replace(
        micrograd,
        checks=checks,
        search=dataclasses.replace(micrograd.search, max_examples=15),
        feedback=spec.Feedback(level),
    )


def graded(tmp_path: Path, text: str, task: spec.Assignment, name: str = "mine"):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "micrograd_mine.py").write_text(text, encoding="utf-8")
    return grade(folder / "micrograd_mine.py", task)


def apply(text: str, repair: dict) -> str:
    """The repair applied as a reader of the result JSON would: each place's `before` lines replaced by its
    `after` lines (an insertion has no `before`), from the last line up."""
    lines = text.split("\n")
    for place in sorted([repair, *repair.get("also", [])], key=lambda p: p["line"], reverse=True):
        old = place["before"].split("\n") if place["before"] else []
        start = place["line"] - 1
        assert lines[start : start + len(old)] == old
        lines[start : start + len(old)] = place["after"].split("\n")
    return "\n".join(lines)


def expected_line(cause: str, text: str, line: int) -> int:
    """Where the repair goes: the planted line, or for a missing reflected operator the line after the method
    it is written beside."""
    if cause.startswith("missing___r"):
        beside = last_method(last_class(ast.parse(text)), DELEGATIONS[cause.removeprefix("missing_")][0])
        return beside.end_lineno + 1
    return line


# -- the inverse edits, on the student's source ------------------------------------------------------------


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("cause", sorted(BUGS))
def test_the_inverse_finds_the_planted_line_and_undoes_it(cause, style):
    text, line = buggy(cause, style)
    edit = edit_for(text, cause)
    assert edit is not None, f"no edit for {cause} in {style}"
    assert expected_line(cause, text, line) in [c.line for c in edit.changes]
    fixed = edit.applied(text)
    ast.parse(fixed)
    assert fixed != text
    if fixed != correct(style):  # a different spelling of the right rule: only the planted lines differ
        changed = {c.line for c in edit.changes}
        assert all(c.before == "" or c.line in changed for c in edit.changes)
        assert len(fixed.splitlines()) - len(text.splitlines()) == sum(
            c.after.count("\n") + 1 for c in edit.changes if not c.before
        )


def test_a_file_with_windows_line_ends_gets_the_same_edit():
    text, line = buggy("assign_in_add", "lecture")
    edit = edit_for(text.replace("\n", "\r\n"), "assign_in_add")
    assert edit == edit_for(text, "assign_in_add") and edit.changes[0].line == line
    assert edit.applied(text.replace("\n", "\r\n")).replace("\r\n", "\n") == correct("lecture")


def test_every_cause_with_an_inverse_is_planted_in_three_styles():
    planted = {cause for cause, styles in BUGS.items() if set(styles) == set(STYLES)}
    assert planted == set(BUGS) == set(INVERSES) - set(NOT_PLANTED)  # NOT_PLANTED says why each is not
    assert all(any(cause.startswith(start) for start in CHECKS) for cause in BUGS)  # each graded end to end


def test_equals_in_every_backward_gets_one_repair_of_every_method(tmp_path, micrograd):
    """`=` for `+=` in the backward of every operation is one misconception named once with every method: does it
    get one verified repair changing each method's lines (a repair of __add__ alone fixes nothing), and does
    applying it make the checks it names pass?"""
    text = (Path(__file__).parent.parent / "examples" / "forgot_plus_equals.py").read_text()
    task = assignment(micrograd, checks=("add", "mul", "accumulate", "gradcheck"))
    result = graded(tmp_path, text, task)
    repairs = written(result)
    assert list(repairs) == ["accumulate"], [(c.id, c.status, c.cause) for c in result.checks]
    repair = repairs["accumulate"]
    methods = {repair["method"], *(p["method"] for p in repair.get("also", []))}
    assert {"__add__", "__mul__", "__pow__", "tanh", "relu"} <= methods, methods
    assert "the _backward of __add__, __mul__, __pow__, tanh and relu" in " ".join(render(result, task).split())
    fixed = graded(tmp_path, apply(text, repair), assignment(micrograd, checks=tuple(repair["fixes"])), "fixed")
    assert {c.id: c.status for c in fixed.checks} == dict.fromkeys(repair["fixes"], "passed")


@pytest.mark.parametrize("engine", CORRECT_ENGINES + [Path(f"{s}.py") for s in STYLES], ids=lambda p: p.stem)
def test_a_correct_engine_has_nothing_to_undo_for_the_causes_the_grader_names(engine):
    """The edits a correct engine admits are of causes no check of it names (a method it does not define,
    which it does not need): the common causes find nothing at all."""
    text = correct(engine.stem) if engine.parent == Path(".") else engine.read_text()
    for cause in PRIORITY + ("topo_not_reversed", "missing_seed", "children_not_tuple", "sub_as_add"):
        assert edit_for(text, cause) is None, cause


def _mutants():
    """Every wheat's mutant of every mutation a cause with an inverse names (diagnose's replays and the
    sabotage operators), as the grader makes them."""
    pairs = [(c, fn) for c, fn in SIMULATED] + [(op.cause.id, op.rewrite) for op in all_operators().values()]
    found = {}
    for cause, mutation in pairs:
        for wheat in wheats():
            tree = ast.parse(wheat.source)
            try:
                mutation(tree)
            except NotApplicable:
                continue
            if cause in INVERSES and cause != "children_not_tuple":  # replayed as children dropped, not (self)
                found[(cause, wheat.id)] = (unparse(tree), wheat.source)
    return found


MUTANTS = _mutants()


@pytest.mark.parametrize("key", sorted(MUTANTS), ids=lambda k: f"{k[0]}@{k[1]}")
def test_the_inverse_undoes_the_mutation_on_every_wheat(key):
    """Where the edit writes back what the mutation took, the wheat's own tree comes back (and so its full
    marks); where it writes the rule another way (a seed line before the loop, a `pass` left), it is graded
    by grader selftest."""
    mutant, wheat = MUTANTS[key]
    edit = edit_for(mutant, key[0])
    assert edit is not None
    fixed = ast.parse(edit.applied(mutant))
    rewritten = {"missing_seed", "neuron_no_bias", "missing___radd__", "relu_negative_grad", "tanh_square_missing"}
    if key[0] not in rewritten:
        assert ast.dump(fixed) == ast.dump(ast.parse(wheat))


# -- end to end: found, verified, shown; applied and regraded by the test ------------------------------------


def _end_to_end(tmp_path, micrograd, cause, style):
    text, line = buggy(cause, style)
    task = assignment(micrograd, checks=checks_for(cause))
    result = graded(tmp_path, text, task)
    repairs = written(result)
    assert len(repairs) == 1, [(c.id, c.status, c.cause) for c in result.checks]
    ((check, repair),) = repairs.items()
    assert next(c for c in result.checks if c.id == check).cause == cause
    assert repair["verified"] is True and repair["after"]
    assert expected_line(cause, text, line) in [repair["line"]] + [p["line"] for p in repair.get("also", [])]
    assert check in repair["fixes"]
    fixed = graded(tmp_path, apply(text, repair), assignment(micrograd, checks=tuple(repair["fixes"])), "fixed")
    assert {c.id: c.status for c in fixed.checks} == dict.fromkeys(repair["fixes"], "passed")


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("cause", PRIORITY)
def test_a_common_cause_gets_its_repair_and_the_repair_fixes_it(tmp_path, micrograd, cause, style):
    _end_to_end(tmp_path, micrograd, cause, style)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("cause", sorted(set(BUGS) - set(PRIORITY)))
def test_every_other_cause_gets_its_repair_in_every_style(tmp_path, micrograd, cause, style):
    _end_to_end(tmp_path, micrograd, cause, style)


def test_a_bias_parameters_leaves_out_is_named_and_repaired(tmp_path, micrograd):
    """A Neuron that adds its bias but leaves it out of parameters() (training never moves it): do the neuron
    check and the training check both name the cause, on the evidence (the bias set by the grader shows in the
    output; the losses are the lesson's neuron's with its bias never trained), and does the one repair, of
    parameters() alone, make both pass?"""
    text = correct("lecture").replace("return self.w + [self.b]", "return self.w")
    task = assignment(micrograd, checks=("neuron", "training"))
    result = graded(tmp_path, text, task)
    by_id = {c.id: c for c in result.checks}
    assert by_id["neuron"].cause == by_id["training"].cause == "neuron_no_bias"
    assert "parameters() leaves it out, so training never updates it" in by_id["neuron"].feedback
    assert "with its bias b left out of parameters(), never trained" in by_id["training"].feedback
    assert "Same cause as neuron" in by_id["training"].feedback
    repair = written(result)["neuron"]
    assert (repair["method"], repair["after"].strip(), "also" in repair) == (
        "Neuron.parameters",
        "return self.w + [self.b]",
        False,
    )
    assert repair["fixes"] == ["neuron", "training"]
    assert graded(tmp_path, apply(text, repair), task, "fixed").score == task.max_score


def test_two_different_bugs_each_get_their_repair(tmp_path, micrograd):
    text, pow_line = buggy("pow_off_by_one", "slots_gradfn")
    text = text.replace("a.grad += (1.0 - t * t) * res.grad", "a.grad += (1.0 - a.data * a.data) * res.grad")
    task = assignment(micrograd, checks=("pow", "tanh", "hand_examples", "gradcheck"))
    result = graded(tmp_path, text, task)
    causes = {c.id: c.cause for c in result.checks}
    repairs = {causes[check]: repair for check, repair in written(result).items()}
    assert set(repairs) == {"pow_off_by_one", "tanh_grad_from_input"}
    assert repairs["pow_off_by_one"]["line"] == pow_line
    assert repairs["tanh_grad_from_input"]["after"] == "            a.grad += (1.0 - t * t) * res.grad"
    page = student_report(result, text)
    assert page.count("Where to fix it (verified)") == 2 and "(1.0 - t * t) * res.grad" in page  # diff: the change
    insight = {m["id"]: m for m in tally([("ada", result)])["misconceptions"]}
    assert insight["pow_off_by_one"]["repaired"] == 1 and insight["tanh_grad_from_input"]["repaired"] == 1
    both = apply(apply(text, repairs["pow_off_by_one"]), repairs["tanh_grad_from_input"])
    assert graded(tmp_path, both, task, "fixed").score == task.max_score


@pytest.mark.parametrize("engine", CORRECT_ENGINES + [Path(f"{s}.py") for s in STYLES], ids=lambda p: p.stem)
def test_a_correct_engine_never_gets_a_repair_nor_a_regrade(tmp_path, micrograd, engine):
    text = correct(engine.stem) if engine.parent == Path(".") else engine.read_text()
    checks = ("add", "mul", "tanh", "relu", "hand_examples", "neuron")  # neuron: its bias is never said missing
    result = graded(tmp_path, text, assignment(micrograd, checks=checks))
    assert result.score == result.max_score
    assert not any(c.repair for c in result.checks) and not written(result)
    assert candidates(result, text) == []  # nothing to verify: nothing regraded


def test_where_names_the_line_and_a_hidden_check_gets_none(tmp_path, micrograd):
    text, line = buggy("tanh_grad_from_input", "lecture")
    result = graded(tmp_path, text, assignment(micrograd, "where", ("tanh",), ("tanh", "hand_examples")))
    by_id = {c.id: c for c in result.checks}
    assert by_id["tanh"].repair is None  # hidden, though it names the cause first
    repair = written(result)["hand_examples"]
    assert repair["line"] == line and repair["after"] == "" and repair["verified"] is True
    assert "tanh" not in repair["fixes"]  # a visible check never names a hidden one
    assert "tanh" not in result.redacted().checks[[c.id for c in result.checks].index("tanh")].artifacts
    shown = render(result, assignment(micrograd, "where"))
    quoted = repair["before"].strip()  # the line to change, quoted as code
    assert f"line {line} (`{quoted}`), in tanh's _backward" in " ".join(shown.split()), shown
    assert "1 - t**2) * out.grad" not in shown
    page = student_report(result, text)
    assert "Where to fix it (verified)" in page and "1 - t**2) * out.grad" not in page
    code = page.split('class="code repair-code"')[1].split("</pre>")[0]  # the student's code around the line
    assert code.count('<mark class="repair-line">') == 1 and ">_backward</span>" in code  # the line marked


def test_off_offers_nothing(tmp_path, micrograd):
    text, _ = buggy("tanh_grad_from_input", "lecture")
    result = graded(tmp_path, text, assignment(micrograd, "off", checks=("tanh",)))
    assert any(c.cause == "tanh_grad_from_input" for c in result.checks)
    assert not any(c.repair for c in result.checks) and not written(result)


def test_the_assignment_says_what_a_student_sees(tmp_path):
    folder = tmp_path / "a"
    folder.mkdir()
    base = (Path(__file__).parent.parent / "assignments" / "micrograd" / "assignment.toml").read_text()
    (folder / "assignment.toml").write_text(base + '\n[feedback]\nrepair = "diff"\n')
    from grader import catalog

    assert catalog.load(str(folder)).feedback.repair == "diff"
    assert catalog.load("micrograd").feedback.repair == "where"
    (folder / "assignment.toml").write_text(base + '\n[feedback]\nrepair = "all"\n')
    with pytest.raises(SpecError, match=r"feedback.repair = 'all': expected one of off, where, diff"):
        catalog.load(str(folder))


def test_a_neuron_with_too_few_parameters_and_no_evidence_of_why_is_named_no_cause(tmp_path, micrograd):
    """parameters() holds only the weights, but the neuron adds a bias kept as a plain number: its output is
    neither tanh(w . x) nor a Value parameters() leaves out. Is the count still failed, and no cause (so no
    repair) named on a guess?"""
    text = (
        correct("lecture")
        .replace("self.b = Value(random.uniform(-1, 1))", "self.b = 0.3")
        .replace("return self.w + [self.b]", "return self.w")
    )
    result = graded(tmp_path, text, assignment(micrograd, checks=("neuron",)))
    (neuron,) = result.checks
    assert neuron.status == "failed" and neuron.cause is None and "repair" not in neuron.artifacts
    assert "returned 3 values; expected 4" in neuron.feedback
    assert "It looks like your neuron has no bias b, or parameters() leaves it out." in neuron.feedback


# -- beyond the terminal: Gradescope's results.json, the reteach notebook ---------------------------------------


def test_gradescope_shows_the_verified_repair_on_the_visible_check_only(tmp_path):
    """Does the results.json the Gradescope entry writes carry the verified repair in the visible check's output
    (where, and at `diff` the change), none on a hidden check naming the same cause, and only lines of the
    student's own file (as written, or as the repair writes them)?"""
    folder = quick_assignment(tmp_path / "assignment", ("neuron", "training"), repair="diff")
    toml = (folder / "assignment.toml").read_text()
    hidden = toml.replace("training       = { points = 8 }", 'training       = { points = 8, visibility = "hidden" }')
    assert hidden != toml
    (folder / "assignment.toml").write_text(hidden)
    text, line = buggy("neuron_no_bias", "slots_gradfn")
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "micrograd_mine.py").write_text(text)
    run = subprocess.run(
        [sys.executable, "-m", "grader.gradescope", "--root", str(root), "--assignment", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    tests = {t["name"].split(":")[0]: t for t in json.loads((root / "results" / "results.json").read_text())["tests"]}
    neuron, training = tests["neuron"], tests["training"]
    assert training["visibility"] == "hidden" and "Same cause as neuron" in training["output"]
    assert "Verified fix" not in training["output"] and " | " not in training["output"]
    shown = neuron["output"]
    assert f"Verified fix: lines {line} and {line + 3}, in Neuron.__call__ and Neuron.parameters" in shown
    assert shown.index("Likely cause") < shown.index("Verified fix") < shown.index("Smallest case")
    changed = re.findall(r"^([-+]) +(\d+) \| (.*)$", shown, flags=re.M)
    assert [(sign, int(n)) for sign, n, _ in changed] == [("-", line), ("+", line), ("-", line + 3), ("+", line + 3)]
    assert {sign: code for sign, _, code in changed[:2]} == {
        "-": "return total.tanh()",
        "+": "return (total + self.b).tanh()",
    }
    mine = {s.strip() for s in text.splitlines()} | {s.strip() for s in correct("slots_gradfn").splitlines()}
    assert all(code.strip() in mine for _, _, code in changed)  # the student's lines, never another engine's


def test_the_reteach_notebook_shows_the_edit_on_the_lessons_engine(tmp_path, micrograd):
    """Does the reteach notebook, for a misconception some students got a verified repair of, show that edit on
    the lesson's engine (the line as a student got it wrong, the line as the repair writes it), never a line of a
    student's file, and still run top to bottom?"""
    text, _ = buggy("tanh_grad_from_input", "slots_gradfn")
    result = graded(tmp_path, text, assignment(micrograd, checks=("tanh", "hand_examples")))
    assert any(c.repair for c in result.checks)
    insight = tally([("ada", result)])
    out = tmp_path / "batch"
    out.mkdir()
    summary = ClassSummary(assignment="micrograd", title="micrograd", misconceptions=tuple(insight["misconceptions"]))
    (out / "summary.json").write_text(summary.to_json())
    path = tmp_path / "reteach.ipynb"
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", "export", "reteach", "--from", str(out), "--out", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    nb = nbformat.read(str(path), as_version=4)
    section = next(c.source for c in nb.cells if c.source.startswith("## 1. "))
    assert "**One edit fixes it.** 1 student got a verified repair" in section
    diff = section.split("```diff\n")[1].split("```")[0].splitlines()
    assert diff == ["- self.grad += (1 - self.data ** 2) * out.grad", "+ self.grad += (1 - t ** 2) * out.grad"]
    lesson = {s.strip() for s in unparse(ast.parse(lesson_engine())).splitlines()}
    assert diff[1][2:] in lesson and diff[0][2:] not in lesson  # the repair writes the lesson's own line
    student = {s.strip() for s in text.splitlines() if s.strip()} - lesson
    assert not [s for s in student if s in path.read_text()], "a line of the student's file is in the notebook"
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


def test_the_lessons_engine_shows_the_edit_of_every_cause_planted_in_the_styles():
    """Can the reteach notebook show, on the lesson's engine, the edit of every misconception the styles' repairs
    are tested for: planted there, found, and giving the lesson's engine back (its own lines, as ast writes them,
    where the edit restores its tree)?"""
    engine = lesson_engine()
    lesson = {_spelled(s) for s in unparse(ast.parse(engine)).splitlines()}
    shown = {cause: on_lesson(cause, engine) for cause in sorted(BUGS)}
    assert [cause for cause, changes in shown.items() if not changes] == []
    # the rule written another way (the reflected operators without the lesson's annotations): the edited
    # engine's gradients are the lesson's, which on_lesson checks
    rewritten = {"missing_seed", "relu_negative_grad", "missing___radd__", "missing___rmul__", "missing___rsub__"}
    for cause, changes in shown.items():
        if cause not in rewritten:
            assert all(_spelled(line) in lesson for c in changes for line in c.after.split("\n")), (cause, changes)
        assert all(_spelled(c.before) not in lesson for c in changes if c.before), (cause, changes)


def _spelled(line: str) -> str:
    """A line as ast writes it back (`t**2` and `t ** 2` alike), where it is a statement of its own."""
    try:
        return ast.unparse(ast.parse(line.strip()))
    except SyntaxError:
        return line.strip()


def test_pow_written_through_a_local_gets_its_repair(tmp_path, micrograd):
    """The lesson's own __pow__ computes its derivative in a local (`local = ... k * self.data ** (k - 1)`): with
    `** k` there, is the local's line the one repaired, and does the repair make pow pass?"""
    text = REFERENCE_SOURCE.replace("k * self.data ** (k - 1)", "k * self.data ** k")
    assert text != REFERENCE_SOURCE
    line = text[: text.index("k * self.data ** k")].count("\n") + 1
    task = assignment(micrograd, checks=("pow",))
    result = graded(tmp_path, text, task)
    (pow_,) = result.checks
    repair = written(result)["pow"]
    assert pow_.cause == "pow_off_by_one" and repair["line"] == line
    assert repair["after"].endswith("k * self.data ** (k - 1)  # x**0 is constant, also at x = 0")
    assert graded(tmp_path, apply(text, repair), task, "fixed").score == task.max_score


def test_a_repairs_text_passes_the_one_cleaning_pass(tmp_path, micrograd):
    """The repair quotes the student's own lines: is a path of the grading machine in them (here the grader's
    Python, in a comment on the line to change) taken out, as in every other text of the result, in the result,
    its JSON and the terminal (before: the repair was attached after the result was cleaned)?"""
    host = os.path.realpath(sys.prefix)
    text, line = buggy("tanh_grad_from_input", "lecture")
    planted = "self.grad += (1 - self.data**2) * out.grad"
    text = text.replace(planted, f"{planted}  # notes in {host}/lesson.txt")
    task = assignment(micrograd, checks=("tanh",))
    result = graded(tmp_path, text, task)
    repair = written(result)["tanh"]
    assert repair["line"] == line and "t**2" in repair["after"]
    assert host not in repair["before"] + repair["after"] and "<python>/lesson.txt" in repair["before"]
    assert "<python>/lesson.txt" in repair["after"]
    assert host not in result.to_json() and host not in render(result, task)
