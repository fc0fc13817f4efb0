"""A cgroup v2 of its own for each sandbox, where this machine lets the grader make one.

Resource limits (rlimits) bound each process; a sandbox may hold several processes, and
memory that belongs to none of them (shared memory, memfd). A cgroup bounds the sandbox as
a whole: `memory.max` counts every page its processes hold, shared memory, tmpfs files and
memfd included; `pids.max` counts its processes and threads; `cpu.max` gives it one CPU at
most and `cpu.weight` an equal share, so a classmate's busy processes cannot starve it.

The groups live under `micrograd-grader/` at the top of the cgroup v2 hierarchy (a folder
that holds no process, so the controllers can be enabled for its children); each sandbox's
template moves itself into its group before anything else runs (`wrap`), and everything it
forks stays there: a group's cgroup.procs is root's, so student code cannot move out.

Where there is no cgroup v2 with the memory and pids controllers, or it cannot be written
(cgroup v1, a read-only /sys/fs/cgroup in Docker, not root), `support()` says why, each
sandbox is bounded per process, and the grader sums its processes' memory itself (watch.py;
see `describe`).
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox import uids
from grader.sandbox.limits import SandboxLimits

PARENT = "micrograd-grader"
NEEDED = ("memory", "pids")
CPU_PERIOD_US = 100_000


@dataclass(frozen=True)
class Support:
    """Where sandboxes' groups go (None when cgroups cannot be used here, and why)."""

    parent: Path | None
    why: str = ""
    cpu: bool = False


def _mount() -> Path | None:
    """Where the cgroup v2 file system is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    mounts = [line.split()[4] for line in lines if " - cgroup2 " in line]
    return Path("/sys/fs/cgroup") if "/sys/fs/cgroup" in mounts else Path(mounts[0]) if mounts else None


@functools.cache
def support() -> Support:
    """Whether each sandbox can have a cgroup of its own here: found by making one and moving a process in."""
    mount = _mount()
    if mount is None:
        return Support(None, "no cgroup v2 file system is mounted")
    try:
        offered = (mount / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        return Support(None, f"{mount} cannot be read ({exc.strerror})")
    missing = [c for c in NEEDED if c not in offered]
    if missing:
        return Support(
            None,
            f"the cgroup v2 hierarchy at {mount} does not offer the {' and '.join(missing)} "
            "controller" + ("s" if len(missing) > 1 else "") + "; cgroup v1 may hold them",
        )
    cpu = "cpu" in offered
    parent = mount / PARENT
    try:
        parent.mkdir(mode=0o755, exist_ok=True)
        (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in (*NEEDED, *(["cpu"] if cpu else []))))
        group = Group(parent, 64 << 20, 4, cpu)
    except OSError as exc:
        return Support(None, f"cgroups cannot be made under {mount} ({exc.strerror})")
    try:
        moved = subprocess.run(
            group.wrap(["/bin/sh", "-c", "cat /proc/self/cgroup"]), capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        moved = subprocess.CompletedProcess([], 1, "", str(exc))
    finally:
        group.close()
    if moved.returncode != 0 or group.path.name not in moved.stdout:
        return Support(
            None,
            f"a process cannot be moved into a cgroup under {parent} "
            f"({(moved.stderr.strip().splitlines() or ['no reason given'])[-1]})",
        )
    return Support(parent, "", cpu)


class Group:
    """One sandbox's cgroup: made with its limits, emptied and removed by close()."""

    def __init__(self, parent: Path, memory_bytes: int, processes: int, cpu: bool):
        self.path = Path(tempfile.mkdtemp(prefix="sandbox-", dir=parent))
        try:
            self._write("memory.max", str(memory_bytes))
            if (self.path / "memory.swap.max").exists():
                self._write("memory.swap.max", "0")
            self._write("pids.max", str(processes))
            if cpu:
                self._write("cpu.max", f"{CPU_PERIOD_US} {CPU_PERIOD_US}")  # one CPU at most
                self._write("cpu.weight", "100")  # and an equal share with every other sandbox
        except OSError:
            self.close()
            raise

    def _write(self, name: str, value: str) -> None:
        (self.path / name).write_text(value)

    def wrap(self, argv: list[str]) -> list[str]:
        """argv, run by a shell that first moves itself into this group (so everything argv forks is in it)."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"), *argv]

    def peak_bytes(self) -> int | None:
        """The most memory the group's processes held at once (None where the kernel does not say)."""
        try:
            return int((self.path / "memory.peak").read_text())
        except (OSError, ValueError):
            return None

    def kill(self) -> None:
        """Kill every process in the group, at once where the kernel can (cgroup.kill)."""
        try:
            self._write("cgroup.kill", "1")
            return
        except OSError:
            pass
        uids.kill_until_gone(self._processes)

    def _processes(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def close(self) -> None:
        """Kill what is left in the group and remove it (a group is removable once its processes are gone)."""
        self.kill()
        for _ in range(200):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


def bounds() -> tuple[str, bool]:
    """What bounds one sandbox's memory and CPU here (with the default limits), in a sentence, and whether it is
    a cgroup."""
    limits, where = SandboxLimits(), support()
    return describe(where, limits.processes, limits.memory_mb, limits.sandbox_mb), where.parent is not None


def describe(where: Support, processes: int, memory_mb: int, total_mb: int) -> str:
    """What bounds one sandbox's memory and CPU here, in a sentence."""
    if where.parent is not None:
        cpu = ", one CPU" if where.cpu else ""
        return f"each sandbox has a cgroup of its own ({total_mb} MB in all, {processes} processes{cpu})"
    return (
        f"no cgroup: a sandbox is stopped past {total_mb} MB in all ({processes} processes of {memory_mb} MB); "
        "see docs/platforms.md"
    )
