"""grade(submission, assignment) -> Result: the pipeline behind every command.

Steps, in order: read the file; load it in a sandboxed worker; make sure the required
names exist; run each check of the assignment with its own time limit; score. A
submission that cannot be graded gets a Result with status `error` and a reason, never
an exception.
"""

from __future__ import annotations

import difflib
import hashlib
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from grader import __version__
from grader.checks import REGISTRY
from grader.checks.context import CheckTimeout, Context
from grader.errors import WorkerFailure
from grader.result import CheckResult, Outcome, Result, SubmissionError
from grader.sandbox.runner import Limits, Sandbox
from grader.spec import Assignment, CheckSpec


@dataclass(frozen=True)
class Options:
    public_only: bool = False
    """Run only the visible checks (a student's local run); hidden ones run when the instructor grades."""
    tests: Path | None = None
    """The student's tests; by default test_micrograd.py beside the submission, if it exists."""


TESTS_NAME = "test_micrograd.py"


class Rejected(Exception):
    """The submission cannot be graded at all; carries the SubmissionError."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.error = SubmissionError(kind, message)


def grade(submission: Path, assignment: Assignment, options: Options = Options()) -> Result:
    started = time.monotonic()
    specs = [c for c in assignment.checks if not (options.public_only and c.visibility == "hidden")]
    digest = None
    try:
        source = _read(submission)
        digest = hashlib.sha256(source).hexdigest()
        limits = Limits(request_s=assignment.limits.request_s, memory_mb=assignment.limits.memory_mb,
                        cpu_s=int(assignment.limits.submission_s) + 5)
        tests = options.tests or submission.parent / TESTS_NAME
        extra = {TESTS_NAME: tests} if tests.is_file() else {}
        with Sandbox(submission, limits, extra) as sandbox:
            symbols = _load(sandbox, assignment, submission.name)
            ctx = Context(assignment, sandbox, symbols, TESTS_NAME if extra else None)
            checks = _run_checks(ctx, specs, started)
    except Rejected as rejected:
        return _result(submission, digest, assignment, "error", rejected.error, (), started)
    return _result(submission, digest, assignment, "graded", None, tuple(checks), started)


def _read(submission: Path) -> bytes:
    if not submission.exists():
        raise Rejected("not_found", f"{submission} does not exist")
    if submission.is_dir():
        raise Rejected("unreadable", f"{submission} is a folder, not a Python file")
    try:
        source = submission.read_bytes()
    except OSError as exc:
        raise Rejected("unreadable", f"{submission} cannot be read: {exc.strerror}") from None
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected("unreadable", f"{submission} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    if not source.strip():
        raise Rejected("missing_symbol", f"{submission.name} is empty: write your Value class in it")
    return source


def _load(sandbox: Sandbox, assignment: Assignment, filename: str) -> list[str]:
    """Import the student's module in the sandbox; the names it defines."""
    try:
        reply = sandbox.load()
    except WorkerFailure as failure:
        raise Rejected(failure.kind, f"importing {filename}: your code {failure.message}") from None
    if not reply["ok"]:
        err = reply["error"]
        if err["type"] in ("SyntaxError", "IndentationError", "TabError"):
            where = f"line {err.get('lineno')}"
            text = f"\n    {err['text'].strip()}" if err.get("text") else ""
            raise Rejected("syntax_error", f"{filename}, {where}: {err['type']}: {err['message']}{text}")
        if err["type"] == "MemoryError":
            raise Rejected("memory", f"importing {filename} ran out of memory (the limit is "
                           f"{assignment.limits.memory_mb} MB)")
        raise Rejected("import_error", f"importing {filename} raised {err['type']}: {err['message']}\n"
                       f"{err.get('traceback', '').rstrip()}".rstrip())
    symbols = reply["result"]["symbols"]
    for name in assignment.required_symbols:
        if name not in symbols:
            close = difflib.get_close_matches(name, symbols, n=1, cutoff=0.5)
            maybe = f" Did you mean {name} instead of {close[0]}? Python names are case-sensitive." if close else ""
            raise Rejected("missing_symbol", f"{filename} defines no {name}.{maybe}")
    return symbols


def _run_checks(ctx: Context, specs: list[CheckSpec], started: float) -> list[CheckResult]:
    limits = ctx.assignment.limits
    results = []
    for spec in specs:
        check = REGISTRY[spec.id]
        t0 = time.monotonic()
        left = limits.submission_s - (t0 - started)
        if left <= 0:
            outcome = Outcome("skipped", f"Not run: the submission used up its time limit of {limits.submission_s:g} s.")
        else:
            ctx.start_check(min(limits.check_s, left))
            outcome = _run_one(check.run, ctx)
        results.append(_check_result(spec, check.title, outcome, time.monotonic() - t0))
    return results


def _run_one(run, ctx: Context) -> Outcome:
    try:
        return run(ctx)
    except CheckTimeout as timeout:
        return Outcome("error", f"Stopped: {timeout}. Your engine may be very slow, or stuck in a loop.")
    except WorkerFailure as failure:
        return Outcome("error", f"Your code {failure.message}.")
    except Exception:  # noqa: BLE001 - a bug in the grader must not cost the other checks
        return Outcome("error", f"Internal grader error (not your fault; tell your instructor):\n{traceback.format_exc()}")


def score(outcome: Outcome, points: float) -> float:
    """Points earned: all for a pass, a fraction for partial credit, none otherwise."""
    if outcome.fraction is not None:
        return round(points * min(max(outcome.fraction, 0.0), 1.0), 4)
    return points if outcome.status == "passed" else 0.0


def _check_result(spec: CheckSpec, title: str, outcome: Outcome, duration: float) -> CheckResult:
    return CheckResult(
        id=spec.id,
        title=title,
        status=outcome.status,
        score=score(outcome, spec.points),
        max_score=spec.points,
        visibility=spec.visibility,
        feedback=outcome.feedback,
        counterexample=outcome.counterexample,
        artifacts=outcome.artifacts,
        duration_s=round(duration, 3),
    )


def _result(submission, digest, assignment, status, error, checks, started) -> Result:
    return Result(
        submission=submission.name,
        sha256=digest,
        assignment=assignment.id,
        grader_version=__version__,
        status=status,
        error=error,
        score=round(sum(c.score for c in checks), 4),
        max_score=sum(c.max_score for c in checks) if checks else assignment.max_score,
        duration_s=round(time.monotonic() - started, 3),
        checks=checks,
    )
