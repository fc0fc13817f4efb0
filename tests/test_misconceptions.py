"""Is each classic misconception named, in the lesson's words, by the check it belongs to, and said
once: every other check it fails points back to that one ('same cause as <check>')?

Engines are single-bug files of the corpus and the zoo (written for this project), and a few
made here from a correct zoo engine by changing one line. Which other checks pass is what
tests/test_corpus.py holds against an independent ground truth."""

from __future__ import annotations

import pytest
from conftest import BASE_ENGINE, HERE, ZOO

from grader.checks.suite import SUITE_CHECKS

CORPUS = HERE / "corpus" / "engines"
BASE = BASE_ENGINE.read_text()


def _variant(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


CASES = [
    # (engine source, the check that names it, words of the misconception)
    ((CORPUS / "missing_seed.py").read_text(), "hand_examples", "never sets the output's gradient to 1"),
    (
        (ZOO / "buggy" / "assign_not_accumulate.py").read_text(),
        "accumulate",
        "in the backward of __add__, __mul__, __pow__, tanh and relu, `=` replaces",
    ),
    ((CORPUS / "pow_assign_not_accumulate.py").read_text(), "accumulate", "in __pow__'s backward, `=` replaces"),
    ((CORPUS / "missing_radd_rmul.py").read_text(), "forward", "Value has no __radd__"),
    ((CORPUS / "relu_self_not_tuple.py").read_text(), "relu", "a one-element tuple needs a comma, (self,)"),
    ((CORPUS / "topo_not_reversed.py").read_text(), "topo_order", "walks the nodes from the leaves up"),
    ((CORPUS / "naive_recursion.py").read_text(), "topo_order", "a node reached twice is processed twice"),
    ((CORPUS / "tanh_grad_from_input.py").read_text(), "tanh", "taken on its input, 1 - x**2"),
    ((CORPUS / "pow_k_x_to_k.py").read_text(), "pow", "k * x**k"),
    ((CORPUS / "relu_negative_grad.py").read_text(), "relu", "passes the gradient where its input is negative"),
    ((CORPUS / "eq_hash_by_data.py").read_text(), "topo_order", "two different nodes holding the same number"),
    ((CORPUS / "backward_shadowed.py").read_text(), "topo_order", "backward() changes no gradient at all"),
]


@pytest.mark.parametrize("source, check_id, words", CASES, ids=[f"{c[1]}: {c[2][:30]}" for c in CASES])
def test_the_misconception_is_named_once(source, check_id, words, grade_source, micrograd):
    """Does the check the misconception belongs to name it, and does every other check failing from
    the same cause say 'same cause as' that check instead of repeating or guessing?"""
    result = grade_source(source, micrograd.without(SUITE_CHECKS))
    checks = {c.id: c for c in result.checks}
    owner = checks[check_id]
    assert owner.status in ("failed", "error"), owner
    assert words in owner.feedback, owner.feedback
    cause = owner.cause
    assert cause, owner
    for other in result.checks:
        if other.id != check_id and other.cause == cause:
            assert f"Same cause as {check_id}" in other.feedback or other.id < check_id, other.feedback
            assert words not in other.feedback or f"Same cause as {check_id}" in other.feedback


def test_an_order_that_follows_a_set_is_named(grade_source, micrograd):
    """Does an engine whose order follows a set (and so changes from run to run) hear exactly that?"""
    source = (HERE / "fixtures" / "nondeterministic" / "bfs_set_order.py").read_text()
    result = grade_source(source, micrograd.without(SUITE_CHECKS))
    unstable = [c for c in result.checks if "children kept in a set" in c.feedback]
    assert unstable and all(c.status == "failed" for c in unstable)


def test_a_relu_with_its_condition_flipped_is_named(grade_source, micrograd):
    """Does relu passing the gradient where the input is negative and not where it is positive hear so?"""
    source = _variant("self.grad += (self.data > 0) * out.grad", "self.grad += (self.data < 0) * out.grad")
    relu = next(c for c in grade_source(source, micrograd.without(SUITE_CHECKS)).checks if c.id == "relu")
    assert relu.status == "failed" and "condition is the wrong way round" in relu.feedback
