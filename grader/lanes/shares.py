"""What a suite lane's threads share, and what each hands back to the lane's own thread, which alone assembles the
outcome (grader/lanes/suite.py): the sandboxes the runs go to, the plan's engines they take in turn, the runs one
sandbox made of them, a call in a thread beside the lane's whose return the lane's thread takes, and of a notebook, the
early runs and the runs on the whole notebook beside them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from grader.lanes.run import RunReply, RunSettings, SuiteJob
from grader.sabotage import EngineRun
from grader.sandbox.prestarted import Prestarted
from grader.sandbox.supervisor import Sandbox

T = TypeVar("T")


def _turn(engine: EngineRun) -> int:
    """When an engine's run goes: the spares last, since whether one is wanted reads the run on the mutant it stands
    for, done by then unless the other sandbox still runs it; the others in the plan's order. Every run is a process of
    its own, and the outcome lists the runs in the plan's order whatever order they went in."""
    return 1 if engine.kind == "spare" else 0


class Engines:
    """The plan's engines not yet taken, and each run's limit and settings: shared by a lane's threads."""

    def __init__(
        self,
        plan: tuple[EngineRun, ...],
        timeout: float,
        settings: RunSettings,
        wanted: Callable[[EngineRun, list[RunReply]], bool] | None = None,
    ):
        self.timeout = timeout
        self.settings = settings
        self._left = sorted(plan, key=_turn)  # stable: the plan's order otherwise
        self._done: list[RunReply] = []
        self._lock = threading.Lock()
        self._wanted = wanted

    def take(self) -> EngineRun | None:
        """The next engine to run (one the job does not want, when its turn comes, is passed over)."""
        with self._lock:
            while self._left:
                engine = self._left.pop(0)
                if self._wanted is None or self._wanted(engine, list(self._done)):
                    return engine
            return None

    def ran(self, reply: RunReply) -> None:
        """A run done, which what is wanted next may depend on (the outcome is the lane's thread's, from the shares)."""
        with self._lock:
            self._done.append(reply)


@dataclass(frozen=True)
class Share:
    """The runs one sandbox made of the plan's engines, and whether the grading's time cut them off."""

    runs: tuple[RunReply, ...] = ()
    cut: bool = False


class Beside(Generic[T]):
    """A call in a thread of its own beside the lane's, whose return the lane's thread takes when it joins it."""

    def __init__(self, call: Callable[[], T]):
        self._call = call
        self._returned: list[T] = []
        self._raised: list[BaseException] = []
        self._thread = threading.Thread(target=self._body, daemon=True)
        self._thread.start()

    def _body(self) -> None:
        try:
            self._returned.append(self._call())
        except BaseException as exc:  # handed to the lane's thread, which joins this one
            self._raised.append(exc)

    def join(self) -> T:
        self._thread.join()
        if self._raised:
            raise self._raised[0]
        return self._returned[0]


def wanted(job: SuiteJob, own: RunReply) -> Callable[[EngineRun, list[RunReply]], bool] | None:
    """The job's wanted (which engines still run), given the run on the student's own engine."""
    chosen = job.wanted
    return None if chosen is None else lambda engine, done: chosen(engine, own, done)


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
    (release()): a student's grader check."""
    before: Callable[[], None] | None = None
    """With a shared sandbox, or a late one: what frees it (the engine lane's pause) before runs use it."""
    prestarted: Prestarted | None = None


OWN = SuiteSandboxes()
"""One sandbox of the suite lane's own (its default)."""


@dataclass
class Early:
    """A notebook's early runs (grader/lanes/suite.py: SuiteLane._early): its demo cells and their runs' settings, the
    plan's engines once the run on the needed cells stood (None: it did not), and the runs made of them (in the lane's
    own thread)."""

    demo: frozenset[int]
    settings: RunSettings
    engines: Engines | None = None
    runs: tuple[RunReply, ...] = ()
    timed: threading.Event = field(default_factory=threading.Event)
    """Set once engines is decided."""
    whole_taken: bool = False
    """A sandbox took the run on the whole notebook (take_whole())."""
    _taking: threading.Lock = field(default_factory=threading.Lock)

    def take_whole(self) -> bool:
        """Take the run on the whole notebook: True for the first sandbox that asks, in whichever of the lane's
        threads."""
        with self._taking:
            taken, self.whole_taken = self.whole_taken, True
        return not taken


@dataclass(frozen=True)
class Whole:
    """A run of the tests on the whole notebook made with the early runs (None: the grading's time ran out first),
    and the cells it left out (none before go(); after, those the engine lane's run left out)."""

    reply: RunReply | None
    skip: frozenset[int]
