"""Unprivileged uids for sandboxes, unique across every grader on the machine.

A uid is leased by taking an exclusive lock (flock) on its file in a folder only root
can write. The kernel drops the lock when the grader holding it exits, however it
exits, so a crashed grader never leaks a uid, and two graders (or two sandboxes of one
grader) never share one. On taking a lease, and again on giving it back, every process
still running as that uid is killed and every file it left in the machine's shared
writable folders is removed: what one sandbox leaves, the next never sees. Cleanup
only ever touches the leased uid, so a grader never kills another grader's processes.

The shared writable folders are found, not listed: every root-owned folder any user may
write in (/tmp, /var/tmp, /dev/shm, /run/lock, /var/crash, /var/lib/php/sessions... as
this machine has them), found once per grader by a walk of the file system that enters
only folders other users can enter (the only ones a sandbox's uid can reach).
"""

from __future__ import annotations

import fcntl
import functools
import os
import pwd
import secrets
import signal
import stat
import time
from pathlib import Path

from grader.errors import NoUid
from grader.sandbox import wipe

FIRST_UID = 200_000
SPAN = 100_000
LOCK_DIRS = (Path("/run/micrograd-grader/uids"), Path("/var/lock/micrograd-grader/uids"))
SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")
"""Always watched and cleaned, whatever the walk finds."""
WALK_DEPTH = 6
"""How deep the walk for shared writable folders goes (/var/lib/php/sessions is 4 deep)."""
NOT_WALKED = ("/proc", "/sys")


def _lock_dir() -> Path:
    for folder in LOCK_DIRS:
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(folder, 0o700)
            if folder.stat().st_uid == 0:
                return folder
        except OSError:
            continue
    raise NoUid(
        "no sandbox can run as a uid of its own: no folder for the uid locks could be made "
        f"({' or '.join(map(str, LOCK_DIRS))}, owned by root); make /run or /var/lock writable by root"
    )


class Lease:
    """A uid of our own for as long as the lease is held (use as a context manager)."""

    def __init__(self, uid: int, fd: int, shared: bool = True):
        self.uid = uid
        self._fd = fd
        self.shared = shared

    def release(self) -> None:
        if self._fd < 0:
            return
        sweep(self.uid, self.shared)
        os.close(self._fd)  # drops the lock
        self._fd = -1

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def lease(attempts: int = 2000, shared: bool = True) -> Lease:
    """Lease a uid that no other sandbox on this machine is using. shared: whether its processes can reach the
    machine's shared writable folders (without bubblewrap), where what it wrote is removed with its lease."""
    folder = _lock_dir()
    start = secrets.randbelow(SPAN)
    for i in range(attempts):
        uid = FIRST_UID + (start + i * 7919) % SPAN  # a stride prime to the span visits distinct uids
        if _is_account(uid):
            continue
        fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        sweep(uid, shared)  # whatever a crashed grader left running or written as this uid
        return Lease(uid, fd, shared)
    raise NoUid(
        f"no sandbox can run as a uid of its own: every uid from {FIRST_UID} to {FIRST_UID + SPAN - 1} is "
        "in use; wait for the other graders on this machine to finish"
    )


def _is_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def processes_of(uid: int, *, skip: frozenset[int] = frozenset()) -> list[int]:
    """Live processes running as uid (a zombie is already dead: it only waits for its parent)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) not in skip:
            try:
                if entry.stat().st_uid != uid:
                    continue
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in (b"Z", b"X"):
                found.append(int(entry.name))
    return found


def kill_uid(uid: int, *, skip: frozenset[int] = frozenset()) -> bool:
    """Kill every process running as uid (but those in skip), until none is left; whether none is."""
    return kill_until_gone(lambda: processes_of(uid, skip=skip))


def kill_until_gone(find) -> bool:
    """SIGKILL every process find() lists, and again, until it lists none (a process may fork while it is
    killed); at most 100 rounds. Whether it lists none."""
    for _ in range(100):
        pids = find()
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)
    return not find()


def sweep(uid: int, shared: bool = True) -> None:
    """Kill the uid's processes and (shared) remove what it wrote in the machine's shared writable folders. A
    sandbox of bubblewrap's sees none of them (its /tmp and /dev/shm are its own): finding them all, a walk of
    the machine's folders, cost every `grader check` 70 ms for nothing."""
    kill_uid(uid)
    for top in shared_writable() if shared else ():
        remove_owned(Path(top), uid)


@functools.cache
def shared_writable() -> tuple[str, ...]:
    """Every root-owned folder of this machine that any user may write in (sandboxes' own excluded)."""
    found = {top for top in SHARED_WRITABLE if os.path.isdir(top)}
    stack = [("/", 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.path in NOT_WALKED or not entry.is_dir(follow_symlinks=False):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not st.st_mode & 0o001:
                continue  # other users cannot enter it, so a sandbox's uid cannot reach what is inside
            if st.st_mode & 0o002 and st.st_uid == 0:
                found.add(entry.path)
            if depth + 1 < WALK_DEPTH:
                stack.append((entry.path, depth + 1))
    return tuple(sorted(found))


def remove_owned(top: Path, uid: int) -> int:
    """Remove what uid has at the top of a folder other users share, and everything under it (without recursion:
    grader/sandbox/wipe.py); how many of its entries are left."""
    return wipe.clear(str(top), owner=uid)


def owned_bytes(top: str | Path, uid: int, limit: int) -> int:
    """Bytes held by the uid's files at the top of a folder, and everything under its own folders there
    (stopping once past limit). One folder is open at a time, entered from the one above it and left by its "..",
    never named by a path (which a deep tree makes longer than any path may be): a tree 1,500 deep costs one
    open folder, and no recursion."""
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return 0
    total, levels = 0, [_names(fd)]
    try:
        while levels and total <= limit:
            if not levels[-1]:
                levels.pop()
                if levels:  # back up to the folder above (a process that moved this one moves where the count goes)
                    up = _open_folder(fd, "..")
                    os.close(fd)
                    fd = up
                    if fd < 0:
                        break
                continue
            name = levels[-1].pop()
            held = _held(fd, name, uid)
            if held is not None:
                total += held
                continue
            inner = _open_folder(fd, name)
            if inner >= 0:
                os.close(fd)
                fd = inner
                levels.append(_names(fd))
        return total
    finally:
        if fd >= 0:
            os.close(fd)


def _held(fd: int, name: str, uid: int) -> int | None:
    """The bytes the entry `name` of folder fd holds if it is a file of uid's; None for a folder of uid's (to
    count inside); 0 for anything else."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return 0
    if st.st_uid != uid:
        return 0
    if not stat.S_ISDIR(st.st_mode):
        return st.st_blocks * 512
    return None


def _names(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except OSError:
        return []


def _open_folder(fd: int, name: str) -> int:
    """The folder name of the folder fd, opened; -1 if it cannot be."""
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return -1


def unlinked_bytes(pids: list[int]) -> int:
    """Bytes of the files these processes hold open that no folder names any more (deleted, or made
    nameless): a disk, or in /dev/shm memory, that no walk of the folders finds."""
    total, seen = 0, set()
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if st.st_nlink == 0 and stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total
