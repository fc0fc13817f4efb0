"""One student's grading as data in and data out: what a batch's grading process runs, on the
instructor's machine or on a Dask worker that shares no folder with it.

A Task carries the submission's bytes (and its tests'), the parsed assignment and the
instructor's engine secret; grade_task writes the bytes into a private folder of its own
process, grades them there and returns the result and its rendered files as data. Nothing
in a task names a path of the instructor's machine, and nothing a task returns is written
anywhere but by the instructor's process. A grading process first checks that it may grade
at all (the same grader as the instructor's, student code isolated as a batch requires) and
otherwise answers Unfit, which stops the batch rather than grading anyone differently.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from grader import __version__
from grader.batch.outputs import gradescope
from grader.errors import without_host_paths
from grader.grading import Options, grade
from grader.render import html
from grader.result import Result, SubmissionError
from grader.sandbox.isolation import Isolation, IsolationError, require
from grader.spec import Assignment

OUTPUTS = ("result.json", "results.json", "report.html")
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


@dataclass(frozen=True)
class Outcome:
    student: str
    result: dict | None
    texts: dict[str, str] = field(default_factory=dict)
    """result.json, results.json and report.html, as the instructor's process will write them."""
    unfit: str | None = None
    """Why this process may not grade (the result is then None): the batch stops."""


@functools.cache
def fingerprint() -> str:
    """The grader's version and a digest of every file of its that grading reads."""
    import grader
    import reference

    digest = hashlib.sha256()
    for package in (grader, reference):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".j2", ".toml", ".json", ".csv") and "__pycache__" not in path.parts:
                digest.update(f"{package.__name__}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes())
    return f"{__version__}+{digest.hexdigest()[:16]}"


def fitness(grader: str, trusted: bool) -> str | None:
    """Why this process may not grade the instructor's tasks, or None when it may."""
    return _isolation(grader, trusted)[0]


def _isolation(grader: str, trusted: bool) -> tuple[str | None, Isolation | None]:
    """Why this process may not grade, or how it isolates student code for a batch."""
    where = socket.gethostname()
    if grader != fingerprint():
        return (f"{where} runs grader {fingerprint()}, not the instructor's {grader}: install the same version of "
                "micrograd-grader on every worker"), None
    try:
        return None, require("batch", trusted=trusted)
    except IsolationError as exc:
        return f"{where} cannot isolate student code: {exc}", None


def grade_task(task: Task) -> Outcome:
    """Grade one student from the task's bytes; never raises for anything about the submission."""
    unfit, iso = _isolation(task.grader, task.trusted)
    if unfit:
        return Outcome(task.student, None, unfit=unfit)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="grader-task-") as tmp:
        folder = Path(tmp) / "s" / task.student
        folder.mkdir(parents=True, mode=0o700)
        submission = folder / Path(task.name).name
        submission.write_bytes(task.source)
        tests = None
        if task.tests_name is not None and task.tests is not None:
            tests = folder / Path(task.tests_name).name
            tests.write_bytes(task.tests)
        try:
            data = grade(submission, task.assignment, Options(tests=tests, one_sandbox=True, isolation=iso,
                                                              engine_key=task.key)).to_dict()
        except Exception:  # noqa: BLE001 - one bad submission never stops a batch
            data = crash_result(task.name, task.assignment.id, started,
                                f"the grader failed on this submission:\n{traceback.format_exc()}")
        data = without_host_paths(data, [(str(p) + os.sep, "") for p in (folder, folder.resolve())]
                                  + [(str(p), ".") for p in (folder, folder.resolve())]
                                  + [(str(p), STAGING) for p in (Path(tmp), Path(tmp).resolve())])
    return Outcome(task.student, data, render(task, data))


def render(task: Task, data: dict) -> dict[str, str]:
    """The files the instructor's process writes for this student."""
    python_source = task.source.decode("utf-8", "replace") if task.name.endswith(".py") else None
    return {
        "result.json": json.dumps(data, indent=2),
        "results.json": json.dumps(gradescope(data), indent=2),
        "report.html": html.student_report(data, python_source, task.assignment.title),
    }


def failed(task: Task, why: str) -> Outcome:
    """The outcome for a student whose grading could not finish, saying why."""
    data = crash_result(task.name, task.assignment.id, time.monotonic(), why)
    return Outcome(task.student, data, render(task, data))


def crash_result(name: str, assignment: str, started: float, message: str) -> dict:
    """A result for a submission the grader could not grade, saying why."""
    return Result(name, None, assignment, __version__, "error", SubmissionError("crash", message), 0.0, 0.0,
                  round(time.monotonic() - started, 3), ()).to_dict()
