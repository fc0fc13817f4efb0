"""What a student reads is right, short and says nothing it must not (issue 19): a visible card never names a
hidden check, every card fits the cap wherever it is shown, and numbers have six significant digits."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

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
    return dataclasses.replace(assignment, checks=tuple(dataclasses.replace(c, visibility="hidden") if c.id in ids
                                                        else c for c in assignment.checks))


def test_a_visible_card_never_names_a_hidden_check(tmp_path, engine_checks):
    """With accumulate hidden, an engine with `=` for `+=` in __mul__ fails it; do the visible cards that fail
    too (topo_order, gradcheck, training) say their cause in their own words, never 'same cause as accumulate'
    nor any other mention of it, in the student's result, its terminal table and its results.json?"""
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


def test_hidden_mentions_leave_a_visible_sentence():
    """Are the grader's own references to a hidden check taken out of a sentence, and nothing else?"""
    text = ("Not judged: x (see topo_order). The first check above that fails (add, mul, tanh, accumulate...) names "
            "the rule to fix; see accumulate.")
    assert feedback.without_hidden(text, {"accumulate", "topo_order"}) == (
        "Not judged: x. The first check above that fails (add, mul, tanh...) names the rule to fix; see the checks "
        "above.")
    assert feedback.without_hidden(text, set()) == text
