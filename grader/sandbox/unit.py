"""A `Unit`: one process forked from a sandbox's template for one unit of work, with a socket
of its own. Requests go out; what comes back is a claim, read within its deadline, and a unit
that misses one, or dies, is a WorkerFailure that says why in the student's terms."""

from __future__ import annotations

import itertools
import signal
import time
from typing import TYPE_CHECKING

from grader.errors import WorkerFailure
from grader.sandbox.channel import Channel, Closed, protocol_error

if TYPE_CHECKING:
    from grader.sandbox.supervisor import Sandbox


class Unit:
    """One process of the sandbox and its socket: requests out, claims in."""

    _seq = itertools.count(1)

    def __init__(self, sandbox: Sandbox, kind: str, pid: int, channel: Channel):
        self.sandbox = sandbox
        self.kind = kind
        self.pid = pid
        self.channel = channel
        self.failed: WorkerFailure | None = None

    # The watch the channel consults: the template's news, and whether this unit has exited.
    @property
    def sock(self):
        return self.sandbox._control

    def handle(self) -> None:
        self.sandbox.read_control(time.monotonic())

    def gone(self) -> bool:
        return self.pid in self.sandbox.exits or self.sandbox.dead

    def exchange(self, message: dict, timeout: float, until: float | None = None, on_event=None) -> dict:
        """Send a request; pass each event frame to on_event; return the final reply.

        Each frame must come within timeout of the one before (a deadline that holds while
        data flows), and everything before until. Raises WorkerFailure, and the unit is
        then dead.
        """
        if self.failed:
            raise self.failed
        seq = next(self._seq)
        started = time.monotonic()
        budget = timeout if until is None else max(0.0, min(timeout, until - started))
        try:
            self.channel.send({**message, "seq": seq}, started + timeout)
            while True:
                now = time.monotonic()
                deadline = min(now + timeout, until if until is not None else now + timeout)
                frame = self.channel.receive(deadline, watch=self if self.sandbox._control else None)
                if frame.get("seq") != seq:
                    raise protocol_error("a reply to another request")
                if "ok" in frame:
                    return frame
                if on_event is not None and isinstance(frame.get("event"), dict):
                    on_event(frame["event"])
        except TimeoutError:
            self._fail(WorkerFailure("timeout", f"did not finish within {round(budget, 2):g} s"))
        except Closed:
            self._fail(self._death())
        except WorkerFailure as failure:
            self._fail(failure)
        raise self.failed

    def _fail(self, failure: WorkerFailure) -> None:
        if self.sandbox.disk_full:
            failure = WorkerFailure("disk", f"filled the sandbox's disk space (the limit is "
                                            f"{self.sandbox.limits.disk_mb} MB for every file together)")
        self.failed = failure
        self.close()

    def _death(self) -> WorkerFailure:
        deadline = time.monotonic() + 2
        while self.pid not in self.sandbox.exits and not self.sandbox.dead and time.monotonic() < deadline:
            self.sandbox.read_control(min(deadline, time.monotonic() + 0.2))
        code = self.sandbox.exits.get(self.pid)
        limits = self.sandbox.limits
        if code is None:
            return WorkerFailure("crash", "stopped, and took the sandbox's process with it")
        if code == -signal.SIGXCPU:
            return WorkerFailure("timeout", f"used up its CPU time limit ({limits.cpu_s} s)")
        if code == -signal.SIGKILL:
            return WorkerFailure("memory", "was killed (most likely it ran out of memory)")
        if code < 0:
            return WorkerFailure("crash", f"crashed with signal {signal.Signals(-code).name}")
        return WorkerFailure("crash", f"exited with code {code} (os._exit or a crash in the process)")

    def close(self) -> None:
        """End this unit: every process of the sandbox but the template is killed."""
        self.channel.close()
        if not self.sandbox.dead and self.pid not in self.sandbox.exits:
            self.sandbox.clean()
