"""A result read back from its JSON is the result written: Result.from_dict(d).to_dict() == d, byte for byte
once written, for real results (engines of the zoo, a notebook, an error); and data that is not a result,
as a batch may read from disk or a grading process, is refused with the field it got wrong."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time

import pytest
from conftest import BAD, HERE, ZOO

from grader import spec
from grader.batch.tasks import crash_result
from grader.errors import BadResult
from grader.grading import grade
from grader.result import Result

ROOT = HERE.parent


@pytest.fixture(scope="module")
def results(micrograd, engine_checks, tmp_path_factory):
    """Real results as the contract's JSON: a buggy engine with its own tests (every check, sabotage and
    training artifacts), a correct engine, the lesson's notebook, a syntax error, a crash, and a buggy engine with
    its verified repair (shown at `diff`)."""
    folder = tmp_path_factory.mktemp("buggy")
    shutil.copy(ZOO / "buggy" / "tanh_grad_from_input.py", folder / "micrograd_mine.py")
    shutil.copy(HERE / "fixtures" / "suites" / "weak.py", folder / "test_micrograd.py")
    repaired = dataclasses.replace(
        engine_checks,
        checks=tuple(c for c in engine_checks.checks if c.id in ("tanh", "hand_examples")),
        feedback=spec.Feedback("diff"),
    )
    graded = [
        grade(folder / "micrograd_mine.py", micrograd),
        grade(ZOO / "correct" / "kahn.py", engine_checks),
        grade(ROOT / "examples" / "lesson_notebook.ipynb", engine_checks),
        grade(BAD / "syntax_error.py", engine_checks),
        crash_result("micrograd_mine.py", "micrograd", time.monotonic(), "the grading process died"),
        grade(ZOO / "buggy" / "tanh_grad_from_input.py", repaired),
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
        if any(c.repair for c in back.checks):
            kinds.add(("repaired", False, False))
    assert {status for status, _, _ in kinds} == {"graded", "error", "repaired"}
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


def test_a_repair_is_written_where_the_contract_says_and_read_back_typed(results):
    """A verified repair is the check's typed field `repair`, which the JSON writes as `artifacts.repair` with the
    contract's keys, in their order, after the check's own data; and what is not a verified repair as the grader
    writes one (not verified, a key it never writes, on a hidden check, a line or cell below 1, a level it has not,
    changes in two cells) is refused, naming the field."""
    data = json.loads(results[5])
    at, check = next((i, c) for i, c in enumerate(data["checks"]) if "repair" in c["artifacts"])
    repair = check["artifacts"]["repair"]
    assert list(repair) == ["line", "method", "where", "before", "after", "verified", "fixes", "level"]
    assert list(check["artifacts"])[-2:] == ["repair", "cause"] and repair["level"] == "diff"
    typed = Result.from_dict(data).checks[at].repair
    assert typed is not None and typed.changes[0].line == repair["line"] and typed.fixes == tuple(repair["fixes"])

    def broken(visibility: str = "visible", **changed):
        """The result with the repair's keys changed (or its check's visibility)."""
        checks = list(data["checks"])
        artifacts = {**check["artifacts"], "repair": {**repair, **changed}}
        checks[at] = {**check, "visibility": visibility, "artifacts": artifacts}
        return {**data, "checks": checks}

    refused = {
        "not a verified repair": broken(verified=False),
        "unknown field 'diff'": broken(diff="+ x"),
        "a hidden check with a repair": broken("hidden"),
        "line or cell below 1": broken(line=0),
        "level: 'all' is not one of": broken(level="all"),
        "changes in several cells": broken(
            cell=2, also=[{**{k: repair[k] for k in ("line", "method", "where", "before", "after")}, "cell": 3}]
        ),
        "also: expected a list": broken(also="x"),
        "fixes\\[0\\]: expected str": broken(fixes=[1]),
    }
    for said, bad in refused.items():
        with pytest.raises(BadResult, match=said):
            Result.from_dict(bad)
