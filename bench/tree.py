"""A tool's whole process tree timed as one: its wall time, the CPU time of every process it started, its memory.

The tool runs under a subreaper (what its tree orphans is reparented there and waited for, so the run ends when
the last of its processes does) which first joins a CPU-accounting cgroup of its own, where this machine lets the
benchmark make one (cgroup v1's cpuacct, or a child of its own cgroup v2): every process the tool starts is then
counted, sandboxes included, which a parent's rusage misses (a sandbox killed with its PID namespace is reaped by
the kernel, not by the grader). The CPU time is what a busy machine does not change much, where wall time depends
on what else runs: on a shared machine, compare both.

Memory: "largest" is the peak RSS of the tool's largest single process, the larger of ru_maxrss (RUSAGE_CHILDREN of
the subreaper) and RSS sampled twice a second; "tree peak" the largest sum of PSS over the whole tree, sampled twice
a second. "machine" is how many cores the whole machine kept busy meanwhile, the tool included.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil


@dataclass
class Measure:
    wall: float
    jobs: int
    """Processes that grade at once (core-seconds are wall * jobs)."""
    largest_mb: float
    tree_mb: float
    machine: float
    """Cores the whole machine kept busy on average meanwhile, this tool included."""
    returncode: int
    log: Path
    cpu: float | None = None
    """CPU seconds of every process of the tool's tree, or None where no cgroup could count them."""


def busy() -> float:
    """CPU seconds the whole machine has spent busy since boot."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


REAPER = r"""
import ctypes, json, os, resource, subprocess, sys, time
joined = False
if sys.argv[2]:  # the CPU-accounting cgroup to join, so that every process of the tree is counted
    try:
        with open(sys.argv[2], "w") as f:
            f.write(str(os.getpid()))
        joined = True
    except OSError:
        pass
# PR_SET_CHILD_SUBREAPER: what the tree orphans is reparented here, not to init, and counts below once reaped.
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
started = time.perf_counter()
code = subprocess.call(sys.argv[3:])
wall = time.perf_counter() - started
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        if os.waitpid(-1, os.WNOHANG)[0] == 0:
            time.sleep(0.05)
    except ChildProcessError:
        break
with open(sys.argv[1], "w") as f:
    maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    json.dump({"wall": wall, "code": code, "maxrss_kb": maxrss, "joined": joined}, f)
"""


@dataclass(frozen=True)
class Group:
    """A cgroup of the benchmark's own: where a process joins it, and how its CPU seconds are read."""

    folder: Path
    procs: Path
    usage: Path
    scale: float
    """Seconds per unit of the usage read (cpuacct.usage: nanoseconds; cpu.stat's usage_usec: microseconds)."""

    def cpu(self) -> float:
        text = self.usage.read_text()
        if self.usage.name == "cpu.stat":
            text = next(line.split()[1] for line in text.splitlines() if line.startswith("usage_usec "))
        return int(text) * self.scale


def _v2_base() -> Path | None:
    """This process's own cgroup v2 folder, or None."""
    try:
        own = next(line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines() if line.startswith("0::"))
    except (OSError, StopIteration):
        return None
    for mount in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        if (mount / "cgroup.controllers").exists():
            return mount / own.lstrip("/")
    return None


@contextlib.contextmanager
def cpu_group() -> Iterator[Group | None]:
    """A fresh CPU-accounting cgroup, removed on the way out (once its processes are gone), or None where this
    machine lets the benchmark make none."""
    name = f"bench-batch-{os.getpid()}-{time.monotonic_ns()}"
    v1 = Path("/sys/fs/cgroup/cpuacct")
    v2 = _v2_base()
    candidates = [(v1 / name, "cpuacct.usage", 1e-9)] if (v1 / "cpuacct.usage").exists() else []
    candidates += [(v2 / name, "cpu.stat", 1e-6)] if v2 is not None else []
    group = None
    for folder, usage, scale in candidates:
        try:
            folder.mkdir()
        except OSError:
            continue
        group = Group(folder, folder / "cgroup.procs", folder / usage, scale)
        break
    try:
        yield group
    finally:
        if group is not None:
            for _ in range(100):  # the last processes may still be leaving it
                try:
                    group.folder.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


def timed(cmd: list[str], log: Path, jobs: int, **popen) -> Measure:  # popen: cwd and env
    """Run cmd to its end under a subreaper in a cgroup of its own; its wall time, CPU time and memory."""
    with cpu_group() as group:
        return _timed(cmd, log, jobs, group, popen)


def _timed(cmd: list[str], log: Path, jobs: int, group: Group | None, popen: dict) -> Measure:
    tree_peak, largest = [0.0], [0.0]
    done = threading.Event()
    report = log.with_suffix(".usage.json")
    join = str(group.procs) if group is not None else ""
    with open(log, "w") as out:
        machine = busy()
        proc = subprocess.Popen(
            [sys.executable, "-c", REAPER, str(report), join] + cmd, stdout=out, stderr=subprocess.STDOUT, **popen
        )

        def sample() -> None:
            while not done.wait(0.5):
                try:
                    tree = psutil.Process(proc.pid).children(recursive=True)
                except psutil.NoSuchProcess:
                    continue
                total = 0
                for p in tree:
                    try:
                        mem = p.memory_full_info()
                    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                        continue
                    total += mem.pss
                    largest[0] = max(largest[0], mem.rss / 2**20)
                tree_peak[0] = max(tree_peak[0], total / 2**20)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        proc.wait()
        done.set()
        sampler.join()
    usage = json.loads(report.read_text())
    cpu = None
    if group is not None and usage["joined"]:
        with contextlib.suppress(OSError, ValueError, StopIteration):
            cpu = group.cpu()
    return Measure(
        usage["wall"],
        jobs,
        max(largest[0], usage["maxrss_kb"] / 1024),
        tree_peak[0],
        (busy() - machine) / usage["wall"],
        usage["code"],
        log,
        cpu,
    )
