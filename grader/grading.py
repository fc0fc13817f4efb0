"""grade(submission, assignment) -> Result: the pipeline behind every command.

Steps, in order: read the file; load it in the engine lane's sandbox (a notebook is run
there, once: grader/loading.py); make sure the required names exist; start the student's
tests in the suite lane's sandbox, beside the engine checks; run each check of the
assignment with its own time limit; score. The whole grading runs under the submission's
time limit, one deadline that every request, check, run of the tests and notebook cell
respects: what it cuts off is reported as such, and what could not start is skipped,
naming the limit. A submission that cannot be graded gets a Result with status `error`
and a reason, never an exception. Every byte that comes back from a sandbox is a
claim about the student's code, read as untrusted input; judging happens here.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from grader import __version__, fileio, notebooks, secret
from grader.causes import CAUSES, said_in
from grader.checks import REGISTRY
from grader.checks.context import Context
from grader.checks.features import preflight
from grader.checks.suite import SUITE_CHECKS, start_suite
from grader.errors import CheckTimeout, NotebookError, Refused, Rejected, WorkerFailure, without_host_paths
from grader.files import MODULE_FILE, TESTS_FILE
from grader.lanes import EngineLane
from grader.protocol import Code
from grader.loading import load
from grader.sabotage import own_block
from grader.result import CheckResult, Outcome, Result, SubmissionError
from grader.sandbox.isolation import Isolation
from grader.sandbox.supervisor import SandboxLimits, Sandbox
from grader.spec import Assignment, CheckSpec

OVERRUN_S = 5.0
"""How far past submission_s a grading may end, whatever the student's code does: what is in flight
when the time runs out stops then, and the sandboxes are closed."""


@dataclass(frozen=True)
class Options:
    public_only: bool = False
    """Run only the visible checks (a student's local run); hidden ones run when the instructor grades."""
    tests: Path | None = None
    """The student's tests; by default test_micrograd.py beside the submission, if it exists."""
    isolation: Isolation | None = None
    """How to isolate the student's code (default: the best this machine offers)."""
    suite_sandboxes: int = 1
    """Sandboxes the student's tests run in at once: 2 spends a second core on one submission (a
    student's own check); a batch grading several submissions at once keeps 1."""
    one_sandbox: bool = False
    """Grade in one sandbox, the engine checks and then the tests in turn (a batch's way: every core is
    already busy with a submission, so one sandbox's start is saved rather than a core spent)."""
    engine_key: bytes | None = None
    """The secret the grading's engines are keyed with (default: this machine's, grader/secret.py); a batch
    passes the instructor's, so a submission gets the same engines on whichever machine grades it."""


def grade(submission: Path, assignment: Assignment, options: Options = Options()) -> Result:
    """Grade a .py file or a notebook; never raises for anything wrong with the submission."""
    started = time.monotonic()
    ends = started + assignment.limits.submission_s
    specs = [c for c in assignment.checks if not (options.public_only and c.visibility == "hidden")]
    digest, execution, suite = None, None, None
    try:
        source = _read(submission)
        digest = hashlib.sha256(source).hexdigest()
        code, nb = _code(submission, source, assignment)
        tests = _tests(submission, options, nb)
        tests_source = "\n\n".join(source for _, source in code.cells) if nb is not None and tests == \
            notebooks.TEST_SHIM else tests
        limits = SandboxLimits(request_s=assignment.limits.request_s, memory_mb=assignment.limits.memory_mb,
                        cpu_s=int(assignment.limits.submission_s) + 5)
        key = secret.key(assignment.folder) if options.engine_key is None else options.engine_key
        seed = secret.seed(key, b"plan", source, (tests or "").encode())
        shared = Sandbox(code.files, limits, ("pytest", *code.warm), options.isolation, start=False) \
            if options.one_sandbox else None
        if shared is not None:
            shared.start()
        with _closing(shared), EngineLane(code, limits, options.isolation, shared) as engine:
            if tests is not None and any(c.id in SUITE_CHECKS for c in specs):
                suite = start_suite(assignment, code, tests, limits, options.isolation, seed, secret.seed(key, b"pool"),
                                    options.suite_sandboxes, own_block(_student_text(code)), shared, engine.pause)
                suite.provide_plan()
            symbols, execution, notes = load(engine, code, assignment, submission.name, ends)
            if suite is not None:
                suite.go(execution.left_out() if execution else frozenset(), assignment.limits.cell_s, ends)
            ctx = Context(assignment, engine, symbols, suite, tests_source, seed, ends, preflight)
            checks = _run_checks(ctx, specs)
    except Rejected as rejected:
        error = SubmissionError(rejected.kind, rejected.message)
        return _result(submission, digest, assignment, "error", error, (), started,
                       rejected.execution or execution)
    finally:
        if suite is not None:
            suite.cancel()
    return _result(submission, digest, assignment, "graded", None, tuple(checks), started, execution, notes)


@contextlib.contextmanager
def _closing(sandbox: Sandbox | None):
    try:
        yield sandbox
    finally:
        if sandbox is not None:
            sandbox.close()


def _student_text(code: Code) -> str:
    """The student's code as one text: the file, or a notebook's cells in order."""
    if code.kind == "notebook":
        return "\n\n".join(source for _, source in code.cells)
    return code.files[MODULE_FILE].decode("utf-8", "replace")


def _read(submission: Path) -> bytes:
    name = submission.name
    try:
        source = fileio.read_regular(submission)  # no link, no pipe, capped; never opened again by name
    except FileNotFoundError:
        raise Rejected("not_found", f"{name} does not exist") from None
    except OSError as exc:
        raise Rejected("unreadable", str(exc) if isinstance(exc, Refused) else
                       f"{name} cannot be read: {exc.strerror}") from None
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected("unreadable", f"{name} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    if not source.strip():
        raise Rejected("missing_symbol", f"{name} is empty: write your Value class in it")
    return source


def _code(submission: Path, source: bytes, assignment: Assignment):
    """The student's code as the sandbox loads it, and the parsed notebook (or None)."""
    if submission.suffix != ".ipynb":
        return Code("py", {MODULE_FILE: source}, stand_ins=assignment.packages), None
    try:
        nb = notebooks.read(submission, source)
    except NotebookError as exc:
        raise Rejected("unreadable", str(exc)) from None
    return Code("notebook", {}, notebooks.code_cells(nb), assignment.packages), nb


def _tests(submission: Path, options: Options, nb) -> str | None:
    """The text of the student's tests: their file, or for a notebook its own test_* functions."""
    path = options.tests
    if path is None and nb is not None and notebooks.has_tests(nb):
        return notebooks.TEST_SHIM
    path = path or submission.parent / TESTS_FILE
    try:
        return fileio.read_regular(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Rejected("unreadable", str(exc) if isinstance(exc, Refused) else
                       f"{path.name} cannot be read: {exc.strerror}") from None


def _run_checks(ctx: Context, specs: list[CheckSpec]) -> list[CheckResult]:
    """Each check with its own time limit, and none started once the grading's time (ctx.ends) is up."""
    limits = ctx.assignment.limits
    out_of_time = f"Not run: the submission used up its time limit of {limits.submission_s:g} s"
    results = []
    first: dict[str, str] = {}
    for spec in specs:
        check = REGISTRY[spec.id]
        t0 = time.monotonic()
        if t0 >= ctx.ends:
            outcome = Outcome("skipped", f"{out_of_time}.")
        elif _suite_cut(ctx, spec.id):
            outcome = Outcome("skipped", f"{out_of_time} before your tests had run on every engine they are "
                              "judged on.")
        else:
            ctx.start_check(limits.check_s)
            outcome = _run_one(check.run, ctx)
        results.append(_check_result(spec, check.title, outcome, time.monotonic() - t0, first))
    return results


def _suite_cut(ctx: Context, check_id: str) -> bool:
    """Did the grading's time run out before the suite's runs this check needs were made?"""
    if check_id not in SUITE_CHECKS or ctx.suite_lane is None:
        return False
    outcome = ctx.suite_lane.result()
    return outcome.cut and (check_id != "student_tests" or outcome.own is None)


def _run_one(run, ctx: Context) -> Outcome:
    try:
        return run(ctx)
    except CheckTimeout as timeout:
        return Outcome("error", f"Stopped: {timeout}. Your engine may be very slow, or stuck in a loop.")
    except WorkerFailure as failure:
        return Outcome("error", f"Your code {failure.message}.")
    except Exception:  # noqa: BLE001 - a bug in the grader must not cost the other checks
        trace = without_host_paths(traceback.format_exc())
        return Outcome("error", f"Internal grader error (not your fault; tell your instructor):\n{trace}")


def score(outcome: Outcome, points: float) -> float:
    """Points earned: all for a pass, a fraction for partial credit, none otherwise."""
    if outcome.fraction is not None:
        return round(points * min(max(outcome.fraction, 0.0), 1.0), 4)
    return points if outcome.status == "passed" else 0.0


def _check_result(spec: CheckSpec, title: str, outcome: Outcome, duration: float,
                  first: dict[str, str]) -> CheckResult:
    """The check's result, its feedback saying the outcome's cause: when several checks fail from one
    recognised cause, the first explains it and the others say 'same cause as <first>' (keeping what they
    saw and their smallest case). first holds each cause's first check so far, and learns this one's."""
    cause = outcome.cause if outcome.status in ("failed", "error") and outcome.cause in CAUSES else None
    earlier = first.setdefault(cause, spec.id) if cause else None
    return CheckResult(
        id=spec.id,
        title=title,
        status=outcome.status,
        score=score(outcome, spec.points),
        max_score=spec.points,
        visibility=spec.visibility,
        feedback=said_in(outcome.feedback, cause, earlier if earlier != spec.id else None),
        counterexample=outcome.counterexample,
        artifacts=outcome.artifacts,
        duration_s=round(duration, 3),
        cause=cause,
    )


def _result(submission, digest, assignment, status, error, checks, started, execution=None, notes=()) -> Result:
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
        notes=tuple(notes),
    )
