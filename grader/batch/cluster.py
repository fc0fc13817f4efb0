"""A batch on a Dask cluster whose workers share no folder with the instructor.

Each task carries one student's bytes and returns their result as data (grader/batch/tasks.py);
the instructor's process writes every output. On a worker, a task is graded in a grading
process of that worker's own (`python -m grader.batch.graders`, started when a task needs one
and reused, one per task running at once), never in the Dask worker process, so neither student
code nor the grader's handling of its replies runs there, and a grading that dies takes only its
process with it.

Before any student is sent, every worker is asked, in a task, whether it may grade (the same
grader as the instructor's, student code isolated as a batch requires); a worker that joins
later answers the same question with its first task. A worker that may not grade stops the
batch with its name and reason. A worker that dies mid-task has its tasks moved to another
by the scheduler; a task that keeps killing workers, or whose grading process keeps dying,
ends as that student's error result (not saved as final, so a rerun tries it again). A
scheduler that goes away stops the batch: every result received is saved, and the same
command grades the rest.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import replace

from grader.batch.graders import Graders
from grader.batch.tasks import Task, TaskOutcome, checked, failed, time_limit
from grader.errors import ClusterError, GraderError, SchedulerLost, UnfitWorker

RETRIES = 2
"""How many more times a task whose grading process died is tried (a worker's death is the
scheduler's to count: distributed.scheduler.allowed-failures)."""
CONNECT_S = 30
WORKERS_S = 60
"""How long to wait for a first worker to join."""
WINDOW = 64
"""Tasks sent ahead at least (four per worker thread if more): the scheduler holds only those
students' bytes, not the whole class's, and a lost scheduler loses no more."""


CANCELLED = (concurrent.futures.CancelledError, asyncio.CancelledError)
"""What a future holds when the scheduler went away (Dask's FutureCancelledError is the first)."""


# -- the instructor's side -----------------------------------------------------------------------


def grade_on_cluster(address: str, tasks: list[Task]) -> Iterator[tuple[TaskOutcome, bool]]:
    """Each task's outcome as it arrives, and whether it is final (a rerun may skip it)."""
    from distributed import as_completed

    if not tasks:
        return
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # its reconnect tracebacks: we say what happened
    client = _connect(address)
    with client:
        threads = _check_workers(client, tasks[0])
        arrived = as_completed([], loop=client.loop, with_results=True, raise_errors=False)
        sent = _InFlight(client, address, iter(tasks), arrived)
        sent.send(max(WINDOW, 4 * threads))
        try:
            while sent.running:
                stop: GraderError | None = None  # after every result of this batch is saved
                for future, value in sent.next_batch():
                    _, task = sent.running.pop(future.key)
                    outcome, final = outcome_of(task, value)
                    if outcome is None:
                        stop = stop or SchedulerLost(f"lost the Dask scheduler at {address}")
                    elif outcome.unfit:
                        stop = stop or UnfitWorker(outcome.unfit)
                    else:
                        yield outcome, final
                        if stop is None:
                            sent.send(1)
                if stop is not None:
                    raise stop
        finally:
            client.cancel([future for future, _ in sent.running.values()])


def _connect(address: str):
    """A Dask client of the scheduler at address, or ClusterError."""
    from distributed import Client

    try:
        _check_address(address)
        return Client(address, timeout=CONNECT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


class _InFlight:
    """The tasks sent to the cluster and not yet arrived back (running: by their future's key)."""

    def __init__(self, client, address: str, waiting: Iterator[Task], arrived) -> None:
        self.client, self.address, self.waiting, self.arrived = client, address, waiting, arrived
        self.running: dict = {}
        self.away_since: float | None = None

    def send(self, n: int) -> None:
        """Send the next n tasks (fewer if fewer are left)."""
        for task in itertools.islice(self.waiting, n):
            future = self.client.submit(
                on_worker, task, key=f"grade-{task.student}-{os.urandom(4).hex()}", retries=RETRIES, pure=False
            )
            self.running[future.key] = (future, task)
            self.arrived.add(future)

    def next_batch(self) -> list:
        """The (future, value) pairs that arrived next, waiting for one; SchedulerLost if the scheduler stays away."""
        while not (batch := self.arrived.next_batch(block=False)):
            # A scheduler that goes away cancels every future, which then arrives here; this watch
            # is for one whose result was being fetched as it went (that one would never arrive).
            self.away_since = None if self.client.status == "running" else self.away_since or time.monotonic()
            if self.away_since is not None and time.monotonic() - self.away_since > CONNECT_S:
                raise SchedulerLost(f"lost the Dask scheduler at {self.address}")
            time.sleep(0.05)
        return batch


def _check_address(address: str) -> None:
    """Raise ValueError for an address no Dask comm can take (before a Client is half made of it)."""
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend
    from distributed.security import Security

    scheme = parse_address(address, strict=False)[0]
    get_backend(scheme)
    if scheme in ("tls", "wss") and Security().get_connection_args("client").get("ssl_context") is None:
        raise ValueError(
            "a tls:// address needs Dask's TLS settings on this machine (distributed.comm.tls: "
            "ca-file, and client cert and key)"
        )


def outcome_of(task: Task, value) -> tuple[TaskOutcome | None, bool]:
    """What arrived for a task, judged by the value itself (a future's status may have moved on since):
    an outcome (final), a failure on the cluster (not final), or None for a scheduler gone."""
    if isinstance(value, TaskOutcome):
        return checked(value, task), True
    if isinstance(value, CANCELLED):
        return None, False
    # an error: with raise_errors=False, the value is (type, exception, traceback)
    return _failed(task, value[1] if isinstance(value, tuple) and len(value) == 3 else value), False


def _check_workers(client, sample: Task) -> int:
    """Ask every worker, in a task of its own, whether it may grade; stop at the first that may not.
    The threads the workers have, in all."""
    from distributed import TimeoutError as DaskTimeout

    try:
        client.wait_for_workers(1, timeout=WORKERS_S)
    except (DaskTimeout, TimeoutError):
        raise ClusterError(f"no worker joined the Dask scheduler within {WORKERS_S} s") from None
    info = client.scheduler_info(n_workers=-1)["workers"]
    workers = sorted(info)
    checks = [
        client.submit(
            check_worker,
            sample.grader,
            sample.trusted,
            sample.host,
            sample.private,
            workers=[w],
            allow_other_workers=False,
            pure=False,
            key=f"grader-fitness-{os.urandom(4).hex()}",
        )
        for w in workers
    ]
    for worker, check in zip(workers, checks):
        try:
            problem = check.result(timeout=WORKERS_S + 120)
        except (OSError, TimeoutError, *CANCELLED) as exc:
            raise ClusterError(
                f"the Dask cluster at {client.scheduler.address} stopped answering while its workers "
                f"were checked ({type(exc).__name__})"
            ) from None
        except Exception as exc:
            problem = f"cannot run the grader ({type(exc).__name__}: {exc}); install micrograd-grader[dask] there"
        if problem:
            raise UnfitWorker(f"worker {info[worker].get('name', '')} ({worker}) may not grade: {problem}")
    return sum(w.get("nthreads", 1) for w in info.values())


def _failed(task: Task, value) -> TaskOutcome:
    """An error result for a student whose task failed on the cluster: the reason in words for the student,
    the exception for the instructor (on standard error; it may name a worker's folders)."""
    from distributed.scheduler import KilledWorker

    if isinstance(value, KilledWorker):
        why = (
            "each Dask worker that graded this submission died before it finished, as many times as the "
            "scheduler allows (distributed.scheduler.allowed-failures); run the batch again to try it again"
        )
    else:
        print(f"grading {task.student} failed on the cluster: {type(value).__name__}: {value}", file=sys.stderr)
        why = (
            f"grading this submission failed on the cluster ({type(value).__name__}); run the batch again to "
            "try it again"
        )
    return failed(task, why)


# -- a worker's side ----------------------------------------------------------------------------

_graders = Graders()


def on_worker(task: Task) -> TaskOutcome:
    """A Dask task: grade one student in one of this worker's grading processes."""
    from distributed import get_worker

    outcome = TaskOutcome(**_graders.call("grade_task", (task,), time_limit(task)))
    if outcome.unfit:
        worker = get_worker()
        return replace(outcome, unfit=f"worker {worker.name} ({worker.address}) may not grade: {outcome.unfit}")
    return outcome


def check_worker(grader: str, trusted: bool, host: str = "", private: tuple[str, ...] = ()) -> str | None:
    """A Dask task: why this worker may not grade, or None."""
    return _graders.call("fitness", (grader, trusted, host, private), 300)
