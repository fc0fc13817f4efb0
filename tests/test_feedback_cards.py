"""What a student reads is right, short and says nothing it must not (issue 19): a visible card never names a
hidden check, every card fits the cap wherever it is shown, and numbers have six significant digits."""

from __future__ import annotations

import dataclasses
import json
import re

from conftest import BASE_ENGINE

from grader import feedback
from grader.gradescope.results import results
from grader.grading import grade
from grader.render.terminal import render

ONE_BUG = BASE_ENGINE.read_text()


def mul_assigns(source: str) -> str:
    """The engine with `=` for `+=` in __mul__'s backward only."""
    start = source.index("def __mul__")
    end = source.index("out._backward", start)
    return source[:start] + source[start:end].replace("+=", "=") + source[end:]


def hidden(assignment, *ids):
    return dataclasses.replace(
        assignment,
        checks=tuple(dataclasses.replace(c, visibility="hidden") if c.id in ids else c for c in assignment.checks),
    )


def test_a_visible_card_never_names_a_hidden_check(tmp_path, engine_checks):
    """With accumulate hidden, an engine with `=` for `+=` in __mul__ fails it; do the visible cards that fail
    too (topo_order, gradcheck, training) say their cause in their own words, never 'same cause as accumulate'
    nor any other mention of it, in the student's result, its terminal table and its results.json, and exactly
    what a --public-only run, where the hidden check never runs, says?"""
    path = tmp_path / "micrograd_mine.py"
    path.write_text(mul_assigns(ONE_BUG))
    assignment = hidden(engine_checks, "accumulate")
    result = grade(path, assignment).redacted()
    visible = [c for c in result.checks if c.visibility == "visible" and c.status != "passed"]
    assert visible and next(c for c in result.checks if c.id == "accumulate").status == "failed"
    for check in visible:
        assert "accumulate" not in check.feedback, (check.id, check.feedback)
    assert any("Likely cause: in __mul__'s backward" in c.feedback for c in visible), [c.feedback for c in visible]
    text = render(result, assignment)
    sections = text.split("\n--- ")[1:]
    assert not [s for s in sections if "accumulate" in s and not s.startswith("accumulate:")], text
    shown = [t for t in results(result)["tests"] if t["visibility"] == "visible"]
    assert not [t["output"] for t in shown if "accumulate" in t["output"]]
    # What a visible card says does not depend on the hidden checks at all: it is what a --public-only run says.
    from grader.grading import Options

    public = {c.id: c.feedback for c in grade(path, assignment, Options(public_only=True)).checks}
    assert {c.id: c.feedback for c in result.checks if c.visibility == "visible"} == public


def test_hidden_mentions_leave_a_visible_sentence():
    """Are the grader's own references to a hidden check taken out of a sentence, and nothing else?"""
    text = (
        "Not judged: x (see topo_order). The first check above that fails (add, mul, tanh, accumulate...) names "
        "the rule to fix; see accumulate."
    )
    assert feedback.without_hidden(text, {"accumulate", "topo_order"}) == (
        "Not judged: x. The first check above that fails (add, mul, tanh...) names the rule to fix; see the checks "
        "above."
    )
    assert feedback.without_hidden(text, set()) == text


LOUD = ONE_BUG.replace(
    "    def __mul__(self, other):\n",
    "    def __mul__(self, other):\n        raise ValueError('\\n'.join(f'line {i} of 500' for i in range(500)))\n"
    + "        # a long method\n" * 80,
    1,
)


def test_no_card_is_over_the_cap_wherever_it_is_shown(grade_source, engine_checks):
    """An engine whose * raises a 500-line message: is every check's card, in the terminal, the result JSON and
    results.json, at most 40 lines, saying how much was left out?"""
    assert LOUD != ONE_BUG
    result = grade_source(LOUD, engine_checks)
    assert any("more lines not shown" in c.feedback for c in result.checks)
    for check in result.checks:
        code = check.counterexample.code.splitlines() if check.counterexample else []
        assert len(check.feedback.splitlines()) + len(code) + 4 <= feedback.CARD_LINES, check.id
    for section in render(result, engine_checks).split("\n--- ")[1:]:
        lines = section.split("\n\nScore:")[0].rstrip("\n").splitlines()
        assert len(lines) <= feedback.CARD_LINES, section
    for test in results(result)["tests"]:
        assert len(test["output"].splitlines()) <= feedback.CARD_LINES, test["output"]
    assert len(json.dumps(result.to_dict())) < 60_000
    from grader.render import html

    page = html.student_report(result, LOUD, "micrograd")
    for card in re.findall(r'<section class="card [^"]*" id="check-(\w+)">(.*?)</section>', page, re.S):
        source = re.findall(r'<div class="source">(.*?)</div>\s*$', card[1], re.S)
        text = re.sub(r"<[^>]+>", "", source[0]) if source else ""
        shown = [line for line in text.splitlines() if re.match(r"\s*\d+ ", line)]  # numbered code lines
        assert len(shown) <= feedback.CARD_LINES, (card[0], len(shown))
    assert "more lines of __mul__" in page


def significant(text: str) -> list[str]:
    """Decimal numbers in a text written with more than six significant digits."""
    found = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[+-]?\d+)?", text)
    return [n for n in found if len(n.lstrip("-").split("e")[0].replace(".", "").lstrip("0")) > 6]


def test_numbers_have_six_significant_digits_wherever_feedback_shows_them(tmp_path, engine_checks):
    """tanh's derivative taken on its input, and numerical_grad as a forward difference: do the sentences, the
    terminal's expected/got lines and the HTML report write 0.669542 and 12.61, never 0.6695418003129112 or
    12.61000000000001 (code to paste keeps its exact numbers)?"""
    from conftest import ZOO

    from grader.render import html

    assignment = dataclasses.replace(
        engine_checks,
        checks=tuple(c for c in engine_checks.checks if c.id in ("tanh", "hand_examples", "numerical_grad", "neuron")),
    )
    failed = set()
    for name in ("tanh_grad_from_input.py", "numgrad_forward_difference.py"):
        source = (ZOO / "buggy" / name).read_text()
        path = tmp_path / name
        path.write_text(source)
        result = grade(path, assignment)
        failed |= {c.id for c in result.checks if c.status == "failed"}
        assert not {c.id: significant(c.feedback) for c in result.checks if significant(c.feedback)}
        terminal = "\n".join(line for line in render(result, assignment).splitlines() if not line.startswith("    "))
        assert not significant(terminal), significant(terminal)
        page = html.student_report(result, source, "micrograd").split("<main>", 1)[1]
        page = re.sub(r"<pre id=\"code-.*?</pre>", "", page, flags=re.S)  # the code to paste
        page = re.sub(r"<div class=\"source\">.*?</div>\s*(?=</section>)", "", page, flags=re.S)  # the student's code
        assert not significant(re.sub(r"<[^>]+>", " ", page)), significant(page)
    assert {"tanh", "hand_examples", "numerical_grad"} <= failed, failed


HELPERS = """

    def copy(self):
        return Value(self.data)

    def log(self):
        return Value(math.log(self.data), (self,), 'log')

    def __eq__(self, other):
        return isinstance(other, Value) and abs(self.data - other.data) < 1e-9

    __hash__ = object.__hash__
"""
HELPER_TESTS = """import math
from micrograd_mine import Value


def test_copy_keeps_data():
    a = Value(2.0)
    assert a.copy().data == 2.0


def test_log_grad():
    a = Value(2.0)
    b = a.log()
    b.backward()
    assert math.isclose(a.grad, 0.5)


def test_mul_by_equality():
    a = Value(2.0)
    assert a * 3 == Value(6.0)


def test_add_grad():
    a, b = Value(2.0), Value(-3.0)
    (a + b).backward()
    assert a.grad == 1.0 and b.grad == 1.0
"""


def test_a_test_using_the_authors_own_helpers_is_told_which_and_the_interface(tmp_path, micrograd):
    """Tests that call Value.copy(), .log() or compare Values with an __eq__ of the author's own reject every
    correct engine: does wheat name, for each, what it uses that the interface has not, and list the interface
    every engine has? (The test that uses only the interface is not named.)"""
    from conftest import BASE_ENGINE as ENGINE

    source = ENGINE.read_text()
    source = source.replace("    def __repr__(self):", HELPERS.strip("\n") + "\n\n    def __repr__(self):", 1)
    (tmp_path / "micrograd_mine.py").write_text(source)
    (tmp_path / "test_micrograd.py").write_text(HELPER_TESTS)
    assignment = dataclasses.replace(
        micrograd, sabotages=(), checks=tuple(c for c in micrograd.checks if c.id in ("student_tests", "wheat"))
    )
    wheat = next(c for c in grade(tmp_path / "micrograd_mine.py", assignment).checks if c.id == "wheat")
    assert wheat.status == "failed", wheat.feedback
    lines = {line.split(" rejects")[0].strip(): line for line in wheat.feedback.splitlines() if " rejects " in line}
    assert set(lines) == {"test_copy_keeps_data", "test_log_grad", "test_mul_by_equality"}, wheat.feedback
    assert (
        "it uses .copy, which your Value has but the assignment's interface does not" in lines["test_copy_keeps_data"]
    )
    assert "it uses .log," in lines["test_log_grad"]
    assert "== (your Value's __eq__)" in lines["test_mul_by_equality"]
    assert "Every engine has only: Value(data) with .backward(), .data," in wheat.feedback, wheat.feedback
    assert ".copy" not in wheat.feedback.split("Every engine has only:")[1]


def test_an_engine_importing_torch_is_graded_the_same_wherever_torch_is(grade_source, engine_checks):
    """torch is installed here and not on Gradescope: is an engine that imports it (without using it) graded,
    with torch a stand-in and a note saying so, rather than graded here and an import error there?"""
    forward = dataclasses.replace(engine_checks, checks=tuple(c for c in engine_checks.checks if c.id == "forward"))
    result = grade_source("import torch\n" + ONE_BUG, forward)
    assert result.status == "graded" and result.score == result.max_score, result.error
    assert any("imports torch, which is not available where it is graded" in n for n in result.notes), result.notes
