"""The suite lane: the student's tests run with pytest, once on their own engine and then once per engine of the
plan, each run in a fresh process (grader/lanes/run.py), one after another on each of its sandboxes, cleaned in
between. It runs beside the engine lane, on the other core. The lane has one owner per part of its state. Its stage
and its runs' settings change together, in one move of its table (SuiteLane.MOVES), under its condition. Its job
(the plan, the cells as IPython transforms them) changes under the same condition, in one place. Its outcome is
assembled by the lane's own thread alone, from the replies its runs and the threads beside it return.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import threading
from dataclasses import dataclass

from grader import notebook_suite
from grader.lanes.run import RunReply, RunSettings, SuiteJob, ok, run_tests
from grader.lanes.shares import OWN, Beside, Early, Engines, Share, SuiteSandboxes, Whole, wanted
from grader.protocol import Code
from grader.sabotage import EngineRun
from grader.sandbox.isolation import Isolation
from grader.sandbox.prestarted import sandbox_for
from grader.sandbox.supervisor import Sandbox, SandboxLimits


@dataclass(frozen=True)
class SuiteOutcome:
    own: RunReply | None = None
    runs: tuple[RunReply, ...] = ()
    error: str = ""
    """Why the lane could not run at all (its sandbox did not start)."""
    cut: bool = False
    """The grading's time ran out before every run was done; the runs not done are left out (not
    counted as hangs: the engine did not make them slow, the time was up)."""
    run_once: tuple[int, ...] = ()
    """Of a notebook, the cells (numbered from 1) the runs on other engines left out: demo cells the tests
    do not need, run once (grader/slicing.py)."""


class Stage(enum.Enum):
    """Where a suite lane is. Its moves are SuiteLane.MOVES, made in SuiteLane._move alone; the plan of engines is
    not a stage but part of the job (SuiteJob.plan), which the runs on the plan's engines wait for in any stage."""

    NEW = "new"
    """Made: its sandboxes warm up; it has no job yet."""
    STARTED = "started"
    """Its job handed over (start): the runs that need nothing of the engine lane go (a .py file's run on the student's
    own engine; a notebook's runs on the cells its tests need)."""
    WAITING = "waiting"
    """The student's code loaded (go), in the sandbox the runs share with the engine lane: they wait until release()
    frees it, once the engine checks are done."""
    RUNNING = "running"
    """Every run may go (once the plan is written, for those on its engines)."""
    JOINED = "joined"
    """The engine checks are done: the engine lane's sandbox, freed, takes the plan's engines too."""
    CANCELLED = "cancelled"
    """No run starts any more: the grading ended, or the student's code never loaded."""


@dataclass(frozen=True)
class LaneState:
    """A suite lane's stage and its runs' settings, which change together (SuiteLane._move)."""

    stage: Stage
    settings: RunSettings


class SuiteLane:
    """The student's suite on their engine, then on each engine of the plan, in a thread of its own
    (and, with several sandboxes, the engines shared among them, each sandbox's runs one at a time).

    Made, its sandboxes start warming up, each in its own process, while the grading's thread writes the plan
    (Python 3.11's ast is not safe to use from two threads at once). Then, from the grading's thread: start(job)
    hands the lane its job and starts its thread; planned(plan) gives the engines to run after the student's own;
    go() lets the runs begin once the student's code is loaded; release() frees a shared or late sandbox once the
    engine checks are done; result() waits for the runs (releasing first, if nothing did); cancel() ends the lane, in
    any stage. The lane's stages and their moves are Stage and MOVES; the job is the lane's alone, replaced in
    _update_job only; the outcome is its thread's, changed in _record only.

    Of a notebook, the runs on other engines run only the cells the tests need, once a run on the student's own
    engine shows them to give what the whole notebook gives (grader/notebook_suite.py says how): with sandboxes of
    the lane's own, they start at once, before go(), while the engine lane runs the notebook."""

    MOVES: dict[tuple[Stage, str], Stage] = {
        (Stage.NEW, "start"): Stage.STARTED,
        (Stage.STARTED, "go"): Stage.RUNNING,
        (Stage.STARTED, "go_sharing"): Stage.WAITING,
        (Stage.WAITING, "shared_freed"): Stage.RUNNING,
        (Stage.RUNNING, "late_freed"): Stage.JOINED,
        **{(stage, "cancel"): Stage.CANCELLED for stage in Stage},
    }
    """Each (stage, event) the lane may meet, and the stage it moves to; any other is a caller's mistake, raised.
    start: the job handed over; go: the student's code loaded, the runs in sandboxes of their own; go_sharing: the
    student's code loaded, the runs' sandbox the engine lane's until it is freed; shared_freed, late_freed: release()
    freed the shared sandbox, or the late one; cancel: no run starts any more."""

    SETTING = frozenset({"start", "go", "go_sharing"})
    """The events that give the runs' settings (start's deadline, then go()'s): the only moves that change them."""

    def __init__(self, code: Code, limits: SandboxLimits, iso: Isolation | None, where: SuiteSandboxes = OWN):
        self.shared = where.shared
        self.late = where.late
        self._before = where.before
        self._outcome = SuiteOutcome()
        self.sandboxes: list[Sandbox] = [] if self.shared is None else [self.shared]
        """Those the runs on other engines are shared among, in parallel (each a uid of its own)."""
        try:
            for _ in range(max(1, where.count) if self.shared is None else 0):
                self.sandboxes.append(sandbox_for(where.prestarted, code.files, limits, ("pytest", *code.warm), iso))
        except Exception as exc:
            self._close_own()
            self._outcome = SuiteOutcome(error=f"the sandbox for your tests could not start ({exc})")
        self._state = LaneState(Stage.NEW, RunSettings())
        self._job: SuiteJob | None = None
        self._changed = threading.Condition()
        """Held while the state or the job changes; notified after each change."""
        self._asked = threading.Lock()
        self._released = False
        self._thread = threading.Thread(target=self._main, daemon=True)

    # -- the grading's thread ---------------------------------------------------------------------------------------

    @property
    def job(self) -> SuiteJob | None:
        """The lane's job as it stands (the plan and its notes once planned() gave them)."""
        return self._job

    @property
    def state(self) -> LaneState:
        """The lane's stage and its runs' settings, as one value."""
        return self._state

    @property
    def stage(self) -> Stage:
        return self._state.stage

    @property
    def settings(self) -> RunSettings:
        return self._state.settings

    @property
    def outcome(self) -> SuiteOutcome:
        """The outcome as the lane's thread has assembled it so far (result() waits for all of it)."""
        return self._outcome

    def start(self, job: SuiteJob, until: float | None = None) -> None:
        """Hand the lane its job. until: the grading's deadline, for the runs of a notebook's tests that start
        before go(), while the engine lane runs the notebook."""
        with self._changed:
            was = self._move("start", RunSettings(cell_timeout=job.cell_s, until=until))
            self._job = job
        if was is not Stage.CANCELLED:
            self._thread.start()

    def planned(self, plan: tuple[EngineRun, ...], notes: tuple[str, ...] = ()) -> None:
        """The engines to run the tests on after the student's own, and what the plan left out and why: written
        by the grading's thread (Python 3.11's ast is not safe from two threads) while this lane's first run, on
        the student's own engine, goes on."""
        if self._job is None:
            raise RuntimeError("the suite lane was given a plan before its job (start)")
        self._update_job(plan=plan, notes=notes)

    def go(self, skip: frozenset[int] = frozenset(), cell_timeout: float = 30.0, until: float | None = None) -> None:
        """The student's code is loaded: let the runs start (for a notebook, without the cells that timed out or killed
        the kernel); with a shared sandbox, they start once release() frees it. until: the grading's deadline, which no
        run outlasts and after which none starts."""
        self._move("go_sharing" if self.shared is not None else "go", RunSettings(skip, cell_timeout, until))

    def release(self) -> None:
        """The engine checks are done: a shared sandbox, or a late one, is freed for the runs, which go on without
        waiting for their result to be asked for; a lane whose student's code never loaded (no go()) is cancelled
        instead. Once: result() does it first, if nothing did."""
        with self._asked:  # the checks that ask for the result may be in threads of their own
            if self._released:
                return
            self._released = True
            stage = self.stage
            if stage in (Stage.NEW, Stage.STARTED):
                self.cancel()
            elif stage is Stage.WAITING:
                self._free()
                self._move("shared_freed")
            if self.late is not None and self.stage is Stage.RUNNING:
                self._free()
                self._move("late_freed")

    def result(self) -> SuiteOutcome:
        """The runs' outcome, once every run is done (released first, if nothing did: release())."""
        self.release()
        if self._thread.ident is not None:
            self._thread.join()
        return self._outcome

    def cancel(self) -> None:
        if self._move("cancel") is Stage.NEW:  # its thread never started: the sandboxes are closed here
            self._close_own()

    def _free(self) -> None:
        if self._before is not None:
            self._before()

    def _move(self, event: str, settings: RunSettings | None = None) -> Stage:
        """The one place the lane's state changes (MOVES), its settings with its stage for the events that give them
        (SETTING); returns the stage it left. Nothing moves a cancelled lane."""
        if (settings is not None) != (event in self.SETTING):
            raise RuntimeError(f"the suite lane's {event} {'lacks' if settings is None else 'cannot give'} settings")
        with self._changed:
            was = self._state.stage
            if was is Stage.CANCELLED:
                return was
            if (was, event) not in self.MOVES:
                raise RuntimeError(f"the suite lane was told {event} in stage {was.value}")
            self._state = LaneState(self.MOVES[was, event], self._state.settings if settings is None else settings)
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

    cancelled = property(lambda self: self.stage is Stage.CANCELLED)

    def _await(self, *stages: Stage) -> bool:
        """Wait for one of the stages, or a cancel; False when the lane was cancelled instead."""
        with self._changed:
            self._changed.wait_for(lambda: self.stage in stages or self.stage is Stage.CANCELLED)
        return not self.cancelled

    def _await_plan(self) -> bool:
        """Wait for the plan; False when the lane was cancelled instead."""
        with self._changed:
            self._changed.wait_for(lambda: self._given.plan is not None or self.stage is Stage.CANCELLED)
        return not self.cancelled

    def _await_go(self) -> bool:
        """Wait until every run may go; False when the lane was cancelled instead. Its settings are then go()'s."""
        return self._await(Stage.RUNNING, Stage.JOINED)

    def _close_own(self) -> None:
        for sandbox in self.sandboxes:
            if sandbox is not self.shared:
                sandbox.close()

    def _record(self, **changes) -> None:
        """The one place the outcome changes: in the lane's own thread, from what its runs returned."""
        if threading.current_thread() is not self._thread:
            raise RuntimeError("the suite lane's outcome is assembled by its own thread alone")
        self._outcome = dataclasses.replace(self._outcome, **changes)

    def _counted(self, run: RunReply | None) -> RunReply | None:
        """A run the lane's thread made: None (the grading's time ran out) is recorded as the outcome's cut."""
        if run is None:
            self._record(cut=True)
        return run

    def _recorded_runs(self, shares: list[Share]) -> tuple[RunReply, ...]:
        """The runs on the plan's engines that the shares made, in the plan's order; the cut recorded if one was."""
        if any(share.cut for share in shares):
            self._record(cut=True)
        order = {id(engine): i for i, engine in enumerate(self._plan())}
        return tuple(sorted((run for share in shares for run in share.runs), key=lambda r: order[id(r.engine)]))

    def _main(self) -> None:
        try:
            if self._outcome.error or not self._ready():
                self._await_go()
                return
            if self.cancelled or self._early():
                return
            if self.shared is None and self._given.code.kind == "py" and "pytest" not in self.sandboxes[0].unavailable:
                # the student's module needs nothing from the engine lane: their own engine's run goes at once
                own = self._run(self.sandboxes[0], None, self._given.first_run_s, self.settings)
                self._record(own=self._counted(own))
            if self._await_go():
                self._runs(self.settings)
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
            self._record(error=f"the sandbox for your tests could not start ({exc})")
            return False
        return True

    def _runs(self, settings: RunSettings) -> None:
        """Every run the usual way, with go()'s settings: on the student's own engine (unless it ran already), then on
        the plan's engines, shared among the sandboxes."""
        first = self.sandboxes[0]
        if "pytest" in first.unavailable:
            self._record(error=f"pytest cannot be imported in the sandbox ({first.unavailable['pytest']})")
            return
        own = self._outcome.own or self._counted(self._run(first, None, self._given.first_run_s, settings))
        self._record(own=own)
        if own is None or not ok(own):
            return
        timeout, settings = self._only_needed(first, own, self._given.per_run(own), settings)
        if not self._await_plan():
            return
        engines = Engines(self._plan(), timeout, settings, wanted(self._given, own))
        beside = [Beside(functools.partial(self._run_all, sandbox, engines)) for sandbox in self.sandboxes[1:]]
        if self.late is not None:
            beside.append(Beside(functools.partial(self._run_late, self.late, engines)))
        shares = [self._run_all(first, engines), *(helper.join() for helper in beside)]
        self._record(runs=self._recorded_runs(shares))

    def _run_late(self, late: Sandbox, engines: Engines) -> Share:
        """The late sandbox's share of the runs, once it is freed."""
        return self._run_all(late, engines) if self._await(Stage.JOINED) else Share()

    def _run_all(self, sandbox: Sandbox, engines: Engines) -> Share:
        """Run the suite on the engines this sandbox takes next, in turn (the sandbox cleaned between runs)."""
        runs: list[RunReply] = []
        while not self.cancelled and (engine := engines.take()) is not None:
            run = self._run(sandbox, engine, engines.timeout, engines.settings)
            if run is None:
                return Share(tuple(runs), cut=True)
            engines.ran(run)
            runs.append(run)
        return Share(tuple(runs))

    def _run(
        self, sandbox: Sandbox, engine: EngineRun | None, timeout: float, settings: RunSettings
    ) -> RunReply | None:
        """One run of the suite (grader/lanes/run.py), in any of the lane's threads; None when the grading's time ran
        out before it could end. The cells as IPython transforms them, if it derived them, are kept for later runs."""
        ran = run_tests(sandbox, self._given, engine, timeout, settings)
        if ran.transformed or ran.rewritten:
            self._keep_said(ran.transformed, ran.rewritten)
        return ran.reply

    def _keep_said(self, found: tuple[tuple[int, str], ...], rewritten: str) -> None:
        """The cells as IPython transforms them and the tests as pytest rewrites them, from a run's first frame, for
        later runs (suite_replies says why that is safe); a lane's threads keep the first they get."""
        with self._changed:
            if found and not self._given.code.transformed:
                self._update_job(code=dataclasses.replace(self._given.code, transformed=found))
            if rewritten and not self._given.rewritten:
                self._update_job(rewritten=rewritten)

    # -- a notebook's demo cells run once (grader/notebook_suite.py) ------------------------------------------------

    def _early(self) -> bool:
        """Of a notebook with sandboxes of the lane's own, run the suite before go(): the run on the needed cells
        first, then the other engines', shared with the other sandboxes (a second of the lane's own at once, the
        engine lane's once it joins: release()); the run on the whole notebook goes on the first of them free to take
        it. False when the lane must go the usual way (which then waits for go() itself)."""
        demo = self._demo_cells()
        if not demo:
            return False
        early = Early(demo, dataclasses.replace(self.settings, skip=demo))
        others = [(sandbox, False) for sandbox in self.sandboxes[1:]] + ([(self.late, True)] if self.late else [])
        beside = [Beside(functools.partial(self._early_beside, early, *other)) for other in others]
        first = self.sandboxes[0]
        try:
            needed_only = self._counted(self._run(first, None, self._given.first_run_s, early.settings))
            early.engines = self._early_engines(needed_only, early.settings)
        finally:
            early.timed.set()
        shares = [self._run_all(first, early.engines) if early.engines is not None else Share()]
        wholes = [self._early_whole(early, first)]
        for helper in beside:
            whole, share = helper.join()
            wholes.append(whole)
            shares.append(share)
        if any(whole is not None and whole.reply is None for whole in wholes):
            self._record(cut=True)
        if early.engines is not None:
            early.runs = self._recorded_runs(shares)
        elif any(share.cut for share in shares):
            self._record(cut=True)
        if not self._await_go():
            return True
        return self._settle(early, needed_only, wholes)

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

    def _early_engines(self, needed_only: RunReply | None, settings: RunSettings) -> Engines | None:
        """The plan's engines for the early runs, or None when the run on the needed cells cannot stand: a run as long
        as a cell's time limit had a needed cell cut off, most likely, one the engine lane's run will report and every
        run would wait for again (the runs then wait for go(), and go the usual way)."""
        if needed_only is None or not ok(needed_only) or needed_only.duration >= settings.cell_timeout:
            return None
        timeout = self._given.per_run(needed_only)
        return (
            Engines(self._plan(), timeout, settings, wanted(self._given, needed_only)) if self._await_plan() else None
        )

    def _early_beside(self, early: Early, sandbox: Sandbox, late: bool) -> tuple[Whole | None, Share]:
        """On another sandbox than the first (a second of the lane's own at once, or the late one once it joins): the
        run on the whole notebook unless another sandbox took it, then a share of the early runs."""
        if late and not self._await(Stage.JOINED):
            return None, Share()
        if late:
            early.timed.wait()
        whole = self._early_whole(early, sandbox)
        early.timed.wait()
        return whole, self._run_all(sandbox, early.engines) if early.engines is not None else Share()

    def _early_whole(self, early: Early, sandbox: Sandbox) -> Whole | None:
        """The run on the whole notebook, as the lane's settings stand (before go(), every cell; after, but the cells
        the engine lane's run left out), unless another sandbox took it, or the early runs are known not to stand
        (_settle would not use it)."""
        settings = self.settings
        if early.timed.is_set() and (early.engines is None or settings.skip - early.demo):
            return None
        if not early.take_whole():
            return None
        return Whole(self._run(sandbox, None, self._given.first_run_s, settings), settings.skip)

    def _settle(self, early: Early, needed_only: RunReply | None, wholes: list[Whole | None]) -> bool:
        """Once the engine lane ran the notebook (go()): do the early runs stand? They do when no needed cell timed out
        or killed the kernel, and the runs on the student's engine with and without the demo cells agree. wholes: the
        runs on the whole notebook made beside the early runs, each with the cells it left out."""
        settings = self.settings  # go()'s
        left_out = settings.skip
        if early.engines is None or left_out - early.demo:  # the usual way, not trying the needed cells again
            self._update_job(needed=None)
            return False
        made = next((whole for whole in wholes if whole is not None and whole.skip == left_out), None)
        full = (
            made.reply
            if made is not None
            else self._counted(self._run(self.sandboxes[0], None, self._given.first_run_s, settings))
        )
        self._record(own=full)
        if full is None or not ok(full) or self._outcome.cut:
            self._record(runs=early.runs)
            return True
        if not notebook_suite.same_run(full, needed_only):
            self._update_job(needed=None)
            return False
        self._record(runs=early.runs, run_once=tuple(sorted(i + 1 for i in early.demo - left_out)))
        return True

    def _only_needed(
        self, sandbox: Sandbox, own: RunReply, timeout: float, settings: RunSettings
    ) -> tuple[float, RunSettings]:
        """After the run on the whole notebook (the usual way): run the tests on the student's engine again with only
        the cells they need, lean (each cell as plain Python, as the whole run derived IPython's transformation of it
        before running any: grader/sandbox/inside/notebook.py); if every test and probe comes out the same, the other
        runs leave the rest out and are lean too (each run's limit then follows that run's time). Each later run's
        limit and settings: the lane's own settings are not changed."""
        job = self._given
        if job.needed is None or job.code.kind != "notebook":
            return timeout, settings
        demo = notebook_suite.demo(job.code, job.needed) - settings.skip
        if not demo:
            return timeout, settings
        lean = dataclasses.replace(settings, skip=settings.skip | demo, lean=True)
        again = self._counted(self._run(sandbox, None, timeout, lean))
        if again is None or not ok(again) or not notebook_suite.same_run(own, again):
            return timeout, settings
        self._record(run_once=tuple(sorted(i + 1 for i in demo)))
        return job.per_run(again), lean
