"""What lets a rerun of a batch skip a student: their content key, the result an earlier run saved, and the key
sealed once their row is counted.

Each student's folder, `students/<id>/` under the output (so no id can collide with the
class files beside it), holds result.json (the contract's schema), gradescope.json
(Gradescope's format), report.html and key.txt: the content key that tells a rerun it may
skip this student, with the hash of each file written, so an output changed since is
regraded rather than trusted. Every write is atomic (a temporary file, then a rename), so
an interrupted batch leaves either a whole result or none. Nothing written for a student
names a path of the grader's host: the submission is named by its file name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from grader import secret, spec
from grader.batch import keys
from grader.batch.discover import Submission
from grader.batch.earlier import saved_result
from grader.batch.insight import code_of
from grader.batch.outputs import Row, atomic_write, flags_for
from grader.batch.tasks import OUTPUTS, Task, TaskOutcome, fingerprint, host_id
from grader.files import KEY_FILE, STUDENTS_FOLDER
from grader.lms import late
from grader.result import Result
from grader.sandbox.isolation import Isolation


@dataclass(frozen=True)
class Student:
    """One student of the batch: what they handed in, and where their results go."""

    submission: Submission
    out: Path
    source: bytes
    tests: bytes | None
    lateness: late.Lateness = late.ON_TIME

    def key(self, assignment: spec.Assignment, engine_key: bytes, trusted: bool) -> str:
        """What the result depends on: the submission's and tests' bytes, the assignment, the grader, the
        engine secret (keyed in, never written out) and whether student code ran trusted, unisolated."""
        digest = hashlib.sha256()
        for data in (self.source, self.tests):
            digest.update(hashlib.sha256(data).digest() if data is not None else b"-")
        settings = {k: v for k, v in dataclasses.asdict(assignment).items() if k != "folder"}
        digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
        digest.update(fingerprint().encode())
        digest.update(secret.seed(engine_key, b"resume").encode())
        digest.update(b"trusted" if trusted else b"isolated")
        if self.lateness.late:  # the report says how late, and what it cost
            digest.update(repr(self.lateness).encode())
        return digest.hexdigest()

    def task(
        self,
        assignment: spec.Assignment,
        key: bytes,
        trusted: bool,
        private: tuple[str, ...],
        tried: Isolation | None = None,
    ) -> Task:
        """The student's grading as data (grader/batch/tasks.py); tried: the isolation this machine's trial proved,
        which its grading processes need not try again."""
        tests = self.submission.tests
        return Task(
            self.submission.student,
            self.submission.path.name,
            self.source,
            tests.name if tests else None,
            self.tests,
            assignment,
            key,
            fingerprint(),
            trusted,
            host_id(),
            private,
            self.lateness,
            tried,
        )


STUDENTS = STUDENTS_FOLDER
"""The folder under the output holding one folder per student."""


def save(student: Student, outcome: TaskOutcome) -> None:
    """Write a student's files (the key that lets a rerun skip them is written after their row is counted)."""
    (student.out / KEY_FILE).unlink(missing_ok=True)
    for name in OUTPUTS:
        atomic_write(student.out / name, outcome.texts[name])


def seal(student: Student, key: str) -> None:
    """Write the key that lets a rerun skip this student (grader/batch/keys.py), after their row is counted."""
    keys.seal(student.out, key)


def row_of(student: Student, result: Result, skipped: bool) -> Row:
    sub, lateness = student.submission, student.lateness
    code = code_of(sub.path.name, student.source)  # bounded, and never raises: nor does flags_for
    return Row(
        sub.student,
        sub.late or lateness.late,
        result,
        skipped,
        sub.path.name,
        f"{STUDENTS}/{student.out.name}",
        flags_for(code),
        sub.identity,
        reason=lateness.text,
        penalty=lateness.penalty(result.score),
        code=code,
        late_percent=lateness.percent,
    )


def resumed(
    students: list[Student], assignment: spec.Assignment, key: bytes, force: bool, trusted: bool
) -> tuple[list[Row], list[tuple[Student, str]]]:
    """The rows of the students an earlier run graded from the same files (unless force: --force), and the students
    still to grade, each with their content key (trusted: --trusted-code, which the key holds)."""
    rows: list[Row] = []
    todo: list[tuple[Student, str]] = []
    for student in students:
        content = student.key(assignment, key, trusted)
        saved = saved_result(student.out) if not force and keys.unchanged(student.out, content) else None
        if saved is not None:
            rows.append(row_of(student, saved, skipped=True))
        else:
            todo.append((student, content))
            if force:  # until regraded, not final: a run finishing an interrupted --force run regrades it
                (student.out / KEY_FILE).unlink(missing_ok=True)
    return rows, todo
