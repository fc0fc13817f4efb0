"""grade(submission, assignment) -> Result: the pipeline behind every command.

Steps, in order: read the file; load it in a sandboxed worker; make sure the required
names exist; run each check of the assignment with its own time limit; score. A
submission that cannot be graded gets a Result with status `error` and a reason, never
an exception.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from grader import __version__, notebooks
from grader.checks import REGISTRY
from grader.checks.context import CheckTimeout, Context, did_you_mean
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
    """Grade a .py file or a notebook; never raises for anything wrong with the submission."""
    started = time.monotonic()
    specs = [c for c in assignment.checks if not (options.public_only and c.visibility == "hidden")]
    digest, execution = None, None
    limits = Limits(request_s=assignment.limits.request_s, memory_mb=assignment.limits.memory_mb,
                    cpu_s=int(assignment.limits.submission_s) + 5)
    try:
        source = _read(submission)
        digest = hashlib.sha256(source).hexdigest()
        with tempfile.TemporaryDirectory(prefix="grader-nb-") as scratch:
            module, tests = submission, options.tests or submission.parent / TESTS_NAME
            if submission.suffix == ".ipynb":
                module, tests, execution = _from_notebook(submission, limits, assignment, Path(scratch), options)
            extra = {TESTS_NAME: tests} if tests and tests.is_file() else {}
            shim = tests is not None and tests.parent == Path(scratch)  # a notebook's own test_* functions
            tests_source = (module if shim else tests).read_text(encoding="utf-8", errors="replace") if extra else ""
            with Sandbox(module, limits, extra) as sandbox:
                symbols = _load(sandbox, assignment, submission.name, execution)
                ctx = Context(assignment, sandbox, symbols, TESTS_NAME if extra else None, tests_source)
                checks = _run_checks(ctx, specs, started)
    except Rejected as rejected:
        return _result(submission, digest, assignment, "error", rejected.error, (), started, execution)
    return _result(submission, digest, assignment, "graded", None, tuple(checks), started, execution)


def _from_notebook(path: Path, limits: Limits, assignment: Assignment, scratch: Path, options: Options):
    """Run the notebook in a sandbox and write what ran as a module; (module, tests, execution)."""
    try:
        nb = notebooks.read(path)
    except notebooks.NotebookError as exc:
        raise Rejected("unreadable", str(exc)) from None
    try:
        execution = notebooks.execute(path, nb, limits, assignment.limits.cell_s)
    except notebooks.NotebookError as exc:
        raise Rejected("crash", str(exc)) from None
    module = scratch / "micrograd_mine.py"
    module.write_text(notebooks.to_module(nb, execution), encoding="utf-8")
    tests = options.tests
    if tests is None and notebooks.has_tests(nb):
        tests = scratch / TESTS_NAME
        tests.write_text(notebooks.TEST_SHIM, encoding="utf-8")
    return module, tests or path.parent / TESTS_NAME, execution


def _read(submission: Path) -> bytes:
    # messages name the file only: a student must never see the host's paths
    if not submission.exists():
        raise Rejected("not_found", f"{submission.name} does not exist")
    if submission.is_dir():
        raise Rejected("unreadable", f"{submission.name} is a folder, not a Python file")
    try:
        source = submission.read_bytes()
    except OSError as exc:
        raise Rejected("unreadable", f"{submission.name} cannot be read: {exc.strerror}") from None
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected("unreadable", f"{submission.name} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    if not source.strip():
        raise Rejected("missing_symbol", f"{submission.name} is empty: write your Value class in it")
    return source


def _load(sandbox: Sandbox, assignment: Assignment, filename: str, execution=None) -> list[str]:
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
            maybe = did_you_mean(name, symbols)
            ran = ("\nCells that did not run cleanly: " + "; ".join(execution.problems())) \
                if execution and execution.problems() else ""
            raise Rejected("missing_symbol", f"{filename} defines no {name}.{maybe}{ran}")
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


def _result(submission, digest, assignment, status, error, checks, started, execution=None) -> Result:
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
        notebook=execution.to_dict() if execution else None,
    )
