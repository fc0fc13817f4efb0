"""What verified repairs cost (issue 31): the regrades want statuses only, and find their sandboxes started.

A regrade verifying a repair asks only whether each check passes (grading.Options.statuses_only): a failure is
neither shrunk nor diagnosed. That is sound only if it gives every check the status a full grading gives, which
the first test shows on buggy engines of several styles, one bug or two. The regrades' sandboxes start as soon as
a check fails from a cause whose edit the file holds (grader/repair/repairs.py), and each regrade takes one of them:
none is started for a correct engine. (What it saves is measured by bench/bench_repair.py, not timed here.)
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from conftest import ZOO
from repair_bugs import BUGS, buggy, correct

from grader import spec
from grader.checks.suite import SUITE_CHECKS
from grader.grading import OVERRUN_S, Options, grade
from grader.lanes import SuiteLane
from grader.repair.inverse import edit_for
from grader.repair.repairs import Repairs
from grader.sandbox.prestarted import Prestarted


def two_bugs() -> str:
    text, _ = buggy("pow_off_by_one", "slots_gradfn")
    return text.replace("a.grad += (1.0 - t * t) * res.grad", "a.grad += (1.0 - a.data * a.data) * res.grad")


ENGINES = {
    "tanh_from_input@lecture": lambda: buggy("tanh_grad_from_input", "lecture")[0],
    "assign_in_mul@list_iterative": lambda: buggy("assign_in_mul", "list_iterative")[0],
    "two_bugs@slots_gradfn": two_bugs,
    "self_not_tuple": lambda: (ZOO / "buggy" / "self_not_tuple.py").read_text(),
    "topo_not_reversed": lambda: (ZOO / "buggy" / "topo_not_reversed.py").read_text(),
    "naive_recursion": lambda: (ZOO / "buggy" / "naive_recursion.py").read_text(),
}


def engine_checks(micrograd: spec.Assignment, level: str = "off") -> spec.Assignment:
    return dataclasses.replace(micrograd.without(SUITE_CHECKS), feedback=spec.Feedback(level))


def graded(tmp_path: Path, text: str, task: spec.Assignment, options: Options | None = None, name: str = "mine"):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "micrograd_mine.py").write_text(text, encoding="utf-8")
    return grade(folder / "micrograd_mine.py", task, options or Options())


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_statuses_only_gives_every_check_the_status_a_full_grading_gives(tmp_path, micrograd, engine):
    text = ENGINES[engine]()
    task = engine_checks(micrograd)
    full = graded(tmp_path, text, task, name="full")
    quick = graded(tmp_path, text, task, Options(statuses_only=True), name="quick")
    statuses = {c.id: c.status for c in full.checks}
    assert "failed" in statuses.values() or "error" in statuses.values(), statuses  # a buggy engine
    assert {c.id: c.status for c in quick.checks} == statuses
    assert quick.score == full.score


@pytest.fixture
def pool(monkeypatch):
    """The sandboxes started ahead (add) and each asked for (take: whether one was there), the real methods
    watched."""
    seen: dict[str, list[bool]] = {"add": [], "take": []}
    add, take = Prestarted.add, Prestarted.take

    def added(self, wanted):
        seen["add"].append(True)
        return add(self, wanted)

    def taken(self, *args, **kwargs):
        sandbox = take(self, *args, **kwargs)
        seen["take"].append(sandbox is not None)
        return sandbox

    monkeypatch.setattr(Prestarted, "add", added)
    monkeypatch.setattr(Prestarted, "take", taken)
    return seen


def test_each_regrade_takes_a_sandbox_started_while_the_grading_ran(tmp_path, micrograd, pool):
    """Two causes: three regrades (each edit alone, both together), each in a sandbox started ahead."""
    checks = tuple(c for c in micrograd.checks if c.id in ("pow", "tanh", "hand_examples", "gradcheck"))
    task = dataclasses.replace(engine_checks(micrograd, "where"), checks=checks)
    result = graded(tmp_path, two_bugs(), task)
    assert {c.cause for c in result.checks if c.repair is not None} == {"pow_off_by_one", "tanh_grad_from_input"}
    assert pool == {"add": [True] * 3, "take": [True] * 3}


def test_a_correct_engine_starts_no_sandbox_for_a_regrade(tmp_path, micrograd, pool):
    result = graded(tmp_path, correct("list_iterative"), engine_checks(micrograd, "where"))
    assert result.score == result.max_score
    assert pool == {"add": [], "take": []}


def test_a_batchs_grading_starts_one_sandbox_ahead_and_the_rest_when_needed(tmp_path, micrograd, pool):
    """A batch (one sandbox per grading, every core busy): one regrade's sandbox is started ahead, the others
    when their regrade starts, so a class's gradings never hold several spare sandboxes each."""
    checks = tuple(c for c in micrograd.checks if c.id in ("pow", "tanh", "hand_examples", "gradcheck"))
    task = dataclasses.replace(engine_checks(micrograd, "where"), checks=checks)
    result = graded(tmp_path, two_bugs(), task, Options(one_sandbox=True))
    assert {c.cause for c in result.checks if c.repair is not None} == {"pow_off_by_one", "tanh_grad_from_input"}
    assert pool == {"add": [True], "take": [True, False, False]}


def test_the_regrades_run_while_the_students_tests_still_run(tmp_path, micrograd, monkeypatch):
    """With the student's tests beside the file (as `grader check` grades the lesson's submission): are the repairs
    verified once the engine checks are done and before any suite check reads the tests' runs (so the regrades go
    while the runs go, freed first), and does that change no check's result but the repair (the same statuses and
    score as with repairs off)?"""
    seen: list[str] = []
    verify, result = Repairs.verify, SuiteLane.result

    def verifying(self, *args):
        seen.append("verify")
        return verify(self, *args)

    def asked(self):
        seen.append("runs asked")
        return result(self)

    monkeypatch.setattr(Repairs, "verify", verifying)
    monkeypatch.setattr(SuiteLane, "result", asked)
    text, _ = buggy("tanh_grad_from_input", "lecture")
    tests = (Path(__file__).parent / "fixtures" / "suites" / "good.py").read_text(encoding="utf-8")
    ids = ("tanh", "hand_examples", "gradcheck", "student_tests", "wheat", "sabotage")
    task = dataclasses.replace(micrograd, checks=tuple(c for c in micrograd.checks if c.id in ids))
    results = {}
    for level in ("off", "where"):
        seen.clear()
        folder = tmp_path / level
        folder.mkdir()
        (folder / "micrograd_mine.py").write_text(text, encoding="utf-8")
        (folder / "test_micrograd.py").write_text(tests, encoding="utf-8")
        results[level] = grade(
            folder / "micrograd_mine.py", dataclasses.replace(task, feedback=spec.Feedback(level)), Options()
        )
    assert seen[0] == "verify" and seen.count("verify") == 1 and "runs asked" in seen, seen  # before any read
    off, where = results["off"], results["where"]
    assert [(c.id, c.status, c.score) for c in where.checks] == [(c.id, c.status, c.score) for c in off.checks]
    assert next(c for c in where.checks if c.id == "tanh").repair is not None
    assert not any(c.repair for c in off.checks)


# -- a student's file cannot make the search for the line cost the grader its budget (issue 41, item 6) ----------


def dead_code(cause: str, lines: list[str]) -> str:
    """The lecture engine with the cause planted, and after its line(s), in the same _backward, a `return` and the
    lines given: dead code, which the grading never runs and the search for the line to change reads."""
    text, line = buggy(cause, "lecture")
    rows = text.split("\n")
    indent = rows[line - 1][: len(rows[line - 1]) - len(rows[line - 1].lstrip())]
    at = line - 1 + BUGS[cause]["lecture"][1].rstrip("\n").count("\n") + 1
    rows[at:at] = [indent + "return"] + [indent + row for row in lines]
    return "\n".join(rows)


DEAD = {
    # 2,500 lines of `=` for `+=` after the planted ones: the edit would change each (38 s of CPU once, twice a
    # grading, before the search was bounded)
    "lines": ("assign_in_add", ["self.grad = out.grad"] * 2_500, ("add", "mul", "accumulate", "gradcheck")),
    # 30 statements updating a gradient by a chain of 900 terms: each was walked, and compared, per update
    "chains": (
        "missing_outgrad_mul",
        [f"self.grad += {' + '.join(['q'] * 900)}"] * 30,
        ("mul", "neg_sub", "gradcheck"),
    ),
}


@pytest.mark.parametrize("shape", sorted(DEAD))
def test_dead_code_in_a_backward_is_graded_within_the_budget(tmp_path, micrograd, shape):
    """Does a file whose _backward holds thousands of dead statements, or chains 900 deep, get every check judged
    within its 15 s budget, the grader's own process spending seconds, not minutes, on the search for the line to
    change (which such a file is past the bounds of: no repair is offered)? Before the search was bounded, the first
    took 374 s (90 s of the grader's CPU) and the second 46 s, their last checks skipped for want of time."""
    cause, lines, checks = DEAD[shape]
    task = dataclasses.replace(
        engine_checks(micrograd, "where"),
        checks=tuple(c for c in micrograd.checks if c.id in checks),
        search=dataclasses.replace(micrograd.search, max_examples=15),
        limits=dataclasses.replace(micrograd.limits, submission_s=15.0),
    )
    wall, cpu = time.monotonic(), time.process_time()
    result = graded(tmp_path, dead_code(cause, lines), task)
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    assert wall <= task.limits.submission_s + OVERRUN_S and result.duration_s <= task.limits.submission_s, wall
    assert cpu < 5.0, cpu
    # none skipped for want of time (neg_sub may wait for a broken *: built from it, it is not judged on its own)
    assert not any(c.status == "skipped" and c.timing for c in result.checks), [(c.id, c.status) for c in result.checks]
    assert any(c.cause == cause for c in result.checks) and not any(c.repair for c in result.checks)


def test_the_bounds_leave_room_for_a_long_method():
    """Is a method of 150 statements, far longer than a lesson's, still read (its edit found), and one of thousands
    refused at once?"""
    edit = edit_for(dead_code("assign_in_add", ["q = out.grad * 2"] * 150), "assign_in_add")
    line = buggy("assign_in_add", "lecture")[1]
    assert edit is not None and [c.line for c in edit.changes] == [line, line + 1]
    started = time.process_time()
    assert edit_for(dead_code("assign_in_add", ["self.grad = out.grad"] * 2_500), "assign_in_add") is None
    assert time.process_time() - started < 1.0
