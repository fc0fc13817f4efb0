"""Writable space no earlier unit of work touched, and (without bubblewrap) no other sandbox sees.

`fresh` runs in each unit, right after the template forks it and before anything else: it makes a user and
mount namespace of the unit's own (no privilege needed where the kernel lets any process make them), mounts a
new size-capped tmpfs over each writable folder (/tmp and /dev/shm), and gives up every capability the new
namespace gave it. Whatever an earlier unit left there (a read-only folder of notes, a socket file, a tree a
thousand folders deep) is under those mounts, out of its reach, and the unit's own vanish with its last process.

`private` runs in the template of a sandbox without bubblewrap, as root, before it drops to the sandbox's uid:
the sandbox gets a mount and network namespace of its own, so its /tmp and /dev/shm are tmpfs no other sandbox
sees, every other folder any user may write in is covered by an empty read-only one, its abstract unix
sockets (which have no file, and no permission check) reach no other sandbox's, and its /proc shows only its own
processes.

A path to keep (the runtime, where it lives under /tmp) is held open before the mounts and bound back in place.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_DUMPABLE = 4
CAPABILITY_VERSION_3 = 0x20080522
INODES = 16384
"""Files and folders one tmpfs may hold: what a unit can make, and what a cleaning could have to remove."""

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(
        _libc.mount(
            source.encode(), target.encode(), fstype and fstype.encode(), flags, data and data.encode() or None
        ),
        f"mount on {target}",
    )


def _cover(spaces: list, keep: list[str]) -> None:
    """A new tmpfs over each space ([path, bytes, read_only]) that exists, and each kept path bound back in place."""
    held = [(path, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path in keep]  # before the mounts hide them
    covered = []
    for path, size, read_only in spaces:
        if os.path.isdir(path):  # not one inside a space covered already
            mode = "0755" if read_only else "1777"
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},nr_inodes={INODES},mode={mode}")
            covered.append((path, read_only))
    for path, fd in held:
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    for path, read_only in covered:
        if read_only:
            _mount("none", path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def private(spaces: list, keep: list[str]) -> str:
    """As root, before dropping to the sandbox's uid: a mount and network namespace of the sandbox's own (raises
    OSError where they cannot be made), and in it a /proc of its own that shows no other sandbox's processes. Returns
    what could not be applied of the latter (empty: all of it)."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET), "unshare")
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    _cover(spaces, keep)
    try:
        _own_processes_only()
    except OSError as exc:
        return f"processes hidden ({exc.strerror or exc})"[:80]
    return ""


def _own_processes_only() -> None:
    """A new /proc over the machine's, showing only the processes this uid may inspect: a sandbox's uid sees no other
    sandbox's (their command lines, names and states, which every user may read in the machine's /proc), nor the
    grader's. hidepid=invisible is Linux 5.8's, where each mount of /proc has options of its own; an older kernel
    refuses the word (a numeric hidepid there would change every /proc on the machine, so none is tried)."""
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")


def fresh(spaces: list, keep: list[str]) -> None:
    """In a unit, before anything else: new writable space of its own (raises OSError where it cannot be made)."""
    uid, gid = os.getuid(), os.getgid()
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # a process's /proc/self/*_map are its own only while it is dumpable
    try:
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    finally:
        _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    _cover(spaces, keep)
    _drop_capabilities()


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    """Give up the capabilities a new user namespace gives its maker (they could mount over what the unit sees)."""
    header, data = _CapHeader(CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")
