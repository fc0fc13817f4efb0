"""A result read back from its JSON is the result written: Result.from_dict(d).to_dict() == d, byte for byte
once written, for real results (engines of the zoo, a notebook, an error); and data that is not a result,
as a batch may read from disk or a grading process, is refused with the field it got wrong."""

from __future__ import annotations

import json
import shutil
import time

import pytest
from conftest import BAD, HERE, ZOO

from grader.batch.tasks import crash_result
from grader.errors import BadResult
from grader.grading import grade
from grader.result import Result

ROOT = HERE.parent


@pytest.fixture(scope="module")
def results(micrograd, engine_checks, tmp_path_factory):
    """Real results as the contract's JSON: a buggy engine with its own tests (every check, sabotage and
    training artifacts), a correct engine, the lesson's notebook, a syntax error, a crash."""
    folder = tmp_path_factory.mktemp("buggy")
    shutil.copy(ZOO / "buggy" / "tanh_grad_from_input.py", folder / "micrograd_mine.py")
    shutil.copy(HERE / "fixtures" / "suites" / "weak.py", folder / "test_micrograd.py")
    graded = [
        grade(folder / "micrograd_mine.py", micrograd),
        grade(ZOO / "correct" / "kahn.py", engine_checks),
        grade(ROOT / "examples" / "lesson_notebook.ipynb", engine_checks),
        grade(BAD / "syntax_error.py", engine_checks),
        crash_result("micrograd_mine.py", "micrograd", time.monotonic(), "the grading process died"),
    ]
    return [r.to_json() for r in graded] + [graded[0].redacted().to_json()]


def test_a_result_read_back_is_the_result_written(results):
    kinds = set()
    for text in results:
        data = json.loads(text)
        back = Result.from_dict(data)
        assert back.to_dict() == data
        assert back.to_json() == text  # the same bytes, key order included
        assert Result.from_dict(back.to_dict()) == back
        kinds.add((data["status"], "notebook" in data, any(c["counterexample"] for c in data["checks"])))
    assert {status for status, _, _ in kinds} == {"graded", "error"}
    assert any(notebook for _, notebook, _ in kinds) and any(counterexample for _, _, counterexample in kinds)


def test_what_is_not_a_result_is_refused_naming_the_field(results):
    good = json.loads(results[0])
    check = good["checks"][0]
    broken = {
        "result: expected an object": [],
        "result: unknown field 'extra'": {**good, "extra": 1},
        "result: no 'checks'": {k: v for k, v in good.items() if k != "checks"},
        "result.status": {**good, "status": "passed"},
        "result.schema": {**good, "schema": 2},
        "result.score: expected float, got str": {**good, "score": "100"},
        "result.score: expected float, got bool": {**good, "score": True},
        "result.checks[0].visibility": {**good, "checks": [{**check, "visibility": "secret"}]},
        "result.checks[0].status: 'passd' is not one of": {**good, "checks": [{**check, "status": "passd"}]},
        "result.checks[0].status: expected str, got int": {**good, "checks": [{**check, "status": 1}]},
        "result.checks[0].artifacts: expected dict": {**good, "checks": [{**check, "artifacts": [1]}]},
        "result.checks[0].counterexample: expected an object": {**good, "checks": [{**check, "counterexample": "x"}]},
        "result.error.kind": {**good, "status": "error", "error": {"kind": "exploded", "message": "x"}},
        "an error result, and only one, has an error": {**good, "status": "error"},
        "result.notes[0]: expected str": {**good, "notes": [1]},
    }
    for said, data in broken.items():
        with pytest.raises(BadResult, match=said.replace("[", r"\[").replace("(", r"\(")):
            Result.from_dict(data)
