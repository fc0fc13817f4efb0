"""Confine the sandbox's template process before anything else runs, in this order:

1. drop root for the sandbox's own unprivileged uid (when the grader runs as root);
2. turn address randomisation off (re-executing once), so an engine whose order follows
   memory addresses (children in a set) behaves the same on every run;
3. hard resource limits (memory, CPU, file size, open files, processes, no core dumps);
4. no new privileges, and a seccomp filter: no network sockets (only AF_UNIX; where the sandbox has
   no network namespace of its own, no unix socket it could name either: no socket(), bind() or
   connect(), and socketpair() for stream and seqpacket pairs only, so that no abstract unix socket,
   which has no file and no permission check, reaches another sandbox), no ptrace or reading another
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
# goes on in the sandbox's). Then the calls that name a unix socket, refused where the sandbox shares the
# machine's network namespace (_UNNAMED), and socketpair, whose type is checked there.
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
        {"bind": 49, "connect": 42},
        53,
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
        {"bind": 200, "connect": 203},
        199,
    ),
}
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K, _AND_K = 0x20, 0x15, 0x35, 0x06, 0x54
_ALLOW, _ERRNO, _KILL = 0x7FFF0000, 0x00050000, 0x80000000
_EPERM, _EACCES = 1, 13
_X32_BIT = 0x40000000
_AF_UNIX = 1
_SOCK_TYPE_MASK, _SOCK_STREAM, _SOCK_SEQPACKET = 0xF, 1, 5
_ARG0, _ARG1 = 16, 24
"""Where the low half of a call's first and second arguments are in seccomp's data (little-endian machines)."""


def _assembled(code: list) -> list[bytes]:
    """Classic BPF from a list of labels (str) and instructions (code, k, jump if true, jump if false), whose jumps
    name a label (or 0: the next instruction)."""
    at, count = {}, 0
    for item in code:
        if isinstance(item, str):
            at[item] = count
        else:
            count += 1
    program, index = [], 0
    for item in code:
        if isinstance(item, str):
            continue
        op, k, jt, jf = item
        offsets = [at[j] - index - 1 if isinstance(j, str) else j for j in (jt, jf)]
        if not all(0 <= offset < 256 for offset in offsets):
            raise ValueError(f"a jump of instruction {index} goes back or too far: {offsets}")
        program.append(struct.pack("HBBI", op, offsets[0], offsets[1], k))
        index += 1
    return program


def _seccomp_program(machine: tuple, unix: bool = True) -> list[bytes]:
    """A classic BPF program: another ABI is killed, refused calls get EPERM, pretended ones return 0 without
    running, socket() only AF_UNIX (with unix). Without unix (a sandbox in the machine's network namespace, where an
    abstract unix socket, which has no file and no permission check, could reach any other sandbox) no call may
    name a unix socket: socket(), bind() and connect() are refused, and socketpair() makes only stream and seqpacket
    pairs (a datagram end, its pair dissolved, could be bound to a name and send to any other)."""
    arch, socket_nr, refused, pretended, naming, socketpair_nr = machine
    refused = {**refused, **({} if unix else naming)}
    code: list = [
        (_LD_W_ABS, 4, 0, 0),
        (_JEQ_K, arch, 1, 0),
        (_RET_K, _KILL, 0, 0),
        (_LD_W_ABS, 0, 0, 0),
        (_JGE_K, _X32_BIT, "deny", 0),
        (_JEQ_K, socket_nr, "socket" if unix else "deny", 0),
        (_JEQ_K, socketpair_nr, "allow" if unix else "socketpair", 0),
    ]
    code += [(_JEQ_K, number, "pretend", 0) for number in sorted(pretended.values())]
    code += [(_JEQ_K, number, "deny", 0) for number in sorted(refused.values())]
    code += [
        "allow",
        (_RET_K, _ALLOW, 0, 0),
        "deny",
        (_RET_K, _ERRNO | _EPERM, 0, 0),
        "pretend",
        (_RET_K, _ERRNO | 0, 0, 0),
        "socket",
        (_LD_W_ABS, _ARG0, 0, 0),
        (_JEQ_K, _AF_UNIX, 0, 1),
        (_RET_K, _ALLOW, 0, 0),
        (_RET_K, _ERRNO | _EACCES, 0, 0),
        "socketpair",
        (_LD_W_ABS, _ARG1, 0, 0),
        (_AND_K, _SOCK_TYPE_MASK, 0, 0),
        (_JEQ_K, _SOCK_STREAM, 2, 0),
        (_JEQ_K, _SOCK_SEQPACKET, 1, 0),
        (_RET_K, _ERRNO | _EPERM, 0, 0),
        (_RET_K, _ALLOW, 0, 0),
    ]
    return _assembled(code)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def lock_down(unix_sockets: bool = True) -> list[str]:
    """No new privileges, the seccomp filter (socket() for AF_UNIX only with unix_sockets, else no unix socket that
    could be named: _seccomp_program), not dumpable. Returns what could not be applied."""
    missing = []
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        missing.append("no_new_privs")
    machine = _ARCHES.get(platform.machine())
    if machine is None:
        missing.append(f"seccomp (no filter for {platform.machine()})")
    else:
        program = _seccomp_program(machine, unix=unix_sockets)
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
