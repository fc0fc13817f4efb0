"""Start, talk to and kill the worker process that runs a student's code.

One `Sandbox` per submission. It keeps one warm worker and replaces it when it dies
or hangs, so a crash costs only the request in progress. Every worker gets hard
limits: wall-clock per request (the whole process group is killed), memory, CPU time,
file size, process count, a private working directory holding only the submission, a
scrubbed environment, no network, and (as root) an unprivileged uid of its own.
Namespaces come from bubblewrap where it works.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.errors import WorkerFailure
from grader.sandbox import isolation

WORKER = Path(__file__).with_name("worker.py")
MODULE_NAME = "micrograd_mine.py"
_uids = itertools.count()


@dataclass(frozen=True)
class Limits:
    """Hard limits on every worker process."""

    request_s: float = 10.0
    """Wall-clock seconds one request may take before the worker is killed."""
    memory_mb: int = 1024
    """Address-space cap of the worker (RLIMIT_AS)."""
    cpu_s: int = 120
    """CPU seconds over a worker's whole life (RLIMIT_CPU)."""
    file_mb: int = 16
    """Largest file the worker may write (RLIMIT_FSIZE)."""
    processes: int = 64
    """Processes and threads its uid may have at once (RLIMIT_NPROC; holds when the uid is dropped)."""
    output_kb: int = 64
    """Printed output kept for the report; the rest is counted and dropped."""


@dataclass
class Output:
    """What the student's code printed, truncated to a cap."""

    cap: int
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.total += len(chunk)

    def text(self) -> str:
        text = self.kept.decode("utf-8", "replace")
        if self.total > len(self.kept):
            text += f"\n... [output truncated: {self.total - len(self.kept):,} more bytes]"
        return text


class Sandbox:
    """A private working directory with the submission, and a worker process serving it."""

    def __init__(self, submission: Path, limits: Limits = Limits(), extra_files: dict[str, Path] | None = None,
                 name: str = MODULE_NAME):
        self.limits = limits
        self.name = name
        self.workdir = Path(tempfile.mkdtemp(prefix="grader-"))
        shutil.copyfile(submission, self.workdir / name)
        for name, path in (extra_files or {}).items():
            shutil.copyfile(path, self.workdir / name)
        self.uid = isolation.sandbox_uid(next(_uids))
        isolation.hand_over(self.workdir, self.uid)
        self.output = Output(limits.output_kb * 1024)
        self._proc: subprocess.Popen | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._kill()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _start(self) -> None:
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.workdir),
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "JUPYTER_PLATFORM_DIRS": "1",
            "GRADER_UID": str(self.uid or 0),
            "GRADER_LIMITS": json.dumps(asdict(self.limits)),
        }
        command = isolation.wrap(
            [sys.executable, "-s", "-P", str(WORKER), str(request_r), str(reply_w), str(self.workdir / self.name)],
            workdir=self.workdir,
            worker=WORKER,
        )
        self._proc = subprocess.Popen(
            command.argv,
            cwd=command.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(request_r, reply_w),
            process_group=0,
        )
        os.close(request_r)
        os.close(reply_w)
        self._requests = os.fdopen(request_w, "w", encoding="utf-8")
        self._replies = reply_r
        self._buffer = b""
        threading.Thread(target=self._drain, args=(self._proc.stdout,), daemon=True).start()

    def _drain(self, stream) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.output.add(chunk)

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        isolation.kill_uid(self.uid)
        proc.wait()
        try:
            self._requests.close()
        except OSError:  # the worker died with a request unread: the pipe is broken
            pass
        os.close(self._replies)

    # -- requests -----------------------------------------------------------------------------

    def load(self) -> dict:
        """Import the student's module in a fresh worker; the worker's reply (symbols, or the error)."""
        return self._exchange({"op": "load"}, self.limits.request_s)

    def call(self, message: dict, timeout: float) -> dict:
        """Send a request that needs no module loaded (executing a notebook); return the reply."""
        return self._exchange(message, timeout)

    def request(self, message: dict, timeout: float | None = None) -> dict:
        """Send one request to a worker with the module loaded; return its reply.

        Raises WorkerFailure when the worker hangs past the timeout or dies; the next
        request then gets a fresh worker.
        """
        if self._proc is None:
            self._exchange({"op": "load"}, self.limits.request_s)
        return self._exchange(message, timeout or self.limits.request_s)

    def _exchange(self, message: dict, timeout: float) -> dict:
        if self._proc is None:
            self._start()
        try:
            self._requests.write(json.dumps(message) + "\n")
            self._requests.flush()
        except BrokenPipeError:
            pass  # the worker is dead; _read_reply reports how it died
        return self._read_reply(timeout)

    def _read_reply(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._replies], [], [], max(left, 0))
            if not ready:
                self._kill()
                raise WorkerFailure("timeout", f"did not finish within {timeout:g} s")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise self._death()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def _death(self) -> WorkerFailure:
        proc = self._proc
        proc.wait()
        code = proc.returncode
        self._kill()
        if code == -signal.SIGXCPU:
            return WorkerFailure("timeout", f"used up its CPU time limit ({self.limits.cpu_s} s)")
        if code == -signal.SIGKILL:
            return WorkerFailure("memory", "was killed (most likely it ran out of memory)")
        if code is not None and code < 0:
            return WorkerFailure("crash", f"crashed with signal {signal.Signals(-code).name}")
        return WorkerFailure("crash", f"exited with code {code} (os._exit or a crash in the worker)")
