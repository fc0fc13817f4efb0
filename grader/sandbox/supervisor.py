"""The trusted side of the sandbox: start a sandbox, spawn units of work in it, talk to
them, kill them. Nothing here ever imports or runs a student's code.

A `Sandbox` is one isolated environment (see isolation.py) with its own warm template
process (inside/template.py). A `Unit` is one process forked from the template for one
unit of work, with a socket of its own (unit.py). Units of one sandbox run one at a time, and
between two units the sandbox can be cleaned (every other process killed, the writable
space emptied), so a unit can leave nothing for the next one to find. Where the machine
allows, a sandbox's processes share one cgroup that bounds them together (cgroups.py).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import py_compile
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from grader.errors import IsolationError, SandboxError, WorkerFailure
from grader.sandbox import cgroups, isolation, uids, wipe
from grader.sandbox.channel import FRAME_CAP, Channel
from grader.sandbox.limits import SandboxLimits  # noqa: F401 - callers take SandboxLimits from here too
from grader.sandbox.unit import Unit

INSIDE = Path(__file__).with_name("inside")
STARTUP_S = 60.0
DEBUG = bool(os.environ.get("GRADER_SANDBOX_DEBUG"))  # the sandbox's stderr stays on the grader's
CONTROL_MAX = 65536


@functools.cache
def _bytecode() -> dict[str, bytes]:
    """inside/'s modules compiled once per grader process, as __pycache__ files (their hash checked against the
    copies beside them): the sandbox's Python, started with -B, writes none, and compiled them at every
    sandbox's start. A Python of another version looks for its own file name and compiles, as before."""
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in INSIDE.glob("*.py"):
            target = Path(tmp) / path.name
            py_compile.compile(
                str(path),
                cfile=str(target),
                dfile=f"{isolation.CODE_DIR}/{path.name}",
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
            )
            found[Path(importlib.util.cache_from_source(path.name)).name] = target.read_bytes()
    return found


def _base(iso: isolation.Isolation) -> str | None:
    """Where sandbox folders go: GRADER_SANDBOX_ROOT, or (running student code as other uids without
    bubblewrap) a folder they can pass through but not list; else the usual temporary folder."""
    configured = os.environ.get("GRADER_SANDBOX_ROOT")
    if configured:
        return configured
    if iso.mode != "uid":
        return None
    base = uids.LOCK_DIRS[0].parent / "sandboxes"
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o711)
    return str(base)


class Sandbox:
    """An isolated environment holding one submission's files, and its template process."""

    def __init__(
        self,
        files: dict[str, bytes],
        limits: SandboxLimits = SandboxLimits(),
        warm: tuple[str, ...] = (),
        iso: isolation.Isolation | None = None,
        start: bool = True,
    ):
        self.iso = iso or isolation.detect()
        self.limits = limits
        self.warm = warm
        self.lease = uids.lease(shared=self.iso.bwrap is None) if self.iso.root and self.iso.drop_uid else None
        self.uid = self.lease.uid if self.lease else 0
        self.group: cgroups.Group | None = None
        self.exits: dict[int, int] = {}
        self.disk_full = False
        self._proc: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._stop_watch = threading.Event()
        try:
            self.root = Path(tempfile.mkdtemp(prefix="grader-sandbox-", dir=_base(self.iso)))
            self.code, self.work, self.scratch = self.root / "code", self.root / "work", self.root / "scratch"
            self._lay_out(files)
            where = cgroups.support()
            if where.parent is not None:
                self.group = cgroups.Group(where.parent, limits.sandbox_mb << 20, limits.processes, where.cpu)
            if start:
                self._start()
                self.wait_ready()
        except BaseException:
            self.close()
            raise

    # -- files ------------------------------------------------------------------------------------

    def _lay_out(self, files: dict[str, bytes]) -> None:
        """code/ (the units' code) and work/ (the submission) readable by the sandbox only; scratch/ its own."""
        for folder in (self.code, self.work, self.scratch):
            folder.mkdir()
        for path in INSIDE.glob("*.py"):
            shutil.copyfile(path, self.code / path.name)
        (self.code / "__pycache__").mkdir()
        for name, data in _bytecode().items():
            (self.code / "__pycache__" / name).write_bytes(data)
        if self.uid:
            self.root.chmod(0o711)
            for folder in (self.code, self.work):
                os.chown(folder, 0, self.uid)
                folder.chmod(0o750)
                for item in [*folder.iterdir(), *folder.glob("__pycache__/*")]:
                    os.chown(item, 0, self.uid)
                    item.chmod(0o750 if item.is_dir() else 0o640)
            os.chown(self.scratch, self.uid, self.uid)
            self.scratch.chmod(0o700)
        self.put(files)

    def put(self, files: dict[str, bytes]) -> None:
        """Write the submission's files into work/, readable by the sandbox only: before it starts, or after (a
        sandbox started before its grading knew them: grader/sandbox/prestarted.py), before any unit runs."""
        for name, data in files.items():
            (self.work / name).write_bytes(data)
            if self.uid:
                os.chown(self.work / name, 0, self.uid)
                (self.work / name).chmod(0o640)

    # -- the template ------------------------------------------------------------------------------

    def _config(self, control_fd: int) -> dict:
        bwrap = self.iso.bwrap is not None
        scratch = isolation.SANDBOX_TMP if bwrap else str(self.scratch)
        wipe = [isolation.SANDBOX_TMP, "/dev/shm"] if bwrap else [scratch]
        if self.iso.mode == "uid":
            wipe += list(uids.shared_writable())
        return {
            "uid": self.uid,
            "mode": self.iso.mode,
            "limits": {
                "memory_mb": self.limits.memory_mb,
                "cpu_s": self.limits.cpu_s,
                "file_mb": self.limits.file_mb,
                "processes": self.limits.processes,
                "open_files": self.limits.open_files,
            },
            "control_fd": control_fd,
            "work": isolation.WORK_DIR if bwrap else str(self.work),
            "scratch": scratch,
            "site": list(self.iso.runtime.site),
            "warm": list(self.warm),
            "wipe": wipe,
        }

    def start(self) -> None:
        """Start the template without waiting for it (wait_ready() does)."""
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    ready = False

    def _start(self) -> None:
        self.ready = False
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = self._config(theirs.fileno())
        home = config["scratch"]
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "TMPDIR": home,
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "MPLBACKEND": "Agg",
            "GRADER_SANDBOX": json.dumps(config),
            **({"GRADER_SANDBOX_DEBUG": "1"} if DEBUG else {}),
        }
        argv = isolation.sandbox_argv(self.iso, self.code, self.work, self.limits.disk_mb)
        if self.group is not None:
            argv = self.group.wrap(argv)
        self.exits = {}
        self.disk_full = False
        self._proc = subprocess.Popen(
            argv,
            env=env,
            cwd=str(self.scratch),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None if DEBUG else subprocess.PIPE,
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
        )  # the session its processes cannot leave
        theirs.close()
        self._control = ours

    def wait_ready(self) -> None:
        """Wait for the template to say it is ready (SandboxError if it never does)."""
        if self.ready:
            return
        try:
            ready = self._await("ready", time.monotonic() + STARTUP_S)
            if ready is None:
                raise SandboxError(f"the sandbox did not start: {self._startup_error()}")
        except BaseException:
            self.close()
            raise
        self._confined(ready.get("missing"))
        self.ready = True
        self.unavailable: dict[str, str] = ready.get("unavailable") or {}
        self.python = str(ready.get("python", ""))[:20]
        """The version of the Python that runs student code here."""
        if self.iso.bwrap is None:
            self._stop_watch = threading.Event()
            threading.Thread(target=self._watch_disk, args=(self._stop_watch,), daemon=True).start()

    def _confined(self, missing) -> None:
        """Fail closed (IsolationError, exit 3) when student code would run as a uid of its own, with no
        namespace, and without no_new_privs or the seccomp filter; elsewhere say once what is missing."""
        missing = [str(m)[:80] for m in missing[:5]] if isinstance(missing, list) else []
        problem = isolation.unconfined(missing) if self.iso.mode == "uid" else None
        if problem:
            self.close()
            raise IsolationError(f"student code cannot be confined here: {problem}")
        if missing:
            isolation.warn_once(f"the sandbox could not apply {', '.join(missing)}; student code runs without it")

    def _startup_error(self) -> str:
        proc = self._proc
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            return f"it gave no sign of life within {STARTUP_S:g} s"
        text = proc.stderr.read(20000).decode(errors="replace").strip() if proc.stderr else ""
        return text.splitlines()[-1] if text else f"its process exited with code {proc.returncode}"

    def _control_send(self, message: dict, fds: list[int] = ()) -> bool:
        if self._control is None:
            return False
        try:
            socket.send_fds(self._control, [json.dumps(message).encode()], list(fds))
            return True
        except OSError:
            return False

    def read_control(self, deadline: float) -> dict | None:
        """One message from the template (recording exits on the way), or None if it is gone or
        nothing came before the deadline (a deadline already passed still reads what is there)."""
        if self._control is None:
            return None
        readable, _, _ = select.select([self._control], [], [], max(0.0, deadline - time.monotonic()))
        if not readable:
            return None
        try:
            data = self._control.recv(CONTROL_MAX)
        except OSError:
            data = b""
        if not data:
            self.dead = True
            return None
        try:
            message = json.loads(data)
        except ValueError:
            self.dead = True  # the template is ours and never says that: it was tampered with
            return None
        if message.get("op") == "exited":
            self.exits[message.get("pid")] = message.get("code")
        return message

    def _await(self, op: str, deadline: float) -> dict | None:
        while time.monotonic() < deadline and not self.dead:
            message = self.read_control(deadline)
            if message is not None and message.get("op") == op:
                return message
        return None

    dead = False

    # -- units ---------------------------------------------------------------------------------

    def unit(self, kind: str) -> Unit:
        """A fresh process forked from the template for one unit of work."""
        if self.dead:
            self.restart()
        ours, theirs = socket.socketpair()
        sent = self._control_send({"op": "spawn", "kind": kind}, [theirs.fileno()])
        theirs.close()
        spawned = self._await("spawned", time.monotonic() + 10) if sent else None
        if spawned is None:
            ours.close()
            self.restart()
            raise WorkerFailure("crash", "the sandbox's process stopped answering (your code may have stopped it)")
        return Unit(self, kind, spawned["pid"], Channel(ours, FRAME_CAP))

    def clean(self) -> None:
        """Kill every process but the template and empty the writable space; restart if that fails."""
        if (
            self.dead
            or not self._control_send({"op": "clean"})
            or self._await("cleaned", time.monotonic() + 10) is None
        ):
            self.restart()
            return
        if self.iso.mode == "uid":
            uids.kill_uid(self.uid, skip=frozenset({self._proc.pid}))

    def restart(self) -> None:
        self._kill_everything()
        if self.iso.bwrap is None:
            wipe.clear(str(self.scratch))
        self.dead = False
        self._start()
        self.wait_ready()

    def _kill_everything(self) -> None:
        self._stop_watch.set()
        if self._control is not None:
            self._control.close()
            self._control = None
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            if proc.stderr:
                proc.stderr.close()
        if self.group is not None:
            self.group.kill()
        if self.lease is not None:
            uids.kill_uid(self.uid)

    def _watch_disk(self, stop: threading.Event) -> None:
        """Without bubblewrap's size-capped /tmp: stop the sandbox when its files pass the disk limit."""
        cap = self.limits.disk_mb * 1024 * 1024
        while not stop.wait(0.1):
            if uids.used_bytes(self.scratch, self.uid or os.getuid(), self.iso.mode == "uid", cap) > cap:
                self.disk_full = True
                if self.iso.mode == "uid":
                    uids.kill_uid(self.uid)
                elif self._proc is not None:
                    try:
                        os.killpg(self._proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                return

    def close(self) -> None:
        self._kill_everything()
        if getattr(self, "root", None) is not None:
            wipe.remove(str(self.root))
        if getattr(self, "group", None) is not None:
            self.group.close()
            self.group = None
        if self.lease is not None:
            self.lease.release()
            self.lease = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
