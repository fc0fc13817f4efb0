"""The grader's own cache folder (`micrograd-grader` under $XDG_CACHE_HOME, else ~/.cache): what the grader computes
once and keeps across processes, none of it anyone's graded work (the programs a search tries, checks/plans.py; the
report templates compiled, render/compiled.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "micrograd-grader"


def private(name: str) -> Path | None:
    """The cache's folder `name`, made if missing, for what is loaded as code: only where this user alone may write
    in it (a folder of its own, not a link, writable by no group nor other user), else None."""
    try:
        path = folder() / name
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = os.lstat(path)
    except (OSError, RuntimeError):  # RuntimeError: no home folder to be found (no $HOME, a uid without a name)
        return None
    alone = found.st_uid == os.geteuid() and not found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return path if stat.S_ISDIR(found.st_mode) and alone else None
