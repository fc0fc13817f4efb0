"""Reading a student's files and writing the grader's outputs, without being steered by links.

A student controls the folder the grader reads (on Gradescope, /autograder/submission; a
TA's `grader check` in the student's folder), and in the second case the folder it writes
into. A symbolic link there would hand the grader, which may run as root, another file to
read (the reference engine, the assignment's secret, a classmate's work) or to overwrite.

- A student's file is opened with O_NOFOLLOW in its folder (the one the caller chose; the
  Gradescope autograder never enters a folder that is a link); the descriptor must be a
  regular file (fstat) under a size cap, and the bytes come from that descriptor, never from
  opening the name again. O_NONBLOCK keeps a named pipe from holding the grader.
- An output is written whole or not at all: a temporary file in its folder, synced, renamed
  over the final name (a rename replaces a link, it never writes through one). A final name
  that is a link is refused, as is a link in place of a folder the grader chose itself
  (reports/ in a student's folder); the folders a user names are theirs to choose.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from grader.errors import Refused, UsageError

MAX_READ_BYTES = 20 * 2**20
"""Largest student file read (as the batch's largest file taken from an archive or a folder)."""

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def read_regular(path: Path, *, limit: int = MAX_READ_BYTES) -> bytes:
    """The bytes of a regular file that is not a link. FileNotFoundError if it does not exist; Refused
    for a link, a folder, a pipe or device, a file too large, or one that cannot be read."""
    shown = path.name
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = _open_nofollow(folder, shown)
    finally:
        os.close(folder)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise Refused(f"{shown} is a folder, not a file: hand in the file itself")
        if not stat.S_ISREG(info.st_mode):
            raise Refused(
                f"{shown} is not a regular file (a named pipe, a device or a socket): hand in the file itself"
            )
        if info.st_size > limit:
            raise Refused(
                f"{shown} is {info.st_size:,} bytes, more than the {limit:,} the grader reads: hand in only your code"
            )
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise Refused(f"{shown} grew past {limit:,} bytes while it was read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_nofollow(folder: int, name: str) -> int:
    link = Refused(f"{name} is a symbolic link; hand in the file itself")
    try:
        if stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
            raise link
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except (FileNotFoundError, Refused):
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # made a link after the look: still not followed
            raise link from None
        raise Refused(f"{name} cannot be read: {exc.strerror}") from None


def refuse_links(path: Path, base: Path | None = None) -> None:
    """UsageError if `path`, or a folder on the way below `base` (default: its own folder), is a link:
    the check a command makes before its work, so that it does not grade only to refuse to write."""
    base = path.parent if base is None else base
    here = base
    for part in path.relative_to(base).parts:
        here = here / part
        if here.is_symlink():
            raise UsageError(_refusal(here))
        if not here.exists():
            return
    if not here.is_file():  # a folder, or a device such as /dev/null: renaming over it would replace it
        raise UsageError(_refusal(here, _kind(here.stat().st_mode)))


def atomic_write(path: Path, data: str | bytes, *, mode: int = 0o600, base: Path | None = None) -> None:
    """Write a whole file or nothing: a temporary file beside it (created with `mode`, less the umask),
    synced, then renamed over `path`. Every folder below `base` (default: the file's own, created if
    missing) must be a real folder, and `path` must not be a link: UsageError naming it otherwise."""
    base = path.parent if base is None else base
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    here = base
    try:
        for part in path.parent.relative_to(base).parts:
            here = here / part
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                raise UsageError(_refusal(here))
            try:
                inner = os.open(part, _FOLDER, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UsageError(_refusal(here, "not a folder")) from None
                raise
            os.close(fd)
            fd = inner
        _write_in(fd, path, data.encode("utf-8") if isinstance(data, str) else data, mode)
    finally:
        os.close(fd)


def _write_in(folder: int, path: Path, data: bytes, mode: int) -> None:
    try:
        kind = os.stat(path.name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        kind = stat.S_IFREG
    if not stat.S_ISREG(kind):
        raise UsageError(_refusal(path, _kind(kind)))
    tmp = f".{path.name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder)
        except OSError:
            pass
        raise
    os.fsync(folder)  # the rename itself outlives a crash


def _kind(mode: int) -> str:
    """What a path that is not a regular file is, in a few words."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a device, pipe or socket, not a regular file"


def _refusal(path: Path, kind: str = "a symbolic link") -> str:
    return (
        f"{path} is {kind}; the grader writes only regular files and never through a link: remove it, "
        "or name another output"
    )
