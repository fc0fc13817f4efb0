"""Does the grader agree with an independent ground truth on real-world-style student code?

tests/corpus/engines/ holds engines written in the styles students really use (the
lecture's stages, unused numpy/matplotlib/graphviz imports, integer grads, set or tuple
children, printing at import, `_forward` closures...), some with one classic bug.
tests/corpus/truth.json says, for each engine and check, what the grader SHOULD say; it
is computed by tests/corpus/truth.py from the engine and torch alone, with no grader
code (see that file for how each check is charged).

For every engine: it must be graded at all, no check may fail where the truth is pass
(a false failure), and no check may pass where the truth is fail (a false pass). The
grader sees an engine only through its public surface: a rule the truth reads off the
engine's own `_backward` closures cannot be seen when backward() itself is broken, so a
check the truth passes may instead be skipped, provided its feedback names the broken
basic's own check "(see <check>)" and the truth fails that one: the piece at fault is
charged once, where it belongs.
tests/corpus/before.md shows where today's grader stands.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import pytest

from grader import catalog
from grader.checks.suite import SUITE_CHECKS
from grader.grading import grade

CORPUS = Path(__file__).parent / "corpus"
TRUTH = json.loads((CORPUS / "truth.json").read_text())
ENGINES = sorted(TRUTH)
# The engines whose truth is recomputed with torch to show truth.json is current: a
# correct engine, one with a reuse-only bug and one from the lecture's first half.
RECOMPUTED = ("tuple_children_stack", "pow_assign_not_accumulate", "lecture_part1_add_mul")


@functools.cache
def graded(engine: str):
    """The grader's result for one engine, graded once per test process."""
    return grade(CORPUS / "engines" / f"{engine}.py", catalog.load("micrograd").without(SUITE_CHECKS))


def verdicts(engine: str) -> dict[str, str]:
    return {c: v for c, v in TRUTH[engine].items() if c != "notes"}


def _charged_elsewhere(result, check_id: str, truth: dict[str, str]) -> bool:
    """Skipped because a basic is broken whose own check the truth fails?"""
    import re

    check = next(c for c in result.checks if c.id == check_id)
    named = re.findall(r"\(see (?:the )?(\w+)", check.feedback)
    return check.status == "skipped" and bool(named) and all(truth.get(n) == "fail" for n in named)


def _feedback(result, check_id: str) -> str:
    return next(c.feedback for c in result.checks if c.id == check_id).splitlines()[0][:200]


def test_every_engine_file_has_a_truth():
    """Is truth.json about exactly the engines of the corpus, with every engine check?"""
    assert sorted(p.stem for p in (CORPUS / "engines").glob("*.py")) == ENGINES
    assert 20 <= len(ENGINES) <= 25
    for engine in ENGINES:
        assert set(verdicts(engine)) == {
            "forward",
            "add",
            "mul",
            "pow",
            "tanh",
            "relu",
            "neg_sub",
            "accumulate",
            "topo_order",
            "hand_examples",
            "gradcheck",
            "numerical_grad",
            "neuron",
            "training",
        }, engine
        assert set(verdicts(engine).values()) <= {"pass", "fail"}, engine


@pytest.mark.parametrize("engine", ENGINES)
def test_grader_agrees_with_truth(engine):
    """Is the engine graded at all, with no false failure (truth pass, the check did not
    pass) and no false pass (truth fail, the check neither failed nor raised an error)?"""
    result = graded(engine)
    assert result.status == "graded", f"{engine} was not graded at all: {result.error}"
    got = {c.id: c.status for c in result.checks}
    truth = verdicts(engine)
    false_failures = {
        c: got.get(c)
        for c, v in truth.items()
        if v == "pass" and got.get(c) != "passed" and not _charged_elsewhere(result, c, truth)
    }
    false_passes = {c: got.get(c) for c, v in truth.items() if v == "fail" and got.get(c) not in ("failed", "error")}
    explain = {c: f"{status}: {_feedback(result, c)}" for c, status in (false_failures | false_passes).items()}
    assert (false_failures, false_passes) == ({}, {}), (explain, TRUTH[engine]["notes"][:400])


def test_truth_json_is_up_to_date():
    """Recomputed with torch now, do a few engines get the verdicts truth.json records?"""
    pytest.importorskip("torch")
    sys.path.insert(0, str(CORPUS))
    try:
        import truth as corpus_truth
    finally:
        sys.path.remove(str(CORPUS))
    for engine in RECOMPUTED:
        fresh = corpus_truth.compute(CORPUS / "engines" / f"{engine}.py")
        assert {c: v for c, v in fresh.items() if c != "notes"} == verdicts(engine), engine
