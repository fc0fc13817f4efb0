"""The engine lane: the student's own engine in one process of one sandbox, loaded once (the module, or the notebook
run as Restart & Run All), answering the engine checks' probes, and loaded again in a fresh process if the student's
code kills it. Its sandbox is its own, or the grading's one that it takes turns in with the suite lane (pause() frees
it)."""

from __future__ import annotations

from collections.abc import Callable

from grader import protocol
from grader.errors import WorkerFailure
from grader.protocol import Code
from grader.sandbox.isolation import Isolation
from grader.sandbox.prestarted import Prestarted, sandbox_for
from grader.sandbox.supervisor import Sandbox, SandboxLimits
from grader.sandbox.unit import Unit


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
