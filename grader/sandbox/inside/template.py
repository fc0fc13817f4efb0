"""The sandbox's template: a warm, clean process that never runs a student's code.

It confines itself (grader/sandbox/inside/confine.py), imports what every unit of work
needs (pytest with its configuration prepared, IPython for notebooks), freezes its heap,
and then waits for the grader. For each unit of work the grader sends a socket (over the
control channel, as SCM_RIGHTS) and the template forks: the child is the unit, talking to
the grader on that socket only. The template never reads a unit's socket, so nothing a
unit is told (an engine's source, a program) ever enters the template's memory, and so
no later unit can find it there. Each unit starts in writable space of its own, new tmpfs that no
earlier unit touched (spaces.py), where the kernel allows; elsewhere the grader empties the
sandbox's space itself between units, with its own authority. Between units the grader asks the
template to kill every other process, and it says how many it could not.

With bubblewrap the template is process 1 of its own pid namespace: a student's process
cannot signal it, and when it dies every process in the sandbox dies with it. Without it, as
root, it first gives the sandbox a mount and network namespace of its own (spaces.private).
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import stat
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import confine  # noqa: E402
import landlock  # noqa: E402
import processes  # noqa: E402
import spaces  # noqa: E402

CONTROL_MAX = 65536
SPAWN_S = 5.0
"""How long a unit may take to make its writable space before the template gives up on it."""


def main() -> None:
    cfg = json.loads(os.environ["GRADER_SANDBOX"])
    if cfg.get("private") and os.getuid() == 0:  # not again after fix_addresses' exec: the namespaces stay
        try:
            os.environ["GRADER_SHOWN"] = spaces.private(cfg["private"], cfg["keep"])
            os.environ["GRADER_PRIVATE"] = ""
        except OSError as exc:
            os.environ["GRADER_PRIVATE"] = f"namespaces ({exc.strerror or exc})"[:80]
    confine.drop_privileges(cfg["uid"])
    confine.fix_addresses()  # after dropping: an exec as root with capabilities would clear the flag
    unprivate = os.environ.pop("GRADER_PRIVATE", "") if cfg.get("private") else None
    shown = os.environ.pop("GRADER_SHOWN", "")  # the processes of other sandboxes, where they could not be hidden
    os.environ.pop("GRADER_SANDBOX", None)
    os.environ.pop("GRADER_REEXEC", None)
    confine.apply_limits(cfg["limits"], _own_processes() if cfg["mode"] == "plain" else 0)
    # AF_UNIX sockets only where the sandbox has a network namespace of its own: an abstract one reaches no other
    missing = confine.lock_down(unix_sockets=cfg["unix_sockets"] and not unprivate)
    if cfg.get("landlock"):  # after no_new_privs, which it needs; before any unit: they all inherit it
        missing += landlock.writes_only(cfg["scratch"])
    confine.adopt_orphans()  # every process of the sandbox stays below the template (watch.py counts them there)
    if unprivate:
        missing.append(unprivate)
    if shown:
        missing.append(shown)
    sys.path[1:1] = cfg["site"]
    os.chdir(cfg["scratch"])
    control = socket.socket(fileno=cfg["control_fd"])
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)  # from here on nothing the warm-up or a unit prints reaches the grader (or blocks it)
    if not os.environ.get("GRADER_SANDBOX_DEBUG"):
        os.dup2(devnull, 2)
    unavailable = _warm(cfg)
    gc.collect()
    gc.freeze()  # children never walk the template's heap when they collect garbage
    _send(
        control,
        {
            "op": "ready",
            "missing": missing,
            "unavailable": unavailable,
            "pid": os.getpid(),
            "python": sys.version.split()[0],
        },
    )
    Template(control, cfg, _null_files()).serve()


def _null_files() -> tuple[int, ...]:
    """The template's descriptors of the null device above 2, which units keep: pytest's session, prepared here
    (suites.prepare), holds one for its log file and closes it when a unit's session ends. Every other descriptor of
    the template is closed in a unit."""
    null = os.stat(os.devnull).st_rdev
    found = []
    for fd in range(3, 256):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == null:
            found.append(fd)
    return tuple(found)


def _warm(cfg: dict) -> dict[str, str]:
    """Import what units need, once; what could not be imported, and why."""
    import frames  # noqa: F401
    import probes  # noqa: F401
    import standins  # noqa: F401
    import units  # noqa: F401

    unavailable = {}
    if "pytest" in cfg["warm"]:
        try:
            import suites

            suites.prepare(os.path.join(cfg["scratch"], "run"))
        except Exception as exc:
            unavailable["pytest"] = f"{type(exc).__name__}: {exc}"
    if "ipython" in cfg["warm"]:
        try:
            import notebook

            notebook.warm()
        except Exception as exc:
            unavailable["ipython"] = f"{type(exc).__name__}: {exc}"
    return unavailable


def _send(control: socket.socket, message: dict) -> None:
    control.send(json.dumps(message).encode())


def _close_all_but(*kept: int) -> None:
    """Close every descriptor above 2 but those kept."""
    low = 3
    for fd in sorted(set(kept)):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, 1 << 16)


def _own_processes() -> int:
    uid = os.getuid()
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                continue
    return count


class Template:
    def __init__(self, control: socket.socket, cfg: dict, kept: tuple[int, ...] = ()):
        self.control = control
        self.cfg = cfg
        self.kept = kept
        """Descriptors of the null device that units keep open (_null_files)."""
        self.units: dict[int, str] = {}
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.children = processes.LISTED

    def serve(self) -> None:
        while True:
            try:
                watched: list[socket.socket | int] = [self.control, self.wake_r]
                ready, _, _ = select.select(watched, [], [], 1.0)
            except InterruptedError:
                continue
            if self.wake_r in ready:
                try:
                    os.read(self.wake_r, 4096)
                except BlockingIOError:
                    pass
            self._reap()
            if self.control in ready:
                try:
                    data, fds, _, _ = socket.recv_fds(self.control, CONTROL_MAX, 4)
                except InterruptedError:
                    continue
                if not data:  # the grader is gone: so is everything here
                    self._kill_all()
                    os._exit(0)
                self._handle(json.loads(data), fds)

    def _handle(self, message: dict, fds: list[int]) -> None:
        op = message.get("op")
        if op == "spawn" and len(fds) == 1:
            pid, why = self._spawn(message["kind"], fds[0], message.get("fresh") is True)
            _send(self.control, {"op": "spawned", "pid": pid, **({"unfresh": why} if why else {})})
            return
        for fd in fds:
            os.close(fd)
        if op == "clean":
            killed = self._kill_all()
            _send(self.control, {"op": "cleaned", "killed": killed, "left": len(self._others())})

    def _spawn(self, kind: str, fd: int, fresh: bool) -> tuple[int | None, str]:
        """Fork a unit (with fresh, in writable space of its own); its pid, or None and why its space could
        not be made (it then ran nothing)."""
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(ready_r)
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.setpgid(0, 0)
                if self.cfg["mode"] == "plain":
                    confine.die_with_parent()
                if fresh:
                    try:
                        spaces.fresh(self.cfg["fresh"], self.cfg["keep"])
                    except OSError as exc:
                        os.write(ready_w, str(exc).encode()[:200] or b"?")
                        os._exit(71)
                confine.no_namespaces()
                if self.cfg.get("landlock") and landlock.processes_hidden():
                    os._exit(72)  # a unit that cannot hide the other sandboxes' processes runs nothing
                os.chdir(self.cfg["scratch"])  # the new /tmp, not the one it covers
                os.close(ready_w)
                _close_all_but(fd, *self.kept)
                import units

                units.main(kind, fd, self.cfg)
            finally:
                os._exit(70)
        os.close(fd)
        os.close(ready_w)
        try:
            readable, _, _ = select.select([ready_r], [], [], SPAWN_S)
            why = os.read(ready_r, 200).decode(errors="replace") if readable else "it did not start in time"
        finally:
            os.close(ready_r)
        if why:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return None, why
        self.units[pid] = kind
        return pid, ""

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.units:
                del self.units[pid]
                code = os.waitstatus_to_exitcode(status)
                _send(self.control, {"op": "exited", "pid": pid, "code": code})

    def _others(self) -> list[int]:
        """Every other live process of the sandbox: every one below the template (it adopts orphans, as process 1
        of a pid namespace does) where the kernel lists children; else the namespace's, the uid's, or its units'
        process groups."""
        mode, me = self.cfg["mode"], os.getpid()
        if self.children:
            candidates = processes.descendants(me)
        elif mode == "plain":
            return list(self.units)
        else:
            candidates = [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) != me]
        uid = os.getuid()
        found = []
        for pid in candidates:
            try:
                if mode == "uid" and not self.children and os.stat(f"/proc/{pid}").st_uid != uid:
                    continue
                with open(f"/proc/{pid}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in (b"Z", b"X"):  # the dead only wait to be reaped
                found.append(pid)
        return found

    def _kill_all(self) -> int:
        killed = 0
        for _ in range(200):  # a process may fork while we kill: go round until none is left
            others = self._others()
            if not others:
                break
            for pid in others:
                try:
                    if self.cfg["mode"] == "plain" and not self.children:
                        os.killpg(pid, signal.SIGKILL)
                    else:
                        os.kill(pid, signal.SIGKILL)
                    killed += 1
                except OSError:
                    pass
            time.sleep(0.001)
            self._reap()
        self._reap()
        return killed


if __name__ == "__main__":
    main()
