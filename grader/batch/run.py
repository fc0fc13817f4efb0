"""Grade every submission in parallel, write each result the moment it is done, resume.

Each student's folder, `students/<id>/` under the output (so no id can collide with the
class files beside it), holds result.json (the contract's schema), results.json
(Gradescope's format), report.html and key.txt: the content key that tells a rerun it may
skip this student, with the hash of each file written, so an output changed since is
regraded rather than trusted. Every write is atomic (a temporary file, then a rename), so
an interrupted batch leaves either a whole result or none. Nothing written for a student
names a path of the grader's host: the submission is named by its file name.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from grader import __version__, spec
from grader.batch.discover import Submission, discover
from grader.batch.outputs import atomic_write, flags_for, gradescope, write_class_outputs
from grader.grading import Options, grade
from grader.render import html
from grader.errors import without_host_paths
from grader.result import Result, SubmissionError
from grader.sandbox.isolation import Isolation, require


@dataclass(frozen=True)
class Job:
    submission: Submission
    out: Path
    """This student's output folder."""
    assignment: str
    """Assignment id or folder, loaded again in the process that grades."""
    force: bool = False
    isolation: Isolation | None = None
    """How student code is isolated (decided once, for the whole batch)."""


def content_key(job: Job, assignment: spec.Assignment) -> str:
    """What a result depends on: the submission's and tests' bytes, the assignment, the grader."""
    digest = hashlib.sha256()
    for path in (job.submission.path, job.submission.tests):
        digest.update(path.read_bytes() if path else b"-")
    digest.update(f"{assignment.id}@{assignment.version}/{__version__}".encode())
    return digest.hexdigest()


STUDENTS = "students"
"""The folder under the output holding one folder per student."""
OUTPUTS = ("result.json", "results.json", "report.html")


def grade_job(job: Job) -> dict:
    """Grade one student (or find their result already done); a row for the gradebook. Never raises."""
    started = time.monotonic()
    key = None
    source = job.submission.path.read_text(encoding="utf-8", errors="replace")
    try:
        assignment = spec.load(job.assignment)
        key = content_key(job, assignment)
        if not job.force and _unchanged(job.out, key):
            return _row(job, json.loads((job.out / "result.json").read_text()), source, skipped=True)
        result = grade(job.submission.path, assignment, Options(tests=job.submission.tests, isolation=job.isolation,
                                                                           one_sandbox=True))
        data = result.to_dict()
    except Exception:  # noqa: BLE001 - one bad submission never stops a batch
        data = _crash_result(job, started, traceback.format_exc())
        assignment = None
    data = _scrub(data, job.submission.path.parent)
    python_source = source if job.submission.path.suffix == ".py" else None
    texts = {
        "result.json": json.dumps(data, indent=2),
        "results.json": json.dumps(gradescope(data), indent=2),
        "report.html": html.student_report(data, python_source, assignment.title if assignment else ""),
    }
    for name in OUTPUTS:
        atomic_write(job.out / name, texts[name])
    if key:
        atomic_write(job.out / "key.txt",
                     "\n".join([key, *(f"{_sha256((job.out / n).read_bytes())} {n}" for n in OUTPUTS)]) + "\n")
    return _row(job, data, source, skipped=False)


def _unchanged(out: Path, key: str) -> bool:
    """Was this student graded with this content key, and is every file written then still as written?"""
    try:
        lines = (out / "key.txt").read_text().splitlines()
        recorded = {name: digest for digest, name in (line.split(" ", 1) for line in lines[1:])}
        return lines[0] == key and set(recorded) == set(OUTPUTS) and all(
            _sha256((out / name).read_bytes()) == digest for name, digest in recorded.items())
    except (OSError, IndexError, ValueError, UnicodeDecodeError):
        return False


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _scrub(data, folder: Path):
    """The result with the staging folder's path, and the grader's host folders, taken out of every text."""
    staging = folder.parent.parent
    extra = [(str(p) + os.sep, "") for p in (folder, folder.resolve())] + \
        [(str(p), ".") for p in (folder, folder.resolve())] + \
        [(str(p), "<staging>") for p in (staging, staging.resolve())]
    return without_host_paths(data, extra)


def _crash_result(job: Job, started: float, trace: str) -> dict:
    result = Result(job.submission.path.name, None, str(job.assignment), __version__, "error",
                    SubmissionError("crash", f"the grader failed on this submission:\n{trace}"), 0.0, 0.0,
                    round(time.monotonic() - started, 3), ())
    return result.to_dict()


def _row(job: Job, data: dict, source: str, skipped: bool) -> dict:
    return {"student": job.submission.student, "late": job.submission.late, "result": data, "skipped": skipped,
            "file": job.submission.path.name, "folder": f"{STUDENTS}/{job.out.name}", "flags": flags_for(source)}


def run_batch(inputs: list[Path], out: Path, assignment: str, jobs: int, force: bool = False,
              scheduler: str | None = None, trusted: bool = False) -> int:
    task = spec.load(assignment)  # fail early on an unknown assignment
    if not out.exists() and os.geteuid() == 0:
        out.mkdir(parents=True, mode=0o700)  # student code runs as other uids: the class's results stay root's
    out.mkdir(parents=True, exist_ok=True)
    iso = require("batch", trusted=trusted, private=(task.folder, out, *inputs))
    with tempfile.TemporaryDirectory(prefix="grader-batch-") as staging:
        found = discover(inputs, Path(staging))
        for note in found.notes:
            print(f"note: {note}", file=sys.stderr)
        work = [Job(s, out / STUDENTS / s.student, str(task.folder), force, iso) for s in found.submissions]
        rows: list[dict] = []
        try:
            for row in _execute(work, jobs, scheduler):
                rows.append(row)
        except KeyboardInterrupt:
            print(f"\ninterrupted: {len(rows)} of {len(work)} graded and saved; run the same command again to "
                  "grade the rest", file=sys.stderr)
            return 130
        write_class_outputs(out, task, sorted(rows, key=lambda r: r["student"]), found.notes)
    failed = sum(r["result"]["status"] == "error" for r in rows)
    print(f"graded {len(rows)} submissions ({sum(r['skipped'] for r in rows)} unchanged since the last run, "
          f"{failed} could not be graded); gradebook: {out / 'grades.csv'}; class summary: {out / 'index.html'}")
    return 0


def _execute(work: list[Job], jobs: int, scheduler: str | None):
    """Yield each job's row as it finishes, with a progress bar on a terminal."""
    from tqdm import tqdm

    bar = tqdm(total=len(work), unit="submission", disable=not sys.stderr.isatty(), file=sys.stderr)
    errors = 0
    with bar:
        for row in (_on_dask(work, scheduler) if scheduler else _on_processes(work, jobs)):
            errors += row["result"]["status"] == "error" or row["result"]["score"] < row["result"]["max_score"]
            bar.set_postfix(not_full_marks=errors)
            bar.update()
            yield row


def _on_processes(work: list[Job], jobs: int):
    pool = ProcessPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = [pool.submit(grade_job, job) for job in work]
        for future in as_completed(futures):
            yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _on_dask(work: list[Job], address: str):
    """One submission per Dask task, with retries; student code still runs only in the sandbox."""
    from dask.distributed import Client, as_completed as dask_completed

    with Client(address) as client:
        futures = client.map(grade_job, work, retries=2, pure=False)
        for future in dask_completed(futures):
            yield future.result()
