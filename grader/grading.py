"""grade(submission, assignment) -> Result: the pipeline behind every command.

Steps, in order: read the file; load it in the engine lane's sandbox (a notebook is run
there, once); make sure the required names exist; start the student's tests in the
suite lane's sandbox, beside the engine checks; run each check of the assignment with
its own time limit; score. A submission that cannot be graded gets a Result with status
`error` and a reason, never an exception. Every byte that comes back from a sandbox is a
claim about the student's code, read as untrusted input; judging happens here.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from grader import __version__, fileio, notebooks, secret
from grader.checks import REGISTRY
from grader.checks.context import CheckTimeout, Context, did_you_mean
from grader.checks.suite import SUITE_CHECKS, start_suite
from grader.errors import WorkerFailure, without_host_paths
from grader.lanes import Code, EngineLane
from grader.sabotage import own_block
from grader.result import ERROR_KINDS, CheckResult, Outcome, Result, SubmissionError
from grader.sandbox.isolation import Isolation
from grader.sandbox.supervisor import Limits, Sandbox
from grader.spec import Assignment, CheckSpec

MODULE_FILE = "micrograd_mine.py"
TESTS_NAME = "test_micrograd.py"
MAX_SYMBOLS = 10_000


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


class Rejected(Exception):
    """The submission cannot be graded at all; carries the SubmissionError."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.error = SubmissionError(kind if kind in ERROR_KINDS else "crash", message)


def grade(submission: Path, assignment: Assignment, options: Options = Options()) -> Result:
    """Grade a .py file or a notebook; never raises for anything wrong with the submission."""
    started = time.monotonic()
    specs = [c for c in assignment.checks if not (options.public_only and c.visibility == "hidden")]
    digest, execution, suite = None, None, None
    try:
        source = _read(submission)
        digest = hashlib.sha256(source).hexdigest()
        code, nb = _code(submission, source, assignment)
        tests = _tests(submission, options, nb)
        tests_source = "\n\n".join(source for _, source in code.cells) if nb is not None and tests == \
            notebooks.TEST_SHIM else tests
        limits = Limits(request_s=assignment.limits.request_s, memory_mb=assignment.limits.memory_mb,
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
            symbols, execution, notes = _load(engine, code, assignment, submission.name)
            if suite is not None:
                suite.go(execution.left_out() if execution else frozenset(), assignment.limits.cell_s)
            ctx = Context(assignment, engine, symbols, suite, tests_source, seed)
            checks = _run_checks(ctx, specs, started)
    except Rejected as rejected:
        return _result(submission, digest, assignment, "error", rejected.error, (), started, execution)
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
        raise Rejected("unreadable", str(exc) if isinstance(exc, fileio.Refused) else
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
    except notebooks.NotebookError as exc:
        raise Rejected("unreadable", str(exc)) from None
    return Code("notebook", {}, notebooks.code_cells(nb), assignment.packages), nb


def _tests(submission: Path, options: Options, nb) -> str | None:
    """The text of the student's tests: their file, or for a notebook its own test_* functions."""
    path = options.tests
    if path is None and nb is not None and notebooks.has_tests(nb):
        return notebooks.TEST_SHIM
    path = path or submission.parent / TESTS_NAME
    try:
        return fileio.read_regular(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Rejected("unreadable", str(exc) if isinstance(exc, fileio.Refused) else
                       f"{path.name} cannot be read: {exc.strerror}") from None


def _load(engine: EngineLane, code: Code, assignment: Assignment, filename: str):
    """Load the student's code (running a notebook); the names it defines, and the notebook's report."""
    limits = assignment.limits
    if code.kind == "notebook":
        return _load_notebook(engine, code, assignment, filename)
    try:
        reply = engine.load(code.request(), limits.request_s, None)
    except WorkerFailure as failure:
        raise Rejected(failure.kind, f"importing {filename}: your code {failure.message}") from None
    return _symbols(reply, assignment, filename, None, engine.sandbox.python), None, _notes(reply, code)


def _load_notebook(engine: EngineLane, code: Code, assignment: Assignment, filename: str):
    cell_s = assignment.limits.cell_s
    budget = time.monotonic() + cell_s * (len(code.cells) + 2) + 60
    progress = notebooks.Progress()
    try:
        reply = engine.load(code.request(frozenset(), cell_s), cell_s + notebooks.CELL_GRACE_S, budget, progress)
        cells = reply.get("result", {}).get("cells") if isinstance(reply.get("result"), dict) else None
        said = {c["index"]: c for c in cells if isinstance(c, dict) and isinstance(c.get("index"), int)} \
            if isinstance(cells, list) else progress.ended
        execution = notebooks.execution(code.cells, said)
    except WorkerFailure as failure:
        killer = progress.started
        if killer is None:
            raise Rejected("crash", f"running {filename}: your notebook {failure.message}") from None
        interrupted = failure.kind == "timeout"
        execution = notebooks.execution(code.cells, progress.ended, killer, f"your code {failure.message}",
                                        interrupted)
        try:
            reply = engine.load(code.request(execution.left_out(), cell_s), cell_s + notebooks.CELL_GRACE_S,
                                budget)
        except WorkerFailure as again:
            raise Rejected("crash", f"running {filename} again without cell {killer + 1}: your notebook "
                           f"{again.message}") from None
    return _symbols(reply, assignment, filename, execution), execution, _notes(reply, code)


def _notes(reply: dict, code: Code) -> tuple[str, ...]:
    """What the student should know: packages their code imports that stood in for the real ones."""
    result = reply.get("result") if isinstance(reply.get("result"), dict) else {}
    used = [n for n in result.get("stand_ins", []) if isinstance(n, str) and n in code.stand_ins] \
        if isinstance(result.get("stand_ins"), list) else []
    return tuple(f"Your code imports {name}, which is not installed where it is graded: a stand-in was imported "
                 f"instead, so the rest of your file could be graded; anything that uses {name} raises an error."
                 for name in dict.fromkeys(used))


def _symbols(reply: dict, assignment: Assignment, filename: str, execution, python: str = "") -> list[str]:
    if not reply.get("ok"):
        raise _load_error(reply.get("error"), assignment, filename, python)
    result = reply.get("result")
    symbols = result.get("symbols") if isinstance(result, dict) else None
    if not isinstance(symbols, list) or len(symbols) > MAX_SYMBOLS or not all(isinstance(s, str) for s in symbols):
        raise Rejected("crash", f"importing {filename}: your code answered the grader with something it cannot "
                       "read (did it replace the grader's code in its process?)")
    for name in assignment.required_symbols:
        if name not in symbols:
            maybe = did_you_mean(name, symbols)
            ran = ("\nCells that did not run cleanly: " + "; ".join(execution.problems())) \
                if execution and execution.problems() else ""
            raise Rejected("missing_symbol", f"{filename} defines no {name}.{maybe}{ran}")
    return symbols


NEWER_SYNTAX = (
    # (pattern on the offending line, the Python that accepts it, what it is, how to write it before)
    (re.compile(r"""\bf(['"])[^'"]*\{[^{}]*\1[^{}]*\}"""), (3, 12), "an f-string that reuses its own quotes inside {}",
     "use the other kind of quotes inside the braces"),
    (re.compile(r"^\s*type\s+\w+\s*(\[.*\])?\s*="), (3, 12), "a `type` statement", "write `Name = ...` instead"),
    (re.compile(r"^\s*(def|class)\s+\w+\s*\["), (3, 12), "type parameters in brackets", "use typing.TypeVar"),
)


def _newer_syntax(text: str, python: str) -> str:
    """A sentence saying the line uses syntax of a newer Python than the grading one, if it does."""
    try:
        version = tuple(int(x) for x in python.split(".")[:2])
    except ValueError:
        return ""
    for pattern, needs, what, instead in NEWER_SYNTAX:
        if version < needs and pattern.search(text):
            return (f"\nThis line uses {what}, which Python {needs[0]}.{needs[1]} accepts but the Python that grades "
                    f"your code ({python}) does not: {instead}.")
    return ""


def _load_error(err, assignment: Assignment, filename: str, python: str = "") -> Rejected:
    err = err if isinstance(err, dict) else {}
    kind, message = str(err.get("type", "Exception")), str(err.get("message", ""))
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        line = str(err.get("text") or "")
        text = f"\n    {line.strip()}" if line else ""
        return Rejected("syntax_error", f"{filename}, line {err.get('lineno')}: {kind}: {message}{text}"
                        f"{_newer_syntax(line, python)}")
    if kind == "MemoryError":
        return Rejected("memory", f"importing {filename} ran out of memory (the limit is "
                        f"{assignment.limits.memory_mb} MB)")
    trace = str(err.get("traceback", "")).rstrip()
    return Rejected("import_error", f"importing {filename} raised {kind}: {message}\n{trace}".rstrip())


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
    return _one_cause_once(results)


def _one_cause_once(results: list[CheckResult]) -> list[CheckResult]:
    """When several checks fail from one recognised cause, the first explains it and the others say
    'same cause as <first>' (keeping what they saw and their smallest case)."""
    from dataclasses import replace

    from grader.checks.diagnose import CAUSES

    first: dict[str, str] = {}
    out = []
    for result in results:
        cause = result.artifacts.get("cause") if result.status in ("failed", "error") else None
        if cause in CAUSES and cause in first:
            words = CAUSES[cause].words
            text = result.feedback.replace(f" Likely cause: {words}.", "").replace(f"\nLikely cause: {words}.", "")
            result = replace(result, feedback=f"{text}\nSame cause as {first[cause]}: {words.split(':')[0]}.")
        elif cause in CAUSES:
            first[cause] = result.id
        out.append(result)
    return out


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
