"""The suite lane's way with a notebook: its demo cells run once.

Each run of the tests on another engine runs only the cells the tests need (grader/slicing.py says
why not a fork of the executed notebook), once a run on the student's own engine with only those
cells gives every test the same outcome, and every probe the same numbers, as the run on the whole
notebook. With sandboxes of the lane's own, the runs start at once, while the engine lane runs the
notebook: the run on the needed cells first, then the other engines', and on a second sandbox the
run on the whole notebook beside them. They stand when the engine lane's run shows no needed cell
timed out or killed the kernel, and the two runs on the student's engine agree; otherwise the lane
goes the usual way (every run on the whole notebook but the cells that stopped it).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING

from grader import protocol

if TYPE_CHECKING:
    from grader.lanes import RunReply, SuiteLane
    from grader.sandbox.supervisor import Sandbox


def _ok(run: RunReply | None) -> bool:
    return run is not None and run.failure is None and protocol.raised(run.reply) is None


def _demo(lane: SuiteLane) -> frozenset[int]:
    return frozenset(i for i, _ in lane.job.code.cells if i not in lane.job.needed)


def run_early(lane: SuiteLane, sandboxes: list[Sandbox]) -> bool:
    """Run the notebook's suite before go() (see the module's docstring); False when the lane must go the
    usual way, which then waits for go() itself."""
    if (
        lane.job.needed is None
        or lane.job.code.kind != "notebook"
        or lane.shared is not None
        or "pytest" in sandboxes[0].unavailable
    ):
        return False
    demo = _demo(lane)
    if not demo:
        return False
    lock, done = threading.Lock(), []
    timed = threading.Event()
    state: dict = {}

    def drain(sandbox: Sandbox) -> None:
        timed.wait()
        if not state.get("timeout") or not lane._wait_planned():
            return
        with lock:
            engines = state.setdefault("engines", list(lane.job.plan))
        while not lane._cancelled:
            with lock:
                if not engines:
                    return
                engine = engines.pop(0)
            run = lane._run(sandbox, engine, state["timeout"], demo)
            if run is None:
                return
            done.append(run)

    def whole() -> None:
        state["whole"] = lane._run(sandboxes[1], None, lane.job.first_run_s, frozenset())
        drain(sandboxes[1])

    second = threading.Thread(target=whole, daemon=True) if len(sandboxes) > 1 else None
    if second is not None:
        second.start()
    try:
        needed_only = lane._run(sandboxes[0], None, lane.job.first_run_s, demo)
        # a run as long as a cell's time limit had a needed cell cut off, most likely: one the engine lane's run
        # will report, and every run would wait for again; the runs then wait for go(), and go the usual way
        if _ok(needed_only) and needed_only.duration < lane._cell_timeout:
            state["timeout"] = lane.job.per_run(needed_only)
    finally:
        timed.set()
    drain(sandboxes[0])
    if second is not None:
        second.join()
    lane._go.wait()
    if lane._cancelled:
        return True
    left_out = lane._skip
    if not state.get("timeout") or left_out - demo:  # the usual way, not trying the needed cells again
        lane.job = dataclasses.replace(lane.job, needed=None)
        return False
    full = (
        state.get("whole")
        if second is not None and not left_out
        else lane._run(sandboxes[0], None, lane.job.first_run_s, left_out)
    )
    lane.outcome.own = full
    if not _ok(full) or lane.outcome.cut:
        lane.outcome.runs = _ordered(lane, done)
        return True
    if not same_run(full, needed_only):
        lane.job = dataclasses.replace(lane.job, needed=None)
        return False
    lane.outcome.runs = _ordered(lane, done)
    lane.outcome.run_once = tuple(sorted(i + 1 for i in demo - left_out))
    return True


def _ordered(lane: SuiteLane, runs: list[RunReply]) -> list[RunReply]:
    order = {id(engine): i for i, engine in enumerate(lane.job.plan)}
    return sorted(runs, key=lambda r: order[id(r.engine)])


def only_needed(lane: SuiteLane, sandbox: Sandbox, own: RunReply, timeout: float) -> float:
    """After the run on the whole notebook (the usual way): run the tests on the student's engine again with
    only the cells they need, lean (each cell as plain Python, as the whole run derived IPython's transformation
    of it before running any: grader/sandbox/inside/notebook.py); if every test and probe comes out the same, the
    other runs leave the rest out and are lean too (each run's limit then follows that run's time)."""
    if lane.job.needed is None or lane.job.code.kind != "notebook":
        return timeout
    demo = _demo(lane) - lane._skip
    if not demo:
        return timeout
    again = lane._run(sandbox, None, timeout, lane._skip | demo, lean=True)
    if not _ok(again) or not same_run(own, again):
        return timeout
    lane._skip, lane._lean = lane._skip | demo, True
    lane.outcome.run_once = tuple(sorted(i + 1 for i in demo))
    return lane.job.per_run(again)


def same_run(whole: RunReply, needed: RunReply) -> bool:
    """Did two runs of the tests on the student's engine (claims) give every test the same outcome, the
    same collection errors and the same probe numbers?"""

    def summary(run: RunReply) -> tuple | None:
        reply = run.reply
        if not isinstance(reply, dict) or protocol.raised(reply) is not None:
            return None
        try:
            claim = protocol.suite_run(reply.get("result"), None)
        except ValueError:
            return None
        return {n: t["outcome"] for n, t in claim.tests.items()}, claim.collection_errors, run.probes

    first = summary(whole)
    return first is not None and first == summary(needed)
