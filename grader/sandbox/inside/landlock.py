"""Landlock (Linux 5.13 and later): a process confines itself, and every process it starts, with no privilege.

Without namespaces (a uid of its own where root cannot make them: Docker, and so Gradescope), a sandbox's template
confines what it may write (`writes_only`) before any unit is forked: it may write, make and remove files in its own
folder alone (and write to /dev/null, /dev/zero and /dev/full). Every folder any user may write in (/tmp, /dev/shm,
/var/tmp, a folder another user opened to all) is then read-only to it, so nothing it writes can reach a later unit
outside its own folder, which the grader empties between units, nor a sandbox running beside it, whose folder it
cannot even read. Where the kernel offers it (ABI 6), the same domain is scoped: no process in it can connect or send
to an abstract unix socket made outside it.

Reads are confined in one place only: each unit, forked from the template, adds a layer of its own
(`processes_hidden`) under which it reads every file but those of /proc, of which it reads only its own process's
and the machine's plain facts (cpuinfo, meminfo, stat, sys...); folders it may list everywhere. Every user may read
any process's command line, name and state in /proc, and without a process namespace the processes of every sandbox
running beside it are there; under this layer none is. What else a uid of its own may read is the uid's to decide,
and the grader checks it.
"""

from __future__ import annotations

import ctypes
import os

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
"""The system calls' numbers, the same on every architecture (they came after the tables were unified)."""
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1

READ_FILE, READ_DIR = 1 << 2, 1 << 3
WRITE_FILE = 1 << 1
REMOVE_DIR, REMOVE_FILE = 1 << 4, 1 << 5
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = (1 << n for n in range(6, 13))
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")
"""Files any process may write to (the template's stdout and stderr are /dev/null), and where terminals are made (a
notebook's shell commands run in one)."""
FACTS = ("cpuinfo", "meminfo", "stat", "version", "loadavg", "uptime", "filesystems", "sys", "self")
"""What a unit may read of /proc: the machine's plain facts, and its own process (self, as it resolves in the unit)."""

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _Ruleset(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    """The Landlock ABI this kernel offers to this process (0: none: too old, not enabled, or refused)."""
    found = _libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(found), 0)


def _writes(version: int) -> int:
    """Every access right that writes, as this ABI names them."""
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
    rights |= MAKE_BLOCK | MAKE_SYM
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


def writes_only(folder: str) -> list[str]:
    """Confine this process, and every process it starts, to writing in folder (and to DEVICES): with no_new_privs
    set first (it needs it, or CAP_SYS_ADMIN). Returns what could not be applied (empty: all of it)."""
    version = abi()
    if version < 1:
        return [f"landlock (not offered: errno {ctypes.get_errno()})"]
    writes = _writes(version)
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET if version >= 6 else 0
    ruleset = _Ruleset(writes, 0, scoped)
    size = ctypes.sizeof(_Ruleset) if scoped else 8  # an older kernel reads only the first field
    fd = _libc.syscall(CREATE_RULESET, ctypes.byref(ruleset), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        return [f"landlock (errno {ctypes.get_errno()})"]
    try:
        file_rights = WRITE_FILE | (TRUNCATE if version >= 3 else 0)
        for path, allowed in ((folder, writes), *((device, file_rights) for device in DEVICES)):
            if not _allow(fd, path, allowed) and path == folder:
                return [f"landlock (its folder: errno {ctypes.get_errno()})"]
        if _libc.syscall(RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            return [f"landlock (errno {ctypes.get_errno()})"]
    finally:
        os.close(fd)
    return []


def processes_hidden() -> list[str]:
    """In a unit, before anything else runs: a layer under which it reads everything but other processes in /proc
    (their command lines, names and states). Returns what could not be applied (empty: all of it)."""
    version = abi()
    if version < 1:
        return [f"landlock (not offered: errno {ctypes.get_errno()})"]
    reads = READ_FILE | READ_DIR
    ruleset = _Ruleset(reads, 0, 0)
    fd = _libc.syscall(CREATE_RULESET, ctypes.byref(ruleset), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if fd < 0:
        return [f"landlock (errno {ctypes.get_errno()})"]
    try:
        _allow(fd, "/", READ_DIR)  # folders may be listed everywhere: /proc's lists pids, which stat() tells anyway
        for entry in os.scandir("/"):
            if entry.name != "proc":
                _allow(fd, entry.path, reads if entry.is_dir() else READ_FILE)
        for fact in FACTS:
            _allow(fd, f"/proc/{fact}", reads if os.path.isdir(f"/proc/{fact}") else READ_FILE)
        if _libc.syscall(RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            return [f"landlock (errno {ctypes.get_errno()})"]
    finally:
        os.close(fd)
    return []


def _allow(ruleset: int, path: str, allowed: int) -> bool:
    """Grant the rights beneath path (a file: on it); whether the rule was added."""
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        rule = _PathBeneath(allowed, target)
        return (
            _libc.syscall(
                ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)
            )
            == 0
        )
    finally:
        os.close(target)
