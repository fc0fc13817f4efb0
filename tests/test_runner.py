"""The check runner (grader/checks/runner.py) and what a check may read of another (grader/checks/reads.py).

A check declares the checks whose results it reads; the runner runs those first, and a check reads those alone:
reading any other raises. Reads that form a cycle are refused. So what a check sees is fixed by its declaration, not
by the order an assignment lists its checks in. The checks here are real functions run by the real runner on a real
Context; they touch no engine, so no sandbox is started.
"""

from __future__ import annotations

import math

import pytest

from grader.checks import REGISTRY, Check
from grader.checks.context import Context, Judged
from grader.checks.reads import Found, Ran, Reads
from grader.checks.runner import ordered, run_checks
from grader.checks.suite import SUITE_CHECKS
from grader.checks.training import BEFORE_TRAINING
from grader.errors import MiswiredChecks, ReadCycle, UndeclaredRead
from grader.result import Outcome
from grader.spec import CheckSpec

CASE = (("leaf", 0.5), ("tanh", 0))


def _found(ctx: Context) -> Outcome:
    """A check that fails and finds a case and a cause on its way."""
    ctx.finding.case(CASE)
    ctx.finding.name("assign_in_add")
    return Outcome("failed", "found one")


def _reader(ctx: Context) -> Outcome:
    """A check that says what it read: each declared check's status and cases, in the order declared."""
    seen = [f"{ran.id}:{ran.outcome.status}:{len(ran.found.cases)}" for ran in ctx.reads]
    return Outcome("passed", " ".join(seen) or "nothing", artifacts={"named": list(ctx.reads.named())})


def _snoop(ctx: Context) -> Outcome:
    ctx.reads.get("found")  # not declared
    return Outcome("passed", "read it")


TOY = {
    "found": Check("found", "finds", _found),
    "quiet": Check("quiet", "passes", lambda ctx: Outcome("passed", "nothing to see")),
    "reader": Check("reader", "reads", _reader, reads=("found", "quiet")),
    "snoop": Check("snoop", "reads without declaring", _snoop),
    "student_tests": Check("student_tests", "a suite check", _reader, reads=("found",)),
}


def _specs(*ids: str) -> list[CheckSpec]:
    return [CheckSpec(i, 1.0) for i in ids]


def _run(micrograd, *ids: str) -> dict:
    ctx = Context(micrograd, None, [], judged=Judged(ends=math.inf))
    results = run_checks(ctx, _specs(*ids), registry=TOY)
    assert [r.id for r in results] == list(ids), "the results keep the assignment's order"
    with pytest.raises(UndeclaredRead):  # nothing of the last check's reads is left behind
        ctx.reads.get("found")
    return {r.id: r for r in results}


def test_a_check_reads_the_checks_it_declares_whatever_the_assignments_order(micrograd):
    """Listed before the checks it reads, a check still runs after them and sees their results and findings."""
    before = _run(micrograd, "reader", "quiet", "found")
    after = _run(micrograd, "found", "quiet", "reader")
    assert before["reader"].feedback == after["reader"].feedback == "found:failed:1 quiet:passed:0"
    assert before["reader"].artifacts == {"named": ["assign_in_add"]}


def test_a_declared_check_the_grading_does_not_run_reads_as_none(micrograd):
    assert _run(micrograd, "reader", "quiet")["reader"].feedback == "quiet:passed:0"
    reads = Reads("reader", ("found", "quiet"), {})
    assert reads.get("found") is None and list(reads) == [] and reads.failed() == []


def test_reading_an_undeclared_check_raises(micrograd):
    """Directly, and in a grading, where the check that did it ends in an error naming the grader's bug."""
    ran = Ran("found", Outcome("failed", "x"), Found(cases=(CASE,)))
    reads = Reads("reader", ("quiet",), {"found": ran})
    with pytest.raises(UndeclaredRead, match="'reader' read the result of 'found'"):
        reads.get("found")
    assert list(reads) == []  # an undeclared result is not even among those it iterates
    snooped = _run(micrograd, "found", "snoop")["snoop"]
    assert snooped.status == "error"
    assert "Internal grader error" in snooped.feedback and "UndeclaredRead" in snooped.feedback


def test_reads_give_each_declared_result_in_the_order_declared():
    failed, passed = Outcome("failed", "x"), Outcome("passed", "y")
    results = {
        "b": Ran("b", failed, Found(cases=(CASE,), unstable="b", named=("assign_in_mul",))),
        "a": Ran("a", failed, Found(named=("assign_in_add", "assign_in_mul"))),
        "c": Ran("c", passed, Found(unstable="c")),
    }
    reads = Reads("r", ("a", "b", "c"), results)
    assert [r.id for r in reads] == ["a", "b", "c"]
    assert reads.failed() == ["a", "b"] and reads.cases() == [CASE] and reads.unstable() == "b"
    assert reads.named() == ("assign_in_add", "assign_in_mul")


def test_the_order_runs_each_check_after_those_it_reads_and_the_suite_last():
    engine, suite = ordered(_specs("student_tests", "reader", "snoop", "found", "quiet"), TOY)
    assert [s.id for s in engine] == ["snoop", "found", "quiet", "reader"]
    assert [s.id for s in suite] == ["student_tests"]


def test_a_cycle_of_reads_is_refused_even_through_a_check_the_grading_does_not_run():
    cyclic = {
        **TOY,
        "found": Check("found", "finds", _found, reads=("other",)),
        "other": Check("other", "reads reader", _reader, reads=("reader",)),
    }
    with pytest.raises(ReadCycle, match="reads"):
        ordered(_specs("reader", "found"), cyclic)
    with pytest.raises(ReadCycle):
        ordered(_specs("found"), {**TOY, "found": Check("found", "reads itself", _found, reads=("found",))})


def test_reads_of_no_registered_check_or_of_a_later_phase_are_refused():
    with pytest.raises(MiswiredChecks, match="no module registers"):
        ordered(_specs("reader"), {**TOY, "reader": Check("reader", "r", _reader, reads=("nowhere",))})
    with pytest.raises(MiswiredChecks, match="runs after every engine check"):
        ordered(_specs("reader"), {**TOY, "reader": Check("reader", "r", _reader, reads=("student_tests",))})


def test_the_checks_reads_hold_and_keep_the_shipped_assignments_order():
    """Every declared read names a registered check, none forms a cycle, and the shipped assignments already list
    each check after those it reads: ordering them changes nothing but putting the suite last."""
    from grader import catalog

    engine, suite = ordered(_specs(*REGISTRY))
    assert {s.id for s in suite} == set(SUITE_CHECKS)
    for name in ("micrograd", "micrograd-lecture"):
        specs = list(catalog.load(name).checks)
        engine, suite = ordered(specs)
        assert engine + suite == sorted(specs, key=lambda c: c.id in SUITE_CHECKS)


def test_training_reads_every_engine_check_before_it():
    """training's card names the first failing check to fix, of every engine check: a new one must be declared."""
    engine = {c for c in REGISTRY if c not in SUITE_CHECKS and c != "training"}
    assert set(BEFORE_TRAINING) == engine == set(REGISTRY["training"].reads)
