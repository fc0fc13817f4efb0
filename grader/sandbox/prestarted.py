"""Sandboxes started before a grading knows its files, so that they warm up (a Python importing pytest and
IPython, about 0.15 s of CPU each) while the grader's own process imports the grader on the other core:
`grader check` starts them first thing, and the grading's lanes take them (files written in after the start,
before any unit runs) instead of starting their own. One that no lane takes is closed unused."""

from __future__ import annotations

from dataclasses import dataclass

from grader.sandbox.isolation import Isolation
from grader.sandbox.limits import SandboxLimits
from grader.sandbox.supervisor import Sandbox


def layout(
    kind: str, tests: bool, suite_sandboxes: int, one_sandbox: bool = False
) -> tuple[tuple[str, ...], list[tuple[str, ...]], bool]:
    """The sandboxes a grading's lanes start, as their warm imports: the engine lane's, the suite lane's own, and
    whether the engine lane's joins the suite's runs once the engine checks are done (with suite_sandboxes > 1: one
    sandbox's start saved, pytest warmed in the engine lane's instead; of a notebook, the suite lane's own sandbox
    starts the runs on the cells the tests need while the engine lane runs the notebook, and the engine lane's takes
    the run on the whole notebook when it joins). With one_sandbox (a batch) the lanes share one, started as the
    suite's."""
    warm = ("ipython",) if kind == "notebook" else ()
    suite = ("pytest", *warm)
    if one_sandbox:
        return suite, [], False
    if not tests:
        return warm, [], False
    if suite_sandboxes > 1:
        return suite, [suite] * (suite_sandboxes - 1), True
    return warm, [suite] * suite_sandboxes, False


@dataclass(frozen=True)
class Wanted:
    """A sandbox as a lane asks for it: its limits, warm imports and isolation (None: the machine's best)."""

    limits: SandboxLimits
    warm: tuple[str, ...]
    iso: Isolation | None


class Prestarted:
    def __init__(self, wanted: list[tuple[SandboxLimits, tuple[str, ...]]], iso: Isolation | None):
        """wanted: the limits and warm imports of each sandbox to start."""
        self.free: list[Sandbox] = []
        try:
            for limits, warm in wanted:
                self.add(Wanted(limits, warm, iso))
        except BaseException:
            self.close()
            raise

    def add(self, wanted: Wanted) -> None:
        """One more sandbox, started now (it warms up in its own process)."""
        self.free.append(Sandbox({}, wanted.limits, wanted.warm, wanted.iso, start=False))
        self.free[-1].start()

    def take(
        self, files: dict[str, bytes], limits: SandboxLimits, warm: tuple[str, ...], iso: Isolation | None
    ) -> Sandbox | None:
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


def sandbox_for(
    prestarted: Prestarted | None,
    files: dict[str, bytes],
    limits: SandboxLimits,
    warm: tuple[str, ...],
    iso: Isolation | None,
) -> Sandbox:
    """A started sandbox for a lane: one of prestarted's that matches, else a new one, starting."""
    taken = prestarted.take(files, limits, warm, iso) if prestarted is not None else None
    if taken is not None:
        return taken
    sandbox = Sandbox(files, limits, warm, iso, start=False)
    sandbox.start()  # warms up in its own process while the grading goes on
    return sandbox
