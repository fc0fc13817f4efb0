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


@dataclass(frozen=True)
class Lent:
    """The sandboxes a suite lane is lent rather than starting its own: the grading's one sandbox (shared, which the
    runs use in turn with the engine lane), those started ahead of the grading (prestarted, taken where they
    match), and the engine lane's own (late, which joins the runs once the engine checks are done)."""

    shared: Sandbox | None = None
    prestarted: Prestarted | None = None
    late: Sandbox | None = None


class SuiteLane:
    """The student's suite on their engine, then on each engine of the plan, in a thread of its own
    (and, with several sandboxes, the engines shared among them, each sandbox's runs one at a time).

    Two steps: open() starts the sandboxes warming up, each in its own process, while the grading's
    thread writes the plan (Python 3.11's ast is not safe to use from two threads at once); start(job)
    hands the lane its job and starts its thread, and go() lets the runs begin once the student's code
    is loaded."""

    def __init__(
        self,
        code: Code,
        limits: SandboxLimits,
        iso: Isolation | None,
        sandboxes: int = 1,
        before: Callable[[], None] | None = None,
        lent: Lent = Lent(),
    ):
        shared, late = lent.shared, lent.late
        self.shared = shared
        """The grading's one sandbox, which the runs use in turn with the engine lane (a batch's way:
        every core already grades a submission), or None for sandboxes of the lane's own."""
        self.before = before
        """With a shared sandbox, or a late one: what frees it (the engine lane's pause) before runs use it."""
        self.late = late
        """The engine lane's own sandbox, which joins the runs on the plan's engines once the engine checks are
        done (when the suite's result is first asked for, after them): grader check of a .py file."""
        self._late_go = threading.Event()
        self.job: SuiteJob | None = None
        self.outcome = SuiteOutcome()
        self.sandboxes: list[Sandbox] = [] if shared is None else [shared]
        """Those the runs on other engines are shared among, in parallel (each a uid of its own)."""
        try:
            for _ in range(max(1, sandboxes) if shared is None else 0):
                self.sandboxes.append(sandbox_for(lent.prestarted, code.files, limits, ("pytest", *code.warm), iso))
        except Exception as exc:
            self._close_own()
            self.outcome.error = f"the sandbox for your tests could not start ({exc})"
        self._ready: tuple[frozenset[int], float] | None = None
        self._go = threading.Event()
        self._cancelled = False
        self._skip: frozenset[int] = frozenset()
        self._cell_timeout = 30.0
        self._until: float | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._lock = threading.Lock()
        self._planned = threading.Event()
        self._lean = False
        """The run on the needed cells alone that stood for the whole notebook was lean: the later ones are."""

    def start(self, job: SuiteJob, until: float | None = None) -> None:
        """Hand the lane its job. until: the grading's deadline, for the runs of a notebook's tests that start
        before go(), while the engine lane runs the notebook."""
        self.job = job
        self._cell_timeout, self._until = job.cell_s, until
        if job.plan is not None:
            self._planned.set()
        self._thread.start()

    def planned(self, plan: tuple[EngineRun, ...], notes: tuple[str, ...] = ()) -> None:
        """The engines to run the tests on after the student's own, and what the plan left out and why: written
        by the grading's thread (Python 3.11's ast is not safe from two threads) while this lane's first run, on
        the student's own engine, goes on."""
        with self._lock:
            self.job = dataclasses.replace(self.job, plan=plan, notes=notes)
        self._planned.set()

    def _wait_planned(self) -> bool:
        """Wait for the plan; False when the lane was cancelled instead."""
        self._planned.wait()
        return not self._cancelled

    def go(self, skip: frozenset[int] = frozenset(), cell_timeout: float = 30.0, until: float | None = None) -> None:
        """Let the runs start (for a notebook, without the cells that timed out or killed the kernel);
        with a shared sandbox, they start when their result is first asked for. until: the grading's
        deadline, which no run outlasts and after which none starts."""
        self._skip, self._cell_timeout, self._until = skip, cell_timeout, until
        if self.shared is None:
            self._go.set()
        else:
            self._ready = (skip, cell_timeout)

    def cancel(self) -> None:
        self._cancelled = True
        self._go.set()
        self._planned.set()
        self._late_go.set()
        if not self._thread.is_alive() and self.job is None:
            self._close_own()

    def result(self) -> SuiteOutcome:
        if self.shared is not None and not self._go.is_set():
            if self._ready is None:  # the student's code never loaded
                self.cancel()
            else:
                if self.before is not None:
                    self.before()
                self._go.set()
        if self.late is not None and not self._late_go.is_set():
            if self.before is not None:
                self.before()
            self._late_go.set()
        if self._thread.is_alive() or self.job is not None:
            self._thread.join()
        return self.outcome

    def _close_own(self) -> None:
        for sandbox in self.sandboxes:
            if sandbox is not self.shared:
                sandbox.close()

    def _main(self) -> None:
        try:
            if self.outcome.error:
                self._go.wait()
                return
            try:
                for sandbox in self.sandboxes:
                    if sandbox is not self.shared:  # the shared one is the engine lane's to wait for
                        sandbox.wait_ready()
            except Exception as exc:
                self._go.wait()
                self.outcome.error = f"the sandbox for your tests could not start ({exc})"
                return
            if notebook_suite.run_early(self, self.sandboxes):
                return
            if self.shared is None and self.job.code.kind == "py" and "pytest" not in self.sandboxes[0].unavailable:
                # the student's module needs nothing from the engine lane: their own engine's run goes at once
                self.outcome.own = self._run(self.sandboxes[0], None, self.job.first_run_s)
            self._go.wait()
            if self._cancelled:
                return
            self._runs()
        finally:
            self._close_own()

    def _runs(self) -> None:
        job, sandboxes = self.job, self.sandboxes
        if "pytest" in sandboxes[0].unavailable:
            self.outcome.error = f"pytest cannot be imported in the sandbox ({sandboxes[0].unavailable['pytest']})"
            return
        own = self.outcome.own or self._run(sandboxes[0], None, job.first_run_s)
        self.outcome.own = own
        if own is None or own.failure is not None or protocol.raised(own.reply) is not None:
            return
        timeout = job.per_run(own)
        timeout = notebook_suite.only_needed(self, sandboxes[0], own, timeout)
        if not self._wait_planned():
            return
        job = self.job
        engines, done = list(job.plan), []
        helpers = [
            threading.Thread(target=self._run_all, args=(sandbox, engines, timeout, done)) for sandbox in sandboxes[1:]
        ]
        if self.late is not None:
            helpers.append(
                threading.Thread(target=self._run_all, args=(self.late, engines, timeout, done, self._late_go))
            )
        for helper in helpers:
            helper.start()
        self._run_all(sandboxes[0], engines, timeout, done)
        for helper in helpers:
            helper.join()
        order = {id(engine): i for i, engine in enumerate(job.plan)}
        self.outcome.runs = sorted(done, key=lambda r: order[id(r.engine)])

    def _run_all(
        self,
        sandbox: Sandbox,
        engines: list[EngineRun],
        timeout: float,
        into: list[RunReply],
        after: threading.Event | None = None,
    ) -> None:
        """Run the suite on the engines each sandbox takes next from engines, in turn, in one sandbox (cleaned
        between runs); after: what must happen before this sandbox may take any (the late one's release)."""
        if after is not None:
            after.wait()
        while not self._cancelled:
            with self._lock:
                if not engines:
                    return
                engine = engines.pop(0)
            run = self._run(sandbox, engine, timeout)
            if run is None:
                return
            with self._lock:
                into.append(run)

    def _keep_transformed(self, found: tuple[tuple[int, str], ...]) -> None:
        """The cells as IPython transforms them, from the first frame of a run asked to derive them, for the later
        runs (protocol's transformed() says why that is safe); a lane's threads keep the first they get."""
        with self._lock:
            if found and not self.job.code.transformed:
                self.job = dataclasses.replace(self.job, code=dataclasses.replace(self.job.code, transformed=found))

    def _run(
        self,
        sandbox: Sandbox,
        engine: EngineRun | None,
        timeout: float,
        skip: frozenset[int] | None = None,
        lean: bool = False,
    ) -> RunReply | None:
        """One run of the suite (a notebook without the cells in skip, by default those go() left out; lean, as
        the runs on the needed cells alone are once a lean one stood for the whole notebook: notebook_suite.py),
        or None when the grading's time ran out before it could end."""
        started = time.monotonic()
        if self._until is not None and started >= self._until:
            self.outcome.cut = True
            return None
        job = self.job
        skip = self._skip if skip is None else skip
        lean = lean or bool(self.outcome.run_once) and self._lean
        derive = engine is None and not job.code.transformed and job.code.kind == "notebook"
        message = protocol.suite(
            job.code.request(skip, self._cell_timeout, lean, derive),
            job.tests,
            engine.block if engine else None,
            list(job.fixtures),
            list(job.probes),
        )
        try:
            unit = sandbox.unit("suite")
        except WorkerFailure as failure:
            return RunReply(engine, failure=failure, duration=time.monotonic() - started)
        heard: list[dict] = []

        def hear(event: dict) -> None:
            if len(heard) < protocol.BEFORE_TESTS:
                heard.append(event)

        reply, failure = None, None
        try:
            reply = unit.exchange(message, timeout, self._until, hear)
        except WorkerFailure as exc:  # OutOfTime too
            failure = exc
        finally:
            ended = time.monotonic()
            if not unit.failed:
                unit.close()
        before = protocol.before_tests(heard, job.code, derive, bool(job.probes))
        if derive:  # said before the student's code ran, so it holds however the run ended
            self._keep_transformed(before.transformed)
        if isinstance(failure, OutOfTime) and failure.outer:
            self.outcome.cut = True
            return None
        return RunReply(engine, reply, failure, ended - started, before.probes)
