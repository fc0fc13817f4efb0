"""`grader batch`: grade every submission in parallel, write each result the moment it is done, resume.

The steps, each in a module of its own: the students found under the inputs (grader/batch/discover.py), those an
earlier run graded from the same files skipped (resume.py), the rest graded (execute.py: by this machine's grading
processes or a Dask cluster's, from data), and the class files written (report.py). This machine's grading processes
and the batch's one trial sandbox start before all of it (command.py, the command's entry), and get ready meanwhile.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from grader import catalog, secret, spec
from grader.batch import applied
from grader.batch.discover import Submission, discover
from grader.batch.execute import execute
from grader.batch.found import Found, Ungradable
from grader.batch.graders import Graders, started_first
from grader.batch.insight import code_of, previous_works
from grader.batch.notes import Grouped, grouped
from grader.batch.outputs import Insight
from grader.batch.report import Known, finish_command, incomplete, whole_class
from grader.batch.resume import STUDENTS, Student, resumed
from grader.errors import ExitCode, SchedulerLost, UsageError
from grader.files import INCOMPLETE_FILE
from grader.folders import temporary_folder
from grader.lms import groups as lms_groups
from grader.lms import late
from grader.lms import roster as rosters
from grader.lms.identity import plain
from grader.lms.names import quoted
from grader.sandbox.trial import require_started
from grader.text import failure


@dataclass(frozen=True)
class BatchRequest:
    """What `grader batch` was asked (its options, by the names cli.py gives them)."""

    inputs: list[Path]
    out: Path
    assignment: str
    jobs: int
    force: bool = False
    scheduler: str | None = None
    """A Dask scheduler's address: grade on its workers instead of this machine's processes."""
    trusted_code: bool = False
    roster: Path | None = None
    previous: Path | None = None
    base: Path | None = None
    groups: Path | None = None

    @property
    def given(self) -> tuple[Path, ...]:
        """The instructor's files given beside the class (the roster, the groups, the lesson's code, an earlier
        term's folder): student code may read none of them, as none of the class's (docs/platforms.md)."""
        return tuple(p for p in (self.roster, self.groups, self.base, self.previous) if p is not None)


def main(graders: Graders | None = None, **options) -> int:
    """`grader batch` (graders: this machine's grading processes, started first by grader/batch/command.py): every
    input must exist before anything is graded."""
    request = BatchRequest(**options)
    inputs, out, base = request.inputs, request.out, request.base
    missing = [str(p) for p in inputs + [p for p in (base, request.groups) if p] if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file: name a folder for the results (made if it does not exist)")
    if any(out.resolve() == p.resolve() for p in inputs):
        raise UsageError(f"--out {out} is one of the inputs: name a folder for the results outside the submissions")
    if request.previous is not None:
        previous_works(request.previous)  # an unreadable --previous stops the batch before anything is graded
    return run_batch(request, code_of(base.name, base.read_bytes()) if base else None, graders)


def run_batch(request: BatchRequest, base: str | None = None, graders: Graders | None = None) -> int:
    """Grade the class of `request` (base: the lesson's own code, which the similarity pass sets aside) on a Dask
    cluster, or on this machine's grading processes: `graders`, with the batch's trial sandbox, started first (by
    the command, or here), so that they get ready while this process finds the class. They get no student before
    that trial has passed."""
    if graders is None and request.scheduler is None:
        with started_first(request.jobs) as graders:
            return _run_batch(request, base, graders)
    return _run_batch(request, base, graders)


def _run_batch(request: BatchRequest, base: str | None, graders: Graders | None) -> int:
    inputs, out, trusted = request.inputs, request.out, request.trusted_code
    task_spec = catalog.load(request.assignment)  # fail early on an unknown assignment
    class_list = rosters.read(request.roster) if request.roster else None  # and on a roster it cannot read
    students, found, noted = _discovered(request, task_spec, class_list)
    names = {s.submission.student for s in students} | {m.student for m in found.missing}
    for entry in class_list.students if class_list else ():  # the ids a roster's student without work is given
        names |= {entry.id_base, f"{entry.id_base}_{entry.user_id}"}
    overrides, adjusted_before = applied.for_batch(out, task_spec, names)  # a TA's typo stops the batch here
    known = Known(noted, found.missing, overrides, Insight(request.previous, base))
    if not out.exists() and os.geteuid() == 0:
        out.mkdir(parents=True, mode=0o700)  # student code runs as other uids: the class's results stay root's
    out.mkdir(parents=True, exist_ok=True)
    closed = (task_spec.folder, out, *inputs, *request.given)  # what student code must not read
    # On this machine, the one trial of the batch: its grading processes, on the same machine with the same grader,
    # take its word for the isolation it tried (Task.tried). On a cluster, each worker checks its own.
    tried = require_started("batch", trusted=trusted, private=closed) if graders is not None else None
    key = secret.key(task_spec.folder)
    rows, todo = resumed(students, task_spec, key, request.force, trusted)
    private = tuple(str(p.resolve()) for p in closed)
    tasks = [student.task(task_spec, key, trusted, private, tried) for student, _ in todo]
    if graders is not None:
        graders.keep(len(tasks))  # those started for students an earlier run graded stop now
    on = graders if graders is not None else str(request.scheduler)
    try:
        execute(todo, tasks, rows, len(students), request.jobs, on)
    except KeyboardInterrupt:
        incomplete(out, task_spec, rows, len(students), known)
        print(
            f"\ninterrupted: {len(rows)} of {len(students)} graded and saved (gradebook so far: "
            f"{out / INCOMPLETE_FILE}); {finish_command()} grades the other {len(students) - len(rows)}",
            file=sys.stderr,
        )
        return ExitCode.INTERRUPTED
    except SchedulerLost as lost:
        incomplete(out, task_spec, rows, len(students), known)
        print(
            f"\n{lost}: {len(rows)} of {len(students)} graded and saved (gradebook so far: {out / INCOMPLETE_FILE}); "
            f"{finish_command()}, once the scheduler is back, grades the other {len(students) - len(rows)}",
            file=sys.stderr,
        )
        return ExitCode.FAILED
    whole_class(out, task_spec, rows, class_list, known, adjusted_before)
    return ExitCode.OK


def _discovered(
    request: BatchRequest, assignment: spec.Assignment, class_list: rosters.Roster | None
) -> tuple[list[Student], Found, tuple[Grouped, ...]]:
    """The students found under the inputs (with --groups applied), each read for grading, and the notes on how
    they were found (said on stderr); a UsageError when there is no one to grade."""
    teams = lms_groups.read(request.groups) if request.groups else None
    with temporary_folder("grader-batch-") as staging:  # removed without recursion, however deep
        found = discover(request.inputs, staging, exclude=request.out)
        noted = grouped(found.notes)  # one line per student and kind, the important kinds first
        for line in noted:
            print(f"note: {line.text}", file=sys.stderr)
        if teams is not None:
            submissions, group_notes = lms_groups.apply(teams, found.submissions)
            found = dataclasses.replace(found, submissions=tuple(submissions))
            for note in group_notes:
                print(f"note: {note}", file=sys.stderr)
        students, found = _students(found, request.out, assignment)
    if not students and not found.missing and class_list is None:  # before any folder is made
        raise UsageError(
            f"no submissions found under {', '.join(map(str, request.inputs))}: a batch grades .py files, "
            "notebooks, and folders and zips holding them (docs/batch.md)"
        )
    return students, found, tuple(noted)


def _students(found: Found, out: Path, assignment: spec.Assignment) -> tuple[list[Student], Found]:
    """Each student found with a submission, read for grading, each in a guard: a student whose files cannot be
    read (or whose lateness cannot be assessed) is one more student found with nothing to grade, with the
    reason, never the end of the batch."""
    students, unread = [], []
    for submission in found.submissions:
        try:
            students.append(_student(submission, out, late.assess(assignment.late, submission.identity)))
        except Exception as exc:
            who = submission.identity or plain(submission.student)
            why = f"the file {quoted(submission.path.name)} could not be read for grading ({failure(exc)})"
            unread.append(Ungradable(submission.student, who, why, submission.source))
    return students, dataclasses.replace(
        found, missing=tuple(sorted(found.missing + tuple(unread), key=lambda m: m.student))
    )


def _student(submission: Submission, out: Path, lateness: late.Lateness = late.ON_TIME) -> Student:
    tests = submission.tests.read_bytes() if submission.tests else None
    return Student(submission, out / STUDENTS / submission.student, submission.path.read_bytes(), tests, lateness)
