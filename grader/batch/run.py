"""Grade every submission in parallel, write each result the moment it is done, resume.

Each student's folder, `students/<id>/` under the output (so no id can collide with the
class files beside it), holds result.json (the contract's schema), gradescope.json
(Gradescope's format), report.html and key.txt: the content key that tells a rerun it may
skip this student, with the hash of each file written, so an output changed since is
regraded rather than trusted. Every write is atomic (a temporary file, then a rename), so
an interrupted batch leaves either a whole result or none. Nothing written for a student
names a path of the grader's host: the submission is named by its file name.

The grading itself happens elsewhere, from data: each student still to grade becomes a Task
holding their bytes (grader/batch/tasks.py), graded by this machine's grading processes or by a
Dask cluster's (grader/batch/cluster.py), and only this process writes what comes back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from grader import catalog, secret, spec
from grader.batch import applied, keys
from grader.batch import overrides as book
from grader.batch.discover import Submission, discover
from grader.batch.earlier import earlier_rows
from grader.batch.everyone import everyone
from grader.batch.found import Found, Missing
from grader.batch.graders import Graders
from grader.batch.insight import code_of, previous_works
from grader.batch.notes import Grouped, grouped
from grader.batch.outputs import Incomplete, Insight, Row, atomic_write, flags_for, write_class_outputs
from grader.batch.tasks import OUTPUTS, Task, TaskOutcome, checked, failed, fingerprint, host_id, time_limit, timed_out
from grader.classfiles import NO_SUBMISSION
from grader.errors import BadResult, ExitCode, GradingProcessDied, SchedulerLost, UnfitWorker, UsageError
from grader.files import (
    CLASS_PAGE_FILE,
    GRADEBOOK_FILE,
    INCOMPLETE_FILE,
    KEY_FILE,
    RESULT_FILE,
    STUDENTS_FOLDER,
)
from grader.folders import temporary_folder
from grader.lms import groups as lms_groups
from grader.lms import late
from grader.lms import roster as rosters
from grader.lms.identity import plain
from grader.lms.names import quoted
from grader.result import Result
from grader.sandbox.trial import require_started
from grader.text import failure


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

    def task(self, assignment: spec.Assignment, key: bytes, trusted: bool, private: tuple[str, ...]) -> Task:
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
        )


STUDENTS = STUDENTS_FOLDER
"""The folder under the output holding one folder per student."""


def _save(student: Student, outcome: TaskOutcome) -> None:
    """Write a student's files (the key that lets a rerun skip them is written after their row is counted)."""
    (student.out / KEY_FILE).unlink(missing_ok=True)
    for name in OUTPUTS:
        atomic_write(student.out / name, outcome.texts[name])


def _seal(student: Student, key: str) -> None:
    """Write the key that lets a rerun skip this student (grader/batch/keys.py), after their row is counted."""
    keys.seal(student.out, key)


def _row(student: Student, result: Result, skipped: bool) -> Row:
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


def _saved(out: Path) -> Result | None:
    """The result saved for a student by an earlier run, or None if it is not one (then regraded)."""
    try:
        return Result.from_dict(json.loads((out / RESULT_FILE).read_text()))
    except (OSError, ValueError, BadResult):
        return None


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


@dataclass(frozen=True)
class Known:
    """What a batch knows of the class besides whom it grades: the notes on how students were found, those found
    with nothing to grade, the instructor's overrides, and what the class-wide passes read."""

    noted: tuple[Grouped, ...]
    missing: tuple[Missing, ...]
    overrides: list[book.Override]
    insight: Insight


def main(**options) -> int:
    """`grader batch`: every input must exist before anything is graded."""
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
    return run_batch(request, code_of(base.name, base.read_bytes()) if base else None)


def run_batch(request: BatchRequest, base: str | None = None) -> int:
    """Grade the class of `request` (base: the lesson's own code, which the similarity pass sets aside)."""
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
    if request.scheduler is None:  # on a cluster, each worker checks its own isolation
        require_started("batch", trusted=trusted, private=closed)
    key = secret.key(task_spec.folder)
    rows, todo = _resumed(students, task_spec, key, request)
    private = tuple(str(p.resolve()) for p in closed)
    tasks = [student.task(task_spec, key, trusted, private) for student, _ in todo]
    try:
        _execute(todo, tasks, rows, len(students), request.jobs, request.scheduler)
    except KeyboardInterrupt:
        _incomplete(out, task_spec, rows, len(students), known)
        print(
            f"\ninterrupted: {len(rows)} of {len(students)} graded and saved (gradebook so far: "
            f"{out / INCOMPLETE_FILE}); {finish_command()} grades the other {len(students) - len(rows)}",
            file=sys.stderr,
        )
        return ExitCode.INTERRUPTED
    except SchedulerLost as lost:
        _incomplete(out, task_spec, rows, len(students), known)
        print(
            f"\n{lost}: {len(rows)} of {len(students)} graded and saved (gradebook so far: {out / INCOMPLETE_FILE}); "
            f"{finish_command()}, once the scheduler is back, grades the other {len(students) - len(rows)}",
            file=sys.stderr,
        )
        return ExitCode.FAILED
    _whole_class(out, task_spec, rows, class_list, known, adjusted_before)
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


def _resumed(
    students: list[Student], assignment: spec.Assignment, key: bytes, request: BatchRequest
) -> tuple[list[Row], list[tuple[Student, str]]]:
    """The rows of the students an earlier run graded from the same files (unless --force), and the students still
    to grade, each with their content key."""
    rows: list[Row] = []
    todo: list[tuple[Student, str]] = []
    for student in students:
        content = student.key(assignment, key, request.trusted_code)
        saved = _saved(student.out) if not request.force and keys.unchanged(student.out, content) else None
        if saved is not None:
            rows.append(_row(student, saved, skipped=True))
        else:
            todo.append((student, content))
            if request.force:  # until regraded, not final: a run finishing an interrupted --force run regrades it
                (student.out / KEY_FILE).unlink(missing_ok=True)
    return rows, todo


def _whole_class(
    out: Path,
    assignment: spec.Assignment,
    graded: list[Row],
    class_list: rosters.Roster | None,
    known: Known,
    adjusted_before: set[str],
) -> None:
    """The class files of a finished batch: the rows graded now, those an earlier batch into `out` graded, and the
    roster's students with no submission, with the overrides applied; then what the batch says on its way out."""
    now = [(r.student, r.identity) for r in graded] + [(m.student, m.identity) for m in known.missing]
    before = earlier_rows(out, now, class_list is not None, assignment)  # the whole class, not only this run's
    if before:
        print(f"note: {len(before)} students graded into {out} by an earlier batch keep their rows", file=sys.stderr)
    rows = everyone(graded + before, known.missing, class_list, out / STUDENTS, assignment)
    rows = sorted(applied.on_rows(out, rows, known.overrides, assignment.max_score), key=lambda r: r.student)
    write_class_outputs(out, assignment, rows, known.noted, known.insight)
    applied.stamp_reports(out, rows, adjusted_before, assignment.max_score)
    for line in applied.review_lines(rows):
        print(line, file=sys.stderr)
    handed_in = [r for r in rows if r.shown_status != NO_SUBMISSION]
    absent = len(rows) - len(handed_in)
    failed = sum(r.result.status == "error" for r in handed_in)
    nothing = f"; {absent} on the roster handed in nothing (0 points, status no_submission)" if absent else ""
    print(
        f"graded {len(handed_in)} submissions ({sum(r.skipped for r in rows)} unchanged since the last run, "
        f"{failed} could not be graded){nothing}; gradebook: {out / GRADEBOOK_FILE} ({len(rows)} rows); class "
        f"summary: {out / CLASS_PAGE_FILE}"
    )
    for line in ending(graded, rows):
        print(line)


def _incomplete(out: Path, assignment: spec.Assignment, rows: list[Row], graded: int, known: Known) -> None:
    """The class outputs for those graded so far (of `graded` to grade) and those found with nothing to grade,
    marked incomplete (grades.incomplete.csv, not grades.csv), with the overrides applied; no roster rows, since a
    student not reached yet is not missing."""
    rows = everyone(rows, known.missing, None, out / STUDENTS, assignment)
    rows = applied.on_rows(out, rows, list(known.overrides), assignment.max_score)
    write_class_outputs(
        out,
        assignment,
        sorted(rows, key=lambda r: r.student),
        known.noted,
        known.insight,
        Incomplete(graded + len(known.missing), finish_command()),
    )


def finish_command() -> str:
    """The command that grades the rest of an interrupted batch: this one as typed, without --force (every
    student a --force run had not reached yet has no key, so is regraded; those it regraded are kept)."""
    args = sys.argv[1:]
    if args[:1] != ["batch"]:  # called from Python, not the command line
        return "the same batch without --force"
    kept = [a for a in args if not (a.startswith("--f") and "--force".startswith(a))]
    return f"`{shlex.join(['grader', *kept])}`"


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
            unread.append(Missing(submission.student, who, why, submission.source))
    return students, dataclasses.replace(
        found, missing=tuple(sorted(found.missing + tuple(unread), key=lambda m: m.student))
    )


def _student(submission: Submission, out: Path, lateness: late.Lateness = late.ON_TIME) -> Student:
    tests = submission.tests.read_bytes() if submission.tests else None
    return Student(submission, out / STUDENTS / submission.student, submission.path.read_bytes(), tests, lateness)


def _execute(
    todo: list[tuple[Student, str]], tasks: list[Task], rows: list[Row], total: int, jobs: int, scheduler: str | None
):
    """Grade each student still to grade (`tasks`, one per student of `todo`), saving each result (and adding its
    row) as it arrives, with a progress bar on a terminal."""
    from tqdm import tqdm

    from grader.batch.cluster import grade_on_cluster

    by_id = {student.submission.student: (student, content) for student, content in todo}
    live = sys.stderr.isatty()
    bar = tqdm(total=total, initial=len(rows), unit="submission", disable=not live, file=sys.stderr)
    not_full = sum(_not_full(r.result) for r in rows)
    with bar:
        outcomes = grade_on_cluster(scheduler, tasks) if scheduler else _on_processes(tasks, jobs)
        for outcome, final in outcomes:
            student, content = by_id[outcome.student]
            _save(student, outcome)
            assert outcome.result is not None, "an outcome given to save is graded: an unfit one stops the batch"
            row = _row(student, outcome.result, skipped=False)
            rows.append(row)
            if final:
                _seal(student, content)
            not_full += _not_full(row.result)
            bar.set_postfix(not_full_marks=not_full)
            bar.update()
            if not live:  # a log, a CI job, a pipe: one line per student instead of a bar
                print(progress_line(row, len(rows), total), file=sys.stderr, flush=True)


def progress_line(row: Row, done: int, total: int) -> str:
    """`[12/18] doejohn 60/100 (4.1 s)`, or what stopped the grading."""
    result = row.result
    got = f"could not be graded: {result.error.kind}" if result.error else f"{result.score:g}/{result.max_score:g}"
    return f"[{done:>{len(str(total))}}/{total}] {row.student} {got} ({result.duration_s:.1f} s)"


def ending(graded: list[Row], rows: list[Row]) -> list[str]:
    """The lines after a batch's summary: the slowest of the students graded (those graded in this run), and
    which of the rows could not be graded (not a roster's students with no submission)."""
    lines = []
    graded = sorted((r for r in graded if not r.skipped), key=lambda r: (-r.result.duration_s, r.student))
    if len(graded) > 1:
        lines.append("slowest: " + ", ".join(f"{r.student} ({r.result.duration_s:.1f} s)" for r in graded[:3]))
    # error results, not a roster's no_submission
    errors = [(r.student, r.result.error) for r in rows if r.result.error and r.shown_status == "error"]
    if errors:
        named = ", ".join(f"{student} ({error.kind})" for student, error in errors[:20])
        lines.append(
            f"could not be graded: {named}"
            + (f" and {len(errors) - 20} more" if len(errors) > 20 else "")
            + "; each one's result.json says why"
        )
    return lines


def _not_full(result: Result) -> bool:
    return result.status == "error" or result.score < result.max_score


def _on_processes(tasks: list[Task], jobs: int):
    """Each task's outcome as it arrives from this machine's grading processes (as many at once as jobs,
    the same kind of process a cluster's worker keeps), and whether it is final. A grading process that
    dies, or outlasts any submission, costs that one student an error result, not the batch. A student
    whose grading ran out of time beside others is graded again alone, after the others, and that result
    is the one kept: no one's grade depends on what another student's code did to the machine."""
    graders = Graders()
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))

    def grade_one(task: Task) -> tuple[TaskOutcome, bool]:
        try:
            return checked(graders.call("grade_task", (task,), time_limit(task)), task), True
        except GradingProcessDied as died:
            return failed(task, f"{died}; run the batch again to try it again"), False

    again: list[Task] = []
    try:
        futures = {pool.submit(grade_one, task): task for task in tasks}
        for future in as_completed(futures):
            outcome, final = future.result()
            if outcome.unfit:
                raise UnfitWorker(f"this machine may not grade: {outcome.unfit}")
            if final and jobs > 1 and len(tasks) > 1 and timed_out(outcome.result):
                again.append(futures[future])
                continue
            yield outcome, final
        for task in again:  # nothing else is being graded now
            print(f"note: {task.student} ran out of time while others were graded; graded again alone", file=sys.stderr)
            outcome, final = grade_one(task)
            if outcome.unfit:
                raise UnfitWorker(f"this machine may not grade: {outcome.unfit}")
            yield outcome, final
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        graders.close()  # a grading still running ends with its process
        pool.shutdown(wait=True)
