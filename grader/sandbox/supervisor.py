"""The trusted side of the sandbox: start a sandbox, spawn units of work in it, talk to
them, kill them. Nothing here ever imports or runs a student's code.

A `Sandbox` is one isolated environment (see isolation.py) with its own warm template
process (inside/template.py). A `Unit` is one process forked from the template for one
unit of work, with a socket of its own (unit.py). Units of one sandbox run one at a time, and
a unit can leave nothing for the next one to find: each starts in writable space of its own,
new tmpfs no earlier unit touched (inside/spaces.py), and however it ended, every other process
of the sandbox is killed before the next starts. Where units cannot have space of their own
(the kernel refuses them a user namespace, or the sandbox has no namespaces at all), the grader
empties the sandbox's space between units itself, with its own authority (wipe.py). A sandbox
that cannot be shown clean is restarted, never reused. Where the machine allows, a sandbox's
processes share one cgroup that bounds them together (cgroups.py); elsewhere the grader sums
their memory itself (watch.py).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from grader.errors import IsolationError, SandboxError, WorkerFailure
from grader.sandbox import cgroups, folders, isolation, space, uids, watch, wipe
from grader.sandbox.channel import FRAME_CAP, Channel
from grader.sandbox.inside.processes import LISTED, descendants
from grader.sandbox.limits import SandboxLimits
from grader.sandbox.unit import Unit

STARTUP_S = 60.0
DEBUG = bool(os.environ.get("GRADER_SANDBOX_DEBUG"))  # the sandbox's stderr stays on the grader's
CONTROL_MAX = 65536


class Sandbox:
    """An isolated environment holding one submission's files, and its template process."""

    def __init__(
        self,
        files: dict[str, bytes],
        limits: SandboxLimits | None = None,
        warm: tuple[str, ...] = (),
        iso: isolation.Isolation | None = None,
        start: bool = True,
    ):
        self.iso = iso or isolation.detect()
        self.limits = limits = limits or SandboxLimits()
        self.warm = warm
        self.lease = uids.lease(shared=self.iso.bwrap is None) if self.iso.root and self.iso.drop_uid else None
        self.uid = self.lease.uid if self.lease else 0
        self.group: cgroups.Group | None = None
        self.exits: dict[int, int] = {}
        self.stopped: str | None = None
        """Why the grader stopped the sandbox (memory, disk), until it starts again."""
        self._proc: subprocess.Popen | None = None
        self._template: int | None = None
        self._control: socket.socket | None = None
        self._stop_watch = threading.Event()
        self._dirty = False
        """A unit was spawned since the sandbox was last cleaned."""
        try:
            self.root = Path(tempfile.mkdtemp(prefix="grader-sandbox-", dir=folders.base(self.iso)))
            self.code, self.work, self.scratch = self.root / "code", self.root / "work", self.root / "scratch"
            needed = [*self.iso.runtime.roots, *([] if self.iso.bwrap else [str(self.code), str(self.work)])]
            self.space = space.describe(self.iso, limits, self.scratch, needed, self.uid)
            self.fresh = bool(self.space.units)
            """Each unit covers the sandbox's writable space with its own (False once a unit could not)."""
            folders.lay_out(self.root, self.uid, writes_here=not self.space.own)
            self.put(files)
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

    def put(self, files: dict[str, bytes]) -> None:
        """Write the submission's files into work/, readable by the sandbox only: before it starts, or after (a
        sandbox started before its grading knew them: grader/sandbox/prestarted.py), before any unit runs."""
        folders.put(self.work, self.uid, files)

    # -- the template ------------------------------------------------------------------------------

    def _config(self, control_fd: int) -> dict:
        bwrap = self.iso.bwrap is not None
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
            "scratch": self.space.scratch,
            "site": list(self.iso.runtime.site),
            "warm": list(self.warm),
            "fresh": [list(s) for s in self.space.units],
            "private": [list(s) for s in self.space.private],
            "keep": list(self.space.keep),
            # AF_UNIX only where the sandbox has a network namespace of its own (where its uid is the only boundary,
            # an abstract unix socket, which has no file and no permission check, would reach other sandboxes)
            "unix_sockets": self.iso.mode != "uid" or bool(self.space.private),
            # without namespaces, a uid of its own writes in its own folder alone, where the kernel offers Landlock
            "landlock": self.confined_writes,
        }

    @property
    def confined_writes(self) -> bool:
        """The sandbox writes in its own folder alone (Landlock): a uid of its own without namespaces, where the kernel
        offers it (else it writes in the machine's shared writable folders too, which the grader empties)."""
        return self.iso.mode == "uid" and not self.space.own and self.iso.landlock > 0

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
        self.stopped = None
        self._template = None
        self._dirty = False
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
        memory, disk = self.group is None, not self.space.own
        if memory or disk:
            self._stop_watch = threading.Event()
            threading.Thread(
                target=watch.watch, args=(self, self._stop_watch, memory, disk), daemon=True, name="sandbox-watch"
            ).start()

    def _confined(self, missing) -> None:
        """Fail closed (IsolationError, exit 3) when student code would run as a uid of its own, with no
        namespace, and without no_new_privs, the seccomp filter, or (where the grader asked for them) the
        sandbox's own namespaces; elsewhere say once what is missing."""
        missing = [str(m)[:80] for m in missing[:5]] if isinstance(missing, list) else []
        problem = isolation.unconfined(missing) if self.iso.mode == "uid" else None
        if problem:
            self.close()
            raise IsolationError(f"student code cannot be confined here: {problem}")
        if missing:
            isolation.warn_once(f"the sandbox could not apply {', '.join(missing)}; student code runs without it")

    def _startup_error(self) -> str:
        proc = self._proc
        assert proc is not None, "asked why the template it started did not start"
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            return f"it gave no sign of life within {STARTUP_S:g} s"
        text = proc.stderr.read(20000).decode(errors="replace").strip() if proc.stderr else ""
        return text.splitlines()[-1] if text else f"its process exited with code {proc.returncode}"

    def _control_send(self, message: dict, fds: Sequence[int] = ()) -> bool:
        if self._control is None:
            return False
        try:
            socket.send_fds(self._control, [json.dumps(message).encode()], list(fds))
            return True
        except OSError:
            return False

    def control_socket(self) -> socket.socket | None:
        """The template's socket, for a unit's channel to watch for its news (a process exited); None once it is
        gone."""
        return self._control

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
        """A fresh process forked from the template for one unit of work, once the sandbox is clean of the last."""
        if self.dead:
            self.restart()
        elif self._dirty:
            self.clean()
        self._dirty = True
        ours, theirs = socket.socketpair()
        sent = self._control_send({"op": "spawn", "kind": kind, "fresh": self.fresh}, [theirs.fileno()])
        theirs.close()
        spawned = self._await("spawned", time.monotonic() + 10) if sent else None
        if spawned is None:
            ours.close()
            self.restart()
            raise WorkerFailure("crash", "the sandbox's process stopped answering (your code may have stopped it)")
        if not isinstance(spawned.get("pid"), int):  # the unit could not cover the space, and ran nothing
            ours.close()
            self.fresh = False  # from now on the grader empties the sandbox's space between units
            self._dirty = False
            isolation.warn_once(
                f"units of work cannot have writable space of their own here ({str(spawned.get('unfresh'))[:120]}): "
                "the grader empties each sandbox's between units"
            )
            if space.empty(self.space, self._template_pid(), self.scratch):
                self.restart()
            return self.unit(kind)
        return Unit(self, kind, spawned["pid"], Channel(ours, FRAME_CAP))

    def clean(self) -> None:
        """End every process but the template, and where units do not cover the writable space with their own,
        empty it with the grader's authority. A sandbox that cannot be shown clean is stopped, and restarted
        before another unit runs in it: never reused."""
        if not self._dirty or self.dead:
            return  # a dead sandbox restarts before its next unit
        if (
            not self._control_send({"op": "clean"})
            or (cleaned := self._await("cleaned", time.monotonic() + 10)) is None
            or cleaned.get("left") != 0
            or self.iso.mode == "uid"  # the uid's processes ended with the grader's authority:
            and not uids.kill_uid(self.uid, skip=frozenset({self._proc.pid} if self._proc else ()))
            or not self.fresh
            and space.empty(self.space, self._template_pid(), self.scratch)
        ):
            self._kill_everything()
            self.dead = True
            return
        self._dirty = False

    def restart(self) -> None:
        self._kill_everything()
        if not self.space.own and space.empty(self.space, None, self.scratch):
            raise SandboxError("the sandbox's files could not be removed, so it cannot start again clean")
        self.dead = False
        self._start()
        self.wait_ready()

    def _template_pid(self) -> int | None:
        """The template's process id here (bubblewrap's child), or None when it is gone."""
        if self._proc is None or self._proc.poll() is not None:
            return None
        if self._template is None:
            self._template = self._proc.pid if self.iso.bwrap is None else watch.child_of(self._proc.pid)
        return self._template

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

    # -- what the watcher needs (watch.py) ----------------------------------------------------------

    def processes(self) -> list[int]:
        """The sandbox's processes: its template and every process below it (it adopts orphans), else its uid's or
        its template's session's (a kernel that does not list children)."""
        template = self._template_pid()
        if template is not None and LISTED:
            return [template, *descendants(template)]
        if self.lease is not None:
            return uids.processes_of(self.uid)
        return watch.in_session(template) if template is not None else []

    def disk_bytes(self, pids: list[int], limit: int) -> int:
        """Bytes of files the sandbox holds on the host (no namespaces), stopping once past limit."""
        uid = self.uid or os.getuid()
        return watch.uid_disk_bytes(self.scratch, uid, self.iso.mode == "uid", limit, pids)

    def stop(self, why: str) -> None:
        """Stop every process of the sandbox (the watcher found it past a limit: memory, disk)."""
        self.stopped = why
        if self.lease is not None:
            uids.kill_uid(self.uid)
        proc = self._proc
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        self._kill_everything()
        if getattr(self, "root", None) is not None:
            wipe.remove(str(self.root))
        group = getattr(self, "group", None)
        if group is not None:
            group.close()
            self.group = None
        if self.lease is not None:
            self.lease.release()
            self.lease = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
