"""The suite lane's first run, on the student's own engine, needs no plan of engines: for a .py file it goes as
soon as the lane's sandbox is ready, while the grading's thread writes the plan, and the runs on the plan's
engines wait for it (and a lane cancelled before it comes never waits for ever)."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import BASE_ENGINE

from grader.files import MODULE_FILE
from grader.lanes import Stage, SuiteJob, SuiteLane, SuiteSandboxes
from grader.protocol import Code
from grader.sabotage import SWAPPED, EngineRun, engine_block, wheats
from grader.sandbox.limits import SandboxLimits

TESTS = "from micrograd_mine import Value\n\n\ndef test_add():\n    assert (Value(1.0) + 2).data == 3.0\n"


def lane_for() -> SuiteLane:
    code = Code("py", {MODULE_FILE: BASE_ENGINE.read_bytes()})
    lane = SuiteLane(code, SandboxLimits(), None)
    lane.start(SuiteJob(code, TESTS, None, 30.0, lambda own: 30.0), time.monotonic() + 120)
    return lane


def test_the_own_engines_run_goes_before_the_plan_and_the_others_after_it():
    lane = lane_for()
    try:
        deadline = time.monotonic() + 60
        while lane.outcome.own is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lane.outcome.own is not None and lane.outcome.runs == []  # no plan yet, no go() yet
        wheat = wheats()[0]
        engine = EngineRun(f"wheat:{wheat.id}", "wheat", wheat.id, None, engine_block(wheat.source, SWAPPED))
        lane.planned((engine,), ("a note",))
        lane.go()
        outcome = lane.result()
    finally:
        lane.cancel()
    assert [r.engine.id for r in outcome.runs] == [engine.id] and lane.job.notes == ("a note",)
    assert outcome.own.failure is None and outcome.runs[0].failure is None


def test_a_lane_cancelled_before_its_plan_ends():
    lane = lane_for()
    lane.go()
    lane.cancel()
    ended = []
    waiter = threading.Thread(target=lambda: ended.append(lane.result()), daemon=True)
    waiter.start()
    waiter.join(60)  # result() returns once the lane's thread has ended: it waits for no plan
    assert ended and ended[0].runs == []


def test_a_late_sandbox_joins_the_runs_once_released():
    """The engine lane's sandbox, released when the suite's result is first asked for, takes engines from the
    same list as the suite's own: every engine runs once, on one of the two."""
    code = Code("py", {MODULE_FILE: BASE_ENGINE.read_bytes()})
    from grader.sandbox.supervisor import Sandbox

    released = []
    with Sandbox(code.files, SandboxLimits(), ("pytest",)) as late:
        lane = SuiteLane(code, SandboxLimits(), None, SuiteSandboxes(late=late, before=lambda: released.append(True)))
        engines = tuple(
            EngineRun(f"wheat:{w.id}", "wheat", w.id, None, engine_block(w.source, SWAPPED)) for w in wheats()
        )
        lane.start(SuiteJob(code, TESTS, engines, 30.0, lambda own: 30.0), time.monotonic() + 120)
        lane.go()
        outcome = lane.result()
    assert released == [True]
    assert sorted(r.engine.id for r in outcome.runs) == sorted(e.id for e in engines)
    assert all(r.failure is None for r in outcome.runs)


def test_the_lane_moves_only_as_its_table_says():
    """A caller's wrong order is raised, not a thread waiting for ever: a plan or a go() before the job; and a result
    asked for before the student's code was loaded (no go()) cancels the lane, whose runs on the plan's engines never
    start. Nothing moves a cancelled lane."""
    code = Code("py", {MODULE_FILE: BASE_ENGINE.read_bytes()})
    lane = SuiteLane(code, SandboxLimits(), None)
    try:
        with pytest.raises(RuntimeError):
            lane.planned(())
        with pytest.raises(RuntimeError):
            lane.go()
        assert lane.stage is Stage.NEW
        lane.start(SuiteJob(code, TESTS, None, 30.0, lambda own: 30.0), time.monotonic() + 120)
        assert lane.stage is Stage.STARTED
        ended = []
        waiter = threading.Thread(target=lambda: ended.append(lane.result()), daemon=True)
        waiter.start()
        waiter.join(60)
        assert ended and ended[0].runs == [] and lane.stage is Stage.CANCELLED
        lane.go()
        assert lane.stage is Stage.CANCELLED
    finally:
        lane.cancel()
