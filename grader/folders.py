"""Folders someone else made, walked and removed within bounds, without recursion and through no link.

A student chooses the shape of every tree the grader's own process walks or removes: a class folder
unpacked by the instructor, a zip extracted into a batch's staging folder, Gradescope's submission
folder. Python 3.11's `os.walk` and `shutil.rmtree` recurse once per level, so a tree a thousand
folders deep (a few files are enough to make one) raises RecursionError, which no caller expects:
the batch stopped with nobody graded and its staging folder left in /tmp. Here:

- `walk` goes breadth first with a queue, no deeper than `depth` and no further than `entries`,
  never into a link, and says whether it stopped early;
- `remove_tree` removes a tree depth first with a stack of names, holding one folder open at a
  time (a tree deeper than the limit of open files is removed too), never following a link;
- `temporary_folder` is tempfile.TemporaryDirectory with that removal at the end.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

MAX_DEPTH = 40
"""The deepest a student's folders are read, below the folder walked (a submission is a few files deep)."""
MAX_ENTRIES = 10_000
"""The most entries read under one student's folder (as from one zip)."""

_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Walk:
    """A bounded walk of a folder: iterate for (folder, its sub-folders, its files, depth), top down, like
    os.walk; a caller may prune the sub-folders list. Links (to files or folders) are listed in `links`,
    never entered; anything that is neither a folder nor a regular file is left out."""

    top: Path
    depth: int = MAX_DEPTH
    entries: int = MAX_ENTRIES
    too_deep: int = 0
    """Folders not entered, being deeper than `depth`."""
    cut: bool = False
    """The walk stopped at `entries`."""
    links: list[Path] = field(default_factory=list)

    def __iter__(self) -> Iterator[tuple[Path, list[str], list[str], int]]:
        queue = deque([(self.top, 0)])
        seen = 0
        while queue:
            folder, level = queue.popleft()
            dirs, files = [], []
            try:
                with os.scandir(folder) as it:
                    for entry in it:
                        seen += 1
                        if seen > self.entries:
                            self.cut = True
                            break
                        kind = entry.stat(follow_symlinks=False).st_mode
                        if stat.S_ISLNK(kind):
                            self.links.append(folder / entry.name)
                        elif stat.S_ISDIR(kind):
                            dirs.append(entry.name)
                        elif stat.S_ISREG(kind):
                            files.append(entry.name)
            except OSError:
                continue
            dirs.sort()
            files.sort()
            yield folder, dirs, files, level
            if self.cut:
                return
            if level >= self.depth:
                self.too_deep += len(dirs)
                continue
            queue.extend((folder / name, level + 1) for name in dirs)


def count_files(folder: Path, depth: int = MAX_DEPTH, entries: int = MAX_ENTRIES) -> str:
    """How many files are under a folder, as a note says it ('12', 'more than 10,000'), within bounds."""
    walk = Walk(folder, depth, entries)
    count = sum(len(files) for _, _, files, _ in walk)
    return f"more than {count:,}" if walk.cut or walk.too_deep else f"{count:,}"


def remove_tree(path: Path) -> bool:
    """Remove `path` and everything under it, never raising; True when nothing is left. A link is removed,
    never followed. Depth first with a stack of names and one folder open at a time: a child is reached
    by name from its parent's descriptor and the parent again through '..', checked to be the same folder
    (device and inode), so nothing is removed outside the tree whatever is moved meanwhile."""
    opened = _open_top(path)
    if isinstance(opened, bool):
        return opened
    at = _OpenFolder(opened)
    try:
        whole = _empty_tree(at)
    except OSError:
        return False
    finally:
        os.close(at.fd)
    if whole is None:
        return False
    try:
        os.rmdir(path)
    except OSError:
        return False
    return whole


def _open_top(path: Path) -> int | bool:
    """The folder at path opened (its descriptor), or, for anything else, whether nothing is left there (a file or
    a link removed, nothing there at all)."""
    try:
        return os.open(path, _OPEN)
    except FileNotFoundError:
        return True
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            return False
        try:
            os.unlink(path)
            return True
        except OSError:
            return False


@dataclass
class _OpenFolder:
    """The one folder remove_tree holds open."""

    fd: int

    def move_to(self, fd: int) -> None:
        os.close(self.fd)
        self.fd = fd


def _empty_tree(at: _OpenFolder) -> bool | None:
    """Remove everything under the open folder, leaving it open again at the end; whether every removal worked,
    or None if the tree was moved meanwhile (removal stopped there)."""
    info = os.fstat(at.fd)
    folders, whole = _empty_files(at.fd)
    stack = [((info.st_dev, info.st_ino), "", folders)]
    while stack:
        _, _, pending = stack[-1]
        if pending:
            name = pending.pop()
            try:
                child = os.open(name, _OPEN, dir_fd=at.fd)
            except OSError:
                whole = _unlink(at.fd, name) and whole  # a link or a file put in its place since
                continue
            at.move_to(child)
            info = os.fstat(at.fd)
            folders, emptied = _empty_files(at.fd)
            whole = whole and emptied
            stack.append(((info.st_dev, info.st_ino), name, folders))
            continue
        _, name, _ = stack.pop()
        if not stack:
            break
        at.move_to(os.open("..", _OPEN, dir_fd=at.fd))
        info = os.fstat(at.fd)
        if (info.st_dev, info.st_ino) != stack[-1][0]:  # the tree was moved under us: stop here
            return None
        try:
            os.rmdir(name, dir_fd=at.fd)
        except OSError:
            whole = False
    return whole


def _empty_files(fd: int) -> tuple[list[str], bool]:
    """Unlink everything in the open folder but its sub-folders; (their names, whether every unlink worked)."""
    folders, whole = [], True
    with os.scandir(fd) as it:
        entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in it]
    for name, is_dir in entries:
        if is_dir:
            folders.append(name)
        else:
            whole = _unlink(fd, name) and whole
    return folders, whole


def _unlink(fd: int, name: str) -> bool:
    try:
        os.unlink(name, dir_fd=fd)
        return True
    except FileNotFoundError:
        return True
    except PermissionError:  # a folder left read-only: ours to make writable again
        try:
            os.fchmod(fd, 0o700)
            os.unlink(name, dir_fd=fd)
            return True
        except OSError:
            return False
    except OSError:
        return False


@contextmanager
def temporary_folder(prefix: str) -> Iterator[Path]:
    """A new private folder in the system's temporary folder, removed (remove_tree) when the block ends."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        remove_tree(path)
