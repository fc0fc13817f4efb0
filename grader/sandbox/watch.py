"""What a sandbox holds, watched from the grader's side where nothing else bounds it.

Without a cgroup (cgroups.py), rlimits bound each of a sandbox's processes, and a sandbox may have several: eight
of 1 GB each. The watcher sums the resident memory of all its processes ten times a second and stops the sandbox
once the sum passes its limit (SandboxLimits.sandbox_mb, what a cgroup's memory.max would be). Where its writable
space is no size-capped tmpfs of its own (a uid of its own where the grader can make no namespaces: Docker, and
so Gradescope), it sums the files the sandbox holds too, and stops it at its disk limit.

Resident memory is counted per process, so pages two processes share (what a unit shares with the template it was
forked from, a library both map) count twice: the sum is never less than what the sandbox holds.
"""

from __future__ import annotations

import os
import threading
from typing import Protocol

from grader.sandbox import uids
from grader.sandbox.limits import SandboxLimits

INTERVAL_S = 0.1
PAGE = os.sysconf("SC_PAGE_SIZE")


class Watched(Protocol):
    limits: SandboxLimits

    def processes(self) -> list[int]: ...

    def disk_bytes(self, pids: list[int], limit: int) -> int: ...

    def stop(self, why: str) -> None: ...


def watch(box: Watched, stop: threading.Event, memory: bool, disk: bool) -> None:
    """Until stop is set: stop the sandbox (box.stop("memory") or box.stop("disk")) when its processes together
    hold more memory (with memory) or its files more space (with disk) than its limits."""
    memory_cap = box.limits.sandbox_mb << 20
    disk_cap = box.limits.disk_mb << 20
    while not stop.wait(INTERVAL_S):
        pids = box.processes()
        if memory and resident_bytes(pids) > memory_cap:
            box.stop("memory")
            return
        if disk and box.disk_bytes(pids, disk_cap) > disk_cap:
            box.stop("disk")
            return


def resident_bytes(pids: list[int]) -> int:
    """The resident memory of these processes, summed."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total


def in_session(session: int) -> list[int]:
    """The live processes of a session (a sandbox's processes cannot leave the one it started in: its seccomp
    filter makes setsid do nothing)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and fields[3] == str(session).encode() and fields[0] not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def child_of(pid: int) -> int | None:
    """A child of the process pid (bubblewrap's one child: the sandbox's template), or None."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            children = f.read().split()
        if children:
            return int(children[0])
    except (OSError, ValueError):
        pass
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    if f.read().rsplit(b")", 1)[1].split()[1] == str(pid).encode():
                        return int(entry.name)
            except (OSError, IndexError):
                continue
    return None


def uid_disk_bytes(scratch, uid: int, shared: bool, limit: int, pids: list[int]) -> int:
    """A sandbox's disk space (stopping once past limit): its own folder, and with shared, what its uid has in the
    machine's shared writable folders and what its processes hold open where no folder names it."""
    used = uids.owned_bytes(scratch, uid, limit)
    if shared:
        for top in uids.shared_writable():
            used += uids.owned_bytes(top, uid, limit)
        used += uids.unlinked_bytes(pids)
    return used
