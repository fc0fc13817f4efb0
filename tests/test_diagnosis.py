"""Is each misdiagnosis of issue 19 gone: does the feedback name the right cause, tested beyond the
smallest case, and charge one misconception once wherever it sits?

Each engine is a single-bug variant of a correct zoo engine (tests/zoo/correct/list_iterative.py),
made here by changing a line or two, graded for real (sandboxed, the engine checks only unless the
case is about the student's tests)."""

from __future__ import annotations

import functools

import pytest
from conftest import BASE_ENGINE, HERE

from grader import catalog
from grader.checks.suite import SUITE_CHECKS

BASE = BASE_ENGINE.read_text()


def variant(*changes: tuple[str, str]) -> str:
    source = BASE
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new, 1)
    return source


@functools.cache
def _engine_checks():
    return catalog.load("micrograd").without(SUITE_CHECKS)


def checks(grade_source, source: str) -> dict:
    return {c.id: c for c in grade_source(source, _engine_checks()).checks}


RELU_LEAKS = variant(("self.grad += (self.data > 0) * out.grad", "self.grad += out.grad"))
POW_ZERO_BASE = variant(
    (
        "self.grad += k * self.data ** (k - 1) * out.grad",
        "self.grad += (0.0 if self.data == 0 else k * self.data ** (k - 1)) * out.grad",
    )
)


def test_a_relu_that_leaks_gradient_is_not_blamed_on_multiplication(grade_source):
    """relu passing the gradient for negative inputs: gradcheck's smallest case also fits 'multiplication
    forgets out.grad', which a product with an incoming gradient other than 1 refutes; gradcheck says
    'same cause as relu'."""
    found = checks(grade_source, RELU_LEAKS)
    assert found["relu"].cause == "relu_negative_grad"
    assert found["gradcheck"].status == "failed"
    assert found["gradcheck"].cause == "relu_negative_grad", found["gradcheck"].feedback
    assert "Same cause as relu" in found["gradcheck"].feedback
    assert "multipl" not in found["gradcheck"].feedback


def test_a_zero_base_special_case_is_not_named_k_x_to_the_k(grade_source):
    """pow's backward returning 0 at a zero base fits `k * x**k` on x ** 1 at 0, but not x ** 1 at 2 (where
    the student's engine is right): neither is named, and the rule is said instead."""
    pow_ = checks(grade_source, POW_ZERO_BASE)["pow"]
    assert pow_.status == "failed"
    assert pow_.cause is None and "k * x**k" not in pow_.feedback, pow_.feedback
    assert "k * x ** (k - 1)" in pow_.feedback


def test_of_two_causes_that_fit_the_one_reproducing_more_is_named(grade_source):
    """Addition halving the gradient: gradcheck's smallest case, a + a, fits both `=` for `+=` in __add__
    and the halving; neither is refuted where the engine is right (it never is, with +), but only the
    halving also gives the engine's numbers for a + b, so it is the one named, as add names it."""
    found = checks(grade_source, (HERE / "zoo" / "buggy" / "add_half.py").read_text())
    assert found["add"].cause == "add_half"
    assert found["gradcheck"].cause == "add_half", found["gradcheck"].feedback
    assert "Same cause as add" in found["gradcheck"].feedback


def test_tanh_without_the_square_is_named_and_every_later_check_points_back(grade_source):
    """tanh's backward as (1 - t) * out.grad: the square is what is missing (the student already uses the
    output), and hand_examples, gradcheck and training, whose replay on correct engines with the same
    mistake gives the student's numbers, say 'same cause as tanh'."""
    found = checks(grade_source, variant(("self.grad += (1 - t ** 2) * out.grad", "self.grad += (1 - t) * out.grad")))
    tanh = found["tanh"]
    assert tanh.cause == "tanh_square_missing" and "without the square" in tanh.feedback, tanh.feedback
    assert "not its input" not in tanh.feedback
    for later in ("hand_examples", "gradcheck", "training"):
        assert found[later].status == "failed", later
        assert found[later].cause == "tanh_square_missing", found[later].feedback
        assert "Same cause as tanh: tanh's derivative is written 1 - t, without the square." in found[later].feedback


ASSIGN_IN = {
    "__add__": variant(
        (
            "self.grad += out.grad\n            other.grad += out.grad",
            "self.grad = out.grad\n            other.grad = out.grad",
        )
    ),
    "__mul__": variant(
        ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),
        ("other.grad += self.data * out.grad", "other.grad = self.data * out.grad"),
    ),
}


def test_equals_for_plus_equals_costs_the_same_in_add_and_in_mul(grade_source):
    """`=` for `+=` is one misconception: in __mul__ it fails the same checks, for the same points, as in
    __add__; topo_order (which probes reuse only through operations that accumulate) is not charged."""
    graded = {method: grade_source(source, _engine_checks()) for method, source in ASSIGN_IN.items()}
    failing = {method: {c.id for c in result.checks if c.status != "passed"} for method, result in graded.items()}
    assert failing["__add__"] == failing["__mul__"], failing
    assert "topo_order" not in failing["__mul__"]
    assert graded["__add__"].score == graded["__mul__"].score
    for method, result in graded.items():
        accumulate = next(c for c in result.checks if c.id == "accumulate")
        assert f"in {method}'s backward, `=` replaces" in accumulate.feedback


SEED_BY_HAND = variant(
    ("        self.grad = 0.0\n", "        self.grad = None\n"),
    (
        "        self.grad = 1.0\n        for node in reversed(topo):",
        "        if self.grad is None:\n"
        "            raise ValueError('Missing grad value: set the output grad to 1.0 first')\n"
        "        for node in topo:\n"
        "            if node is not self and node.grad is None:\n"
        "                node.grad = 0.0\n"
        "        for node in reversed(topo):",
    ),
)
NO_SEED = variant(
    ("        self.grad = 1.0\n        for node in reversed(topo):", "        for node in reversed(topo):")
)


def test_a_backward_that_asks_for_the_seed_is_charged_as_a_missing_seed(grade_source):
    """backward() that raises unless the output's grad is set by hand (the lesson's first half): the rule
    checks seed the output themselves, as for a backward() that leaves every gradient at 0, and the missing
    seed is charged once, to the lesson's full runs, exactly as for that one."""
    by_hand = grade_source(SEED_BY_HAND, _engine_checks())
    zeros = grade_source(NO_SEED, _engine_checks())
    failing = {c.id: c for c in by_hand.checks if c.status != "passed"}
    assert set(failing) == {c.id for c in zeros.checks if c.status != "passed"}, failing
    assert set(failing) == {"hand_examples", "gradcheck", "training"}
    assert all(c.cause == "missing_seed" for c in failing.values()), failing
    assert by_hand.score == zeros.score


CATCHING_TESTS = """
import math

from micrograd_mine import Neuron, Value


def test_relu_blocks_negative_inputs():
    a = Value(-2.0)
    a.relu().backward()
    assert a.grad == 0.0


def test_add_and_sub():
    a, b = Value(2.0), Value(-3.0)
    c = a + b
    c.backward()
    assert (c.data, a.grad, b.grad) == (-1.0, 1.0, 1.0)
    a, b = Value(2.0), Value(-3.0)
    d = a - b
    d.backward()
    assert (d.data, a.grad, b.grad) == (5.0, 1.0, -1.0)
    a = Value(2.0)
    (a + a).backward()
    assert a.grad == 2.0


def test_mul_pow_tanh_with_reuse():
    a, b = Value(2.0), Value(-3.0)
    c = (a * b + a ** 2).tanh() * a
    c.backward()
    t = math.tanh(-2.0)
    assert abs(c.data - 2 * t) < 1e-9
    assert abs(b.grad - 4 * (1 - t * t)) < 1e-9
    assert abs(a.grad - (t + 2 * (1 - t * t))) < 1e-9


def test_numbers_on_the_left_and_the_neuron():
    a = Value(2.0)
    assert ((1 + a).data, (2 * a).data, (1 - a).data) == (3.0, 4.0, -1.0)
    assert len(Neuron(3).parameters()) == 4
"""


def test_a_test_that_catches_the_students_own_bug_costs_nothing(grade_source, micrograd, tmp_path):
    """A correct test failing on the student's buggy engine (relu leaking gradient) is a good test: it
    passes on every correct engine, so student_tests does not charge the bug the relu check charges, and
    says why."""
    (tmp_path / "test_micrograd.py").write_text(CATCHING_TESTS)
    found = {c.id: c for c in grade_source(RELU_LEAKS, micrograd).checks}
    assert found["relu"].status == "failed"
    assert found["wheat"].status == "passed" and found["sabotage"].score == found["sabotage"].max_score
    student = found["student_tests"]
    assert student.score == student.max_score, student.feedback
    assert "test_relu_blocks_negative_inputs" in student.feedback
    assert "catches a bug in your own engine is a good test" in student.feedback
    assert student.artifacts["catching_own_bug"] == ["test_relu_blocks_negative_inputs"]


def test_forward_reports_every_wrong_operation_once(grade_source):
    """relu computing a wrong value and a reversed __rsub__ (1 - a gives a - 1): forward reports both, each once,
    on its own smallest case, not only the first."""
    source = variant(
        ("        return (-self) + other\n", "        return self - other\n"),
        ("self.data if self.data > 0 else 0.0, (self,), 'relu'", "abs(self.data), (self,), 'relu'"),
    )
    forward = checks(grade_source, source)["forward"]
    assert forward.status == "failed"
    lines = forward.feedback.splitlines()
    assert lines[0].startswith("2 operations compute a wrong value or raise"), forward.feedback
    assert sum("a.relu()" in line for line in lines) == 1, forward.feedback
    assert sum(" - a with a = " in line for line in lines) == 1, forward.feedback


def test_forward_leaves_a_missing_method_to_its_own_check(grade_source):
    """A missing relu beside a reversed __rsub__: forward reports the reversed __rsub__, and leaves relu, which the
    engine does not define, to the relu check, which charges it once (issue 39.2)."""
    source = variant(
        ("        return (-self) + other\n", "        return self - other\n"),
        ("    def relu(self):", "    def _relu(self):"),
    )
    found = checks(grade_source, source)
    forward = found["forward"]
    assert forward.status == "failed" and "relu" not in forward.counterexample.code
    assert " - a" in forward.counterexample.code, forward.counterexample.code  # 1 - a, computed as a - 1
    assert "relu cannot be built yet" in forward.feedback and "counted once, by relu" in forward.feedback
    assert found["relu"].status == "error" and "no method for relu" in found["relu"].feedback


TANH_SELF = ("        out = Value(t, (self,), 'tanh')", "        out = Value(t, (self), 'tanh')")


KEEPS_TUPLES = (
    "self._children = tuple(_children)",
    "self._children = tuple(_children) if isinstance(_children, (tuple, list)) else ()",
)


@pytest.mark.parametrize("engine", ["list_iterative", "tuple_children_stack", "keeps_only_tuples"])
def test_self_not_a_tuple_is_named_by_every_check_it_fails(grade_source, engine):
    """`(self)` for `(self,)` as tanh's children, whether the engine fails when building the node (a tuple()
    of it), only when backward() walks it (children stored as given), or never (an engine that keeps only
    a tuple of children, so backward() stops at tanh's output: replayed as tanh built with no children):
    every check failing from it names that cause (the neuron's too), and none blames the order of
    backward() ('walks the nodes from the leaves up')."""
    source = {"list_iterative": BASE, "keeps_only_tuples": variant(KEEPS_TUPLES)}.get(engine) or (
        HERE / "corpus" / "engines" / f"{engine}.py"
    ).read_text()
    old = next(line for line in source.splitlines() if "Value(t, (self,)" in line)
    found = checks(grade_source, source.replace(old, old.replace("(self,)", "(self)"), 1))
    failing = {c.id: c for c in found.values() if c.status in ("failed", "error") and c.max_score}
    assert "tanh" in failing, failing
    for check in failing.values():
        assert check.cause == "children_not_tuple", (check.id, check.feedback)
        assert "leaves up" not in check.feedback
