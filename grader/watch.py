"""`grader check --watch`'s eyes: when the submission or its tests change on disk (grader/commands/check.py
grades again, and says what changed).

Changes are found by polling, not by the kernel's file events (watchfiles, inotify): two files are
watched, and a stat of each every POLL_S costs nothing next to a grading, works the same on every
platform, in a container's bind mount and on a network folder, where file events are missing or late,
and needs no dependency. A file is read and hashed only when its size or modification time moved, and a
grading starts only when its bytes did: an editor that saves the same text, or touches the file, starts
nothing. A change is graded once the file has stood still for SETTLE_S (an editor's save in steps, or
a formatter's rewrite right after it, is one change).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader import fileio
from grader.errors import GraderError

POLL_S = 0.25
SETTLE_S = 0.3


@dataclass(frozen=True)
class Looked:
    """A file as last looked at: its stat's size and time, and its bytes' hash (None: not there, or unreadable)."""

    stat: tuple[int, int] | None
    digest: str | None


def look(path: Path, before: Looked | None = None) -> Looked:
    """The file now; its bytes are read again only when its size or time differ from `before`'s."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return Looked(None, None)
    stat = (info.st_size, info.st_mtime_ns)
    if before is not None and before.stat == stat:
        return before
    try:
        digest = hashlib.sha256(fileio.read_regular(path)).hexdigest()
    except (OSError, GraderError):
        digest = f"unreadable {stat}"  # a link, a folder, too large: the grading says what is wrong with it
    return Looked(stat, digest)


def changed(
    paths: list[Path],
    seen: dict[Path, Looked],
    poll_s: float = POLL_S,
    settle_s: float = SETTLE_S,
    stop: Callable[[], bool] = lambda: False,
) -> list[Path]:
    """Wait until the bytes of one of the files change and then stand still; the files that changed (`seen` is
    brought up to date). KeyboardInterrupt at a look once stop() says so (a Ctrl-C whose own was lost)."""
    while True:
        time.sleep(poll_s)
        if stop():
            raise KeyboardInterrupt
        now = {p: look(p, seen[p]) for p in paths}
        moved = [p for p in paths if now[p].digest != seen[p].digest]
        seen.update(now)
        if not moved:
            continue
        while True:  # until it stands still
            time.sleep(settle_s)
            again = {p: look(p, seen[p]) for p in paths}
            if all(again[p] == seen[p] for p in paths):
                return moved
            moved += [p for p in paths if again[p].digest != seen[p].digest and p not in moved]
            seen.update(again)
