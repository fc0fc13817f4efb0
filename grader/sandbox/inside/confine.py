"""Confine the sandbox's template process before anything else runs, in this order:

1. drop root for the sandbox's own unprivileged uid (when the grader runs as root);
2. turn address randomisation off (re-executing once), so an engine whose order follows
   memory addresses (children in a set) behaves the same on every run;
3. hard resource limits (memory, CPU, file size, open files, processes, no core dumps);
4. no new privileges, and a seccomp filter: no network sockets (only AF_UNIX, and none at all
   where the sandbox has no network namespace of its own, so that no abstract unix socket, which
   has no file and no permission check, reaches another sandbox), no ptrace or reading another
   process's memory, no io_uring; no memfd (memory no process's limit counts); no new session
   (setsid does nothing: the sandbox's processes stay in the one session the grader started it in,
   one scheduling group, so a hundred busy processes get no more CPU than one); 32-bit and x32
   system calls are refused;
5. not dumpable, so no other process of the same uid can read its memory.

Every unit process is forked from the template and inherits all of it; once it has made its
own writable space (spaces.py), it adds a second filter: no namespace of its own (no_namespaces).
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import struct
import sys

PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
ADDR_NO_RANDOMIZE = 0x0040000

_libc = ctypes.CDLL(None, use_errno=True)


def drop_privileges(uid: int) -> None:
    """As root, become uid (and gid uid) with no supplementary groups; capabilities go with root."""
    if os.getuid() == 0 and uid:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise SystemExit("could not drop privileges")


def fix_addresses() -> None:
    """Re-execute this interpreter once with address randomisation off."""
    personality = _libc.personality
    current = personality(0xFFFFFFFF)
    if current == -1 or current & ADDR_NO_RANDOMIZE or os.environ.get("GRADER_REEXEC"):
        return
    if personality(current | ADDR_NO_RANDOMIZE) != -1:
        os.environ["GRADER_REEXEC"] = "1"
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


def apply_limits(limits: dict, processes_in_use: int = 0) -> None:
    mb = 1024 * 1024
    caps = {
        resource.RLIMIT_AS: limits["memory_mb"] * mb,
        resource.RLIMIT_CPU: limits["cpu_s"],  # soft: SIGXCPU, then SIGKILL a second later
        resource.RLIMIT_FSIZE: limits["file_mb"] * mb,
        resource.RLIMIT_NPROC: limits["processes"] + processes_in_use,
        resource.RLIMIT_NOFILE: limits["open_files"],
        resource.RLIMIT_CORE: 0,
    }
    for which, cap in caps.items():
        hard = cap + 1 if which == resource.RLIMIT_CPU else cap
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            cap, hard = min(cap, current_hard), min(hard, current_hard)
        resource.setrlimit(which, (cap, hard))


# Audit architecture and the numbers of the system calls the filter refuses, per machine:
# sockets other than AF_UNIX; reading or writing another process (ptrace, process_vm_*);
# io_uring (it can open sockets past the filter); every kind of state that outlives a
# process and could carry notes from one unit of work to the next (System V IPC, POSIX
# message queues, the per-user keyring); and memfd (memory outside every process's address
# space and every folder). Then the calls it answers "done" without running them: setsid
# (a session of its own would be a scheduling group of its own; a program that asks for one
# goes on in the sandbox's).
_ARCHES = {
    "x86_64": (
        0xC000003E,
        41,
        {
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "io_uring_setup": 425,
            "shmget": 29,
            "semget": 64,
            "msgget": 68,
            "mq_open": 240,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "memfd_create": 319,
        },
        {"setsid": 112},
    ),
    "aarch64": (
        0xC00000B7,
        198,
        {
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "io_uring_setup": 425,
            "shmget": 194,
            "semget": 190,
            "msgget": 186,
            "mq_open": 180,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "memfd_create": 279,
        },
        {"setsid": 157},
    ),
}
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_ALLOW, _ERRNO, _KILL = 0x7FFF0000, 0x00050000, 0x80000000
_EPERM, _EACCES = 1, 13
_X32_BIT = 0x40000000
_AF_UNIX = 1


def _seccomp_program(
    arch: int, socket_nr: int, refused: dict[str, int], pretended: dict[str, int], unix: bool = True
) -> list[bytes]:
    """A classic BPF program: another ABI is killed, refused calls get EPERM, pretended ones return 0 without
    running, socket() only AF_UNIX (with unix), else not at all (socketpair() still makes a connected pair)."""

    def stmt(code, k):
        return struct.pack("HBBI", code, 0, 0, k)

    def jump(code, k, jt, jf):
        return struct.pack("HBBI", code, jt, jf, k)

    # Layout: 0 ld arch, 1 jeq, 2 kill, 3 ld nr, 4 jge x32, 5 jeq socket, 6.. jeq pretended, then jeq refused,
    # allow, deny, pretend, ld domain, jeq AF_UNIX, allow, refuse (EACCES).
    checks = [(number, "pretend") for number in sorted(pretended.values())] + [
        (number, "deny") for number in sorted(refused.values())
    ]
    allow = 6 + len(checks)
    target = {"deny": allow + 1, "pretend": allow + 2}
    socket_check = allow + 3
    program = [
        stmt(_LD_W_ABS, 4),
        jump(_JEQ_K, arch, 1, 0),
        stmt(_RET_K, _KILL),
        stmt(_LD_W_ABS, 0),
        jump(_JGE_K, _X32_BIT, target["deny"] - 5, 0),
        jump(_JEQ_K, socket_nr, (socket_check if unix else target["deny"]) - 6, 0),
    ]
    for i, (number, outcome) in enumerate(checks):
        program.append(jump(_JEQ_K, number, target[outcome] - (6 + i) - 1, 0))
    program += [
        stmt(_RET_K, _ALLOW),
        stmt(_RET_K, _ERRNO | _EPERM),
        stmt(_RET_K, _ERRNO | 0),
        stmt(_LD_W_ABS, 16),
        jump(_JEQ_K, _AF_UNIX, 0, 1),
        stmt(_RET_K, _ALLOW),
        stmt(_RET_K, _ERRNO | _EACCES),
    ]
    return program


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def lock_down(unix_sockets: bool = True) -> list[str]:
    """No new privileges, the seccomp filter (socket() for AF_UNIX only with unix_sockets, else refused), not
    dumpable. Returns what could not be applied."""
    missing = []
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        missing.append("no_new_privs")
    machine = _ARCHES.get(platform.machine())
    if machine is None:
        missing.append(f"seccomp (no filter for {platform.machine()})")
    else:
        program = _seccomp_program(*machine, unix=unix_sockets)
        fprog = _SockFprog(len(program), b"".join(program))
        if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
            missing.append(f"seccomp (errno {ctypes.get_errno()})")
    if _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        missing.append("not dumpable")
    return missing


# What student code may not make: a namespace of its own (in a user namespace of its own it could mount tmpfs no
# limit counts, and mount over what the grader gave it). Per machine: audit architecture, clone, unshare, setns,
# clone3 (whose flags are in memory a filter cannot read: answered ENOSYS, so the C library uses clone instead).
_NAMESPACE_CALLS = {"x86_64": (0xC000003E, 56, 272, 308, 435), "aarch64": (0xC00000B7, 220, 97, 268, 435)}
_NEW_NAMESPACES = 0x7E020080  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME
_JSET_K, _ENOSYS = 0x45, 38


def no_namespaces() -> bool:
    """A second filter, for a unit once its own namespaces are made, before anything else runs: no new namespace
    (clone and unshare with a namespace flag, and setns, get EPERM). Whether it applies."""
    machine = _NAMESPACE_CALLS.get(platform.machine())
    if machine is None:
        return False
    arch, clone, unshare, setns, clone3 = machine

    def stmt(code, k):
        return struct.pack("HBBI", code, 0, 0, k)

    def jump(code, k, jt, jf):
        return struct.pack("HBBI", code, jt, jf, k)

    program = [
        stmt(_LD_W_ABS, 4),  # 0
        jump(_JEQ_K, arch, 0, 5),  # 1: another ABI is the main filter's: allow here (7)
        stmt(_LD_W_ABS, 0),  # 2
        jump(_JEQ_K, clone, 4, 0),  # 3: flags (8)
        jump(_JEQ_K, unshare, 3, 0),  # 4: flags (8)
        jump(_JEQ_K, setns, 5, 0),  # 5: refuse (11)
        jump(_JEQ_K, clone3, 5, 0),  # 6: ENOSYS (12)
        stmt(_RET_K, _ALLOW),  # 7
        stmt(_LD_W_ABS, 16),  # 8: the flags, the first argument's low half
        jump(_JSET_K, _NEW_NAMESPACES, 1, 0),  # 9
        stmt(_RET_K, _ALLOW),  # 10
        stmt(_RET_K, _ERRNO | _EPERM),  # 11
        stmt(_RET_K, _ERRNO | _ENOSYS),  # 12
    ]
    fprog = _SockFprog(len(program), b"".join(program))
    return _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0


def adopt_orphans() -> None:
    """Be the parent of every process of the sandbox whose parent dies (a daemon's double fork included), as
    process 1 of a pid namespace is: the grader then finds them all below the template (PR_SET_CHILD_SUBREAPER)."""
    _libc.prctl(36, 1, 0, 0, 0)


def die_with_parent() -> None:
    """Without a pid namespace, a unit dies when its template does (PR_SET_PDEATHSIG)."""
    import signal

    _libc.prctl(1, signal.SIGKILL, 0, 0, 0)
