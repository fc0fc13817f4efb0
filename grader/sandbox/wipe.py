"""Removing what a sandbox wrote, with the grader's authority, without recursion and without following a link.

A sandbox's files are a tree its student shaped: folders a thousand deep (shutil.rmtree recurses, and raises
RecursionError past Python's limit), folders made read-only (0555: nothing in them can be removed by the
sandbox's own uid), links to elsewhere. `clear` empties a folder: each folder found in it is first moved into a
staging folder of the grader's own beside it (made the grader's and closed to others, so nothing else can add to
it), so no walk is ever more than one folder deep and no path longer than two names; then its files are removed,
its folders moved in turn, and the emptied folders removed. Nothing is followed: a link is removed as itself, and
a folder of another file system (a mount, such as the runtime a sandbox's /tmp shows) is never entered.

`clear` says how many entries it left: a caller that needs the space clean treats any as not clean.
"""

from __future__ import annotations

import itertools
import os
import secrets
import stat
from collections.abc import Collection
from pathlib import PurePosixPath

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def clear(top: str, owner: int | None = None, keep: Collection[str] = ()) -> int:
    """Remove every entry of the folder top (only those owned by owner, if given: a folder other users share)
    but the paths in keep (relative to top) and the folders on the way to them; how many entries are left that
    should have gone (0: top is as clean as asked; a top that does not exist is)."""
    kept = {str(PurePosixPath(k)) for k in keep}
    on_the_way = {str(parent) for k in keep for parent in PurePosixPath(k).parents if str(parent) != "."}
    try:
        top_fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return 0
    except OSError:
        return 1
    _writable(top_fd)
    staging = _Staging(top_fd)
    try:
        for _ in range(PASSES):  # the last pass finds nothing, or what could not be removed
            found, gone = _pass(top_fd, staging, owner, kept, on_the_way)
            if found == gone:
                break
        return found - gone + staging.close()
    finally:
        os.close(top_fd)


PASSES = 3
"""A folder's entries are read while some are removed, which may hide others from that reading: another pass
finds them, and a pass that finds nothing ends it."""


def _pass(top_fd: int, staging: _Staging, owner, kept, on_the_way) -> tuple[int, int]:
    """One pass over top and the folders on the way to kept paths: the entries found that should go, and how
    many of them are gone."""
    found = gone = 0
    places = [(top_fd, "")]
    while places:
        fd, here = places.pop()
        try:
            for entry in _entries(fd):
                path = f"{here}{entry.name}"
                if path in kept:
                    continue
                if path in on_the_way:
                    try:
                        places.append((os.open(entry.name, DIRECTORY, dir_fd=fd), f"{path}/"))
                    except OSError:
                        found += 1
                    continue
                if owner is not None and fd == top_fd and _owner(entry) != owner:
                    continue
                found += 1
                gone += staging.remove(fd, entry.name)
        finally:
            if fd != top_fd:
                os.close(fd)
    return found, gone


def remove(path: str) -> bool:
    """Remove path itself, a folder with everything in it or anything else; whether it is gone."""
    parent, name = os.path.split(os.path.normpath(path))
    try:
        parent_fd = os.open(parent or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    staging = _Staging(parent_fd)
    try:
        gone = staging.remove(parent_fd, name)
        return staging.close() == 0 and gone
    finally:
        os.close(parent_fd)


def _entries(fd: int):
    try:
        with os.scandir(fd) as found:
            yield from found
    except OSError:
        return


def _owner(entry: os.DirEntry) -> int | None:
    try:
        return entry.stat(follow_symlinks=False).st_uid
    except OSError:
        return None


class _Staging:
    """A folder of the grader's own inside a tree's parent, where the tree's folders are moved to be emptied,
    made only when a folder is to be removed."""

    def __init__(self, parent_fd: int):
        self.parent_fd = parent_fd
        self.name = f".grader-wipe-{secrets.token_hex(6)}"
        self.fd = -1
        self.dev = os.fstat(parent_fd).st_dev
        self.names = (str(i) for i in itertools.count())

    def _open(self) -> None:
        if self.fd < 0:
            os.mkdir(self.name, 0o700, dir_fd=self.parent_fd)
            self.fd = os.open(self.name, DIRECTORY, dir_fd=self.parent_fd)

    def remove(self, parent_fd: int, name: str) -> bool:
        """Remove the entry name of the folder parent_fd, and everything under it; whether it is gone."""
        try:
            st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(name, dir_fd=parent_fd)
                return True
            if st.st_dev != self.dev:
                return False  # another file system mounted here: never entered
            self._open()
            moved = next(self.names)
            os.rename(name, moved, src_dir_fd=parent_fd, dst_dir_fd=self.fd)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return self._empty(moved)

    def _empty(self, first: str) -> bool:
        """Remove the folder first (in the staging folder) and every folder under it, one level at a time."""
        queue, gone = [first], True
        while queue:
            name = queue.pop()
            try:
                fd = os.open(name, DIRECTORY, dir_fd=self.fd)
            except OSError:
                gone = False
                continue
            try:
                _take(fd)
                for _ in range(PASSES):
                    queue += self._out(fd)
                    try:
                        os.rmdir(name, dir_fd=self.fd)
                        break
                    except OSError:
                        continue
                else:
                    gone = False
            finally:
                os.close(fd)
        return gone

    def _out(self, fd: int) -> list[str]:
        """Unlink the files of the folder fd and move its folders into the staging folder: their names there."""
        moved = []
        for entry in _entries(fd):
            try:
                if entry.is_dir(follow_symlinks=False):
                    name = next(self.names)
                    os.rename(entry.name, name, src_dir_fd=fd, dst_dir_fd=self.fd)
                    moved.append(name)
                else:
                    os.unlink(entry.name, dir_fd=fd)
            except OSError:
                continue
        return moved

    def close(self) -> int:
        """Remove the staging folder; 1 if something was left in it, else 0."""
        if self.fd < 0:
            return 0
        os.close(self.fd)
        try:
            os.rmdir(self.name, dir_fd=self.parent_fd)
            return 0
        except OSError:
            return 1


def _writable(fd: int) -> None:
    """A folder of the grader's own uid (not root: a sandbox that runs as the grader's user), made read-only by the
    sandbox, made writable again by its owner."""
    try:
        st = os.fstat(fd)
        if os.geteuid() != 0 and st.st_uid == os.geteuid() and st.st_mode & 0o700 != 0o700:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) | 0o700)
    except OSError:
        pass


def _take(fd: int) -> None:
    """Make a folder being emptied the grader's, closed to everyone else, so that no process of another user
    that holds it open can add to it meanwhile (and, as its owner, the grader may remove what it holds)."""
    try:
        if os.geteuid() == 0:
            os.fchown(fd, 0, 0)
        os.fchmod(fd, 0o700)
    except OSError:
        pass
