"""Sandboxes started before a grading knows its files, so that they warm up (a Python importing pytest and
IPython, about 0.15 s of CPU each) while the grader's own process imports the grader on the other core:
`grader check` starts them first thing, and the grading's lanes take them (files written in after the start,
before any unit runs) instead of starting their own. One that no lane takes is closed unused."""

from __future__ import annotations

from grader.sandbox.isolation import Isolation
from grader.sandbox.limits import SandboxLimits
from grader.sandbox.supervisor import Sandbox


class Prestarted:
    def __init__(self, wanted: list[tuple[SandboxLimits, tuple[str, ...]]], iso: Isolation):
        """wanted: the limits and warm imports of each sandbox to start."""
        self.free: list[Sandbox] = []
        try:
            for limits, warm in wanted:
                self.free.append(Sandbox({}, limits, warm, iso, start=False))
                self.free[-1].start()
        except BaseException:
            self.close()
            raise

    def take(self, files: dict[str, bytes], limits: SandboxLimits, warm: tuple[str, ...],
             iso: Isolation | None) -> Sandbox | None:
        """A sandbox started with these limits, warm imports and isolation, now holding files; None if there is
        none left (the lane then starts its own)."""
        for sandbox in self.free:
            if sandbox.limits == limits and sandbox.warm == warm and (iso is None or sandbox.iso == iso):
                self.free.remove(sandbox)
                sandbox.put(files)
                return sandbox
        return None

    def close(self) -> None:
        while self.free:
            self.free.pop().close()

    def __enter__(self) -> Prestarted:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
