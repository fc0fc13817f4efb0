"""A sandbox's writable space: what the grader tells its template, and how the grader empties it where it must.

Two kinds:

- tmpfs of the sandbox's own (bubblewrap's; without it, as root, a mount namespace of the sandbox's own, where
  every other folder any user may write in is covered by an empty read-only one): /tmp, capped at the disk limit,
  and /dev/shm. Each unit covers both with new ones of its own (inside/spaces.py), so no unit sees what an earlier
  one left; where a unit cannot, the grader empties the template's through its root (/proc/<pid>/root).
- no namespaces (a uid of its own in Docker, and so on Gradescope; a plain process): the sandbox's folder on the
  host, and (a uid without Landlock: inside/landlock.py, else it writes in its folder alone) what it has in the
  machine's shared writable folders, which the grader empties between units and after them.

Emptying is wipe.py's: with the grader's authority, without recursion, and it says what it could not remove.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox import isolation, uids, wipe
from grader.sandbox.limits import SandboxLimits

SHM = "/dev/shm"
COVER_BYTES = 4096
"""The size of the empty read-only tmpfs over a shared writable folder (nothing can be written there)."""


@dataclass(frozen=True)
class Space:
    own: bool
    """/tmp and /dev/shm are tmpfs of the sandbox's own (else it writes on the host)."""
    scratch: str
    """Where HOME, TMPDIR and each unit's working folder are, as the sandbox sees them."""
    units: tuple[tuple[str, int, bool], ...]
    """What each unit covers with new tmpfs of its own: (path, bytes, read-only)."""
    private: tuple[tuple[str, int, bool], ...]
    """Without bubblewrap, as root: what the template covers, in a mount namespace of the sandbox's own."""
    keep: tuple[str, ...]
    """Paths the sandbox needs under a covered folder (a runtime under /tmp), bound back in place."""
    uid: int | None
    """The sandbox's uid, whose entries in the machine's shared writable folders are its (no namespaces)."""


def describe(iso: isolation.Isolation, limits: SandboxLimits, scratch: Path, needed: list[str], uid: int) -> Space:
    """The writable space of a sandbox: scratch is its folder on the host; needed, the paths it must see."""
    own_tmp = ((isolation.SANDBOX_TMP, limits.disk_mb << 20, False), (SHM, isolation.SHM_MB << 20, False))
    private: tuple[tuple[str, int, bool], ...] = ()
    if iso.mode == "uid" and iso.namespaces:
        private = own_tmp + tuple(
            (top, COVER_BYTES, True) for top in uids.shared_writable() if top not in (isolation.SANDBOX_TMP, SHM)
        )
    own = iso.bwrap is not None or bool(private)
    covered = [path for path, _, _ in (private or own_tmp)] if own else []
    keep = tuple(sorted(p for p in needed if any(_under(p, c) for c in covered)))
    return Space(
        own,
        isolation.SANDBOX_TMP if own else str(scratch),
        own_tmp if own and iso.namespaces else (),
        private,
        keep,
        uid if iso.mode == "uid" and not own else None,
    )


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def empty(space: Space, template: int | None, scratch: Path) -> int:
    """Empty the sandbox's writable space with the grader's authority: its own tmpfs through its template's root
    (template: that process's pid here), else its folder on the host and its uid's entries in the machine's
    shared writable folders. How many entries are left that should have gone (the sandbox is then not clean)."""
    if space.own:
        if template is None:
            return 1
        root = f"/proc/{template}/root"
        return sum(
            wipe.clear(root + path, keep=[os.path.relpath(k, path) for k in space.keep if _under(k, path)])
            for path in (isolation.SANDBOX_TMP, SHM)
        )
    left = wipe.clear(str(scratch))
    if space.uid is not None:
        left += sum(uids.remove_owned(Path(top), space.uid) for top in uids.shared_writable())
    return left
