"""Is each misconception worded once (grader/causes.py), named by id everywhere else, and said once
in a grading: 'Likely cause' on the first check failing from it, 'Same cause as <that check>' on the
others, decided by comparing ids, so that rewording a cause cannot break it?"""

from __future__ import annotations

import ast
import dataclasses

import pytest
from conftest import BASE_ENGINE, ROOT

from grader import causes
from grader.causes import CAUSES, said_in
from grader.checks.suite import SUITE_CHECKS
from grader.sabotage import all_operators

WINDOW = 40
"""Characters of a cause's words another module must share with it to count as wording it again."""


def test_every_operator_names_a_registered_cause():
    """Does each sabotage operator plant a cause of the registry, say that cause's words, and leave the
    wording to it (its function's docstring, if any, does not word the misconception again)?"""
    for op in all_operators().values():
        assert CAUSES.get(op.cause.id) is op.cause, op.id
        assert op.misconception == op.cause.sentence
        doc = " ".join((op.rewrite.__doc__ or "").split())
        assert not any(p in doc for text in (op.cause.words, op.cause.more) if text for p in _pieces(text)), op.id


def _strings(path) -> list[str]:
    """Every string a module may show (the literal parts of f-strings included, docstrings left out: they
    describe the code to its readers), each on one line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        " ".join(node.value.split())
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def _pieces(text: str) -> list[str]:
    return [text] if len(text) <= WINDOW else [text[i : i + WINDOW] for i in range(0, len(text) - WINDOW + 1, 10)]


def test_each_cause_is_worded_in_one_module():
    """Do a cause's words (or any 40 characters of them) appear in no message of grader/ but causes.py's? (What
    more a cause says, the right rule, is every rule check's to say too: in its title and its hint.)"""
    strings = {path.relative_to(ROOT).as_posix(): _strings(path) for path in (ROOT / "grader").rglob("*.py")}
    for cause in CAUSES.values():
        pieces = _pieces(cause.words)
        where = {module for module, found in strings.items() if any(p in s for p in pieces for s in found)}
        assert where <= {"grader/causes.py"}, (cause.id, where)


def test_said_once_however_worded():
    """Is the first failing check told the cause, and the next 'same cause as' it, whatever the words?"""
    cause = CAUSES["assign_in_add"]
    first = said_in("a.grad should be 2 but your engine gives 1.", cause.id)
    assert first == f"a.grad should be 2 but your engine gives 1.\nLikely cause: {cause.sentence}."
    again = said_in("b.grad should be 2 but your engine gives 1.", cause.id, "accumulate")
    assert again == f"b.grad should be 2 but your engine gives 1.\nSame cause as accumulate: {cause.words}."
    assert said_in("raised TypeError\nTraceback ...", cause.id).endswith(f"\nLikely cause: {cause.sentence}.")
    assert said_in("no cause here.", None) == said_in("no cause here.", "not_a_cause") == "no cause here."


def test_one_misconception_in_several_methods_is_said_once_with_each():
    """Is `=` for `+=` (or a _backward on the input) found in several methods said once, naming each method
    once, its first cause's id kept for 'same cause as', and left as it is when the ids are of no one family?"""
    ids = ("assign_in_add", "assign_in_mul", "assign_in_tanh")
    said = said_in("a.grad should be 2 but your engine gives 1.", ids[0], None, ids[1:])
    assert said.splitlines()[1] == f"Likely cause: {causes.several(ids).sentence}."
    assert all(said.count(method) == 1 for method in ("__add__", "__mul__", "tanh")), said
    again = said_in("x.", ids[0], "accumulate", ids[1:])
    assert again == f"x.\nSame cause as accumulate: {causes.several(ids).words}."
    on_input = causes.several(("backward_on_input_tanh", "backward_on_input_relu"))
    assert on_input.id == "backward_on_input_tanh" and on_input.also == ("backward_on_input_relu",)
    assert "tanh and relu each attach" in on_input.words
    mixed = said_in("x.", "assign_in_add", None, ("missing_seed",))
    assert mixed == said_in("x.", "assign_in_add")
    assert causes.several(("assign_in_add",)).sentence == CAUSES["assign_in_add"].sentence


def test_no_cause_is_cut():
    """Is every cause said on a line of its own, short enough that the cap on a feedback line's length
    (feedback.LINE_CHARS, which cuts with '...') never reaches it, indented as forward's list indents it?"""
    from grader.feedback import LINE_CHARS, capped

    every = [causes.several(tuple(i for i in CAUSES if i.startswith(prefix))) for prefix in causes.FAMILIES]
    for cause in [*CAUSES.values(), *every]:
        said = said_in("a.grad should be 2 but your engine gives 1.", cause.id, None, cause.also)
        assert said.splitlines()[1] == f"Likely cause: {cause.sentence}.", cause.id
        listed = f"    Likely cause: {cause.sentence}."
        assert len(listed) <= LINE_CHARS and capped(listed, 5) == listed, (cause.id, len(listed))


ASSIGN_IN_ADD = (
    BASE_ENGINE.read_text()
    .replace("self.grad += out.grad\n", "self.grad = out.grad\n", 1)
    .replace("other.grad += out.grad\n", "other.grad = out.grad\n", 1)
)
"""`=` for `+=` in __add__ alone (in every rule, the cause is said with every method: test_causes_several.py)."""


def _grade_once(grade_source, micrograd):
    result = grade_source(ASSIGN_IN_ADD, micrograd.without(SUITE_CHECKS))
    failing = [c for c in result.checks if c.cause == "assign_in_add"]
    assert len(failing) >= 2, [(c.id, c.status, c.cause) for c in result.checks]
    return failing


@pytest.mark.parametrize("reworded", [False, True], ids=["as written", "reworded"])
def test_one_misconception_is_explained_once(reworded, grade_source, micrograd, monkeypatch):
    """Does an engine with one misconception, failing several checks, hear it explained by the first and
    'same cause as' it from the others, even with the cause's words changed (the regression of matching
    the feedback's text)?"""
    if reworded:
        new = dataclasses.replace(
            CAUSES["assign_in_add"], words="the sum of paths is lost: reworded", more="another way to put it"
        )
        monkeypatch.setitem(causes.CAUSES, "assign_in_add", new)
    cause = CAUSES["assign_in_add"]
    first, *others = _grade_once(grade_source, micrograd)
    assert first.feedback.count(f"Likely cause: {cause.sentence}.") == 1, first.feedback
    for other in others:
        assert "Likely cause" not in other.feedback, other.feedback
        assert other.feedback.endswith(f"\nSame cause as {first.id}: {cause.words}."), other.feedback
