"""The hard limits of one sandbox, in their own module: the supervisor applies them and cgroups.py
describes what bounds a sandbox with their defaults, below the supervisor."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxLimits:
    """Hard limits on every process of a sandbox."""

    request_s: float = 10.0
    """Wall-clock seconds one request may take (between two replies) before the unit is killed."""
    memory_mb: int = 1024
    """Address-space cap of each process (RLIMIT_AS)."""
    cpu_s: int = 120
    """CPU seconds over one process's life (RLIMIT_CPU)."""
    file_mb: int = 16
    """Largest file a process may write (RLIMIT_FSIZE)."""
    processes: int = 8
    """Processes and threads the sandbox may have at once (RLIMIT_NPROC, and pids.max with a cgroup): without
    a cgroup, this many times memory_mb is all the memory one sandbox can hold."""
    open_files: int = 256
    """Files a process may hold open (RLIMIT_NOFILE)."""
    disk_mb: int = 64
    """All the disk space the sandbox may fill, every file together (files it holds open included)."""
    total_mb: int | None = None
    """Memory of all the sandbox's processes together, with a cgroup (default: memory_mb + 512)."""

    @property
    def sandbox_mb(self) -> int:
        return self.total_mb or self.memory_mb + 512

    @classmethod
    def for_grading(cls, request_s: float, memory_mb: int, submission_s: float) -> SandboxLimits:
        """The limits of a grading's sandboxes, from its assignment's [limits]: a process may use the CPU of the
        whole submission's time, and a little more."""
        return cls(request_s=request_s, memory_mb=memory_mb, cpu_s=int(submission_s) + 5)
