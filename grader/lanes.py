"""The two lanes of one grading, each in a sandbox of its own (as root, each its own uid):

- the engine lane: one process that loads the student's code once (the module, or the
  notebook run as Restart & Run All) and answers the engine checks' probes; it is
  reloaded from a fresh fork if the student's code kills it;
- the suite lane: the student's tests run with pytest, once on their own engine and then
  once per engine of the plan, each run in a fresh process, one after another, with the
  sandbox cleaned in between. It runs beside the engine lane, on the other core.

The lanes never share a process, a uid or a writable folder at once, so what the engine lane's
process sees (nothing secret) cannot reach the suite runs, and no run can reach another. A
sandbox passes from the engine lane to the suite only once the engine's process has ended and
the sandbox is cleaned: a batch's one sandbox, and a .py file's check, whose engine sandbox
joins the runs once the engine checks are done (grader/sandbox/prestarted.py's layout).

Both lanes work under the grading's deadline (the end of the submission's time limit): no
request outlasts it, and no run of the suite starts after it.
"""

from __future__ import annotations

import dataclasses
import enum
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grader import notebook_suite, protocol
from grader.errors import WorkerFailure
from grader.protocol import Code
from grader.sabotage import EngineRun
from grader.sandbox.isolation import Isolation
from grader.sandbox.prestarted import Prestarted, sandbox_for
from grader.sandbox.supervisor import Sandbox, SandboxLimits
from grader.sandbox.unit import OutOfTime, Unit


class EngineLane:
    """The student's own engine, behind one sandbox: requests in, claims out."""

    def __init__(
        self,
        code: Code,
        limits: SandboxLimits,
        iso: Isolation | None = None,
        shared: Sandbox | None = None,
        prestarted: Prestarted | None = None,
        warm: tuple[str, ...] | None = None,
    ):
        self.code = code
        self.limits = limits
        self.owned = shared is None
        """The lane has a sandbox of its own (else it shares the grading's one with the suite, in turn)."""
        if shared is None:
            self.sandbox = sandbox_for(prestarted, code.files, limits, code.warm if warm is None else warm, iso)
        else:
            self.sandbox = shared
        self.ready = False
        self.unit: Unit | None = None
        self.load_request: dict | None = None

    def load(
        self,
        load_request: dict,
        timeout: float,
        until: float | None,
        on_event: Callable | None = None,
        gap: float | None = None,
    ) -> dict:
        """Load the student's code in a fresh process; the raw reply (symbols, or what it raised).
        timeout, until and gap as Unit.exchange's."""
        self.load_request = load_request
        if not self.ready:
            self.sandbox.wait_ready()
            self.ready = True
        self.unit = self.sandbox.unit("state")
        return self.unit.exchange(protocol.load(load_request), timeout, until, on_event, gap)

    def request(
        self,
        message: dict,
        timeout: float,
        until: float | None = None,
        on_event: Callable | None = None,
        gap: float | None = None,
    ) -> dict:
        """One request to the student's engine (timeout, until and gap as Unit.exchange's); raises
        WorkerFailure (the process is then replaced)."""
        if self.unit is None or self.unit.failed:
            self._respawn(until)
        assert self.unit is not None, "_respawn() gives a unit, or raises"
        return self.unit.exchange(message, timeout, until, on_event, gap)

    def _respawn(self, until: float | None) -> None:
        self._drop()
        self.unit = self.sandbox.unit("state")
        assert self.load_request is not None, "requests come after load(), which a respawn repeats"
        reply = self.unit.exchange(protocol.load(self.load_request), self.limits.request_s * 6, until)
        if protocol.raised(reply) is not None:
            raise WorkerFailure("crash", "could not be loaded again after its process stopped")

    def _drop(self) -> None:
        if self.unit is not None and not self.unit.failed:
            self.unit.close()
        self.unit = None

    def pause(self) -> None:
        """End the student's process, and clean the sandbox, so another lane can use it; the next
        request loads the student's code again."""
        self._drop()

    def close(self) -> None:
        self._drop()
        if self.owned:
            self.sandbox.close()

    def __enter__(self) -> EngineLane:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class RunReply:
    """What one run of the suite answered (a claim), or how it failed, and how long it took."""

    engine: EngineRun | None
    """None for the run on the student's own engine."""
    reply: dict[str, Any] | None = None
    failure: WorkerFailure | None = None
    duration: float = 0.0
    probes: tuple | None = None
    """The engine's numbers on the job's probes, as the run said before its test file was written (protocol.Before),
    whatever became of the run afterwards; None when it said none."""


@dataclass
class SuiteOutcome:
    own: RunReply | None = None
    runs: list[RunReply] = field(default_factory=list)
    error: str = ""
    """Why the lane could not run at all (its sandbox did not start)."""
    cut: bool = False
    """The grading's time ran out before every run was done; the runs not done are left out (not
    counted as hangs: the engine did not make them slow, the time was up)."""
    run_once: tuple[int, ...] = ()
    """Of a notebook, the cells (numbered from 1) the runs on other engines left out: demo cells the tests
    do not need, run once (grader/slicing.py)."""


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


@dataclass(frozen=True)
class SuiteSandboxes:
    """Where a suite lane's runs go: sandboxes of its own (count, each taken from those prestarted where one
    matches), or the grading's one, shared with the engine lane in turn; and the engine lane's own, joining late."""

    count: int = 1
    shared: Sandbox | None = None
    """The grading's one sandbox, which the runs use in turn with the engine lane (a batch's way: every core already
    grades a submission), or None for sandboxes of the lane's own."""
    late: Sandbox | None = None
    """The engine lane's own sandbox, which joins the runs on the plan's engines once the engine checks are done
    (when the suite's result is first asked for, after them): grader check of a .py file."""
    before: Callable[[], None] | None = None
    """With a shared sandbox, or a late one: what frees it (the engine lane's pause) before runs use it."""
    prestarted: Prestarted | None = None


class Stage(enum.Enum):
    """Where a suite lane is. Its moves are SuiteLane.MOVES, made in SuiteLane._move alone; the plan of engines is
    not a stage but part of the job (SuiteJob.plan), which the runs on the plan's engines wait for in any stage."""

    NEW = "new"
    """Made: its sandboxes warm up; it has no job yet."""
    STARTED = "started"
    """Its job handed over (start): the runs that need nothing of the engine lane go (a .py file's run on the student's
    own engine; a notebook's runs on the cells its tests need)."""
    LOADED = "loaded"
    """The student's code loaded (go) with a shared sandbox: the runs wait until the engine checks are done."""
    RUNNING = "running"
    """Every run may go (once the plan is written, for those on its engines)."""
    JOINED = "joined"
    """The engine checks are done: the engine lane's sandbox, freed, takes the plan's engines too."""
    CANCELLED = "cancelled"
    """No run starts any more: the grading ended, or the student's code never loaded."""


class SuiteLane:
    """The student's suite on their engine, then on each engine of the plan, in a thread of its own
    (and, with several sandboxes, the engines shared among them, each sandbox's runs one at a time).

    Made, its sandboxes start warming up, each in its own process, while the grading's thread writes the plan
    (Python 3.11's ast is not safe to use from two threads at once). Then, from the grading's thread: start(job)
    hands the lane its job and starts its thread; planned(plan) gives the engines to run after the student's own;
    go() lets the runs begin once the student's code is loaded; result() waits for them (and frees a shared or late
    sandbox first); cancel() ends the lane, in any stage. The lane's stages and their moves are Stage and MOVES;
    the job is the lane's alone, replaced in _update_job only.

    Of a notebook, the runs on other engines run only the cells the tests need, once a run on the student's own
    engine shows them to give what the whole notebook gives (grader/notebook_suite.py says how): with sandboxes of
    the lane's own, they start at once, before go(), while the engine lane runs the notebook."""

    MOVES: dict[tuple[Stage, str], Stage] = {
        (Stage.NEW, "start"): Stage.STARTED,
        (Stage.STARTED, "load"): Stage.LOADED,
        (Stage.STARTED, "run"): Stage.RUNNING,
        (Stage.LOADED, "run"): Stage.RUNNING,
        (Stage.RUNNING, "join"): Stage.JOINED,
        **{(stage, "cancel"): Stage.CANCELLED for stage in Stage},
    }
    """Each (stage, event) the lane may meet, and the stage it moves to; any other is a caller's mistake, raised."""

    def __init__(
        self, code: Code, limits: SandboxLimits, iso: Isolation | None, where: SuiteSandboxes = SuiteSandboxes()
    ):
        self.shared = where.shared
        self.late = where.late
        self._before = where.before
        self.outcome = SuiteOutcome()
        self.sandboxes: list[Sandbox] = [] if self.shared is None else [self.shared]
        """Those the runs on other engines are shared among, in parallel (each a uid of its own)."""
        try:
            for _ in range(max(1, where.count) if self.shared is None else 0):
                self.sandboxes.append(sandbox_for(where.prestarted, code.files, limits, ("pytest", *code.warm), iso))
        except Exception as exc:
            self._close_own()
            self.outcome.error = f"the sandbox for your tests could not start ({exc})"
        self._stage = Stage.NEW
        self._job: SuiteJob | None = None
        self._as = RunSettings()
        self._changed = threading.Condition()
        """Held while the stage or the job changes; notified after each change."""
        self._asked = threading.Lock()
        self._thread = threading.Thread(target=self._main, daemon=True)

    # -- the grading's thread ---------------------------------------------------------------------------------------

    @property
    def job(self) -> SuiteJob | None:
        """The lane's job as it stands (the plan and its notes once planned() gave them)."""
        return self._job

    @property
    def stage(self) -> Stage:
        return self._stage

    def start(self, job: SuiteJob, until: float | None = None) -> None:
        """Hand the lane its job. until: the grading's deadline, for the runs of a notebook's tests that start
        before go(), while the engine lane runs the notebook."""
        self._as = RunSettings(cell_timeout=job.cell_s, until=until)
        with self._changed:
            self._job = job
            if self._move("start") is Stage.CANCELLED:
                return
        self._thread.start()

    def planned(self, plan: tuple[EngineRun, ...], notes: tuple[str, ...] = ()) -> None:
        """The engines to run the tests on after the student's own, and what the plan left out and why: written
        by the grading's thread (Python 3.11's ast is not safe from two threads) while this lane's first run, on
        the student's own engine, goes on."""
        if self._job is None:
            raise RuntimeError("the suite lane was given a plan before its job (start)")
        self._update_job(plan=plan, notes=notes)

    def go(self, skip: frozenset[int] = frozenset(), cell_timeout: float = 30.0, until: float | None = None) -> None:
        """Let the runs start (for a notebook, without the cells that timed out or killed the kernel);
        with a shared sandbox, they start when their result is first asked for. until: the grading's
        deadline, which no run outlasts and after which none starts."""
        self._as = RunSettings(skip, cell_timeout, until)
        self._move("load" if self.shared is not None else "run")

    def cancel(self) -> None:
        if self._move("cancel") is Stage.NEW:  # its thread never started: the sandboxes are closed here
            self._close_own()

    def result(self) -> SuiteOutcome:
        """The runs' outcome, once every run is done: a shared sandbox, or a late one, is freed for them first (the
        engine checks are done); a lane whose student's code never loaded (no go()) is cancelled instead."""
        with self._asked:  # the checks that ask may be in threads of their own: the sandbox is freed once
            stage = self._stage
            if stage is Stage.STARTED:
                self.cancel()
            elif stage is Stage.LOADED:
                self._free()
                self._move("run")
            if self.late is not None and self._stage is Stage.RUNNING:
                self._free()
                self._move("join")
        if self._thread.ident is not None:
            self._thread.join()
        return self.outcome

    def _free(self) -> None:
        if self._before is not None:
            self._before()

    def _move(self, event: str) -> Stage:
        """The one place the lane's stage changes (MOVES); returns the stage it left. Nothing moves a cancelled lane."""
        with self._changed:
            was = self._stage
            if was is Stage.CANCELLED:
                return was
            if (was, event) not in self.MOVES:
                raise RuntimeError(f"the suite lane was told {event} in stage {was.value}")
            self._stage = self.MOVES[was, event]
            self._changed.notify_all()
            return was

    def _update_job(self, **changes) -> None:
        """The one place the lane's job changes (the plan, the cells as IPython transforms them, the needed cells
        given up on)."""
        with self._changed:
            self._job = dataclasses.replace(self._given, **changes)
            self._changed.notify_all()

    # -- the lane's threads -----------------------------------------------------------------------------------------

    @property
    def _given(self) -> SuiteJob:
        """The job, in the lane's threads (which start with it)."""
        if self._job is None:
            raise RuntimeError("the suite lane has no job: start() gives it")
        return self._job

    def _plan(self) -> tuple[EngineRun, ...]:
        """The plan, once _await_plan() saw it."""
        if self._given.plan is None:
            raise RuntimeError("the suite lane's runs on the plan's engines went before the plan")
        return self._given.plan

    @property
    def cancelled(self) -> bool:
        return self._stage is Stage.CANCELLED

    def _await(self, *stages: Stage) -> bool:
        """Wait for one of the stages, or a cancel; False when the lane was cancelled instead."""
        with self._changed:
            self._changed.wait_for(lambda: self._stage in stages or self._stage is Stage.CANCELLED)
        return not self.cancelled

    def _await_plan(self) -> bool:
        """Wait for the plan; False when the lane was cancelled instead."""
        with self._changed:
            self._changed.wait_for(lambda: self._given.plan is not None or self._stage is Stage.CANCELLED)
        return not self.cancelled

    def _await_go(self) -> bool:
        return self._await(Stage.RUNNING, Stage.JOINED)

    def _close_own(self) -> None:
        for sandbox in self.sandboxes:
            if sandbox is not self.shared:
                sandbox.close()

    def _main(self) -> None:
        try:
            if self.outcome.error or not self._ready():
                self._await_go()
                return
            if self.cancelled or self._early():
                return
            if self.shared is None and self._given.code.kind == "py" and "pytest" not in self.sandboxes[0].unavailable:
                # the student's module needs nothing from the engine lane: their own engine's run goes at once
                self.outcome.own = self._run(self.sandboxes[0], None, self._given.first_run_s)
            if self._await_go():
                self._runs()
        finally:
            self._close_own()

    def _ready(self) -> bool:
        """Wait for the lane's own sandboxes (the shared one is the engine lane's to wait for); False, and the error
        said, when one could not start."""
        try:
            for sandbox in self.sandboxes:
                if sandbox is not self.shared:
                    sandbox.wait_ready()
        except Exception as exc:
            self.outcome.error = f"the sandbox for your tests could not start ({exc})"
            return False
        return True

    def _runs(self) -> None:
        sandboxes = self.sandboxes
        if "pytest" in sandboxes[0].unavailable:
            self.outcome.error = f"pytest cannot be imported in the sandbox ({sandboxes[0].unavailable['pytest']})"
            return
        own = self.outcome.own or self._run(sandboxes[0], None, self._given.first_run_s)
        self.outcome.own = own
        if own is None or not _ok(own):
            return
        timeout = self._only_needed(sandboxes[0], own, self._given.per_run(own))
        if not self._await_plan():
            return
        engines = _Engines(self._plan(), timeout, self._wanted(own))
        helpers = [threading.Thread(target=self._run_all, args=(sandbox, engines)) for sandbox in sandboxes[1:]]
        if self.late is not None:
            helpers.append(threading.Thread(target=self._run_late, args=(self.late, engines)))
        for helper in helpers:
            helper.start()
        self._run_all(sandboxes[0], engines)
        for helper in helpers:
            helper.join()
        self.outcome.runs = engines.ordered(self._plan())

    def _run_late(self, late: Sandbox, engines: _Engines) -> None:
        """The late sandbox's share of the runs, once it is freed."""
        if self._await(Stage.JOINED):
            self._run_all(late, engines)

    def _run_all(self, sandbox: Sandbox, engines: _Engines, skip: frozenset[int] | None = None) -> None:
        """Run the suite on the engines this sandbox takes next, in turn (the sandbox cleaned between runs)."""
        while not self.cancelled and (engine := engines.take()) is not None:
            run = self._run(sandbox, engine, engines.timeout, skip)
            if run is None:
                return
            engines.done.append(run)

    # -- a notebook's demo cells run once (grader/notebook_suite.py) ------------------------------------------------

    def _early(self) -> bool:
        """Of a notebook with sandboxes of the lane's own, run the suite before go(): the run on the needed cells
        first, then the other engines', and on a second sandbox the run on the whole notebook beside them. False
        when the lane must go the usual way (which then waits for go() itself)."""
        demo = self._demo_cells()
        if not demo:
            return False
        early = _Early(demo)
        second = threading.Thread(target=self._early_whole, args=(early,), daemon=True)
        if len(self.sandboxes) > 1:
            second.start()
        try:
            needed_only = self._run(self.sandboxes[0], None, self._given.first_run_s, demo)
            early.engines = self._early_engines(needed_only)
        finally:
            early.timed.set()
        if early.engines is not None:
            self._run_all(self.sandboxes[0], early.engines, demo)
        if second.ident is not None:
            second.join()
        if not self._await_go():
            return True
        return self._settle(early, needed_only)

    def _demo_cells(self) -> frozenset[int]:
        """The demo cells the early runs leave out (none: no early runs)."""
        job = self._given
        if (
            job.needed is None
            or job.code.kind != "notebook"
            or self.shared is not None
            or "pytest" in self.sandboxes[0].unavailable
        ):
            return frozenset()
        return notebook_suite.demo(job.code, job.needed)

    def _early_engines(self, needed_only: RunReply | None) -> _Engines | None:
        """The plan's engines for the early runs, or None when the run on the needed cells cannot stand: a run as long
        as a cell's time limit had a needed cell cut off, most likely, one the engine lane's run will report and every
        run would wait for again (the runs then wait for go(), and go the usual way)."""
        if needed_only is None or not _ok(needed_only) or needed_only.duration >= self._as.cell_timeout:
            return None
        timeout = self._given.per_run(needed_only)
        return _Engines(self._plan(), timeout, self._wanted(needed_only)) if self._await_plan() else None

    def _early_whole(self, early: _Early) -> None:
        """On the second sandbox: the run on the whole notebook, then a share of the early runs."""
        early.whole = self._run(self.sandboxes[1], None, self._given.first_run_s, frozenset())
        early.timed.wait()
        if early.engines is not None:
            self._run_all(self.sandboxes[1], early.engines, early.demo)

    def _settle(self, early: _Early, needed_only: RunReply | None) -> bool:
        """Once the engine lane ran the notebook (go()): do the early runs stand? They do when no needed cell timed out
        or killed the kernel, and the runs on the student's engine with and without the demo cells agree."""
        left_out = self._as.skip
        if early.engines is None or left_out - early.demo:  # the usual way, not trying the needed cells again
            self._update_job(needed=None)
            return False
        full = (
            early.whole
            if len(self.sandboxes) > 1 and not left_out
            else self._run(self.sandboxes[0], None, self._given.first_run_s, left_out)
        )
        self.outcome.own = full
        if full is None or not _ok(full) or self.outcome.cut:
            self.outcome.runs = early.engines.ordered(self._plan())
            return True
        if not notebook_suite.same_run(full, needed_only):
            self._update_job(needed=None)
            return False
        self.outcome.runs = early.engines.ordered(self._plan())
        self.outcome.run_once = tuple(sorted(i + 1 for i in early.demo - left_out))
        return True

    def _only_needed(self, sandbox: Sandbox, own: RunReply, timeout: float) -> float:
        """After the run on the whole notebook (the usual way): run the tests on the student's engine again with only
        the cells they need, lean (each cell as plain Python, as the whole run derived IPython's transformation of it
        before running any: grader/sandbox/inside/notebook.py); if every test and probe comes out the same, the other
        runs leave the rest out and are lean too (each run's limit then follows that run's time)."""
        job, settings = self._given, self._as
        if job.needed is None or job.code.kind != "notebook":
            return timeout
        demo = notebook_suite.demo(job.code, job.needed) - settings.skip
        if not demo:
            return timeout
        again = self._run(sandbox, None, timeout, settings.skip | demo, lean=True)
        if again is None or not _ok(again) or not notebook_suite.same_run(own, again):
            return timeout
        self._as = dataclasses.replace(settings, skip=settings.skip | demo, lean=True)
        self.outcome.run_once = tuple(sorted(i + 1 for i in demo))
        return job.per_run(again)

    def _wanted(self, own: RunReply) -> Callable[[EngineRun, list[RunReply]], bool] | None:
        """The job's wanted, given the run on the student's own engine."""
        wanted = self._given.wanted
        return None if wanted is None else lambda engine, done: wanted(engine, own, done)

    # -- one run ----------------------------------------------------------------------------------------------------

    def _keep_transformed(self, found: tuple[tuple[int, str], ...]) -> None:
        """The cells as IPython transforms them, from the first frame of a run asked to derive them, for the later
        runs (protocol's transformed() says why that is safe); a lane's threads keep the first they get."""
        with self._changed:
            if found and not self._given.code.transformed:
                self._update_job(code=dataclasses.replace(self._given.code, transformed=found))

    def _run(
        self,
        sandbox: Sandbox,
        engine: EngineRun | None,
        timeout: float,
        skip: frozenset[int] | None = None,
        lean: bool = False,
    ) -> RunReply | None:
        """One run of the suite (a notebook without the cells in skip, by default those go() left out; lean, as
        the runs on the needed cells alone are once a lean one stood for the whole notebook), or None when the
        grading's time ran out before it could end."""
        started = time.monotonic()
        job, settings = self._given, self._as
        if settings.until is not None and started >= settings.until:
            self.outcome.cut = True
            return None
        derive = engine is None and not job.code.transformed and job.code.kind == "notebook"
        message = protocol.suite(
            job.code.request(
                settings.skip if skip is None else skip, settings.cell_timeout, lean or settings.lean, derive
            ),
            job.tests,
            engine.block if engine else None,
            list(job.fixtures),
            list(job.probes),
        )
        try:
            unit = sandbox.unit("suite")
        except WorkerFailure as exc:
            return RunReply(engine, failure=exc, duration=time.monotonic() - started)
        heard: list[dict] = []
        reply, failure, ended = self._exchange(unit, message, timeout, heard)
        before = protocol.before_tests(heard, job.code, derive, bool(job.probes))
        if derive:  # said before the student's code ran, so it holds however the run ended
            self._keep_transformed(before.transformed)
        if isinstance(failure, OutOfTime) and failure.outer:
            self.outcome.cut = True
            return None
        return RunReply(engine, reply, failure, ended - started, before.probes)

    def _exchange(
        self, unit: Unit, message: dict, timeout: float, heard: list[dict]
    ) -> tuple[dict | None, WorkerFailure | None, float]:
        """The run's request, its reply or how it failed, and when it ended; heard keeps the run's first frames."""

        def hear(event: dict) -> None:
            if len(heard) < protocol.BEFORE_TESTS:
                heard.append(event)

        reply, failure = None, None
        try:
            reply = unit.exchange(message, timeout, self._as.until, hear)
        except WorkerFailure as exc:  # OutOfTime too
            failure = exc
        finally:
            ended = time.monotonic()
            if not unit.failed:
                unit.close()
        return reply, failure, ended


@dataclass(frozen=True)
class RunSettings:
    """How the runs go: what go() said once the student's code was loaded (before it, start()'s deadline and the job's
    cell limit)."""

    skip: frozenset[int] = frozenset()
    """Of a notebook, the cells left out: those that timed out or killed the kernel (and the demo cells, once a run on
    the needed cells alone stood for the whole notebook)."""
    cell_timeout: float = 30.0
    until: float | None = None
    """The grading's deadline, which no run outlasts and after which none starts."""
    lean: bool = False
    """The run on the needed cells alone that stood for the whole notebook was lean: the later ones are."""


class _Engines:
    """The plan's engines not yet taken, each run's limit, and the runs done: shared by a lane's threads."""

    def __init__(
        self,
        plan: tuple[EngineRun, ...],
        timeout: float,
        wanted: Callable[[EngineRun, list[RunReply]], bool] | None = None,
    ):
        self.timeout = timeout
        self.done: list[RunReply] = []
        self._left = list(plan)
        self._lock = threading.Lock()
        self._wanted = wanted

    def take(self) -> EngineRun | None:
        """The next engine to run (one the job does not want, when its turn comes, is passed over)."""
        with self._lock:
            while self._left:
                engine = self._left.pop(0)
                if self._wanted is None or self._wanted(engine, list(self.done)):
                    return engine
            return None

    def ordered(self, plan: tuple[EngineRun, ...]) -> list[RunReply]:
        order = {id(engine): i for i, engine in enumerate(plan)}
        return sorted(self.done, key=lambda r: order[id(r.engine)])


@dataclass
class _Early:
    """A notebook's early runs (SuiteLane._early): its demo cells, the plan's engines once the run on the needed cells
    stood (None: it did not), and the run on the whole notebook of a second sandbox."""

    demo: frozenset[int]
    engines: _Engines | None = None
    whole: RunReply | None = None
    timed: threading.Event = field(default_factory=threading.Event)
    """Set once engines is decided."""


def _ok(run: RunReply | None) -> bool:
    return run is not None and run.failure is None and protocol.raised(run.reply) is None
