"""No pass without evidence: does each check pass only when it probed every property it is worth points for,
and say, when another check's bug kept it from probing one, which check that is?

The engines are our own (tests/fixtures/evidence). Before, accumulate passed both engines of issue 30's second
example after probing a + a and a * a alone, and partial.py (no tanh, no relu yet) passed accumulate,
hand_examples and gradcheck on the operations it had."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest
from conftest import HERE

from grader import catalog
from grader.checks import REGISTRY
from grader.checks.evidence import Evidence, Missing
from grader.checks.suite import SUITE_CHECKS
from grader.grading import grade
from grader.result import Outcome

EVIDENCE = HERE / "fixtures" / "evidence"

SWEEP = {
    "dispatch_leaves_first": ("add", "mul", "pow", "tanh", "relu", "neg_sub", "accumulate"),
    "recursion_assign_dispatch": ("topo_order",),
    "partial": ("numerical_grad", "neuron", "training"),
    "nothing_builds": ("deep_graph", "forward", "hand_examples", "gradcheck"),
}
"""For every engine check, an engine of ours on which what it is worth points for cannot be probed: nesting
broken (leaves first) with no backward of each node's own to call alone, for the rule checks and accumulate;
`=` everywhere and nothing to watch for topo_order; numerical_grad and Neuron not written, for those and
training; no operation written for deep_graph, forward, hand_examples and gradcheck (an operation the engine
does not define at all is its own rule check's charge, once: forward, accumulate and gradcheck judge the
others). The suite checks are swept with a test file that holds no test
(test_suite_checks_...)."""


@functools.cache
def graded(engine: str, checks: tuple[str, ...]):
    task = catalog.load("micrograd")
    result = grade(EVIDENCE / f"{engine}.py", task.without(tuple(c.id for c in task.checks if c.id not in checks)))
    return {c.id: c for c in result.checks}


def test_the_sweep_covers_every_check():
    """Is every registered check swept, here or with the suite's test file below?"""
    swept = {check for checks in SWEEP.values() for check in checks} | set(SUITE_CHECKS)
    assert swept == set(REGISTRY)


@pytest.mark.parametrize("engine", sorted(SWEEP))
def test_no_check_passes_what_it_could_not_probe(engine):
    """On each sweep engine, each check swept is not passed and earns nothing; a skip names the check in the
    way and lists what it did probe."""
    found = graded(engine, SWEEP[engine])
    for check_id in SWEEP[engine]:
        check = found[check_id]
        assert check.status != "passed" and check.score == 0, (check_id, check.feedback)
        if check.status == "skipped":
            assert check.artifacts["blocked_by"], (check_id, check.feedback)
            assert isinstance(check.artifacts["probed"], list)
            assert all(
                f"(see {b}" in check.feedback or f"see the {b}" in check.feedback for b in check.artifacts["blocked_by"]
            )


@pytest.mark.parametrize("engine", ["relu_assign_leaves_first", "relu_assign_nested_twice"])
def test_equals_in_relu_with_nesting_broken_does_not_pass_accumulate(engine):
    """Issue 30's second example, in two styles: accumulate (passed before, on a + a and a * a alone) is
    skipped, naming topo_order; relu, whose rule is right but for `=`, passes, its rule under an incoming gradient
    other than 1 probed by calling the output's own _backward alone (skipped before, blamed for the order)."""
    found = graded(engine, ("add", "relu", "accumulate", "topo_order"))
    accumulate = found["accumulate"]
    assert accumulate.status == "skipped" and "topo_order" in accumulate.artifacts["blocked_by"]
    assert "a value used twice through **, -x, a - b, tanh and relu could not be probed" in accumulate.feedback
    assert accumulate.artifacts["probed"] == ["a value used twice through +", "a value used twice through *"]
    relu = found["relu"]
    assert relu.status == "passed", relu.feedback
    assert relu.artifacts["probed"] == [
        "relu",
        "relu under an incoming gradient other than 1, probed by calling the output's own _backward alone",
    ]
    assert found["topo_order"].status == "failed"


def test_what_a_half_written_engine_lacks_is_charged_once_by_its_own_check():
    """partial.py defines no tanh and no relu: those are their own checks' charge, once (issue 39.2; before,
    accumulate, hand_examples and gradcheck were skipped at 0 points, naming forward). accumulate and gradcheck are
    judged on what the engine has and pass, listing it; hand_examples earns the share of the two examples it can
    build and is skipped for the tanh neuron, naming tanh; forward passes, saying where tanh and relu are counted."""
    found = graded("partial", ("forward", "accumulate", "hand_examples", "gradcheck", "add", "tanh", "topo_order"))
    for check_id in ("forward", "accumulate", "gradcheck"):
        assert found[check_id].status == "passed", (check_id, found[check_id].feedback)
    assert found["gradcheck"].artifacts["probed"] == ["+", "*", "**", "-x", "a - b"]
    assert "tanh and relu cannot be built yet" in found["forward"].feedback
    examples = found["hand_examples"]
    assert examples.status == "skipped" and examples.artifacts["blocked_by"] == ["tanh"]
    assert examples.artifacts["probed"] == ["L = (a*b + c)*f", "L = (a*b + 5)**2"]
    assert 0 < examples.score < examples.max_score
    assert found["tanh"].status == "error" and "tanh is not written yet" in found["tanh"].feedback
    assert found["add"].status == "passed"
    assert found["add"].artifacts["probed"] == ["+", "+ under an incoming gradient other than 1"]
    assert found["topo_order"].status == "passed"


def test_suite_checks_do_not_pass_tests_that_probe_nothing(tmp_path: Path):
    """A test file holding no test: student_tests, wheat and sabotage are not passed."""
    shutil.copy(EVIDENCE / "partial.py", tmp_path / "micrograd_mine.py")
    (tmp_path / "test_micrograd.py").write_text("from micrograd_mine import Value\n")
    task = catalog.load("micrograd")
    result = grade(
        tmp_path / "micrograd_mine.py", task.without(tuple(c.id for c in task.checks if c.id not in SUITE_CHECKS))
    )
    assert {c.id: c.status for c in result.checks} == dict.fromkeys(SUITE_CHECKS, "failed")
    assert result.score == 0


def test_a_pass_keeps_its_points_only_with_all_its_evidence():
    """Evidence.settle: a pass records what was probed; with anything missing it is a skip that says what, why
    and which check is in the way, the reasons shared said once; a failure is left as it is."""
    passed = Outcome("passed", "Matches.")
    whole = Evidence(("+", "*")).settle(passed)
    assert whole.status == "passed" and whole.artifacts == {"probed": ["+", "*"]}
    missing = (
        Missing("a value used twice through tanh", "its rule is not right yet (see tanh)", "tanh"),
        Missing("a value used twice through relu", "its rule is not right yet (see tanh)", "tanh"),
        Missing("a value used twice through **", "nesting is broken (see topo_order)", "topo_order"),
    )
    skipped = Evidence(("a value used twice through +",), missing).settle(passed)
    assert skipped.status == "skipped" and skipped.artifacts["blocked_by"] == ["tanh", "topo_order"]
    assert skipped.feedback.splitlines() == [
        "Not judged: a value used twice through tanh and relu could not be probed yet: its rule is not right yet "
        "(see tanh).",
        "Nor could a value used twice through **: nesting is broken (see topo_order).",
        "What could be probed held: a value used twice through +.",
    ]
    failed = Outcome("failed", "a.grad should be 2.")
    assert Evidence((), missing).settle(failed) is failed


def test_a_value_used_twice_through_a_wrong_rule_is_judged_against_the_engines_own_paths():
    """tanh_wrong_and_assign: tanh's derivative on its input (tanh's check) and `=` in it (accumulate's).
    accumulate passed before, leaving tanh out; now it fails on tanh(a) + a, the expected sum being what the
    engine itself gives each use apart, and names `=` rather than the derivative."""
    found = graded("tanh_wrong_and_assign", ("tanh", "accumulate"))
    assert found["tanh"].status == "failed"
    accumulate = found["accumulate"]
    assert accumulate.status == "failed", accumulate.feedback
    assert accumulate.counterexample.code == "a = Value(1.5)\nb = a.tanh()\nc = b + a\nc.backward()"
    assert accumulate.counterexample.expected == {"a.grad": -0.25}  # -1.25 through tanh (its own rule) + 1
    assert accumulate.counterexample.got == {"a.grad": -1.25}
    assert "should be the sum of what each use gives it" in accumulate.feedback and "Use +=" in accumulate.feedback


def test_split_reads_the_last_use_from_a_copy():
    """reuse.split: the last read of leaf 0 comes from a new leaf of the same value, placed before its reader."""
    from grader.checks.reuse import split

    assert split((("leaf", 1.5), ("add", 0, 0))) == ((("leaf", 1.5), ("leaf", 1.5), ("add", 0, 1)), 1)
    program = (("leaf", 0.7), ("tanh", 0), ("leaf", -2.0), ("add", 1, 2), ("mul", 3, 0))
    assert split(program) == (
        (("leaf", 0.7), ("tanh", 0), ("leaf", -2.0), ("add", 1, 2), ("leaf", 0.7), ("mul", 3, 4)),
        4,
    )
    assert split((("leaf", 1.5), ("leaf", 2.0), ("add", 0, 1))) is None
