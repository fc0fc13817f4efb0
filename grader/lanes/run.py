"""One run of the student's tests, in a fresh process of a suite lane's sandbox: what the lane runs (SuiteJob), how
(RunSettings), and what the run answered (RunReply). A run changes nothing of its lane: it returns what it found,
and the lane's thread keeps it (grader/lanes/suite.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader import protocol, suite_replies
from grader.errors import WorkerFailure
from grader.protocol import Code
from grader.sabotage import EngineRun
from grader.sandbox.supervisor import Sandbox
from grader.sandbox.unit import OutOfTime, Unit


@dataclass
class RunReply:
    """What one run of the suite answered (a claim), or how it failed, and how long it took."""

    engine: EngineRun | None
    """None for the run on the student's own engine."""
    reply: dict[str, Any] | None = None
    failure: WorkerFailure | None = None
    duration: float = 0.0
    probes: tuple | None = None
    """The engine's numbers on the job's probes, as the run said before its test file was written
    (suite_replies.Before), whatever became of the run afterwards; None when it said none."""


@dataclass(frozen=True)
class SuiteJob:
    """What the suite lane runs: the student's tests, on their own engine and then on each engine of the
    plan (written before the lane's runs start), and how long each run may take."""

    code: Code
    tests: str
    plan: tuple[EngineRun, ...] | None
    """None until SuiteLane.planned() gives it: the run on the student's own engine needs none, and goes first."""
    first_run_s: float
    """The run on the student's own engine."""
    per_run: Callable[[RunReply], float]
    """Each later run's limit, from the student's own run (a slow engine gets more time)."""
    fixtures: tuple[str, ...] = ()
    probes: tuple = ()
    """Programs every run reports its engine's numbers on, before its test file is written (mutants' equivalence)."""
    notes: tuple[str, ...] = ()
    """What the plan left out and why (for the student)."""
    needed: frozenset[int] | None = None
    """Of a notebook, the cells its tests need: the runs on other engines run only those once a run on the
    student's own engine shows them to give what the whole notebook gives (grader/notebook_suite.py)."""
    cell_s: float = 30.0
    """Of a notebook, each cell's time limit."""
    wanted: Callable[[EngineRun, RunReply, list[RunReply]], bool] | None = None
    """Whether an engine of the plan is still to run, from the run on the student's own engine and the runs done when
    its turn comes (a spare runs only where the mutant it stands for does not count: checks/suite_runs.py); None:
    every engine runs."""
    rewritten: str = ""
    """The tests as pytest rewrites them for assertions, as the grading's first run on the student's own engine said
    them (suite_replies.rewritten); "" until one did: a run on the student's own engine is then asked to."""


@dataclass(frozen=True)
class RunSettings:
    """How the runs go: what go() said once the student's code was loaded (before it, start()'s deadline and the job's
    cell limit). A lane's settings change only in its moves (SuiteLane.MOVES); a run is given its own, which may leave
    out more cells than the lane's (a notebook's demo cells)."""

    skip: frozenset[int] = frozenset()
    """Of a notebook, the cells left out: those that timed out or killed the kernel (and the demo cells, once a run on
    the needed cells alone stood for the whole notebook)."""
    cell_timeout: float = 30.0
    until: float | None = None
    """The grading's deadline, which no run outlasts and after which none starts."""
    lean: bool = False
    """Each cell transformed runs as plain Python: the runs once a lean run on the needed cells alone stood for the
    whole notebook."""


@dataclass(frozen=True)
class Returned:
    """What one run gave back: its reply, or None when the grading's time ran out before it could end; and, of a
    run asked to derive them, the notebook's cells as IPython transforms them (protocol's transformed())."""

    reply: RunReply | None
    transformed: tuple[tuple[int, str], ...] = ()
    rewritten: str = ""
    """Of a run asked to rewrite them, the tests as pytest rewrites them (suite_replies.rewritten)."""


def run_tests(
    sandbox: Sandbox, job: SuiteJob, engine: EngineRun | None, timeout: float, settings: RunSettings
) -> Returned:
    """One run of the suite on engine (None: the student's own) in a fresh process of sandbox, a notebook without the
    cells settings leave out."""
    started = time.monotonic()
    if settings.until is not None and started >= settings.until:
        return Returned(None)
    derive = engine is None and not job.code.transformed and job.code.kind == "notebook"
    rewrite = engine is None and not job.rewritten
    message = protocol.suite(
        job.code.request(settings.skip, settings.cell_timeout, settings.lean, derive),
        job.tests,
        engine.block if engine else None,
        list(job.fixtures),
        list(job.probes),
        "" if rewrite else job.rewritten or None,
    )
    try:
        unit = sandbox.unit("suite")
    except WorkerFailure as exc:
        return Returned(RunReply(engine, failure=exc, duration=time.monotonic() - started))
    heard: list[dict] = []
    reply, failure, ended = _exchange(unit, message, (timeout, settings.until), heard)
    before = suite_replies.before_tests(heard, job.code, derive, bool(job.probes), job.tests if rewrite else None)
    found = before.transformed if derive else ()  # said before the student's code ran: it holds however the run ended
    if isinstance(failure, OutOfTime) and failure.outer:
        return Returned(None, found, before.rewritten)
    return Returned(RunReply(engine, reply, failure, ended - started, before.probes), found, before.rewritten)


def _exchange(
    unit: Unit, message: dict, limits: tuple[float, float | None], heard: list[dict]
) -> tuple[dict | None, WorkerFailure | None, float]:
    """The run's request (limits: its own, and the grading's deadline), its reply or how it failed, and when it
    ended; heard keeps the run's first frames."""

    def hear(event: dict) -> None:
        if len(heard) < suite_replies.BEFORE_TESTS:
            heard.append(event)

    reply, failure = None, None
    try:
        reply = unit.exchange(message, limits[0], limits[1], hear)
    except WorkerFailure as exc:  # OutOfTime too
        failure = exc
    finally:
        ended = time.monotonic()
        if not unit.failed:
            unit.close()
    return reply, failure, ended


def ok(run: RunReply | None) -> bool:
    """Did the run end with a reply that says the tests ran (whatever their outcome)?"""
    return run is not None and run.failure is None and protocol.raised(run.reply) is None
