"""Is a misconception named once with every method it is in, is a right rule never blamed for another's bug,
and is a _backward attached to the input its own cause (issue 30, item 4)? Each engine is a correct one of a
different style (tuple children walked with a stack, a set walked recursively, Kahn's algorithm with rules
under another name) with the mistake made in it here, graded for real."""

from __future__ import annotations

import functools

import pytest
from conftest import BASE_ENGINE, WHEATS, ZOO

from grader import catalog
from grader.causes import CAUSES, several
from grader.checks.suite import SUITE_CHECKS
from grader.insight.misconceptions import tally
from grader.result import CheckResult, Result

STYLES = {
    "stack": BASE_ENGINE.read_text(),
    "recursive_set": (WHEATS / "wheat_recursive_set.py").read_text(),
    "kahn": (ZOO / "correct" / "kahn.py").read_text(),
}
EVERY = ("__add__", "__mul__", "__pow__", "tanh", "relu")
"""The methods with a backward of their own in the assignment (exp is not one of its operations)."""


@functools.cache
def _checks():
    return catalog.load("micrograd").without(SUITE_CHECKS + ("neuron", "numerical_grad", "deep_graph", "forward"))


def graded(grade_source, source: str) -> dict:
    return {c.id: c for c in grade_source(source, _checks()).checks}


def _changed(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


@pytest.mark.parametrize("style", ["stack", "kahn"])
def test_equals_in_every_backward_is_named_once_with_every_method(style, grade_source):
    """`=` for `+=` in every rule: accumulate names the misconception once, with all five methods (not
    __add__ alone, for the student to come back four more times), and gradcheck points back to it."""
    found = graded(grade_source, _changed(STYLES[style], ".grad += ", ".grad = "))
    accumulate = found["accumulate"]
    assert accumulate.status == "failed"
    assert accumulate.cause == "assign_in_add", accumulate.feedback
    assert accumulate.artifacts["causes"] == [f"assign_in_{rule}" for rule in ("add", "mul", "pow", "tanh", "relu")]
    said = accumulate.feedback.splitlines()[-1]
    assert said == f"Likely cause: {several(tuple(accumulate.artifacts['causes'])).sentence}."
    assert all(said.count(method) == 1 for method in EVERY), said
    assert found["gradcheck"].cause == "assign_in_add"
    assert found["gradcheck"].feedback.endswith(
        f"Same cause as accumulate: {several(tuple(accumulate.artifacts['causes'])).words}."
    )


def test_equals_in_one_backward_names_that_method_alone(grade_source):
    """`=` for `+=` in __mul__ only: no other method is named with it."""
    source = _changed(STYLES["stack"], "self.grad += other.data * out.grad", "self.grad = other.data * out.grad")
    source = _changed(source, "other.grad += self.data * out.grad", "other.grad = self.data * out.grad")
    accumulate = graded(grade_source, source)["accumulate"]
    assert accumulate.cause == "assign_in_mul", accumulate.feedback
    assert "causes" not in accumulate.artifacts
    assert f"Likely cause: {CAUSES['assign_in_mul'].sentence}." in accumulate.feedback


@pytest.mark.parametrize("style", ["stack", "recursive_set"])
def test_a_right_order_is_not_blamed_for_equals_on_self(style, grade_source):
    """`self.grad =` with `other.grad +=` in every rule: the order backward() walks is right, so topo_order
    is not failed for it: both styles carry a _backward per node, so the order is watched call by call and
    passes on that evidence (issue 30, item 2), no card tells the student to walk the order in reverse, and
    accumulate names the misconception in every method."""
    found = graded(grade_source, _changed(STYLES[style], "self.grad += ", "self.grad = "))
    topo = found["topo_order"]
    assert topo.status == "passed", topo.feedback
    assert any("watched through each node's _backward" in p for p in topo.artifacts["probed"]), topo.artifacts
    assert not any("reverse" in check.feedback for check in found.values()), [
        (c.id, c.feedback) for c in found.values() if "reverse" in c.feedback
    ]
    accumulate = found["accumulate"]
    assert accumulate.cause == "assign_in_add", accumulate.feedback
    assert set(accumulate.artifacts["causes"]) >= {"assign_in_add", "assign_in_mul", "assign_in_tanh"}


ON_INPUT = {
    "stack": ("        out._backward = _backward\n        return out\n\n    def relu", "relu"),
    "recursive_set": ("        out._backward = _backward\n        return out\n\n    def relu", "relu"),
    "kahn": ("        out.local_backward = rule\n        return out\n\n    def relu", "relu"),
}


@pytest.mark.parametrize("style", ["stack", "recursive_set", "kahn"])
def test_a_backward_attached_to_the_input_is_its_own_cause(style, grade_source):
    """`self._backward = _backward` in tanh (the method before relu in each engine): the input's own rule is
    replaced, so the gradient stops at it. Its own cause, with its own words, not `(self)` children."""
    old, _ = ON_INPUT[style]
    source = _changed(STYLES[style], old, old.replace("out.", "self.", 1))
    found = graded(grade_source, source)
    tanh = found["tanh"]
    assert tanh.status == "failed"
    assert tanh.cause == "backward_on_input_tanh", tanh.feedback
    assert f"Likely cause: {CAUSES['backward_on_input_tanh'].sentence}." in tanh.feedback
    assert "(self)" not in tanh.feedback and "comma" not in tanh.feedback
    for later in ("hand_examples", "gradcheck"):
        assert found[later].cause in (None, "backward_on_input_tanh"), found[later].feedback
        assert "comma" not in found[later].feedback


def _result(cause: str, causes: list[str] | None) -> Result:
    check = CheckResult(
        "accumulate",
        "accumulate",
        "failed",
        0.0,
        5.0,
        "visible",
        "x",
        None,
        {"causes": causes} if causes else {},
        0.1,
        cause,
    )
    return Result("micrograd_mine.py", None, "micrograd", "0", "graded", None, 0.0, 5.0, 1.0, (check,))


def test_the_class_insight_counts_a_student_once_and_in_each_method():
    """A student with `=` for `+=` in three methods counts once for the misconception, and in each method's
    part; a student with it in __mul__ alone, in __mul__'s part only."""
    everywhere = ["assign_in_add", "assign_in_mul", "assign_in_tanh"]
    summary = tally([("ana", _result("assign_in_add", everywhere)), ("bo", _result("assign_in_mul", None))])
    (entry,) = summary["misconceptions"]
    assert entry["id"] == "assign_in" and entry["count"] == 2
    parts = {part["cause"]: part["students"] for part in entry["parts"]}
    assert parts == {"assign_in_add": ["ana"], "assign_in_mul": ["ana", "bo"], "assign_in_tanh": ["ana"]}
