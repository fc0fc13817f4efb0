"""A sandbox's processes, as the kernel lists them: every process below its template, which adopts the orphans
of its processes (process 1 of a pid namespace, or a child subreaper: confine.adopt_orphans), so that nothing it
started leaves its tree. Used inside, by the template that kills them between units, and by the grader, which sums
their memory (grader/sandbox/watch.py): a few reads for a sandbox's few processes, where a scan of every process
of the machine reads them all. Stdlib only."""

from __future__ import annotations

import os

LISTED = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
"""The kernel lists each process's children (CONFIG_PROC_CHILDREN, as distributions build it)."""


def descendants(root: int, limit: int = 4096) -> list[int]:
    """Every process below root (each thread's children: a thread may fork), at most limit of them."""
    found: list[int] = []
    stack = [root]
    while stack and len(found) < limit:
        pid = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                    children = [int(child) for child in f.read().split()]
            except (OSError, ValueError):
                continue
            found += children
            stack += children
    return found
