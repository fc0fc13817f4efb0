"""grade(submission, assignment) -> Result: the pipeline behind every command.

Four named steps, in order: read_submission (the file, its code and tests); open_lanes (the
engine lane's sandbox, and the suite lane's with its plan of engines, written while its
sandboxes warm up); load (grader/loading.py: the module imported, or the notebook run once,
and the required names checked); run_checks (grader/checks/runner.py: each check with its own
time limit, after the checks whose results it reads, the suite's last); then the Result is
scored. The whole grading runs under the submission's time limit, one deadline that every
request, check, run of the tests and notebook cell respects: what it cuts off is reported as
such, and what could not start is skipped, naming the limit. A submission that cannot be
graded gets a Result with status `error` and a reason, never an exception. Every byte that
comes back from a sandbox is a claim about the student's code, read as untrusted input
(grader/protocol.py); judging happens in the checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader import __version__, feedback, fileio, notebooks, secret
from grader.checks.context import Context, Judged
from grader.checks.features import preflight
from grader.checks.runner import OnCheck, run_checks
from grader.checks.suite import SUITE_CHECKS, suite_job, suite_plan
from grader.errors import NotebookError, Refused, Rejected
from grader.files import MODULE_FILE, TESTS_FILE
from grader.lanes import EngineLane, SuiteLane, SuiteSandboxes
from grader.loading import load
from grader.notebooks import Execution
from grader.protocol import Code
from grader.repair.repairs import AHEAD, Repairs, readable
from grader.repair.verify import RESERVE_S, Regrade
from grader.result import CheckResult, Result, SubmissionError
from grader.sabotage import normalised, own_block
from grader.sandbox import isolation
from grader.sandbox.isolation import Isolation
from grader.sandbox.prestarted import Prestarted, Wanted, layout, sandbox_for
from grader.sandbox.supervisor import Sandbox, SandboxLimits
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
    progress: Callable[[int, int], None] | None = None
    """Told each notebook cell as it starts: its place among the code cells (notebooks.cell_name), how many there
    are (a student's `grader check` shows it when the notebook is slow)."""
    engine_key: bytes | None = None
    """The secret the grading's engines are keyed with (default: this machine's, grader/secret.py); a batch
    passes the instructor's, so a submission gets the same engines on whichever machine grades it."""
    on_check: OnCheck | None = None
    """Told of each check as it ends (grader check prints it)."""
    prestarted: Prestarted | None = None
    """Sandboxes already started, which the lanes take where they match (grader check starts them while it
    imports the grader: grader/sandbox/prestarted.py)."""
    source: bytes | None = None
    """The submission's bytes, already read (grader check reads the file once, and its report shows these very
    bytes); None: read from the file here."""
    host_paths: tuple[tuple[str, str], ...] = ()
    """Folders of this machine beyond those feedback.machine_paths knows that no text of the result may show, each
    with what stands in for it (a batch's private grading folder)."""
    deadline: float | None = None
    """An end (time.monotonic()) before the assignment's submission_s runs out: a regrade verifying a repair keeps
    to the deadline of the grading it verifies for (grader/repair/verify.py)."""
    statuses_only: bool = False
    """Only each check's status is wanted (a regrade verifying a repair): a failure is not shrunk to its smallest
    case nor its cause diagnosed."""
    engine_warm: tuple[str, ...] | None = None
    """The modules the engine lane's sandbox imports before the student's code runs (None: as the grading's lanes
    have them): a regrade verifying a repair asks for those of the grading it verifies for, so that the student's
    code cannot tell the copy graded from its own grading by what is imported."""


@dataclass(frozen=True)
class Grading:
    """One grading, handed down the pipeline: the submission, the assignment, the options, and when it started
    (its deadline, `ends`, is submission_s later)."""

    submission: Path
    assignment: Assignment
    options: Options = Options()
    started: float = field(default_factory=time.monotonic)

    @property
    def ends(self) -> float:
        """The grading's deadline (time.monotonic()): what every request, check, run and cell keeps to."""
        ends = self.started + self.assignment.limits.submission_s
        return ends if self.options.deadline is None else min(ends, self.options.deadline)

    @property
    def specs(self) -> list[CheckSpec]:
        """The checks to run: every check, or the visible ones only (public_only)."""
        return [c for c in self.assignment.checks if not (self.options.public_only and c.visibility == "hidden")]

    @property
    def key(self) -> bytes:
        """The secret the grading's engines are keyed with (the instructor's in a batch, else this machine's)."""
        given = self.options.engine_key
        return secret.key(self.assignment.folder) if given is None else given


@dataclass(frozen=True)
class ReadSubmission:
    """A submission as read, before any of it runs."""

    source: bytes
    digest: str
    code: Code
    tests: str | None
    """The text of the student's tests the suite lane runs (a notebook's own: the shim importing them)."""
    tests_source: str | None
    """The tests as the student wrote them (a notebook's: its cells)."""
    normal: str = ""
    """The engine and tests as the draw follows them, whatever the file's format (sabotage.normalised)."""

    def seed(self, grading: Grading) -> str:
        """What makes this grading's choices (the plan of engines, the checks' cases): the same at every regrade,
        and for the same engine and tests in a .py file or a notebook (sabotage.normalised)."""
        return secret.seed(grading.key, b"plan", self.normal.encode())

    @property
    def shape(self) -> str:
        """What decides which engine each sabotage is made from: the submission's code and tests, normalised
        (sabotage.normalised), keyed with nothing, so the same work meets the same sabotages, and gets the same
        score, wherever it is graded and whether it is a .py file or a notebook (sabotage.plan)."""
        return secret.seed(b"shape", self.normal.encode())


def grade(submission: Path, assignment: Assignment, options: Options = Options()) -> Result:
    """Grade a .py file or a notebook; never raises for anything wrong with the submission.

    The steps, in order: read, open the lanes, load, run the checks, score; the result (its repairs with it) is
    then cleaned once, whatever became of the submission."""
    return feedback.cleaned(_graded(Grading(submission, assignment, options)), options.host_paths)


def _graded(grading: Grading) -> Result:
    """grade()'s steps, up to the result with its repairs, not yet cleaned."""
    submission, assignment, options = grading.submission, grading.assignment, grading.options
    read, execution, notes = None, None, ()
    try:
        read = read_submission(grading)
        with _repairing(grading, read) as repairs:
            with open_lanes(grading, read) as (engine, suite):
                symbols, execution, notes = load(
                    engine, read.code, assignment, submission.name, grading.ends, options.progress
                )
                if suite is not None:
                    suite.go(execution.left_out() if execution else frozenset(), assignment.limits.cell_s, grading.ends)
                judged = Judged(
                    read.tests_source,
                    read.seed(grading),
                    grading.ends,
                    options.statuses_only,
                    options.tests.name if options.tests is not None else TESTS_FILE,
                )
                ctx = Context(assignment, engine, symbols, suite, judged, preflight)
                told = repairs.told(options.on_check) if repairs else options.on_check
                checks = run_checks(ctx, grading.specs, told, between=_verifying(grading, repairs, suite))
            return _repaired(_result(grading, read.digest, tuple(checks), execution, notes), grading, repairs)
    except Rejected as rejected:
        error = SubmissionError(rejected.kind, rejected.message)
        return _result(grading, read.digest if read else None, (), rejected.execution or execution, error=error)


def _repairing(grading: Grading, read: ReadSubmission) -> contextlib.AbstractContextManager[Repairs | None]:
    """The grading's repairs (grader/repair/repairs.py), their sandboxes started ahead as its engine lane's (so that
    the student's code finds the same modules imported in a regrade as in its grading), closed on the way out; None
    where it may offer none."""
    code = readable(read.code, read.source, grading.submission.name, grading.assignment)
    if code is None:
        return contextlib.nullcontext()
    engine = _engine_sandbox(grading, read.code, _tested(grading, read))[0]
    return Repairs(code, grading.assignment, engine, 1 if grading.options.one_sandbox else AHEAD)


def _verifying(grading: Grading, repairs: Repairs | None, suite: SuiteLane | None) -> Callable[[], None] | None:
    """What the grading does once its engine checks are done, before its suite checks: the suite's runs freed to go
    on (a sandbox shared with the engine lane, or one that joins late: SuiteLane.release), then the repairs of the
    engine checks' causes verified while the runs go (Repairs.verify), so that a submission with tests waits for
    the regrades only where they outlast its runs. They keep RESERVE_S of the grading's time for the suite checks
    after them. None where the grading may offer no repair."""
    if repairs is None:
        return None

    def verifying() -> None:
        if suite is not None:
            suite.release()
        ends = grading.ends - (RESERVE_S if suite is not None else 0.0)
        repairs.verify(ends, _regrade(grading, repairs, ends))

    return verifying


def _repaired(result: Result, grading: Grading, repairs: Repairs | None) -> Result:
    """The result with the repairs its failing checks' causes have, each verified by grading the edited code again
    (verified while the tests ran, or now where nothing did), to this grading's deadline."""
    if repairs is None:
        return result
    return repairs.offered(result, grading.ends, _regrade(grading, repairs, grading.ends))


def _regrade(grading: Grading, repairs: Repairs, ends: float) -> Regrade:
    """grade() of an edited copy with this grading's options, keeping to ends (the grading's deadline, less what
    its suite checks keep), statuses only, in the sandboxes started ahead, its engine lane's sandbox as this
    grading's (the same modules imported)."""
    quiet = replace(
        grading.options,
        on_check=None,
        progress=None,
        prestarted=repairs.pool,
        tests=None,
        source=None,
        deadline=ends,
        statuses_only=True,
        engine_warm=repairs.sandbox.warm if repairs.sandbox is not None else None,
    )
    return lambda path, again: grade(path, again, quiet)


def _tested(grading: Grading, read: ReadSubmission) -> bool:
    """Does the grading run the student's tests (so open a suite lane)?"""
    return read.tests is not None and any(c.id in SUITE_CHECKS for c in grading.specs)


def _engine_sandbox(grading: Grading, code: Code, tested: bool) -> tuple[Wanted, bool, list[tuple[str, ...]], bool]:
    """The engine lane's sandbox as a grading asks for it (limits, warm imports, isolation), whether the lanes
    share one sandbox (one_sandbox, or sandboxes that would share /tmp), the suite lane's own sandboxes' warm
    imports, and whether the engine lane's joins the suite's runs."""
    given, options = grading.assignment.limits, grading.options
    limits = SandboxLimits.for_grading(given.request_s, given.memory_mb, given.submission_s)
    one = options.one_sandbox or (options.isolation or isolation.detect()).shares_tmp  # lanes that would share /tmp
    engine_warm, suites, join = layout(code.kind, tested, options.suite_sandboxes, one)
    warm = engine_warm if options.engine_warm is None else options.engine_warm  # a regrade's: its grading's
    return Wanted(limits, warm, options.isolation), one, suites, join


def read_submission(grading: Grading) -> ReadSubmission:
    """Step 1: the file (never opened again by name), its code as the sandbox loads it, and the tests."""
    submission = grading.submission
    given = grading.options.source
    source = _checked(submission.name, _read(submission) if given is None else given)
    code, nb = _code(submission, source, grading.assignment)
    tests = _tests(submission, grading.options, nb)
    own = nb is not None and tests == notebooks.TEST_SHIM
    texts = [text for _, text in code.cells] if code.kind == "notebook" else [code.text]
    normal = normalised(*texts, *([] if own or tests is None else [tests]))
    return ReadSubmission(source, hashlib.sha256(source).hexdigest(), code, tests, code.text if own else tests, normal)


@contextlib.contextmanager
def open_lanes(grading: Grading, read: ReadSubmission):
    """Step 2: the engine lane, and the suite lane when the tests are graded (its sandboxes warm up while
    this thread writes the plan of engines). With one_sandbox (a batch), and where sandboxes would share the
    machine's /tmp (a uid of their own without namespaces), both share one sandbox in turn.
    Everything is closed on the way out, whatever happened. The runs of a notebook's tests that start before
    it is loaded keep to the grading's deadline."""
    assignment, options = grading.assignment, grading.options
    code, suite = read.code, None
    tested = _tested(grading, read)
    wanted, one, suites, join = _engine_sandbox(grading, code, tested)
    limits, engine_warm = wanted.limits, wanted.warm
    shared = sandbox_for(options.prestarted, code.files, limits, engine_warm, options.isolation) if one else None
    try:
        with (
            _closing(shared),
            EngineLane(code, limits, options.isolation, shared, options.prestarted, engine_warm) as engine,
        ):
            if tested:
                where = SuiteSandboxes(
                    len(suites), shared, engine.sandbox if join else None, engine.pause, options.prestarted
                )
                suite = SuiteLane(code, limits, options.isolation, where)
                assert read.tests is not None, "a suite lane opens only for tests that were read"
                suite.start(suite_job(assignment, code, read.tests), grading.ends)  # its first run needs no plan
                suite.planned(
                    *suite_plan(
                        assignment,
                        read.seed(grading),
                        secret.seed(grading.key, b"pool"),
                        own_block(code.text),
                        read.shape,
                    )
                )
            yield engine, suite
    finally:
        if suite is not None:
            suite.cancel()


@contextlib.contextmanager
def _closing(sandbox: Sandbox | None):
    try:
        yield sandbox
    finally:
        if sandbox is not None:
            sandbox.close()


def _read(submission: Path) -> bytes:
    name = submission.name
    try:
        source = fileio.read_regular(submission)  # no link, no pipe, capped; never opened again by name
    except FileNotFoundError:
        raise Rejected("not_found", f"{name} does not exist") from None
    except OSError as exc:
        raise Rejected(
            "unreadable", str(exc) if isinstance(exc, Refused) else f"{name} cannot be read: {exc.strerror}"
        ) from None
    return source


def _checked(name: str, source: bytes) -> bytes:
    """The submission's bytes, if they are text to grade."""
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
    cells = notebooks.code_cells(nb)
    too_long = notebooks.too_long_to_read(cells)  # before IPython reads a cell in this process (grader/slicing.py)
    if too_long:
        raise Rejected("syntax_error", too_long)
    return Code("notebook", {}, cells, assignment.packages), nb


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
        raise Rejected(
            "unreadable", str(exc) if isinstance(exc, Refused) else f"{path.name} cannot be read: {exc.strerror}"
        ) from None


def _result(
    grading: Grading,
    digest: str | None,
    checks: tuple[CheckResult, ...],
    execution: Execution | None = None,
    notes: tuple[str, ...] = (),
    error: SubmissionError | None = None,
) -> Result:
    """The result (an error one when `error` says why the submission could not be graded), before grade() cleans it
    (grader/feedback.py: the one place that says how every text is made fit to leave the machine)."""
    return Result(
        submission=grading.submission.name,
        sha256=digest,
        assignment=grading.assignment.id,
        grader_version=__version__,
        status="graded" if error is None else "error",
        error=error,
        score=round(sum(c.score for c in checks), 4),
        max_score=sum(c.max_score for c in checks) if checks else grading.assignment.max_score,
        duration_s=round(time.monotonic() - grading.started, 3),
        checks=checks,
        notebook=execution.to_dict() if execution else None,
        notes=tuple(notes),
    )
