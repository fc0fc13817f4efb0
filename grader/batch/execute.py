"""A batch's grading: each student still to grade, as a Task holding their bytes (grader/batch/tasks.py), graded by
this machine's grading processes or by a Dask cluster's (grader/batch/cluster.py); only this process writes what
comes back, each result the moment it arrives, with a progress bar or a line per student."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor, as_completed

from grader.batch.graders import Graders
from grader.batch.outputs import KIT_FLAG, Row
from grader.batch.resume import Student, row_of, save, seal
from grader.batch.tasks import Task, TaskOutcome, checked, failed, time_limit, timed_out
from grader.errors import GradingProcessDied, UnfitWorker
from grader.final import points


def execute(
    todo: list[tuple[Student, str]], tasks: list[Task], rows: list[Row], total: int, jobs: int, on: Graders | str
):
    """Grade each student still to grade (`tasks`, one per student of `todo`), saving each result (and adding its
    row) as it arrives, with a progress bar on a terminal: on this machine's grading processes (jobs at once, stopped
    at the end) or on the cluster of the scheduler at the address `on`."""
    from tqdm import tqdm

    from grader.batch.cluster import grade_on_cluster

    by_id = {student.submission.student: (student, content) for student, content in todo}
    live = sys.stderr.isatty()
    bar = tqdm(total=total, initial=len(rows), unit="submission", disable=not live, file=sys.stderr)
    with bar:
        outcomes = grade_on_cluster(on, tasks) if isinstance(on, str) else _on_processes(tasks, jobs, on)
        for outcome, final in outcomes:
            student, content = by_id[outcome.student]
            save(student, outcome)
            assert outcome.result is not None, "an outcome given to save is graded: an unfit one stops the batch"
            row = row_of(student, outcome.result, skipped=False)
            rows.append(row)
            if final:
                seal(student, content)
            bar.set_postfix_str(standing(rows), refresh=False)
            bar.update()
            if not live:  # a log, a CI job, a pipe: one line per student instead of a bar
                print(progress_line(row, len(rows), total), file=sys.stderr, flush=True)


def standing(rows: list[Row]) -> str:
    """The progress bar's words on those graded so far: `5 at full marks, 2 below, 1 could not be graded`."""
    failed = sum(r.result.status == "error" for r in rows)
    full = sum(r.result.status != "error" and r.result.score >= r.result.max_score for r in rows)
    return f"{full} at full marks, {len(rows) - failed - full} below, {failed} could not be graded"


def progress_line(row: Row, done: int, total: int) -> str:
    """`[12/18] doejohn 72.67/100 (4.1 s)` (points as the gradebook writes them), or what stopped the grading."""
    result = row.result
    got = (
        f"could not be graded: {result.error.kind}"
        if result.error
        else f"{points(result.score)}/{points(result.max_score)}" + (f", {KIT_FLAG}" if KIT_FLAG in row.flags else "")
    )
    return f"[{done:>{len(str(total))}}/{total}] {row.student} {got} ({result.duration_s:.1f} s)"


def _on_processes(tasks: list[Task], jobs: int, graders: Graders):
    """Each task's outcome as it arrives from this machine's grading processes (as many at once as jobs,
    the same kind of process a cluster's worker keeps), and whether it is final. A grading process that
    dies, or outlasts any submission, costs that one student an error result, not the batch. A student
    whose grading ran out of time beside others is graded again alone, after the others, and that result
    is the one kept: no one's grade depends on what another student's code did to the machine."""
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
