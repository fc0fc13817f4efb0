"""A `Unit`: one process forked from a sandbox's template for one unit of work, with a socket
of its own. Requests go out; what comes back is a claim, read within its deadline, and a unit
that misses one, or dies, is a WorkerFailure that says why in the student's terms.

Every request has an overall deadline fixed when it is sent (its own limit, or the caller's
deadline if that comes first: the check's, the whole grading's). Frames that come meanwhile
(progress events) never extend it, so no stream of well-formed frames keeps a request going."""

from __future__ import annotations

import itertools
import signal
import socket
import time
from typing import Protocol

from grader.errors import Closed, OutOfTime, WorkerFailure
from grader.sandbox.channel import Channel, protocol_error
from grader.sandbox.limits import SandboxLimits


class Host(Protocol):
    """What a unit needs of the sandbox it was forked in (grader/sandbox/supervisor.py's Sandbox): the template's
    socket to watch, its news read, the exits and stops it recorded, and its cleaning."""

    limits: SandboxLimits
    exits: dict[int, int]
    stopped: str | None
    dead: bool

    def control_socket(self) -> socket.socket | None: ...

    def read_control(self, deadline: float) -> dict | None: ...

    def clean(self) -> None: ...


SLACK_S = 0.05
"""A caller's deadline counts as the one that stopped a request only when it came this much before
the request's own (a caller that gives all the time it has left gets its own limit's message)."""


class Unit:
    """One process of the sandbox and its socket: requests out, claims in."""

    _seq = itertools.count(1)

    def __init__(self, sandbox: Host, kind: str, pid: int, channel: Channel):
        self.sandbox = sandbox
        self.kind = kind
        self.pid = pid
        self.channel = channel
        self.failed: WorkerFailure | None = None

    # The watch the channel consults: the template's news, and whether this unit has exited.
    @property
    def sock(self):
        return self.sandbox.control_socket()

    def handle(self) -> None:
        self.sandbox.read_control(time.monotonic())

    def gone(self) -> bool:
        return self.pid in self.sandbox.exits or self.sandbox.dead

    def exchange(
        self, message: dict, timeout: float, until: float | None = None, on_event=None, gap: float | None = None
    ) -> dict:
        """Send a request; pass each event frame to on_event; return the final reply.

        The reply must come within timeout seconds of sending, and before until (the caller's
        deadline) if given: one deadline, fixed now, that no frame extends. With gap, each frame
        must also come within gap seconds of the one before. Raises WorkerFailure (OutOfTime
        when the overall deadline passed), and the unit is then dead.
        """
        if self.failed:
            raise self.failed
        seq = next(self._seq)
        started = time.monotonic()
        own = started + timeout
        end = own if until is None else min(own, until)
        try:
            self.channel.send({**message, "seq": seq}, end)
            while True:
                deadline = end if gap is None else min(end, time.monotonic() + gap)
                frame = self.channel.receive(deadline, watch=self if self.sandbox.control_socket() else None)
                if frame.get("seq") != seq:
                    raise protocol_error("a reply to another request")
                if "ok" in frame:
                    return frame
                if on_event is not None and isinstance(frame.get("event"), dict):
                    on_event(frame["event"])
        except TimeoutError:
            if time.monotonic() >= end:
                self._fail(
                    OutOfTime(f"did not finish within {round(max(0.0, end - started), 2):g} s", end < own - SLACK_S)
                )
            else:  # the gap's deadline, before the request's
                self._fail(WorkerFailure("timeout", f"did not finish within {round(gap or 0.0, 2):g} s"))
        except Closed:
            self._fail(self._death())
        except WorkerFailure as failure:
            self._fail(failure)
        assert self.failed is not None, "each way out of the loop above failed the unit"
        raise self.failed

    def _fail(self, failure: WorkerFailure) -> None:
        limits = self.sandbox.limits
        if self.sandbox.stopped == "disk":
            failure = WorkerFailure(
                "disk", f"filled the sandbox's disk space (the limit is {limits.disk_mb} MB for every file together)"
            )
        elif self.sandbox.stopped == "memory":
            failure = WorkerFailure(
                "memory",
                f"was stopped: its processes together held more than {limits.sandbox_mb} MB of memory, the limit "
                f"for all of them at once (each process may use {limits.memory_mb} MB)",
            )
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
        """End this unit, however it ended (its process may have exited on its own, leaving children): every
        process of the sandbox but the template is killed, and the sandbox cleaned for the next."""
        self.channel.close()
        self.sandbox.clean()
