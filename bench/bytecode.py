"""How the benchmarks run a tool: as a user's machine runs it, and as this environment does.

A student's virtual environment writes bytecode: pip compiles what it installs, and Python keeps what it imports
compiled, pytest the test files it rewrites. Where PYTHONDONTWRITEBYTECODE is set (CI's machines, a container's
image), every process compiles from source what has no bytecode yet, and pytest rewrites every test file and plugin
again on each run: a yardstick timed there is not the one a student compares the grader with. So each tool is timed
with bytecode written (that variable unset, PYTHONPYCACHEPREFIX a folder of the benchmark's own, each command run
once before it is timed), and, where the environment forbids bytecode, also as the environment is, each figure
saying which.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

import psutil

WRITTEN = "with bytecode written, as a student's machine runs it (each command run once first)"
AS_IS = "as this environment runs it (PYTHONDONTWRITEBYTECODE set: no bytecode written)"


@dataclass(frozen=True)
class Condition:
    """One way of running the tools: its words, and the environment the tools run in."""

    words: str
    env: dict[str, str]
    written: bool


def forbidden() -> bool:
    """Does this environment forbid bytecode (PYTHONDONTWRITEBYTECODE set to anything but empty)?"""
    return bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))


@contextlib.contextmanager
def conditions() -> Iterator[list[Condition]]:
    """With bytecode written, into a folder that lasts as long as this context; then, where the environment
    forbids bytecode, as it is."""
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        found = [Condition(WRITTEN, env, True)]
        if forbidden():
            found.append(Condition(AS_IS, dict(os.environ), False))
        yield found


class Busy:
    """How many cores the whole machine kept busy from this object's making to busy(): above what the benchmark
    itself runs at once, other work was competing and the figures are noisy."""

    def __init__(self) -> None:
        self.cpu, self.load = self._busy(), os.getloadavg()[0]
        self.wall = time.monotonic()

    @staticmethod
    def _busy() -> float:
        t = psutil.cpu_times()
        return sum(t) - t.idle - getattr(t, "iowait", 0.0)

    def cores(self) -> float:
        return (self._busy() - self.cpu) / max(time.monotonic() - self.wall, 1e-9)

    def words(self) -> str:
        return (
            f"the machine kept {self.cores():.1f} of {os.cpu_count()} cores busy meanwhile "
            f"(load average {self.load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)"
        )
