"""How student code is isolated on this machine, and whether that is enough for the job.

Three levels, best first:

- `namespaces` (bubblewrap works): each sandbox sees only the Python it runs on
  (read-only, the grader's own files masked), its submission (read-only at /sandbox) and
  a size-capped /tmp; no network, its own process, IPC and UTS namespaces; as root, its
  own unprivileged uid too.
- `uid` (root, no bubblewrap, as in Docker and so on Gradescope): each sandbox runs as an
  unprivileged uid of its own, which cannot read the grader's files (checked), cannot
  write any file of the grader's or of another student's, cannot signal the grader;
  network sockets are refused by a seccomp filter. Where root can make namespaces (not in
  Docker), each sandbox also has a mount and network namespace of its own (its own /tmp and
  /dev/shm, its own abstract unix sockets); elsewhere it writes in its own folder alone where
  the kernel offers Landlock (else its disk use in the shared folders is watched and removed
  between units), it may name no unix socket (seccomp), and a grading's two lanes take turns in
  one sandbox, as a batch's do (processes running at once see each other in /proc).
- `limits` (neither): resource limits only, the student's code runs as whoever runs the
  grader. Fine for a student's own `grader check`; refused for batch and Gradescope
  grading unless the instructor says the code is trusted.

On top of every level: rlimits, seccomp, a fresh process per unit of work forked from a
clean template, and every reply parsed as untrusted input (grader/sandbox/channel.py); where
the machine allows, a cgroup per sandbox (cgroups.py). In the uid level, a sandbox without
no_new_privs or its seccomp filter is refused: the probe below applies them as the uid would.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.errors import IsolationError
from grader.sandbox import cgroups, uids
from grader.sandbox.inside import landlock

CODE_DIR = "/opt/grader"
WORK_DIR = "/sandbox"
SANDBOX_TMP = "/tmp"
OUR_PACKAGES = ("grader", "reference", "assignments", "student_template")
SHM_MB = 8
"""/dev/shm's size in a sandbox: the whole writable space is the disk limit plus this."""


@dataclass(frozen=True)
class Runtime:
    """The Python that runs student code (GRADER_SANDBOX_PYTHON, else the grader's own)."""

    executable: str
    roots: tuple[str, ...]
    """Folders to mount read-only: the installation, and a virtual environment's."""
    site: tuple[str, ...]
    """Its site-packages folders (added to sys.path without running .pth files)."""
    masks: tuple[str, ...]
    """Paths in them that belong to the grader, hidden from student code."""


@dataclass(frozen=True)
class Isolation:
    level: str
    """namespaces, uid or limits."""
    bwrap: str | None
    root: bool
    runtime: Runtime
    drop_uid: bool = True
    """As root: run each sandbox as a uid of its own (False only when explicitly trusted)."""
    namespaces: bool = True
    """Sandboxes and units may have namespaces of their own: bubblewrap's, or without it, as root, a mount and
    network namespace per sandbox; and a writable space of its own per unit where the kernel allows (False: the
    grader cleans a sandbox's space between units; without bubblewrap, where root cannot make namespaces)."""
    landlock: int = 0
    """The Landlock ABI the kernel offers (0: none). A uid of its own without namespaces is then confined to writing in
    its own folder, its abstract unix sockets scoped to it too from ABI 6 (inside/landlock.py)."""

    @property
    def mode(self) -> str:
        """The template's cleanup mode: its own pid namespace, its own uid, or its own process groups."""
        if self.bwrap:
            return "pidns"
        return "uid" if self.root and self.drop_uid else "plain"

    @property
    def shares_tmp(self) -> bool:
        """Sandboxes see the machine's /tmp (a uid of their own without namespaces): a grading then uses one
        sandbox, in turn, so that its two lanes cannot leave each other notes there."""
        return self.mode == "uid" and not self.namespaces


@functools.cache
def runtime() -> Runtime:
    executable = os.environ.get("GRADER_SANDBOX_PYTHON") or sys.executable
    if os.path.abspath(executable) == os.path.abspath(sys.executable):  # not realpath: venvs share one binary
        info = _runtime_info()
    else:
        probe = subprocess.run(
            [executable, "-s", "-E", "-c", _RUNTIME_SCRIPT], capture_output=True, text=True, timeout=60
        )
        if probe.returncode != 0:
            raise IsolationError(f"GRADER_SANDBOX_PYTHON={executable} cannot be run: {probe.stderr.strip()[-500:]}")
        info = json.loads(probe.stdout)
    roots = {os.path.realpath(info["prefix"]), os.path.realpath(info["base_prefix"])}
    exe_dir = os.path.dirname(os.path.realpath(executable))
    if not any(exe_dir.startswith(r + os.sep) for r in roots):
        roots.add(exe_dir)
    if os.path.dirname(executable) != exe_dir:
        roots.add(os.path.dirname(os.path.abspath(executable)))
    roots = {r for r in roots if not any(r != o and r.startswith(o + os.sep) for o in roots)}
    masks = []
    for folder in info["site"]:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if (
                name in OUR_PACKAGES
                or (name.startswith("__editable__") and "micrograd" in name)
                or name.startswith("micrograd_grader")
            ):
                masks.append(os.path.join(folder, name))
    return Runtime(
        executable,
        tuple(sorted(r for r in roots if not r.startswith("/usr"))),
        tuple(info["site"]),
        tuple(sorted(masks)),
    )


_RUNTIME_SCRIPT = """
import json, os, site, sys
folders = [p for p in site.getsitepackages() if os.path.isdir(p)]
print(json.dumps({"prefix": sys.prefix, "base_prefix": sys.base_prefix, "site": folders}))
"""


def _runtime_info() -> dict:
    import site

    folders = [p for p in site.getsitepackages() if os.path.isdir(p)]
    return {"prefix": sys.prefix, "base_prefix": sys.base_prefix, "site": folders}


@functools.cache
def detect() -> Isolation:
    """The best isolation this machine offers (bubblewrap is tried once)."""
    root = os.geteuid() == 0
    rt = runtime()
    bwrap = None if bwrap_failure() else "/usr/bin/bwrap"
    level = "namespaces" if bwrap else "uid" if root else "limits"
    return Isolation(
        level,
        bwrap,
        root,
        rt,
        namespaces=level == "namespaces" or level == "uid" and can_unshare(),
        landlock=landlock.abi() if level == "uid" else 0,
    )


@functools.cache
def can_unshare() -> bool:
    """Whether this process (root) can make a mount and network namespace: tried in a child of its own."""
    import ctypes

    unshare = ctypes.CDLL(None, use_errno=True).unshare  # looked up before the fork: the child only calls it
    pid = os.fork()
    if pid == 0:
        os._exit(0 if unshare(0x00020000 | 0x40000000) == 0 else 1)  # CLONE_NEWNS | CLONE_NEWNET
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


@functools.cache
def bwrap_failure() -> str:
    """Why bubblewrap cannot be used here, in a few words ("" when it can: it is tried once)."""
    if os.environ.get("GRADER_NO_BWRAP"):
        return "GRADER_NO_BWRAP is set"
    if not os.path.exists("/usr/bin/bwrap"):
        return "bubblewrap (bwrap) is not installed"
    probe = subprocess.run(
        ["/usr/bin/bwrap", *namespaces(os.geteuid() == 0), *mounts(runtime()), "--", "/bin/true"], capture_output=True
    )
    lines = probe.stderr.decode(errors="replace").strip().splitlines()
    return "" if probe.returncode == 0 else lines[-1] if lines else "bwrap cannot create a sandbox here"


def namespaces(root: bool) -> list[str]:
    caps = ["--cap-drop", "ALL"]
    if root:  # the template needs these two only to drop to its own uid, first thing
        caps += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        caps = ["--unshare-user-try", *caps]
    return [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        *caps,
    ]


DEVICES = ["--proc", "/proc", "--dev", "/dev"]
"""A sandbox's own /proc and /dev: mounted before its capped /dev/shm, which /dev would hide."""


def mounts(rt: Runtime, devices: bool = True) -> list[str]:
    """Read-only system folders and the runtime, the grader's own packages masked (after /proc and /dev,
    unless devices is False: the caller mounted them)."""
    args = list(DEVICES) if devices else []
    return args + _system_mounts() + _runtime_mounts(rt)


def _system_mounts() -> list[str]:
    """/usr and what a program needs from /etc, read-only; /bin, /lib... as the links or folders they are here."""
    args: list[str] = []
    for top in ("/usr", "/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime"):
        if os.path.exists(top):
            args += ["--ro-bind", top, top]
    for link in ("/bin", "/lib", "/lib64", "/lib32", "/libx32", "/sbin"):
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    return args


def _runtime_mounts(rt: Runtime) -> list[str]:
    """The runtime's folders read-only (their parents made), the grader's own packages masked."""
    args: list[str] = []
    made: set[str] = set()
    for root in rt.roots:
        for parent in reversed(Path(root).parents):
            if str(parent) != "/" and str(parent) not in made and not str(parent).startswith("/usr"):
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        args += ["--ro-bind", root, root]
    for path in rt.masks:
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        else:
            args += ["--ro-bind", "/dev/null", path]
    return args


def sandbox_argv(iso: Isolation, code_dir: Path, work_dir: Path, disk_mb: int) -> list[str]:
    """The command that starts a sandbox's template."""
    python = [iso.runtime.executable, "-S", "-s", "-B"]
    if iso.bwrap is None:
        return [*python, str(code_dir / "template.py")]
    size = str(disk_mb * 1024 * 1024)
    return [
        iso.bwrap,
        *namespaces(iso.root),
        "--as-pid-1",
        # /dev, then the writable folders (its /dev/shm over /dev's), then the runtime: a Python installed
        # under /tmp (a checkout cloned there, its venv) is bound over the sandbox's own /tmp, not hidden by it.
        *DEVICES,
        "--perms",
        "1777",
        "--size",
        size,
        "--tmpfs",
        SANDBOX_TMP,
        "--perms",
        "1777",
        "--size",
        str(SHM_MB * 1024 * 1024),
        "--tmpfs",
        "/dev/shm",
        *mounts(iso.runtime, devices=False),
        "--perms",
        "0755",
        "--dir",
        "/opt",
        "--ro-bind",
        str(code_dir),
        CODE_DIR,
        "--ro-bind",
        str(work_dir),
        WORK_DIR,
        "--chdir",
        SANDBOX_TMP,
        "--",
        *python,
        f"{CODE_DIR}/template.py",
    ]


_warned: set[str] = set()
said_elsewhere = False
"""Set in a batch's grading processes: the instructor's own process has said each of these already (its
trial sandbox, grader/sandbox/trial.py, is the same machine's), so they are not said once per process."""


READABLE = "student code could read files it must not"  # uid_problems' words for them (trial.py looks for them)
DOCS = "docs/platforms.md"
"""Where each platform's isolation, and how to get more, is written down (a warning points there)."""


def _short(why: str) -> str:
    """Why bubblewrap cannot run, if it fits a warning's one line (bwrap's own message can be a paragraph)."""
    return why if len(why) <= 40 else "bubblewrap cannot start here"


def warn_once(message: str, kind: str = "warning") -> None:
    if message not in _warned and not said_elsewhere:
        _warned.add(message)
        print(f"grader: {kind}: {message}", file=sys.stderr)


# -- what a job may accept -------------------------------------------------------------------------

_PROBE = """
import json, os, sys
args = json.loads(sys.argv[1])
sys.path[1:1] = args["site"]
report = {"readable": []}
try:
    import pytest
    report["pytest"] = "ok"
except Exception as exc:
    report["pytest"] = f"{type(exc).__name__}: {exc}"
confine = {"__name__": "confine"}
exec(args["confine"], confine)
for path in args["private"]:
    try:
        if not os.path.isdir(path):
            open(path, "rb").close()
        elif not os.access(path, os.X_OK):  # a folder one may enter opens each file in it that others may read
            os.listdir(path)
        report["readable"].append(path)
    except OSError:
        pass
report["missing"] = confine["lock_down"]()
print(json.dumps(report))
"""


def require(purpose: str, *, trusted: bool = False, private: tuple[Path, ...] = ()) -> Isolation:
    """The isolation a job runs with, or IsolationError when it is not enough (an instructor's job is
    also told, once, what bounds a sandbox's memory and CPU)."""
    iso = _require(purpose, trusted=trusted, private=private)
    if purpose != "check":
        sentence, grouped = cgroups.bounds()
        warn_once(sentence, "note" if grouped else "warning")
    return iso


def _require(purpose: str, *, trusted: bool = False, private: tuple[Path, ...] = ()) -> Isolation:
    """The isolation a job runs with, or IsolationError when it is not enough.

    purpose is check (a student's own run: anything goes, with a warning) or batch and
    gradescope (an instructor's: student code never runs as root, as the grader's user, or
    where it could read the grader's files or another student's, unless trusted).
    private lists the files and folders student code must not read (the reference, the
    assignment, the class's submissions and outputs).
    """
    iso = detect()
    if iso.level == "namespaces":
        return iso
    why = bwrap_failure()
    lenient = purpose == "check" or trusted
    if iso.level == "uid":
        problems = uid_problems(iso, tuple(private) + grader_files())
        if not problems:
            warn_once(f"{_short(why)}: each sandbox runs as a uid of its own, {confinement(iso)}; see {DOCS}")
            return iso
        if lenient:
            warn_once(f"{_short(why)}: student code runs as root, limits only; see {DOCS}")
            return Isolation("limits", None, True, iso.runtime, drop_uid=False)
        raise IsolationError(
            "student code cannot be isolated here:\n- "
            + "\n- ".join(problems)
            + "\nInstall bubblewrap (apt-get install bubblewrap) where it can run, or fix the above; "
            "only if you trust every submission, pass --trusted-code."
        )
    if lenient:
        warn_once(f"{_short(why)}: student code runs as you, limits only; see {DOCS}")
        return iso
    raise IsolationError(
        f"student code cannot be isolated here: {why}, and the grader does not run as root, so "
        "every submission would run as you, able to read and change your files, the other "
        "students' work and the grades. Install bubblewrap (apt-get install bubblewrap), or grade "
        "as root (each student then runs as a uid of its own); only if you trust every "
        "submission, pass --trusted-code."
    )


def confinement(iso: Isolation) -> str:
    """In words, what keeps a uid-mode sandbox's files and abstract unix sockets from every other sandbox's (the line
    a job says once: docs/platforms.md)."""
    if iso.namespaces:
        return "in a mount and network namespace of its own"
    writes = (
        "it writes in its own folder alone (Landlock)"
        if iso.landlock
        else "what it writes in the machine's shared folders is removed between units (no Landlock here)"
    )
    return f"without namespaces: {writes}, and may name no unix socket (seccomp)"


def grader_files() -> tuple[Path, ...]:
    """The grader's own files that hold what student code must never see."""
    import grader
    import reference

    roots = [Path(reference.__file__).parent, Path(grader.__file__).parent / "sabotage" / "engines"]
    return tuple(p for root in roots for p in sorted(root.glob("*.py")))


@functools.lru_cache(maxsize=8)
def uid_problems(iso: Isolation, private: tuple[Path, ...]) -> list[str]:
    """What is wrong with running student code as a fresh uid here, found by trying it."""
    rt = iso.runtime
    with uids.lease() as lease:
        args = json.dumps(
            {
                "site": list(rt.site),
                "private": [str(p) for p in private],
                "confine": (Path(__file__).with_name("inside") / "confine.py").read_text(),
            }
        )
        try:
            probe = subprocess.run(
                [rt.executable, "-S", "-s", "-B", "-c", _PROBE, args],
                user=lease.uid,
                group=lease.uid,
                extra_groups=[],
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                cwd="/",
                capture_output=True,
                text=True,
                timeout=120,
            )
        except PermissionError:
            return [
                f"the sandbox's Python ({rt.executable}) cannot be run by an unprivileged user: "
                f"{_closed_folder(rt.executable)}; make it readable, or set GRADER_SANDBOX_PYTHON to a Python "
                "other users can run (with pytest installed)"
            ]
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        return [
            f"the sandbox's Python ({rt.executable}) does not work as an unprivileged user ({last}): "
            f"{_closed_folder(rt.executable)}; make it readable, or set GRADER_SANDBOX_PYTHON to a Python "
            "other users can run (with pytest installed)"
        ]
    report = json.loads(probe.stdout)
    problems = []
    if report.get("pytest") != "ok":
        problems.append(
            f"the sandbox's Python ({rt.executable}) cannot import pytest ({report.get('pytest')}): "
            "install pytest there, or set GRADER_SANDBOX_PYTHON to a Python that has it"
        )
    steps = unconfined(report.get("missing", []))
    if steps:
        problems.append(steps)
    if report["readable"]:
        shown = ", ".join(report["readable"][:3]) + (" ..." if len(report["readable"]) > 3 else "")
        problems.append(
            f"{READABLE} ({shown}): make them readable by their owner only (chmod -R go-rwx on the folder that "
            "holds them)"
        )
    return problems


def unconfined(missing: list[str]) -> str | None:
    """In words, the confinement steps a sandbox could not apply that running it as a uid of its own relies on."""
    steps = [
        m for m in missing if isinstance(m, str) and m.startswith(("no_new_privs", "seccomp", "namespaces", "landlock"))
    ]
    return (
        (
            f"the sandbox cannot apply {', '.join(steps)} here, without which a sandbox's uid could open network "
            "sockets, gain privileges or share /tmp with another sandbox: run the grader where seccomp works (a "
            "kernel with CONFIG_SECCOMP_FILTER, a container whose seccomp profile allows it), or with bubblewrap"
        )
        if steps
        else None
    )


def _closed_folder(executable: str) -> str:
    """The first folder on the way to the interpreter that other users cannot enter, in words."""
    for path in [*reversed(Path(os.path.realpath(executable)).parents), Path(os.path.realpath(executable))]:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if path.is_dir() and not mode & 0o001:
            return f"{path} is closed to other users (mode {oct(mode & 0o777)})"
    return "a file it needs is closed to other users"
