"""What a suite lane's threads share, and what each hands back to the lane's own thread, which alone assembles the
outcome (grader/lanes/suite.py): the plan's engines they take in turn, the runs one sandbox made of them, and a call
in a thread beside the lane's whose return the lane's thread takes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from grader.lanes.run import RunReply, RunSettings, SuiteJob
from grader.sabotage import EngineRun

T = TypeVar("T")


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
        self._left = list(plan)
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
