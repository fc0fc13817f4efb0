"""One sandbox started and stopped before anyone is graded, to prove the machine can grade.

A sandbox shows student code only the Python that runs it and that Python's installation.
A Python that needs anything else (a wrapper or shim that runs another program, as pyenv's
do; an installation under a folder a sandbox mounts its own over) cannot start there, and
without this every student would be graded as a `crash` whose message is a traceback. That
is the installation's problem, not a student's: found once, up front, it ends the command
with exit code 3 and the fix. For an instructor's job the sandbox's Python must also import
pytest, or every student's tests would fail to run. A batch tries once, in the instructor's
process, before any grading process gets a student: those on the same machine that isolate
student code the same way take its word (vouched), since what the trial finds is the machine's
and the installation's, the same for every process of the same grader there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from grader.errors import IsolationError, SandboxError
from grader.sandbox import isolation
from grader.sandbox.supervisor import Sandbox

_FOUND: dict[tuple[isolation.Isolation, bool], str] = {}
"""Per isolation (and whether pytest is needed), what is wrong with starting a sandbox here, or empty:
tried once per process."""
_AHEAD: dict[tuple[isolation.Isolation, bool], Sandbox] = {}
"""The trial sandboxes started ahead (ahead()), not yet waited for."""


def require_started(purpose: str, *, trusted: bool = False, private: tuple[Path, ...] = ()) -> isolation.Isolation:
    """isolation.require's isolation for the job, once a sandbox has started and stopped with it; otherwise an
    IsolationError (exit 3) saying what is wrong and how to fix it, before anyone is graded."""
    iso = isolation.require(purpose, trusted=trusted, private=private)
    needs_pytest = purpose != "check"  # a student's own check still runs the engine checks without it
    if (iso, needs_pytest) not in _FOUND:
        _FOUND[iso, needs_pytest] = _try(iso, needs_pytest)
    if _FOUND[iso, needs_pytest]:
        raise IsolationError(_FOUND[iso, needs_pytest])
    return iso


def vouched(iso: isolation.Isolation) -> None:
    """Another process of the same grader on this machine (a batch's instructor's process, which gives its grading
    processes no student before its own trial passed) started and stopped a sandbox with iso, and its Python imported
    pytest: require_started takes that trial as this process's own where it isolates student code the same way. A
    sandbox that then fails to start is still the machine's problem: the grading that meets it stops the batch."""
    _FOUND.setdefault((iso, True), "")


@contextlib.contextmanager
def ahead(purpose: str) -> Iterator[None]:
    """The trial require_started(purpose) makes, started now without waiting for it, where the isolation it will
    use is known before the paths it is given (bubblewrap's namespaces, which none changes): require_started then
    waits for this sandbox rather than starting one, and meanwhile the job goes on (a batch finds its class). What
    no require_started took is closed on the way out."""
    box, key = None, None
    try:
        iso = isolation.detect()
        key = (iso, purpose != "check")
        if iso.level == "namespaces" and key not in _FOUND and key not in _AHEAD:
            box = Sandbox({}, iso=iso, warm=_warm(key[1]), start=False)
            box.start()
            _AHEAD[key] = box
    except Exception:  # only a head start: require_started tries again, and says what is wrong
        box = None
    try:
        yield
    finally:
        if box is not None and key is not None and _AHEAD.get(key) is box:
            del _AHEAD[key]
            box.close()


def _warm(needs_pytest: bool) -> tuple[str, ...]:
    return ("pytest",) if needs_pytest else ()


def _try(iso: isolation.Isolation, needs_pytest: bool) -> str:
    python = iso.runtime.executable
    try:
        with _AHEAD.pop((iso, needs_pytest), None) or Sandbox({}, iso=iso, warm=_warm(needs_pytest)) as box:
            box.wait_ready()  # one started ahead: its start is awaited here
            missing = box.unavailable.get("pytest") if needs_pytest else None
    except SandboxError as exc:
        why = str(exc).removeprefix("the sandbox did not start: ")
        return (
            f"student code cannot run here: a sandbox did not start ({why}). A sandbox shows student code only "
            f"the Python that runs it ({python}) and the folders of its installation: a Python that needs "
            "anything else (a wrapper or shim that runs another program, as pyenv's do) or that is installed "
            f"under {isolation.CODE_DIR} or {isolation.WORK_DIR}, where a sandbox mounts its own folders, cannot "
            "start there. Set GRADER_SANDBOX_PYTHON to a plain interpreter with pytest installed (python3 -c "
            "'import sys; print(sys.executable)' prints the path of one), or install the grader elsewhere; "
            "GRADER_SANDBOX_DEBUG=1 shows the sandbox's own errors."
        )
    if missing:
        return (
            f"student code cannot be graded here: the sandbox's Python ({python}) runs, but cannot import pytest "
            f"({missing}), so every student's tests would fail to run. Install pytest there, or set "
            "GRADER_SANDBOX_PYTHON to a Python that has it."
        )
    return ""


def require_closed(given: tuple[Path, ...]) -> None:
    """For a command that runs no student code but is given the class's files (grader export: the graded folder,
    the roster, a --map): where student code runs as a uid of its own (uid mode), an IsolationError (exit 3) when
    such a uid could read any of them, naming them, since a batch's sandboxes on this machine could. A batch
    checks what it is given with its trial (require_started's `private`)."""
    iso = isolation.detect()
    if iso.level != "uid" or not given:
        return
    readable = [p for p in isolation.uid_problems(iso, tuple(given)) if p.startswith(isolation.READABLE)]
    if readable:
        raise IsolationError(
            "the class's files are open to student code here: a batch on this machine runs each student's code "
            f"as a uid of its own, and {readable[0]}"
        )
