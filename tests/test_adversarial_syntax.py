"""Can a student's tests catch sabotaged engines by reading their code instead of testing what they
compute, and can a student's engine make the grader's own process do unbounded work? (Issue 17,
items 1 and 11.)

A suite that looks for the trace each mutation operator leaves (a 0.5 in addition's update, no
reversal in backward(), a second Neuron...) must find each trace in a correct engine too, and so be
judged invalid; the engine's text must be nowhere a test can read it; and a plan of engines must be
built in work linear in the student's engine, with no mutant made of one past the size budget."""

from __future__ import annotations

import base64
import importlib.util
import sys
import types

import pytest
from conftest import BASE_ENGINE, HERE
from test_adversarial import check, scores, statuses

from grader.checks.suite import equivalence_probes
from grader.sabotage import all_operators, own_block, own_mutant, plan
from grader.sabotage.rewrite import rewrite
from grader.sandbox.inside import notebook, probes

HOSTILE = HERE / "adversarial"
SIGNATURES = HOSTILE / "signature_tests.py"
TRACE_TESTS = {  # each operator's trace, as the hostile suite looks for it
    "add_half": "test_add_passes_the_gradient_unchanged",
    "assign_not_accumulate": "test_add_accumulates",
    "mul_missing_outgrad": "test_mul_reads_the_incoming_gradient",
    "mul_own_data": "test_mul_uses_the_other_inputs_data",
    "pow_off_by_one": "test_pow_subtracts_one",
    "tanh_grad_from_input": "test_tanh_reads_its_output",
    "relu_negative_grad": "test_relu_has_a_condition",
    "sub_as_add": "test_sub_negates",
    "missing_seed": "test_backward_seeds_with_one",
    "topo_not_reversed": "test_backward_reverses",
    "radd_missing": "test_radd_is_defined",
    "neuron_no_bias": "test_neuron_is_mine",
}


# -- item 1: in a grading, both modes ----------------------------------------------------------------------


def test_a_suite_that_reads_the_engines_code_catches_nothing(run, tmp_path):
    """Does a suite that checks every operator's trace in the engine's bytecode, and no behaviour, catch
    no sabotage: each of its trace tests rejects a correct engine (every trace is in the wheats too), and
    the rest find no trace? (Before, it caught 12 of 12 with no false alarm.)"""
    result, _, _, _ = check(run, tmp_path, BASE_ENGINE, SIGNATURES)
    found = {c["id"]: c for c in result["checks"]}
    assert statuses(result)["student_tests"] == "passed", found["student_tests"]["feedback"]
    assert found["sabotage"]["artifacts"]["caught"] == {} and scores(result)["sabotage"] == 0, found["sabotage"]
    wheat = found["wheat"]["artifacts"]
    assert wheat.get("invalid_count", len(wheat["invalid"])) >= len(TRACE_TESTS), wheat


def test_no_run_hands_a_test_the_engines_text(run, tmp_path):
    """Do tests that look for the engine's text (the module's file, inspect, the line cache, every string
    in memory) find nothing but the student's own code on every engine, and so pass on all of them?"""
    tests = (
        (HOSTILE / "source_reader_tests.py")
        .read_text()
        .replace("__MINE__", base64.b64encode(BASE_ENGINE.read_bytes()).decode())
    )
    result, _, _, _ = check(run, tmp_path, BASE_ENGINE, tests)
    found = {c["id"]: c for c in result["checks"]}
    assert statuses(result)["student_tests"] == "passed", found["student_tests"]["feedback"]
    assert statuses(result)["wheat"] == "passed", found["wheat"]["feedback"]
    assert scores(result)["sabotage"] == 0


# -- item 1: the plans, in this process (the grader's own engines and a trusted student engine) -----------


def _module(tmp_path, block: str | None) -> types.ModuleType:
    """The student's module as a suite run makes it: their file imported, the engine run into it."""
    path = tmp_path / "micrograd_mine.py"
    path.write_text(BASE_ENGINE.read_text())
    spec = importlib.util.spec_from_file_location("micrograd_mine", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["micrograd_mine"] = module
    spec.loader.exec_module(module)
    if block:
        notebook.run_engine(module, block)
    return module


def _failing(module: types.ModuleType) -> set[str]:
    """The hostile suite's tests that fail on the module's engine."""
    suite = types.ModuleType("signature_tests")
    exec(compile(SIGNATURES.read_text(), str(SIGNATURES), "exec"), vars(suite))
    failing = set()
    for name, test in list(vars(suite).items()):
        if name.startswith("test_"):
            try:
                test()
            except Exception:
                failing.add(name)
    return failing


def _numbers(value: type) -> list:
    found = []
    for program in equivalence_probes():
        try:
            result = probes.evaluate(program, value)
            found.append([round(x, 9) for x in result["data"] + result["grad"]])
        except Exception as exc:
            found.append(type(exc).__name__)
    return found


@pytest.fixture
def restore_module():
    saved = sys.modules.get("micrograd_mine")
    yield
    if saved is None:
        sys.modules.pop("micrograd_mine", None)
    else:
        sys.modules["micrograd_mine"] = saved


def test_every_trace_is_in_a_correct_engine_of_every_plan(tmp_path, restore_module):
    """Over 40 plans: does some wheat of each plan carry each operator's trace (so the test keyed on it
    is invalid), and do every wheat and the decoy still compute the reference's numbers on the probes
    that decide whether a mutant counts?"""
    from reference.engine import Value as Reference

    expected = _numbers(Reference)
    own = own_block(BASE_ENGINE.read_text())
    assert _failing(_module(tmp_path, None)) == set()  # the student's own run: no false alarm
    for i in range(40):
        runs = plan(tuple(sorted(all_operators())), f"seed-{i}", "pool", own)
        wheats = [r for r in runs if r.kind in ("wheat", "decoy")]
        assert len(wheats) >= 3
        caught = set()
        for engine in wheats:
            module = _module(tmp_path, engine.block)
            if engine.kind == "wheat":
                caught |= _failing(module)
            assert _numbers(module.Value) == expected, (i, engine.id)
        assert set(TRACE_TESTS.values()) <= caught, (i, set(TRACE_TESTS.values()) - caught)


def test_a_disguised_mutant_is_still_the_same_mutant(tmp_path, restore_module):
    """Does every mutant of the student's own engine compute, disguised and rewritten, exactly what it
    computes as the operator wrote it (so the disguise hides a bug without mending or changing it)?"""
    from grader.sabotage.disguise import disguise

    own = own_block(BASE_ENGINE.read_text())
    for op_id, op in sorted(all_operators().items()):
        mutant = own_mutant(op, own)
        if mutant is None:
            continue
        plain = _numbers(_module(tmp_path, mutant).Value)
        for seed in ("a", "b", "c"):
            assert _numbers(_module(tmp_path, rewrite(disguise(mutant, seed), seed)).Value) == plain, (op_id, seed)


# -- item 11: the plan's work ---------------------------------------------------------------------------------


def test_a_huge_engine_is_not_mutated(tmp_path):
    """Is an engine past the size budget (thousands of harmless updates in __add__) left unmutated, every
    sabotage made from a wheat, with a note saying why?"""
    from grader.sabotage import OWN_BUDGET

    own = _engine(3000)
    assert len(own) > OWN_BUDGET
    runs = plan(tuple(sorted(all_operators())), "seed", "pool", own)
    assert {r.kind for r in runs} == {"wheat", "sabotage"}
    assert len([r for r in runs if r.kind == "sabotage"]) == len(all_operators())
    assert runs.notes and "KB" in runs.notes[0]


def _long_backward(updates: int) -> str:
    """A hostile submission: a correct engine whose addition's backward holds `updates` harmless
    `self.grad += 0.0` lines (issue 17, item 11: 40,000 of them in 1.5 MB cost the grader's own process
    10 minutes of CPU when mutation was quadratic)."""
    return BASE_ENGINE.read_text().replace(
        "            other.grad += out.grad\n",
        "            other.grad += out.grad\n" + "            self.grad += 0.0\n" * updates,
        1,
    )


def _engine(updates: int) -> str:
    return own_block(_long_backward(updates))


def _work(fn) -> int:
    """How many Python functions fn calls (each resumption of a generator counts: a scan of a list in
    a generator expression, as `any(item is old for item in body)`, is one per item)."""
    calls = 0

    def profile(frame, event, arg):
        nonlocal calls
        calls += event == "call"

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def test_mutating_an_engine_is_linear_in_its_size():
    """Does each operator, and the disguise and rewrite that follow, do about twice the work on an engine
    with twice as many updates (one scan of the tree per replaced site made it quadratic: an engine of
    1.5 MB cost the grader 10 minutes)?"""
    from grader.sabotage.disguise import disguise

    small, large = _engine(400), _engine(800)
    for op_id, op in sorted(all_operators().items()):
        if own_mutant(op, small) is not None:
            ratio = _work(lambda: own_mutant(op, large)) / _work(lambda: own_mutant(op, small))  # noqa: B023
            assert ratio < 2.5, (op_id, ratio)
    ratio = _work(lambda: rewrite(disguise(large, "s"), "s")) / _work(lambda: rewrite(disguise(small, "s"), "s"))
    assert ratio < 2.5, ratio


def test_the_note_reaches_the_student(run, tmp_path):
    """Does a graded engine past the budget have no mutant of its own, and say why in the sabotage check?"""
    result, _, _, _ = check(run, tmp_path, _long_backward(3000), HERE / "fixtures" / "suites" / "good.py")
    sabotage = next(c for c in result["checks"] if c["id"] == "sabotage")
    assert sabotage["artifacts"]["of_your_engine"] == [], sabotage["artifacts"]
    assert any("KB" in note for note in sabotage["artifacts"].get("plan_notes", [])), sabotage["artifacts"]


def test_a_fresh_name_is_never_a_keyword():
    """Are the names the rewrite and the disguise make up never Python keywords (`def = x.grad + ...` is a
    syntax error, and a plan that cannot be built fails the grading)?"""
    import keyword
    import random

    from grader.sabotage.rewrite import FreshNames

    names = FreshNames(random.Random(0), set())
    made = {names.fresh() for _ in range(100_000)}
    assert not {n for n in made if keyword.iskeyword(n) or keyword.issoftkeyword(n)}
