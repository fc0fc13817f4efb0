"""grade(submission, assignment) -> Result: the pipeline behind every command.

Four named steps, in order: read_submission (the file, its code and tests); open_lanes (the
engine lane's sandbox, and the suite lane's with its plan of engines, written while its
sandboxes warm up); load (grader/loading.py: the module imported, or the notebook run once,
and the required names checked); run_checks (each check with its own time limit, the suite's
last); then the Result is scored. The whole grading runs under the submission's time limit,
one deadline that every request, check, run of the tests and notebook cell respects: what it
cuts off is reported as such, and what could not start is skipped, naming the limit. A
submission that cannot be graded gets a Result with status `error` and a reason, never an
exception. Every byte that comes back from a sandbox is a claim about the student's code,
read as untrusted input (grader/protocol.py); judging happens here.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader import __version__, feedback, fileio, notebooks, secret
from grader.causes import CAUSES, said_in
from grader.checks import REGISTRY
from grader.checks.context import Context, Judged
from grader.checks.features import preflight
from grader.checks.suite import SUITE_CHECKS, suite_job, suite_plan
from grader.errors import CheckTimeout, NotebookError, Refused, Rejected, WorkerFailure, without_host_paths
from grader.files import MODULE_FILE, TESTS_FILE
from grader.lanes import EngineLane, SuiteLane, SuiteSandboxes
from grader.loading import load
from grader.notebooks import Execution
from grader.protocol import Code
from grader.repair import verify
from grader.repair.notebook import NotebookCode
from grader.repair.verify import Ahead, offered
from grader.result import CheckResult, Outcome, Result, SubmissionError
from grader.sabotage import normalised, own_block
from grader.sandbox import isolation
from grader.sandbox.isolation import Isolation
from grader.sandbox.prestarted import Prestarted, Wanted, layout, sandbox_for
from grader.sandbox.supervisor import Sandbox, SandboxLimits
from grader.spec import Assignment, CheckSpec

OnCheck = Callable[[CheckResult, int, int], None]
"""Told of each check as it ends: its result, how many are done, how many there are (grader check's progress)."""

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
    progress: Callable[[int, int, int], None] | None = None
    """Told each notebook cell as it starts: its number, its place among the code cells, how many there are
    (a student's `grader check` shows it when the notebook is slow)."""
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
class Submitted:
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

    The steps, in order: read, open the lanes, load, run the checks, score."""
    grading = Grading(submission, assignment, options)
    read, execution, notes, ahead = None, None, (), None
    try:
        read = read_submission(grading)
        ahead = _ahead(grading, read)
        with open_lanes(grading, read) as (engine, suite):
            symbols, execution, notes = load(
                engine, read.code, assignment, submission.name, grading.ends, options.progress
            )
            if suite is not None:
                suite.go(execution.left_out() if execution else frozenset(), assignment.limits.cell_s, grading.ends)
            judged = Judged(read.tests_source, read.seed(grading), grading.ends, options.statuses_only)
            ctx = Context(assignment, engine, symbols, suite, judged, preflight)
            checks = run_checks(ctx, grading.specs, _told(options.on_check, ahead))
        return _repaired(_result(grading, read.digest, tuple(checks), execution, notes), read, grading, ahead)
    except Rejected as rejected:
        error = SubmissionError(rejected.kind, rejected.message)
        return _result(grading, read.digest if read else None, (), rejected.execution or execution, error=error)
    finally:
        if ahead is not None:
            ahead.close()


def _repaired(result: Result, read: Submitted, grading: Grading, ahead: Ahead | None) -> Result:
    """The result with the repairs its failing checks' causes have, each verified by grading the edited file
    again with these options, to this grading's deadline, in the sandboxes started ahead (grader/repair/verify.py):
    a .py file's text, or a notebook's code cells, an edited cell graded in a copy of the notebook
    (grader/repair/notebook.py)."""
    quiet = replace(
        grading.options,
        on_check=None,
        progress=None,
        prestarted=ahead.pool if ahead is not None else None,
        tests=None,
        source=None,
        deadline=grading.ends,
        statuses_only=True,
    )
    code = ahead.code if ahead is not None else None  # none where no repair may be offered (_ahead)
    return offered(result, code, grading.assignment, grading.ends, lambda path, again: grade(path, again, quiet))


def _repairable(read: Submitted, grading: Grading) -> str | NotebookCode | None:
    """The code the inverse edits read: a .py file's text, or a notebook's code cells (None: none they can read)."""
    code = read.code
    if not verify.wanted(code.text, grading.assignment):  # repairs off, or a file too large to look in
        return None
    return code.text if code.kind == "py" else NotebookCode.of(code, read.source, grading.submission.name)


def _ahead(grading: Grading, read: Submitted) -> Ahead | None:
    """The regrades' sandboxes, to start as checks fail (verify.Ahead), and the code the repairs are found in,
    read once: None where this grading may offer no repair."""
    code = _repairable(read, grading)
    if code is None:
        return None
    most = 1 if grading.options.one_sandbox else verify.AHEAD
    return Ahead(code, _engine_sandbox(grading, read.code, False)[0], most)


def _told(on_check: OnCheck | None, ahead: Ahead | None) -> OnCheck | None:
    """on_check, and the Ahead told of each check as it ends."""
    if ahead is None:
        return on_check

    def both(check: CheckResult, done: int, total: int) -> None:
        ahead.heard(check)
        if on_check is not None:
            on_check(check, done, total)

    return both


def _engine_sandbox(grading: Grading, code: Code, tested: bool) -> tuple[Wanted, bool, list[tuple[str, ...]], bool]:
    """The engine lane's sandbox as a grading asks for it (limits, warm imports, isolation), whether the lanes
    share one sandbox (one_sandbox, or sandboxes that would share /tmp), the suite lane's own sandboxes' warm
    imports, and whether the engine lane's joins the suite's runs."""
    given, options = grading.assignment.limits, grading.options
    limits = SandboxLimits.for_grading(given.request_s, given.memory_mb, given.submission_s)
    one = options.one_sandbox or (options.isolation or isolation.detect()).shares_tmp  # lanes that would share /tmp
    engine_warm, suites, join = layout(code.kind, tested, options.suite_sandboxes, one)
    return Wanted(limits, engine_warm, options.isolation), one, suites, join


def read_submission(grading: Grading) -> Submitted:
    """Step 1: the file (never opened again by name), its code as the sandbox loads it, and the tests."""
    submission = grading.submission
    given = grading.options.source
    source = _checked(submission.name, _read(submission) if given is None else given)
    code, nb = _code(submission, source, grading.assignment)
    tests = _tests(submission, grading.options, nb)
    own = nb is not None and tests == notebooks.TEST_SHIM
    texts = [text for _, text in code.cells] if code.kind == "notebook" else [code.text]
    normal = normalised(*texts, *([] if own or tests is None else [tests]))
    return Submitted(source, hashlib.sha256(source).hexdigest(), code, tests, code.text if own else tests, normal)


@contextlib.contextmanager
def open_lanes(grading: Grading, read: Submitted):
    """Step 2: the engine lane, and the suite lane when the tests are graded (its sandboxes warm up while
    this thread writes the plan of engines). With one_sandbox (a batch), and where sandboxes would share the
    machine's /tmp (a uid of their own without namespaces), both share one sandbox in turn.
    Everything is closed on the way out, whatever happened. The runs of a notebook's tests that start before
    it is loaded keep to the grading's deadline."""
    assignment, options = grading.assignment, grading.options
    code, suite = read.code, None
    tested = read.tests is not None and any(c.id in SUITE_CHECKS for c in grading.specs)
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


def run_checks(ctx: Context, specs: list[CheckSpec], on_check: OnCheck | None = None) -> list[CheckResult]:
    """Steps 3 and 4: each check with its own time limit, and none started once the grading's time (ctx.ends)
    is up. The engine checks run first and the suite checks last, whatever their order in the assignment
    (with one sandbox, the suite's runs end the engine's process: it is not loaded again); the results keep
    the assignment's order, and the first check of that order to fail from a cause explains it. on_check
    hears of each check as it ends (its result as run alone, the checks done, the checks to run)."""
    limits = ctx.assignment.limits
    out_of_time = f"Not run: the submission used up its time limit of {limits.submission_s:g} s"
    ran: dict[str, tuple[Outcome, float]] = {}
    hidden = {c.id for c in ctx.assignment.checks if c.visibility == "hidden"}
    hung: list[str] = []  # the checks skipped because backward() never ends, the first explaining why
    order = sorted(specs, key=lambda c: c.id in SUITE_CHECKS)
    for spec in order:
        check = REGISTRY[spec.id]
        t0 = time.monotonic()
        if t0 >= ctx.ends:
            outcome, timed = Outcome("skipped", f"{out_of_time}."), True
        elif _suite_cut(ctx, spec.id):
            outcome, timed = (
                Outcome("skipped", f"{out_of_time} before your tests had run on every engine they are judged on."),
                True,
            )
        else:
            ctx.start_check(limits.check_s)
            hangs = _backward_hangs(ctx) if check.backward else ""
            if hangs:
                outcome, timed = _hang_skipped(hangs, hung, limits.request_s), True
                hung.append(spec.id)
            else:
                outcome = _run_one(check.run, ctx)
                timed = ctx.timed or _suite_timed(ctx, spec.id)
        if timed:  # a typed mark, not words: a batch regrades alone a student whose grade a time limit touched
            outcome = replace(outcome, timing=True)
        ran[spec.id] = (outcome, time.monotonic() - t0)
        if outcome.status in ("failed", "error") and spec.id not in SUITE_CHECKS:
            ctx.failed.append(spec.id)  # training's card names the first to fix
        if on_check is not None:
            on_check(_check_result(spec, check.title, *ran[spec.id], {}, hidden), len(ran), len(order))
    first: dict[tuple[str, bool], str] = {}
    return [_check_result(spec, REGISTRY[spec.id].title, *ran[spec.id], first, hidden) for spec in specs]


def _backward_hangs(ctx: Context) -> str:
    """The code on which the student's backward() never ends (the preflight's finding), or empty; a
    preflight that could not finish leaves it to the check, which meets the same problem and says so."""
    try:
        return ctx.features.backward_hangs
    except Exception:
        return ""


def _hang_skipped(code: str, hung: list[str], request_s: float) -> Outcome:
    """A check calling backward(), once backward() is known never to end: the first is an error saying why, the
    others are skipped, pointing at it."""
    if hung:
        return Outcome("skipped", f"Not run: backward() does not finish (see {hung[0]}).")
    shown = "\n".join(f"    {line}" for line in code.splitlines())
    return Outcome(
        "error",
        f"backward() did not finish within {request_s:g} s, even on this smallest case:"
        f"\n{shown}\nso every check that calls backward() is skipped instead of each "
        "waiting for it. Make backward() end: build the topological order once, marking each node "
        "visited so none is added twice, then call each node's _backward once, in reverse order.",
    )


def _suite_timed(ctx: Context, check_id: str) -> bool:
    """Did a time limit stop one of the suite's runs this check reads?"""
    if check_id not in SUITE_CHECKS or ctx.suite_lane is None:
        return False
    outcome = ctx.suite_lane.result()
    runs = [outcome.own, *outcome.runs] if check_id != "student_tests" else [outcome.own]
    return outcome.cut or any(r is not None and r.failure is not None and r.failure.kind == "timeout" for r in runs)


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
        ctx.timed = True
        return Outcome("error", f"Stopped: {timeout}. Your engine may be very slow, or stuck in a loop.")
    except WorkerFailure as failure:
        return Outcome("error", f"Your code {failure.message}.")
    except Exception:
        trace = without_host_paths(traceback.format_exc())
        return Outcome("error", f"Internal grader error (not your fault; tell your instructor):\n{trace}")


def score(outcome: Outcome, points: float) -> float:
    """Points earned: all for a pass, a fraction for partial credit, none otherwise."""
    if outcome.fraction is not None:
        return round(points * min(max(outcome.fraction, 0.0), 1.0), 4)
    return points if outcome.status == "passed" else 0.0


def _check_result(
    spec: CheckSpec,
    title: str,
    outcome: Outcome,
    duration: float,
    first: dict[tuple[str, bool], str],
    hidden: set[str] | frozenset[str] = frozenset(),
) -> CheckResult:
    """The check's result, its feedback saying the outcome's cause: when several checks fail from one
    recognised cause, the first explains it and the others say 'same cause as <first>' (keeping what they
    saw and their smallest case). first holds each cause's first check so far (and first visible one), and
    learns this one's. A visible check never names a hidden one: its first is the first visible check."""
    cause = outcome.cause if outcome.status in ("failed", "error") and outcome.cause in CAUSES else None
    visible = spec.visibility != "hidden"
    earlier = None
    if cause:
        earlier = first.setdefault((cause, False), spec.id)
        if visible:
            earlier = first.setdefault((cause, True), spec.id)
    text = said_in(outcome.feedback, cause, earlier if earlier != spec.id else None, _also(outcome, cause))
    return CheckResult(
        id=spec.id,
        title=title,
        status=outcome.status,
        score=score(outcome, spec.points),
        max_score=spec.points,
        visibility=spec.visibility,
        feedback=feedback.without_hidden(text, hidden) if visible else text,
        counterexample=outcome.counterexample,
        artifacts=outcome.artifacts,
        duration_s=round(duration, 3),
        cause=cause,
        not_written=outcome.not_written,
        timing=outcome.timing,
    )


def _also(outcome: Outcome, cause: str | None) -> tuple[str, ...]:
    """The same misconception's ids in other methods, which the check found with its cause (artifacts' causes)."""
    found = outcome.artifacts.get("causes")
    if not cause or not isinstance(found, list) or not found or found[0] != cause:
        return ()
    return tuple(str(c) for c in found[1:])


def _result(
    grading: Grading,
    digest: str | None,
    checks: tuple[CheckResult, ...],
    execution: Execution | None = None,
    notes: tuple[str, ...] = (),
    error: SubmissionError | None = None,
) -> Result:
    """The result (an error one when `error` says why the submission could not be graded), its every text fit to
    leave the machine (grader/feedback.py: the one place that says how), cleaned once."""
    return feedback.cleaned(
        Result(
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
        ),
        grading.options.host_paths,
    )
