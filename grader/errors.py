"""Every exception the grader raises on purpose, under one root, and the exit codes they end in.

Problems in a student's submission are never exceptions that escape: they become a
result with status `error` or a failed check, because one bad submission must not stop
a batch. The exceptions below that carry such a problem (Rejected, WorkerFailure,
CheckTimeout, NotebookError, Refused) are caught inside the grading and turned into
data; the rest end a command, and `grader.cli` turns each into its `exit_code` and one
line on stderr. Code that runs inside the sandbox (grader/sandbox/inside/) imports
nothing of the grader's and keeps its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum


class ExitCode(IntEnum):
    """The exit codes of every command (docs/students.md; docs/results.md)."""

    OK = 0
    """Every check that carries points passed; or the command did what it was asked."""
    FAILED = 1
    """A check failed, the file could not be graded, or the command could not finish."""
    USAGE = 2
    """A usage error: a missing file, an unknown option or assignment, an invalid spec."""
    ISOLATION = 3
    """Student code cannot be isolated well enough for the job."""
    INTERRUPTED = 130
    """Interrupted (Ctrl-C); a batch keeps what it saved."""


class GraderError(Exception):
    """Root of every exception the grader raises on purpose: a problem of the grader's command or
    machine. `grader.cli` prints `prefix` and the message, and exits with `exit_code`."""

    exit_code = ExitCode.FAILED
    prefix = "error: "

    def __reduce__(self):
        """Pickled as it is, whatever its __init__ takes (WorkerFailure's kind, Rejected's execution): errors cross
        process boundaries, from a batch's grading processes and Dask's workers."""
        return _rebuilt, (type(self), self.args, dict(vars(self)))


def _rebuilt(cls: type[GraderError], args: tuple, state: dict) -> GraderError:
    """An error as GraderError.__reduce__ pickled it: its class, its args and its attributes, __init__ not run
    again (it may take other arguments than args holds)."""
    error = cls.__new__(cls)
    error.args = args
    vars(error).update(state)
    return error


# -- the instructor's or the user's to fix: they end a command ----------------------------------


class SpecError(GraderError):
    """An assignment spec is invalid. The instructor fixes the spec file named in the message."""

    exit_code = ExitCode.USAGE
    prefix = "the assignment spec is invalid (for your instructor): "


class UsageError(GraderError):
    """The command line asked for something impossible (a missing file, an unknown assignment); the
    message names it, and the user runs the command again without it."""

    exit_code = ExitCode.USAGE


class IsolationError(GraderError):
    """Student code cannot be isolated well enough for this job; the message says how to fix it
    (install bubblewrap, fix the named files' permissions, or pass --trusted-code)."""

    exit_code = ExitCode.ISOLATION
    prefix = ""


class NoUid(IsolationError):
    """Running as root, no unprivileged uid could be leased for a sandbox: no folder for the uid
    locks could be made, or every uid of the range is taken. The message says which; make /run or
    /var/lock writable by root, or wait for other graders to finish."""


class SandboxError(GraderError):
    """A sandbox could not be started: a problem of the machine, not of the submission. The message
    says what failed; run with GRADER_SANDBOX_DEBUG=1 to see the sandbox's own errors."""


class ClusterError(GraderError):
    """The cluster cannot be used (unreachable, no workers); nothing was graded. Check the scheduler's
    address and that its workers run; the message says which failed."""


class SchedulerLost(GraderError):
    """The scheduler went away mid-batch; what was received is saved. Run the same command again (with
    a scheduler) to grade the rest."""


class UnfitWorker(IsolationError):
    """A worker may not grade: it runs another grader, or cannot isolate student code. The message
    names the worker and what to install or fix there."""


class GradingProcessDied(GraderError):
    """A grading process of a batch died, or stopped answering, mid-task: that student gets an error
    result, and the next run of the batch grades them again."""


class MiswiredChecks(GraderError):
    """The checks' declarations of what they read from one another cannot hold: a bug of the grader's own
    checks (their `@check(..., reads=...)`, grader/checks/registry.py: a read of a check no module registers, and
    the two below), never of a submission or a spec. The message names the checks; fix their declarations."""


class UndeclaredRead(MiswiredChecks):
    """A check read the result of a check it does not declare it reads: declare it (reads=...), so that the runner
    runs that check first and the result is there, or do not read it."""


class ReadCycle(MiswiredChecks):
    """The checks' declared reads form a cycle (each would run only after the other): no order runs them."""


# -- a submission's problems: caught inside the grading and turned into data ---------------------


class WorkerFailure(GraderError):
    """The process running the student's code hung, ran out of memory or died; the sandbox replaces it
    on the next request, and the check or the load that met it says so to the student.

    `kind` is one of KINDS: `timeout` (a request's time or its CPU time ran out), `memory` (killed,
    most likely out of memory), `crash` (it exited or died otherwise), `disk` (it filled the sandbox's
    disk space), `protocol` (it sent the grader something it cannot read).
    """

    KINDS = ("timeout", "memory", "crash", "disk", "protocol")
    RESULT_KINDS = {"timeout": "timeout", "memory": "memory", "crash": "crash", "disk": "crash", "protocol": "crash"}
    """A result's error kind when this failure stops a submission from loading. A result's error kinds
    are the contract's closed list (docs/results.md, grader.result.ERROR_KINDS), which LMS scripts
    switch on, so `disk` and `protocol` are reported as `crash`, the message saying which."""

    def __init__(self, kind: str, message: str):
        if kind not in self.KINDS:
            raise ValueError(f"a WorkerFailure's kind is one of {self.KINDS}, not {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message

    @property
    def result_kind(self) -> str:
        return self.RESULT_KINDS[self.kind]


class OutOfTime(WorkerFailure):
    """A request reached its overall deadline (kind `timeout`). outer: that deadline was the caller's
    (the check's, the grading's), not the request's own limit, so the student is told which ran out."""

    def __init__(self, message: str, outer: bool):
        super().__init__("timeout", message)
        self.outer = outer


class Closed(GraderError):
    """The other end of a sandbox's channel closed its socket (the unit exited or died); the unit
    finds out why and raises the WorkerFailure the student is told of."""


class CheckTimeout(GraderError):
    """A check used up its time limit; it ends with status error, saying so to the student."""


class Rejected(GraderError):
    """The submission cannot be graded at all: grade() turns it into a result with status `error`.
    `kind` is one of grader.result.ERROR_KINDS, `message` tells the student what to fix."""

    def __init__(self, kind: str, message: str, execution=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.execution = execution
        """A notebook's report, when it ran before it was stopped."""


class NotebookError(GraderError):
    """The file is not a notebook nbformat can read; the message says why, for the student (the
    submission is then `unreadable`)."""


class Refused(GraderError, OSError):
    """A student's file the grader will not read (a link, a folder, too large); the message says why
    and what to do, for the student. An OSError too, as every other file that cannot be read."""

    def __str__(self) -> str:
        return self.args[0]


class NotAnArchive(GraderError):
    """A batch's input is not a zip the grader can read: it is skipped, with a note saying why."""


class NotApplicable(GraderError):
    """A sabotage operator finds nothing to change in this engine (the message says what it looked
    for): that engine has no such mutant, which `grader selftest` shows as `-`."""


class BadMetadata(GraderError):
    """A Gradescope export's submission_metadata.yml that cannot be read (discovery notes it and goes on)."""


class BadResult(GraderError):
    """Data read back as a result (a result.json, a grading process's answer) is not one: the message
    says which field is wrong. Grade the submission again (`--force` for a batch)."""


def host_prefixes() -> list[tuple[str, str]]:
    """Folders of the grader's host that a message for a student must not show, longest first,
    each with what stands in for it (the grader's own files keep their package-relative path)."""
    import os
    import sys
    from pathlib import Path

    install = Path(__file__).resolve().parent.parent
    places = {
        (str(install) + os.sep, ""),
        (sys.prefix, "<python>"),
        (sys.base_prefix, "<python>"),
        (str(Path.home()), "~"),
    }
    return sorted(places, key=lambda p: -len(p[0]))


def without_host_paths(value, extra: Sequence[tuple[str, str]] = ()):
    """A text (or JSON-like data) with the host's folders taken out of every string."""
    prefixes = sorted([*extra, *host_prefixes()], key=lambda p: -len(p[0]))

    def clean(item):
        if isinstance(item, str):
            for prefix, replacement in prefixes:
                if prefix and prefix != "/":
                    item = item.replace(prefix, replacement)
            return item
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items()}
        if isinstance(item, list):
            return [clean(v) for v in item]
        return item

    return clean(value)
