"""One student's grading as data in and data out: what a batch's grading process runs, on the
instructor's machine or on a Dask worker that shares no folder with it.

A Task carries the submission's bytes (and its tests'), the parsed assignment and the
instructor's engine secret; grade_task writes the bytes into a private folder of its own
process, grades them there and returns the result and its rendered files as data. A task
reaches only grading processes, never a sandbox; nothing a task returns is written anywhere
but by the instructor's process, and nothing in it names a path of the machine that graded
it. A grading process first checks that it may grade at all (the same grader as the
instructor's, student code isolated as a batch requires: on the instructor's own machine,
where the class's folders are, a sandbox's uid must not be able to read them) and otherwise
answers Unfit, which stops the batch rather than grading anyone differently (as does a
sandbox that cannot be confined or started as a batch requires). Whether a sandbox starts at
all is tried once per machine: on the instructor's, the instructor's process tried one before
it sent any task (Task.tried), and a grading process that isolates student code the same way
takes that trial as its own; a Dask worker elsewhere tries its own.

A result in which something ran out of time (`timed_out`) may owe that to whatever else was
graded beside it: a batch grades that student again, alone, before it keeps the result.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.metadata
import json
import os
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader import __version__, feedback
from grader.errors import BadResult, IsolationError, SandboxError
from grader.files import CLASS_PAGE_FILE, GRADESCOPE_FILE, REPORT_FILE, RESULT_FILE, STUDENT_OUTPUTS
from grader.final import Final
from grader.folders import temporary_folder
from grader.gradescope.results import results
from grader.grading import Options, grade
from grader.lms.late import ON_TIME, Lateness
from grader.render import html
from grader.render.templating import ENV as TEMPLATES
from grader.result import Result, SubmissionError
from grader.sandbox import trial
from grader.sandbox.isolation import Isolation
from grader.sandbox.trial import require_started
from grader.spec import Assignment

OUTPUTS = STUDENT_OUTPUTS
CLASS_PAGE = f"../../{CLASS_PAGE_FILE}"
"""The class page, from a student's report (DIR/students/<id>/report.html, DIR/index.html)."""
STAGING = "<staging>"
"""What stands for a grading process's private folder in every text a student sees."""


@dataclass(frozen=True)
class Task:
    student: str
    name: str
    """The submission's file name (a .py file or a notebook)."""
    source: bytes
    tests_name: str | None
    tests: bytes | None
    assignment: Assignment
    key: bytes = field(repr=False)
    """The instructor's engine secret (grader/secret.py): the same engines wherever the task runs."""
    grader: str
    """The instructor's grader (fingerprint()); a process running another refuses the task."""
    trusted: bool = False
    host: str = ""
    """The instructor's machine (host_id())..."""
    private: tuple[str, ...] = ()
    """...and, there, what student code must not read: the class's inputs and outputs, the assignment."""
    late: Lateness = ON_TIME
    """How late the LMS says this was, and what the late policy takes: the report says it."""
    tried: Isolation | None = None
    """The isolation with which the instructor's process, on its machine (host), started and stopped a sandbox whose
    Python imported pytest before anyone was graded (grader/sandbox/trial.py): a grading process there that isolates
    student code the same way takes that trial as its own."""


@dataclass(frozen=True)
class TaskOutcome:
    student: str
    result: Result | None
    """The student's result (as data only on the wire, from a grading process, until checked() reads it)."""
    texts: dict[str, str] = field(default_factory=dict)
    """result.json, gradescope.json and report.html, as the instructor's process will write them."""
    unfit: str | None = None
    """Why this process may not grade (the result is then None): the batch stops."""


GRADING_LIBRARIES = ("hypothesis", "pytest", "ipython", "jinja2", "pygments")
"""Libraries whose version can change a verdict or a report: part of the fingerprint."""


@functools.cache
def fingerprint() -> str:
    """The grader's version, Python's (major.minor) and its grading libraries', and a digest of every file of the
    grader's that grading reads."""
    import grader
    import reference

    digest = hashlib.sha256()
    digest.update(f"python {sys.version_info[:2]}\0".encode())
    for library in GRADING_LIBRARIES:
        try:
            digest.update(f"{library} {importlib.metadata.version(library)}\0".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{library} -\0".encode())
    for package in (grader, reference):
        assert package.__file__ is not None, "a regular package, loaded from its __init__.py"
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".j2", ".toml", ".json", ".csv") and "__pycache__" not in path.parts:
                digest.update(f"{package.__name__}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:16]}"


@functools.cache
def host_id() -> str:
    """This machine: its name and this boot's id (two containers of one host differ by name)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def warm() -> None:
    """What a grading process does once, before its first task comes, so that the first student waits for none of
    it: the fingerprint its tasks are checked against, and the libraries and report template a grading loads on
    first use (a notebook's reader: nbformat and IPython's transformer, which a .py class never needs)."""
    try:
        fingerprint()
        host_id()
        for module in ("nbformat", "IPython.core.inputtransformer2"):
            importlib.import_module(module)
        TEMPLATES.get_template("student.html.j2")
    except Exception:  # only a head start: a grading that needs any of it meets the same error, in its guard
        pass


def fitness(grader: str, trusted: bool, host: str = "", private: tuple[str, ...] = ()) -> str | None:
    """Why this process may not grade the instructor's tasks, or None when it may."""
    return _isolation(grader, trusted, host, private)[0]


def _isolation(
    grader: str, trusted: bool, host: str, private: tuple[str, ...], tried: Isolation | None = None
) -> tuple[str | None, Isolation | None]:
    """Why this process may not grade, or how it isolates student code for a batch (a sandbox tried first, unless
    the instructor's process tried one on this machine, with the same grader, that isolated the same way)."""
    where = socket.gethostname()
    if grader != fingerprint():
        return (
            f"{where} runs grader {fingerprint()}, not the instructor's {grader}: install the same version of "
            "micrograd-grader (and the same Python and libraries) on every worker"
        ), None
    here = host == host_id()
    mine = tuple(Path(p) for p in private) if here else ()
    if here and tried is not None:
        trial.vouched(tried)
    try:
        return None, require_started("batch", trusted=trusted, private=mine)
    except IsolationError as exc:
        return f"{where} cannot isolate student code: {exc}", None


def grade_task(task: Task) -> TaskOutcome:
    """Grade one student from the task's bytes; never raises, whatever the submission."""
    unfit, iso = _isolation(task.grader, task.trusted, task.host, task.private, task.tried)
    if unfit:
        return TaskOutcome(task.student, None, unfit=unfit)
    assert iso is not None, "_isolation gives either why this process may not grade or its isolation"
    started = time.monotonic()
    try:
        result = _grade_in_private_folder(task, iso, started)
        return TaskOutcome(task.student, result, render(task, result))
    except IsolationError as exc:  # a sandbox that could not be confined: no one is graded so
        return TaskOutcome(task.student, None, unfit=f"{socket.gethostname()} cannot isolate student code: {exc}")
    except SandboxError as exc:  # the machine's problem, not the student's: the batch stops, naming it once
        return TaskOutcome(task.student, None, unfit=f"{socket.gethostname()} cannot start a sandbox: {exc}")
    except Exception:
        return failed(
            task,
            "the grader failed on this submission (the instructor's log has the details)",
            log=traceback.format_exc(),
        )


def _grade_in_private_folder(task: Task, iso: Isolation, started: float) -> Result:
    with temporary_folder("grader-task-") as tmp:  # removed without recursion
        folder = Path(tmp) / "s" / task.student
        folder.mkdir(parents=True, mode=0o700)
        submission = folder / Path(task.name).name
        submission.write_bytes(task.source)
        tests = None
        if task.tests_name is not None and task.tests is not None:
            tests = folder / Path(task.tests_name).name
            tests.write_bytes(task.tests)
        private = tuple(
            [(str(p) + os.sep, "") for p in (folder, folder.resolve())]
            + [(str(p), ".") for p in (folder, folder.resolve())]
            + [(str(p), STAGING) for p in (Path(tmp), Path(tmp).resolve())]
        )  # the result, cleaned once where it is made, names none of this process's folders
        options = Options(
            tests=tests, one_sandbox=True, isolation=iso, engine_key=task.key, source=task.source, host_paths=private
        )
        try:
            return grade(submission, task.assignment, options)
        except (IsolationError, SandboxError):
            raise
        except Exception:
            why = f"the grader failed on this submission:\n{traceback.format_exc()}"
            return feedback.cleaned(crash_result(task.name, task.assignment.id, started, why), private)


def timed_out(result: Result | None) -> bool:
    """Did a time limit stop anything in this grading, or did the clock decide a catch of sabotage (the
    gradings running beside it may have caused either)?"""
    if result is None:
        return False
    cells = (result.notebook or {}).get("cells") or []
    return (
        result.error is not None
        and result.error.kind == "timeout"
        or any(c.timing for c in result.checks)
        or any(isinstance(c, dict) and c.get("status") == "timeout" for c in cells)
    )


def time_limit(task: Task) -> float:
    """How long a grading process may take over a task before it is taken for stuck: twice the longest
    a submission may run, and five minutes for everything around it."""
    return 2 * task.assignment.limits.submission_s + 300


def render(task: Task, result: Result) -> dict[str, str]:
    """The files the instructor's process writes for this student."""
    source = task.source.decode("utf-8", "replace") if task.name.endswith((".py", ".ipynb")) else None
    shown = Final.of(result, task.late.penalty(result.score), task.late.text)  # the final score, late penalty taken
    return {
        RESULT_FILE: json.dumps(result.to_dict(), indent=2),
        GRADESCOPE_FILE: json.dumps(results(result, shown), indent=2),
        REPORT_FILE: html.student_report(
            result,
            source,  # a notebook's: the report shows the cell a repair is in
            task.assignment.title,
            shown,
            student=task.student,
            class_page=CLASS_PAGE,
        ),
    }


def failed(task: Task, why: str, log: str | None = None) -> TaskOutcome:
    """The outcome for a student whose grading could not finish, saying why; log (the details, for the
    instructor's eyes only) goes to the grading process's standard error."""
    if log:
        print(f"grading {task.student} failed:\n{log}", file=sys.stderr)
    result = crash_result(task.name, task.assignment.id, time.monotonic(), why)
    return TaskOutcome(task.student, result, render(task, result))


def checked(value: object, task: Task) -> TaskOutcome:
    """An outcome from a grading process, as the instructor's process may save it for this task's student:
    it must be for that student, hold every file and a result that is one (read as untrusted data); anything
    else is that student's error."""
    if isinstance(value, dict):
        with contextlib.suppress(TypeError):
            value = TaskOutcome(**value)
    if not isinstance(value, TaskOutcome):
        return failed(task, "the grading process answered something that is not a result")
    if value.unfit:
        return value
    if (
        value.student != task.student
        or not isinstance(value.result, (dict, Result))
        or not isinstance(value.texts, dict)
        or set(value.texts) != set(OUTPUTS)
        or not all(isinstance(t, str) for t in value.texts.values())
    ):
        return failed(task, "the grading process answered with a result that is not this submission's")
    try:
        return replace(
            value, result=value.result if isinstance(value.result, Result) else Result.from_dict(value.result)
        )
    except BadResult as bad:
        return failed(task, f"the grading process answered with a result that is not one ({bad})")


def crash_result(name: str, assignment: str, started: float, message: str) -> Result:
    """A result for a submission the grader could not grade, saying why."""
    return Result(
        name,
        None,
        assignment,
        __version__,
        "error",
        SubmissionError("crash", message),
        0.0,
        0.0,
        round(time.monotonic() - started, 3),
        (),
    )
