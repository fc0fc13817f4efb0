"""Grading processes a Dask worker or a local batch keeps: `python -m grader.batch.graders`, one per task
running at once, each grading one task after another. A local batch starts its own first thing (started_first), so
that each imports the grader while the instructor's process imports the rest of it and finds the class.

A task goes in as a pickle (from the worker, which the instructor trusts); an outcome comes back
as JSON, so even a grading process that student code had somehow taken over could not make the
worker run anything. A grading process exits when its worker is gone; one that dies, or takes
longer than a whole submission could, is discarded and its task fails (Dask then retries it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

from grader.errors import GradingProcessDied
from grader.sandbox import trial

HEADER = struct.Struct("!Q")
MAX_REPLY = 256 * 1024 * 1024


class Grader:
    """One grading process and its pipes."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader.batch.graders", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )

    def call(self, function: str, args: tuple, timeout: float):
        """Run grader.batch.tasks.<function>(*args) in the process; its JSON answer."""
        pipe = self.proc.stdin
        assert pipe is not None, "the process was started with stdin=PIPE"
        try:
            data = pickle.dumps((function, args))
            pipe.write(HEADER.pack(len(data)) + data)
            pipe.flush()
            size = HEADER.unpack(self._read(HEADER.size, timeout))[0]
            if size > MAX_REPLY:
                raise GradingProcessDied(f"a grading process answered {size} bytes")
            return json.loads(self._read(size, timeout))
        except (OSError, ValueError, EOFError, struct.error) as exc:
            self.kill()
            raise GradingProcessDied(f"a grading process died ({type(exc).__name__}: {exc})") from None
        except GradingProcessDied:
            self.kill()
            raise

    def _read(self, n: int, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        out = self.proc.stdout
        assert out is not None, "the process was started with stdout=PIPE"
        chunks, got = [], 0
        while got < n:
            if not select.select([out], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise GradingProcessDied(f"a grading process gave no answer within {timeout:g} s")
            chunk = os.read(out.fileno(), min(n - got, 1 << 20))
            if not chunk:
                raise EOFError("the grading process exited")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, 9)
        except OSError:
            pass
        self.proc.wait()


@contextlib.contextmanager
def started_first(jobs: int) -> Iterator[Graders]:
    """A batch's grading processes on this machine (jobs of them) and its one trial sandbox (grader/sandbox/trial.py),
    started now, before anything else, both stopped on the way out."""
    graders = Graders(ahead=max(1, jobs))
    try:
        with trial.ahead("batch"):
            yield graders
    finally:
        graders.close()


class Graders:
    """The grading processes of one worker (or one local batch): idle ones are reused, a dead one replaced."""

    def __init__(self, ahead: int = 0):
        """ahead: grading processes started now, each getting ready (the grader imported) before its first task;
        the others start with the task that needs them."""
        self._idle: list[Grader] = []
        self._all: set[Grader] = set()
        self._closed = False
        self._lock = threading.Lock()
        for _ in range(ahead):
            try:
                grader = Grader()
            except OSError:
                break  # the task that needs one tries again, and says why it cannot
            self._idle.append(grader)
            self._all.add(grader)

    def keep(self, most: int) -> None:
        """Stop the idle grading processes beyond most (a batch that turns out to have fewer students to grade
        than the processes it started)."""
        with self._lock:
            extra, self._idle = self._idle[most:], self._idle[:most]
            self._all.difference_update(extra)
        for grader in extra:
            grader.kill()

    def call(self, function: str, args: tuple, timeout: float):
        with self._lock:
            if self._closed:
                raise GradingProcessDied("the grading processes were stopped")
            grader = self._idle.pop() if self._idle else None
            if grader is None or grader.proc.poll() is not None:
                try:
                    grader = Grader()
                except OSError as exc:
                    raise GradingProcessDied(f"a grading process could not start ({exc.strerror})") from None
                self._all.add(grader)
        try:
            answer = grader.call(function, args, timeout)
        except GradingProcessDied:
            with self._lock:
                self._all.discard(grader)  # a dead one is not given back
            raise
        with self._lock:
            self._idle.append(grader)
        return answer

    def close(self) -> None:
        """Stop every grading process, busy or idle (a call in progress then fails)."""
        with self._lock:
            self._closed = True
            graders, self._idle = list(self._all), []
            self._all.clear()
        for grader in graders:
            grader.kill()


def _serve(worker_pid: int) -> None:
    """The grading process: tasks in on stdin, JSON answers out on stdout, until stdin closes."""
    from grader.batch import tasks
    from grader.sandbox import isolation

    isolation.said_elsewhere = True  # the instructor's process warned once, for the whole batch

    def watch():
        while os.getppid() == worker_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed goes to the worker's log, never into an answer
    tasks.warm()  # while no task has come yet: what the first grading would otherwise do first
    while True:
        header = stdin.read(HEADER.size)
        if len(header) < HEADER.size:
            return
        function, args = pickle.loads(stdin.read(HEADER.unpack(header)[0]))
        answer = getattr(tasks, function)(*args)
        answer = json.dumps(
            dataclasses.asdict(answer) if dataclasses.is_dataclass(answer) and not isinstance(answer, type) else answer
        ).encode()
        stdout.write(HEADER.pack(len(answer)) + answer)
        stdout.flush()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
