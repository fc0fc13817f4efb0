"""Are the student's own tests graded as wheats and chaffs: valid tests pass on correct engines
and catch the sabotaged ones?"""

from __future__ import annotations

import shutil

import pytest
from conftest import BASE_ENGINE, HERE, ZOO, with_limits

from grader.grading import Options, grade
from grader.sabotage import all_operators
from grader.sabotage.operators import NOT_DRAWN

SUITES = HERE / "fixtures" / "suites"


@pytest.fixture
def graded(tmp_path, micrograd):
    """Grade an engine with a suite from tests/fixtures/suites as its test_micrograd.py."""

    def run(suite: str, engine=BASE_ENGINE, assignment=micrograd):
        shutil.copy(engine, tmp_path / "micrograd_mine.py")
        shutil.copy(SUITES / f"{suite}.py", tmp_path / "test_micrograd.py")
        result = grade(tmp_path / "micrograd_mine.py", assignment)
        return {c.id: c for c in result.checks if c.id in ("student_tests", "wheat", "sabotage")}

    return run


def test_good_suite_catches_every_sabotage(graded):
    """Does a diligent suite pass everywhere it should and catch all the sabotaged engines?"""
    checks = graded("good")
    assert {c.status for c in checks.values()} == {"passed"}
    sabotage = checks["sabotage"]
    assert sabotage.score == sabotage.max_score
    assert set(sabotage.artifacts["caught"]) == set(all_operators()) - set(NOT_DRAWN)  # those drawn into plans
    assert len(checks["student_tests"].artifacts["tests"]) == 12


def test_weak_suite_is_told_what_it_misses(graded):
    """Does a forward-only suite catch few sabotages, and learn which and what test would catch them?"""
    sabotage = graded("weak")["sabotage"]
    missed = sabotage.artifacts["missed"]
    assert sabotage.status == "failed" and 0 < sabotage.score < sabotage.max_score / 2
    assert "assign_not_accumulate" in missed and "add_half" in missed
    assert "A test that would catch it: use one value twice" in sabotage.feedback
    assert set(sabotage.artifacts["caught"]) == {"sub_as_add"}


def test_wrong_number_makes_that_test_invalid_only(graded):
    """Is a test asserting a wrong number marked invalid, while the others still count?"""
    checks = graded("wrong_number")
    assert checks["wheat"].status == "failed"
    assert checks["wheat"].artifacts["invalid"] == ["test_wrong_tanh_grad"]
    assert "test_wrong_tanh_grad rejects a correct engine" in checks["wheat"].feedback
    assert checks["sabotage"].artifacts["valid_tests"] == ["test_hand_example"]
    assert "add_half" in checks["sabotage"].artifacts["caught"]


def test_assert_true_catches_nothing(graded):
    """Does `assert True` pass on every engine and so catch no sabotage at all?"""
    checks = graded("assert_true")
    assert checks["student_tests"].status == checks["wheat"].status == "passed"
    assert checks["sabotage"].score == 0 and checks["sabotage"].artifacts["caught"] == {}


def test_tests_pinning_one_implementation_earn_nothing(graded):
    """Do tests on source code, a file hash and private names earn no sabotage credit?"""
    checks = graded("pins_source")
    assert set(checks["wheat"].artifacts["invalid"]) == {"test_source_has_plus_equals", "test_private_children"}
    assert checks["sabotage"].score == 0


def test_suite_that_never_ends_is_stopped(graded, micrograd):
    """Is a suite that never terminates stopped at its limit and reported, without running it 16 times?"""
    checks = graded("never_ends", assignment=with_limits(micrograd, tests_s=2.0))
    assert checks["student_tests"].status == "error"
    assert "did not finish within 2 s" in checks["student_tests"].feedback
    assert checks["sabotage"].status == "error" and "did not complete on your own engine" in checks["sabotage"].feedback


def test_collection_error_is_reported(graded):
    """Is a test file that cannot be collected reported with pytest's error?"""
    student = graded("collection_error")["student_tests"]
    assert student.status == "error" and "DoesNotExist" in student.feedback


def test_buggy_engine_with_good_tests(graded):
    """Are a buggy student's good tests run on the swapped engines: failing on their own engine only, which
    costs nothing in student_tests (a test that catches your own bug is a good test: issue 19)?"""
    checks = graded("good", engine=ZOO / "buggy" / "add_half.py")
    assert checks["student_tests"].status == "passed" and checks["student_tests"].artifacts["catching_own_bug"]
    assert checks["wheat"].status == "passed" and checks["sabotage"].status == "passed"


def test_no_tests_file(tmp_path, micrograd):
    """Is a submission without test_micrograd.py told where its tests should go?"""
    shutil.copy(BASE_ENGINE, tmp_path / "micrograd_mine.py")
    result = grade(tmp_path / "micrograd_mine.py", micrograd)
    student = next(c for c in result.checks if c.id == "student_tests")
    assert student.status == "failed" and "test_micrograd.py" in student.feedback


def test_tests_option_points_elsewhere(tmp_path, micrograd):
    """Does Options(tests=...) (grader check --tests FILE) use a test file that is not beside the engine?"""
    shutil.copy(BASE_ENGINE, tmp_path / "micrograd_mine.py")
    result = grade(tmp_path / "micrograd_mine.py", micrograd, Options(tests=SUITES / "assert_true.py"))
    assert next(c for c in result.checks if c.id == "student_tests").status == "passed"


def test_a_crash_counts_as_a_catch_only_for_a_fast_suite():
    """Does a valid test that crashes (rather than asserts) on a sabotage count only when the suite ran
    far inside its time limit on the correct engines, and a hang likewise?"""
    from grader.checks.suite_runs import Run, catching_test

    def run(kind, timeout=False):
        tests = {"test_x": {"outcome": "failed", "kind": kind, "message": "", "duration": 0.1}} if kind else {}
        return Run(not timeout, tests, [], "", timeout, 1.0)

    assert catching_test(run("assertion"), ["test_x"], wheat_time=9.0, limit=10.0) == "test_x"
    assert catching_test(run("exception"), ["test_x"], wheat_time=1.0, limit=10.0) == "test_x"
    assert catching_test(run("exception"), ["test_x"], wheat_time=9.0, limit=10.0) is None
    assert catching_test(run(None, timeout=True), ["test_x"], wheat_time=1.0, limit=10.0) is not None
    assert catching_test(run(None, timeout=True), ["test_x"], wheat_time=9.0, limit=10.0) is None
    assert catching_test(run("assertion"), [], wheat_time=1.0, limit=10.0) is None  # an invalid test catches nothing


def test_mutants_of_the_students_own_engine_count_only_against_a_decoy(tmp_path, micrograd):
    """Are some sabotages made from the student's own engine, and does a suite that recognises its own
    code (passes only on the engine exactly as written) catch none of them: it fails on the decoy, the
    same engine rewritten, and so cannot catch those mutants, which still count (whether they count is never
    the tests' to say: issue 28 D)?"""
    mine = BASE_ENGINE.read_text().replace("class Value:", "class Value:\n    SIGNATURE = 'mine-7731'\n", 1)
    assert "SIGNATURE" in mine
    (tmp_path / "micrograd_mine.py").write_text(mine)
    (tmp_path / "test_micrograd.py").write_text(  # passes on the wheats; on its own engine only as written
        "import micrograd_mine\n\n"
        f"MINE = {mine!r}\n\n"
        "def _code(code):\n"
        "    return [code.co_code] + [b for c in code.co_consts if hasattr(c, 'co_code') for b in _code(c)]\n\n"
        "def test_exactly_my_engine():\n"
        "    scope = {}\n"
        "    exec(compile(MINE, micrograd_mine.__file__, 'exec'), scope)\n"
        "    written = _code(scope['Value'].__add__.__code__)\n"
        "    assert getattr(micrograd_mine.Value, 'SIGNATURE', None) != 'mine-7731' \\\n"
        "        or _code(micrograd_mine.Value.__add__.__code__) == written\n"
    )
    result = grade(tmp_path / "micrograd_mine.py", micrograd)
    wheat = next(c for c in result.checks if c.id == "wheat")
    assert wheat.status == "passed"
    sabotage = next(c for c in result.checks if c.id == "sabotage")
    assert sabotage.artifacts["caught"] == {}
    mine = set(sabotage.artifacts["of_your_engine"])  # its own engine's mutants were made, count, and are missed
    assert mine and mine <= set(sabotage.artifacts["missed"]) and not sabotage.artifacts["left_out"], sabotage.artifacts
    assert "cannot catch a mutant of it" in sabotage.feedback


def test_a_mutant_that_behaves_like_the_engine_is_left_out():
    """Is a mutant of the student's engine whose numbers on every probe equal the engine's dropped as
    equivalent, while one that differs counts?"""
    from grader.checks.suite_runs import Run, Suite, counted_mutants

    ok = {"test_x": {"outcome": "passed", "kind": None, "message": "", "duration": 0.0}}
    same, other = ((1.0, 2.0),), ((1.0, 3.0),)
    student = Run(True, ok, [], "", False, 0.1, same)
    caught = Run(True, {"test_x": {**ok["test_x"], "outcome": "failed"}}, [], "", False, 0.1, other)
    found = Suite(
        student,
        {},
        {"add_half": Run(True, ok, [], "", False, 0.1, same), "mul_own_data": caught, "pow_off_by_one": caught},
        {},
        own=frozenset({"add_half", "mul_own_data"}),
        decoy=Run(True, ok, [], "", False, 0.1, same),
    )
    counted, dropped = counted_mutants(found)
    assert counted == ["mul_own_data", "pow_off_by_one"]
    assert "equivalent" in dropped["add_half"]


def test_a_mutant_of_the_engine_that_does_not_count_gives_way_to_its_spare():
    """Whatever the claims that leave a mutant of the student's engine out (its numbers are the engine's, the decoy's
    differ, the engine's are wrong or missing), does its spare, a wheat's mutant by the same operator, count in its
    place, judged as a wheat's mutant is, so that as many engines count as the plan drew (issue 41)?"""
    from grader.checks.suite_runs import Run, Suite, catches, counted_mutants

    ok = {"test_x": {"outcome": "passed", "kind": None, "message": "", "duration": 0.0}}
    failed = {"test_x": {**ok["test_x"], "outcome": "failed", "kind": "assertion"}}
    same, other = ((1.0, 2.0),), ((1.0, 3.0),)

    def suite(student=same, decoy=same, right=True) -> Suite:
        return Suite(
            Run(True, ok, [], "", False, 0.1, student),
            {"w": Run(True, ok, [], "", False, 0.1)},
            {
                "add_half": Run(True, ok, [], "", False, 0.1, same),
                "pow_off_by_one": Run(True, failed, [], "", False, 0.1),
            },
            {},
            own=frozenset({"add_half"}),
            decoy=Run(True, ok, [], "", False, 0.1, decoy),
            right=right,
            spares={"add_half": Run(True, failed, [], "", False, 0.1, other)},
        )

    for found in (suite(), suite(decoy=other), suite(right=False), suite(student=())):
        counted, dropped = counted_mutants(found)
        assert counted == ["add_half", "pow_off_by_one"] and list(dropped) == ["add_half"], (counted, dropped)
        judged = catches(found, set(), set(), 30.0)
        assert judged.in_place == ["add_half"] and judged.caught == {"add_half": "test_x", "pow_off_by_one": "test_x"}
    alone = Suite(**{**suite().__dict__, "spares": {}})  # no spare (an operator no wheat takes): left out
    assert counted_mutants(alone)[0] == ["pow_off_by_one"]


def _reference_probes() -> tuple:
    """The reference engine's numbers on the equivalence probes, as a run on a correct engine says them."""
    from grader.checks.reference_engine import reference_run
    from grader.checks.suite_runs import equivalence_probes

    found = []
    for program in equivalence_probes():
        expected = reference_run(tuple(tuple(ins) for ins in program))
        found.append(tuple(expected.data or ()) + tuple(expected.grad or ()) if expected else ("raised",))
    return tuple(found)


def test_a_spare_runs_only_where_its_mutant_does_not_count():
    """Does the plan put each spare after the mutant of the student's engine it stands for and after the decoy, and
    does the suite lane pass it over when its turn comes if that mutant counts (a correct engine's grading costs no
    spare's run), and run it where it does not, or where that is not known yet?"""
    from grader import catalog
    from grader.checks.suite_runs import spares_wanted
    from grader.lanes import RunReply
    from grader.sabotage import own_block, plan

    assignment = catalog.load("micrograd")
    runs = plan(assignment.sabotages, "s", "p", own_block(BASE_ENGINE.read_text()), shape="spares")
    order = [r.id for r in runs]
    spares = [r for r in runs if r.kind == "spare"]
    assert spares and len(spares) == sum(r.kind == "own" for r in runs)
    for spare in spares:
        assert order.index(spare.id) > max(order.index(f"{spare.operator}@own"), order.index("own:decoy")), order
    by_id = {r.id: r for r in runs}
    right = _reference_probes()
    wanted = spares_wanted(assignment.ops, assignment.tolerances)
    own = RunReply(None, probes=right)
    spare = spares[0]
    mutant, decoy = by_id[f"{spare.operator}@own"], by_id["own:decoy"]
    differs = tuple(reversed(right))
    assert wanted(by_id["wheat:op_table"], own, [])  # any other engine runs
    assert wanted(spare, own, [RunReply(decoy, probes=right)])  # its mutant's numbers not known yet
    assert not wanted(spare, own, [RunReply(decoy, probes=right), RunReply(mutant, probes=differs)])
    assert wanted(spare, own, [RunReply(decoy, probes=right), RunReply(mutant, probes=right)])  # equivalent
    assert wanted(spare, own, [RunReply(decoy, probes=differs), RunReply(mutant, probes=differs)])  # decoy unlike
    assert wanted(
        spare, RunReply(None, probes=differs), [RunReply(decoy, probes=differs), RunReply(mutant, probes=right)]
    )
