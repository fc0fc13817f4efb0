"""Operating-system isolation for worker processes: bubblewrap namespaces and uids.

With bubblewrap, a worker sees only the Python installation (read-only), its own
working directory (mounted at /sandbox) and an empty /tmp; it has no network, its own
process and IPC namespaces, and dies with the grader. Without it (a laptop without user
namespaces) the worker runs as a plain process with the same limits, after a one-line
warning. As root, every sandbox gets its own unprivileged uid, so RLIMIT_NPROC holds,
file permissions protect, and every process it leaves behind can be found and killed.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

SANDBOX_DIR = "/sandbox"
WORKER_PATH = "/opt/grader/worker.py"
UID_BASE = 200_000
UID_SPAN = 100_000


@dataclass(frozen=True)
class Command:
    argv: list[str]
    cwd: str


def sandbox_uid(serial: int) -> int | None:
    """A uid no other sandbox of any grader process on this machine uses at the same time."""
    if os.getuid() != 0:
        return None
    if bubblewrap() is None and not all(_others_can_enter(root) for root in _python_roots()):
        _warn("Python is installed where an unprivileged user cannot read it; student code runs as root")
        return None
    return UID_BASE + (os.getpid() * 1000 + serial) % UID_SPAN


def hand_over(workdir: Path, uid: int | None) -> None:
    """Give the working directory to the sandbox's uid, private to it."""
    if uid is None:
        return
    for path in [workdir, *workdir.iterdir()]:
        os.chown(path, uid, uid)
    workdir.chmod(0o700)


def kill_uid(uid: int | None) -> None:
    """Kill every process still running as the sandbox's uid (children that escaped the group)."""
    if uid is None:
        return
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                os.kill(int(entry.name), signal.SIGKILL)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue


@functools.cache
def bubblewrap() -> str | None:
    """The bwrap binary if it can actually create a sandbox here, else None (warning once)."""
    path = "/usr/bin/bwrap" if os.path.exists("/usr/bin/bwrap") else None
    if os.environ.get("GRADER_NO_BWRAP"):
        path = None
    if path:
        probe = subprocess.run([path, *_mounts(), *_namespaces(), "--", "/bin/true"], capture_output=True)
        if probe.returncode == 0:
            return path
        reason = probe.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["unknown error"]
    else:
        reason = ["bubblewrap (bwrap) is not installed"]
    _warn(f"no namespace sandbox ({reason[0]}); student code runs with resource limits only")
    return None


@functools.cache
def _warn(message: str) -> None:
    print(f"grader: warning: {message}", file=sys.stderr)


def _others_can_enter(path: str) -> bool:
    return all(os.stat(p).st_mode & 0o001 for p in [path, *map(str, Path(path).parents)])


def wrap(argv: list[str], workdir: Path, worker: Path) -> Command:
    """The command line that runs argv (a worker) isolated, with workdir as its cwd."""
    bwrap = bubblewrap()
    if bwrap is None:
        return Command(argv, str(workdir))
    inside = [WORKER_PATH if arg == str(worker) else arg.replace(str(workdir), SANDBOX_DIR) for arg in argv]
    return Command(
        [
            bwrap,
            *_mounts(),
            "--bind", str(workdir), SANDBOX_DIR,
            "--perms", "0755", "--dir", "/opt",
            "--ro-bind", str(worker.parent), os.path.dirname(WORKER_PATH),  # the worker and its probes
            *_masks(),
            "--setenv", "HOME", SANDBOX_DIR,
            *_namespaces(),
            "--",
            *inside,
        ],
        "/",
    )


def _namespaces() -> list[str]:
    caps = ["--cap-drop", "ALL"]
    if os.getuid() == 0:  # the worker needs these two only to drop to its own uid
        caps += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return [
        "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", *caps,
    ]


def _mounts() -> list[str]:
    """Read-only system and Python directories, each parent directory traversable."""
    args = ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for top in ("/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime"):
        if os.path.exists(top):
            args += ["--ro-bind", top, top]
    for link in ("/bin", "/lib", "/lib64", "/sbin"):
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    made: set[str] = set()
    for root in _python_roots():
        for parent in reversed(Path(root).parents):
            if str(parent) != "/" and str(parent) not in made and not str(parent).startswith("/usr"):
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        args += ["--ro-bind", root, root]
    return args


def _python_roots() -> list[str]:
    """The interpreter's installation and, in a virtual environment, the environment too."""
    roots = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    exe_dir = os.path.dirname(os.path.realpath(sys.executable))
    if not any(exe_dir.startswith(root + os.sep) for root in roots):
        roots.add(exe_dir)
    if os.path.dirname(sys.executable) != exe_dir:
        roots.add(os.path.dirname(sys.executable))
    return sorted(r for r in roots if not r.startswith("/usr"))


def _masks() -> list[str]:
    """Hide the grader and the reference engine from student code, wherever they are installed."""
    args = []
    for package in ("grader", "reference"):
        spec_dir = Path(sysconfig.get_paths()["purelib"]) / package
        if spec_dir.is_dir():
            args += ["--tmpfs", str(spec_dir)]
    return args
