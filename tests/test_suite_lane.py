"""The suite lane's first run, on the student's own engine, needs no plan of engines: for a .py file it goes as
soon as the lane's sandbox is ready, while the grading's thread writes the plan, and the runs on the plan's
engines wait for it (and a lane cancelled before it comes never waits for ever)."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest
from conftest import BASE_ENGINE

from grader.files import MODULE_FILE
from grader.lanes import RunSettings, Stage, SuiteJob, SuiteLane, SuiteSandboxes
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
        assert lane.outcome.own is not None and lane.outcome.runs == ()  # no plan yet, no go() yet
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
    assert ended and ended[0].runs == ()


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


def test_released_the_runs_go_on_before_their_result_is_asked_for():
    """release() (the engine checks done) frees the sandbox the runs share with the engine lane, once: the runs, which
    waited for it, then end with no one asking for their result, and result() frees nothing again."""
    from grader.sandbox.supervisor import Sandbox

    code = Code("py", {MODULE_FILE: BASE_ENGINE.read_bytes()})
    wheat = wheats()[0]
    plan = (EngineRun(f"wheat:{wheat.id}", "wheat", wheat.id, None, engine_block(wheat.source, SWAPPED)),)
    freed = []
    with Sandbox(code.files, SandboxLimits(), ("pytest",)) as shared:
        lane = SuiteLane(code, SandboxLimits(), None, SuiteSandboxes(shared=shared, before=lambda: freed.append(1)))
        try:
            lane.start(SuiteJob(code, TESTS, plan, 30.0, lambda own: 30.0), time.monotonic() + 120)
            shared.wait_ready()
            lane.go()
            assert lane.stage is Stage.WAITING and lane.outcome.own is None and freed == []
            lane.release()
            assert lane.stage is Stage.RUNNING and freed == [1]
            deadline = time.monotonic() + 90
            while len(lane.outcome.runs) < len(plan) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert [r.engine.id for r in lane.outcome.runs] == [plan[0].id], lane.outcome
            outcome = lane.result()
        finally:
            lane.cancel()
    assert freed == [1] and outcome is lane.outcome
    assert outcome.own is not None and outcome.own.failure is None and outcome.runs[0].failure is None


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
        assert ended and ended[0].runs == () and lane.stage is Stage.CANCELLED
        lane.go()
        assert lane.stage is Stage.CANCELLED
    finally:
        lane.cancel()


NOTEBOOK_TESTS = "def test_add():\n    assert (Value(1.0) + 2).data == 3.0\n"
DEMO = "losses = [step * 2 for step in range(3)]\nprint(losses)\n"


def _reachable(start, end) -> bool:
    """Is stage end reached from stage start through the lane's table of moves (in one move or several)?"""
    seen, frontier = {start}, [start]
    while frontier:
        stage = frontier.pop()
        for (was, _), then in SuiteLane.MOVES.items():
            if was is stage and then not in seen:
                seen.add(then)
                frontier.append(then)
    return end in seen


def _watch(lane: SuiteLane, stop: threading.Event, seen: list) -> None:
    """Every state of the lane this thread sees, each once in a row."""
    while not stop.is_set():
        state = lane.state
        if not seen or state != seen[-1]:
            seen.append(state)
        time.sleep(0.0005)


def test_the_runs_settings_change_only_through_the_lanes_moves():
    """Driven from several threads at once (the plan, go(), release() and two checks asking for the result) while three
    more watch it: the lane's stage and its runs' settings change together, in one move of its table, and nowhere
    else. A notebook's runs on other engines leave its demo cell out once a lean run on the cells its tests need stood
    for the whole notebook, without the lane's settings changing under its runs; a shared sandbox is freed once."""
    from grader import catalog
    from grader.checks.suite import suite_job
    from grader.notebooks import TEST_SHIM
    from grader.sandbox.supervisor import Sandbox

    code = Code("notebook", {}, ((1, BASE_ENGINE.read_text()), (2, DEMO), (3, NOTEBOOK_TESTS)))
    job = suite_job(catalog.load("micrograd"), code, TEST_SHIM)
    assert job.needed == frozenset({1, 3}), job.needed
    wheat = wheats()[0]
    plan = (EngineRun(f"wheat:{wheat.id}", "wheat", wheat.id, None, engine_block(wheat.source, SWAPPED)),)
    until = time.monotonic() + 240
    freed = []
    stop, views = threading.Event(), [[], [], []]
    with Sandbox(code.files, SandboxLimits(), ("pytest", *code.warm)) as shared:
        lane = SuiteLane(code, SandboxLimits(), None, SuiteSandboxes(shared=shared, before=lambda: freed.append(1)))
        watchers = [threading.Thread(target=_watch, args=(lane, stop, seen), daemon=True) for seen in views]
        for watcher in watchers:
            watcher.start()
        try:
            lane.start(job, until)
            shared.wait_ready()  # the engine lane's to wait for, as it loads the student's code
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not all(seen and seen[-1].stage is Stage.STARTED for seen in views):
                time.sleep(0.01)  # every watcher sees the lane started before it goes
            planner = threading.Thread(target=lane.planned, args=(plan,))
            loader = threading.Thread(target=lane.go, args=(frozenset(), job.cell_s, until))
            planner.start()
            loader.start()
            loader.join()
            outcomes: list = []
            gate = threading.Barrier(3)

            def ask() -> None:  # a check in a thread of its own
                gate.wait()
                outcomes.append(lane.result())

            askers = [threading.Thread(target=ask) for _ in (1, 2)]
            for asker in askers:
                asker.start()
            gate.wait()
            lane.release()
            for asker in (*askers, planner):
                asker.join(200)
        finally:
            stop.set()
            lane.cancel()
            for watcher in watchers:
                watcher.join()
    started = dataclasses.replace(RunSettings(), cell_timeout=job.cell_s, until=until)
    given = RunSettings(frozenset(), job.cell_s, until)
    for seen in views:
        assert Stage.STARTED in {state.stage for state in seen} and seen[-1].stage is Stage.RUNNING, seen
        for before, after in zip(seen, seen[1:]):
            assert before.stage is not after.stage and _reachable(before.stage, after.stage), (before, after)
        for state in seen:
            expected = {Stage.NEW: RunSettings(), Stage.STARTED: started}.get(state.stage, given)
            assert state.settings == expected, state
    assert freed == [1]
    assert len(outcomes) == 2 and outcomes[0] is outcomes[1]
    outcome = outcomes[0]
    assert outcome.own is not None and outcome.own.failure is None, outcome.own
    assert [r.engine.id for r in outcome.runs] == [plan[0].id] and outcome.runs[0].failure is None, outcome.runs
    assert outcome.run_once == (3,)  # the demo cell left out of the run on the wheat: the lane's settings unchanged
