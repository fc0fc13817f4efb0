"""`grader check`: grade one submission, print the rubric, write the JSON and the HTML report.

A TA may run this in a student's folder, so neither the submission nor the outputs go
through a link the student left there: the submission and the tests are read through none
(grader/fileio.py), and each output is written atomically, refused if it is a link, and
the default `reports/` folder, the grader's choice and not the user's, must be a real folder.

Only a `.py` file or a `.ipynb` notebook is graded; a folder stands for the engine in it
(`micrograd_mine.py`, or its one notebook). `--json -` writes the result to stdout, the
table then going to stderr. A reader that stops early (`| head -3`) costs the rest of the
text, never the exit code: a failing grade exits 1 whatever became of its output.

Each check remembers its result beside the reports (grader/history.py), and the next one leads with what
changed. `--watch` grades again whenever the submission or its tests change (grader/watch.py).
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from grader import fileio, history, kit, spec
from grader.errors import ExitCode, GraderError, SandboxError, UsageError
from grader.files import MODULE_FILE, TESTS_FILE
from grader.notebooks import cell_name
from grader.sandbox import isolation
from grader.sandbox.limits import SandboxLimits
from grader.sandbox.prestarted import Prestarted, layout
from grader.text import printable

if TYPE_CHECKING:
    from grader.result import CheckResult, Result
    from grader.spec import Assignment


GRADED = (".py", ".ipynb")
"""The kinds of file grader check grades."""
LOOKED = 1000
"""The most entries of a folder looked at for a file to grade in place of one that is not there."""


@dataclass(frozen=True)
class Request:
    """What `grader check` was asked (its options, by the names cli.py gives them)."""

    submission: Path
    assignment: str
    tests: Path | None = None
    json_path: Path | None = None
    html_path: Path | None = None
    public_only: bool = False
    watch: bool = False

    @property
    def to_stdout(self) -> bool:
        return self.json_path == Path("-")

    @property
    def outputs(self) -> tuple[tuple[Path | None, None], tuple[Path, Path | None], tuple[Path, Path]]:
        """(path, the folder below which no link is taken) of the JSON, the HTML report and the history record."""
        json_file = None if self.to_stdout else self.json_path
        report: tuple[Path, Path | None] = (
            (self.html_path, None) if self.html_path else (Path("reports") / f"{self.submission.stem}.html", Path("."))
        )
        return ((json_file, None), report, (history.place(self.submission), Path(".")))

    @property
    def tests_file(self) -> Path:
        """The tests a grading reads (a notebook with test functions of its own reads these only when they exist)."""
        return self.tests or self.submission.parent / TESTS_FILE


def main(**options) -> int:
    request = _checked(Request(**options))
    if request.watch:
        return watch(request)
    graded = grade_once(request)
    show(graded, request, history.recall(request.submission, graded.task.id))
    return ExitCode.OK if graded.result.passed else ExitCode.FAILED


def watch(request: Request) -> int:
    """--watch: grade, then grade again at each change of the submission or its tests, until Ctrl-C. The first
    grading prints what grader check prints; each later one, a line (the time, the files that changed, the score
    and what changed since the last grading, a regression first) and the cards of the checks whose status
    changed. Ctrl-C stops the grading under way, if any, with its sandboxes, and exits 130, the contract's
    "interrupted", as any command ended by Ctrl-C does (a shell script running it stops there too)."""
    from grader.watch import changed, look

    paths = [request.submission, request.tests_file]
    seen = {p: look(p) for p in paths}
    interrupted = threading.Event()
    previous = signal.signal(signal.SIGINT, _noted(interrupted))
    unraisable = sys.unraisablehook
    sys.unraisablehook = lambda dropped: None if dropped.exc_type is KeyboardInterrupt else unraisable(dropped)
    try:
        graded = grade_once(request)
        show(graded, request, history.recall(request.submission, graded.task.id))
        names = " and ".join(printable(p.name, keep="") for p in paths)
        _say(f"\nWatching {names}: each change is graded again. Ctrl-C to stop.", sys.stdout)
        while True:
            moved = changed(paths, seen, stop=interrupted.is_set)
            before = history.recall(request.submission, graded.task.id)
            graded = grade_once(request)
            names = ", ".join(printable(p.name, keep="") for p in moved)
            show(graded, request, before, headline=f"\n[{time.strftime('%H:%M:%S')}] {names} changed")
    except KeyboardInterrupt:
        print("\ngrader: stopped watching", file=sys.stderr, flush=True)
        return ExitCode.INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = unraisable


def _noted(interrupted: threading.Event):
    """A SIGINT handler raising KeyboardInterrupt, as Python's own does, having first noted it: Python drops an
    exception raised in a garbage collector's callback (hypothesis installs one), so a Ctrl-C landing there would
    be lost and the watch go on; the watch's polling reads the note and stops at its next look (Python's note of
    the dropped one, a traceback, is left unsaid)."""

    def handler(signum: int, frame: object) -> None:
        interrupted.set()
        raise KeyboardInterrupt

    return handler


def _checked(request: Request) -> Request:
    """The request with a folder turned into the file it stands for, or UsageError: before anything is graded."""
    submission = request.submission
    if not os.path.lexists(submission):
        raise UsageError(f"{submission} does not exist{_instead(submission)}")
    if submission.is_dir() and not submission.is_symlink():
        submission = _in_folder(submission)
    if submission.suffix not in GRADED:
        raise UsageError(
            f"{submission.name} is not a .py file or a .ipynb notebook, the only kinds grader check "
            f"grades: give your engine's file ({MODULE_FILE}) or your notebook"
        )
    if request.tests is not None and not os.path.lexists(request.tests):
        raise UsageError(f"--tests {request.tests}: no such file")
    if request.watch and request.to_stdout:
        raise UsageError("--watch prints each grading for you to read: write the JSON to a file (--json FILE), not -")
    request = Request(**{**request.__dict__, "submission": submission})
    for path, base in request.outputs:
        if path is not None:
            fileio.refuse_links(path, base)  # before grading, not after
    return request


@dataclass(frozen=True)
class Checked:
    """One grading by `grader check`: the result, the assignment, and the submission's bytes as graded."""

    result: Result
    task: Assignment
    source: bytes | None
    """Read once, before the grading: what was graded, and what the report shows (None: it could not be read,
    which the result says)."""


def grade_once(request: Request) -> Checked:
    """One grading of the submission as it is on disk now, in the sandboxes, with its progress on stderr. The file
    is read once: the grading and the report have the same bytes, whatever becomes of the file meanwhile."""
    iso = isolation.require("check")
    lanes = 2 if (os.cpu_count() or 1) >= 2 else 1
    try:
        source: bytes | None = fileio.read_regular(request.submission)  # no link, no pipe, capped
    except OSError:
        source = None  # the grading reads it, and its result says why it cannot be graded
    with _prestart(request, source, iso, lanes) as prestarted:
        # the grader's checks import here, while the sandboxes warm up on the other core
        from grader import catalog
        from grader.grading import Options, grade
        from grader.sandbox.trial import require_started

        task = catalog.load(request.assignment)
        progress, cells = CheckProgress(sys.stderr), CellProgress(sys.stderr)
        try:
            result = grade(
                request.submission,
                task,
                Options(
                    public_only=request.public_only,
                    tests=request.tests,
                    isolation=iso,
                    suite_sandboxes=lanes,
                    on_check=progress.done,
                    progress=cells,
                    prestarted=prestarted,
                    source=source,
                ),
            ).redacted()
        except SandboxError:
            # no trial up front (it cost every check a sandbox's start): the grading's own sandbox is the trial,
            # and when it cannot start, the trial says why and how to fix it (exit 3), as for a batch
            require_started("check")
            raise
        finally:
            cells.done()
            progress.clear()
    return Checked(result, task, source)


def show(graded: Checked, request: Request, before: history.Record | None, headline: str = "") -> history.Since | None:
    """The grading told: the table led by what changed since the last check (or, given a `headline`, one line
    and the cards of the checks whose status changed), then the JSON and the report written, and this check
    remembered. Returns what changed."""
    from grader.render import html
    from grader.render.terminal import brief, render

    result, task = graded.result, graded.task
    change = history.compare(before, history.Record.of(result, request.submission)) if before else None
    table = sys.stderr if request.to_stdout else sys.stdout  # --json -: stdout holds the JSON alone
    width = columns(table)
    source = graded.source.decode("utf-8", errors="replace") if graded.source is not None else None
    said = (
        brief(result, change, headline, width)
        if headline
        else render(result, task, change, width, kit.unwritten(source, request.submission.suffix == ".ipynb"))
    )
    _say(said, table)
    if request.to_stdout:
        _say(result.to_json(), sys.stdout)
    elif request.json_path:
        fileio.atomic_write(request.json_path, result.to_json() + "\n", mode=0o666)
    (html_path, base), (record, record_base) = request.outputs[1:]
    report = html.student_report(result, source, task.title or task.id)
    fileio.atomic_write(html_path, report, mode=0o666, base=base)
    if not headline:
        _say(printable(f"Report: {html_path}"), table)
    history.remember(result, request.submission, record_base)
    return change


def columns(stream: TextIO) -> int | None:
    """The width of the terminal the stream writes to, or None when it is no terminal (a pipe, a file: then no
    line is wrapped, and whatever shows it wraps them to its own width)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else None
    except (OSError, ValueError, AttributeError):
        return None


def _prestart(request: Request, source: bytes | None, iso: isolation.Isolation, lanes: int) -> Prestarted:
    """The sandboxes the grading will want, started now: the engine's, and the suite's when there are tests to
    run (a tests file, or a notebook's own test functions). None that cannot start here, and none when the
    assignment cannot be read: the grading then starts its own, and says what is wrong."""
    submission, tests = request.submission, request.tests
    notebook = submission.suffix == ".ipynb"
    try:
        given = spec.limits(request.assignment)
        limits = SandboxLimits.for_grading(given.request_s, given.memory_mb, given.submission_s)
        has_tests = (
            tests is not None
            or os.path.lexists(submission.parent / TESTS_FILE)
            or notebook
            and source is not None
            and b"def test_" in source
        )
        engine, suites, _ = layout("notebook" if notebook else "py", has_tests, lanes, iso.shares_tmp)
        return Prestarted([(limits, warm) for warm in (engine, *suites)], iso)
    except (GraderError, OSError, ValueError):
        return Prestarted([], iso)


def _instead(missing: Path) -> str:
    """What to grade instead of a file that is not there: the files beside it grader check grades (not tests), by
    name, or where to run it from."""
    folder = missing.parent
    try:
        with os.scandir(folder) as entries:  # a look at the first LOOKED entries only: a folder may hold any number
            found = sorted(
                entry.name
                for entry in itertools.islice(entries, LOOKED)
                if Path(entry.name).suffix in GRADED
                and not entry.name.startswith((".", "test_"))
                and entry.is_file(follow_symlinks=False)
            )
    except OSError:
        found = []
    if not found:
        return f" (run grader check from the folder holding {MODULE_FILE}, or give its path)"
    shown = ", ".join(printable(name, keep="") for name in found[:4]) + (" ..." if len(found) > 4 else "")
    return f"; its folder has {shown}: grade it with grader check {printable(str(folder / found[0]), keep='')}"


def _in_folder(folder: Path) -> Path:
    """The submission a folder stands for: its micrograd_mine.py, else its one notebook."""
    if os.path.lexists(folder / MODULE_FILE):
        return folder / MODULE_FILE
    notebooks = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    if len(notebooks) == 1:
        return notebooks[0]
    found = (
        f"it holds {len(notebooks)} notebooks ({', '.join(p.name for p in notebooks[:4])})"
        if notebooks
        else "it holds neither"
    )
    raise UsageError(
        f"{folder} is a folder: grader check grades the {MODULE_FILE} in it, or its one notebook, but "
        f"{found}; give the file's path (grader check {folder / MODULE_FILE})"
    )


class _Line:
    """A progress line on stderr: one line per update, or on a terminal one line rewritten in place."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.live = stream.isatty()

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (BrokenPipeError, ValueError):  # nobody reads stderr any more: grading goes on
            pass


class CheckProgress(_Line):
    """Each check on stderr as it ends (`[ 3/18] add  PASS 6/6 (0.4 s)`), so a slow engine is never graded
    in silence: one line per check, or on a terminal one line rewritten in place and cleared before the
    table. Status and points only: feedback waits for the table."""

    def done(self, check: CheckResult, count: int, total: int) -> None:
        from grader.render.terminal import mark, points

        width = len(str(total))
        line = f"[{count:>{width}}/{total}] {check.id}  {mark(check)} {points(check)} ({check.duration_s:.1f} s)"
        self._write(f"\r\x1b[K{line}" if self.live else f"{line}\n")

    def clear(self) -> None:
        if self.live:
            self._write("\r\x1b[K")


def _say(text: str, stream: TextIO) -> None:
    """Print a line; if the reader has gone (a pipe into head), the rest of the output goes nowhere and the
    command goes on, to write its files and exit with the grade's code."""
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


class CellProgress(_Line):
    """`code cell K of M` on stderr while a notebook's cells run, once it has run for a few seconds (a
    quick notebook shows nothing); on a terminal, one line rewritten in place each second, cleared when the
    notebook has run (the checks' progress then takes the line)."""

    AFTER_S = 3.0

    def __init__(self, stream: TextIO):
        super().__init__(stream)
        self.started: float | None = None
        self.current: tuple[int, int] | None = None
        self.shown = ""
        self.stop = threading.Event()
        self.ticker: threading.Thread | None = None

    def __call__(self, place: int, count: int) -> None:
        self.current = (place, count)
        if self.ticker is None:
            self.started = time.monotonic()
            self.ticker = threading.Thread(target=self._tick, daemon=True)
            self.ticker.start()
        if place == count:  # the last cell: the notebook's run ends with it
            self.stop.set()

    def _tick(self) -> None:
        started = self.started
        assert started is not None, "the ticker starts once the first cell is announced, its start time set"
        while not self.stop.wait(self.AFTER_S if not self.shown else 1.0):
            assert self.current is not None, "set before the ticker starts, and never unset"
            place, count = self.current
            line = f"running your notebook: {cell_name(place)} of {count}, {time.monotonic() - started:.0f} s so far"
            if self.live:
                self._write(f"\r\x1b[K{line}")
            elif line.split(",")[0] != self.shown.split(",")[0]:
                self._write(f"{line}\n")
            self.shown = line

    def done(self) -> None:
        self.stop.set()
        if self.ticker is not None:
            self.ticker.join()
        if self.shown and self.live:
            self._write("\r\x1b[K")
