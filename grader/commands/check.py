"""`grader check`: grade one submission, print the rubric, write the JSON and the HTML report.

A TA may run this in a student's folder, so neither the submission nor the outputs go
through a link the student left there: the submission and the tests are read through none
(grader/fileio.py), and each output is written atomically, refused if it is a link, and
the default `reports/` folder, the grader's choice and not the user's, must be a real folder.

Only a `.py` file or a `.ipynb` notebook is graded; a folder stands for the engine in it
(`micrograd_mine.py`, or its one notebook). `--json -` writes the result to stdout, the
table then going to stderr. A reader that stops early (`| head -3`) costs the rest of the
text, never the exit code: a failing grade exits 1 whatever became of its output.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from grader import fileio, spec
from grader.errors import ExitCode, GraderError, SandboxError, UsageError
from grader.files import MODULE_FILE, TESTS_FILE
from grader.sandbox import isolation
from grader.sandbox.limits import SandboxLimits
from grader.sandbox.prestarted import Prestarted, layout
from grader.text import printable

if TYPE_CHECKING:
    from grader.result import CheckResult


GRADED = (".py", ".ipynb")
"""The kinds of file grader check grades."""


def main(
    *,
    submission: Path,
    assignment: str,
    tests: Path | None = None,
    json_path: Path | None = None,
    html_path: Path | None = None,
    public_only: bool = False,
) -> int:
    if not os.path.lexists(submission):
        raise UsageError(
            f"{submission} does not exist (run grader check from the folder holding {MODULE_FILE}, or give its path)"
        )
    if submission.is_dir() and not submission.is_symlink():
        submission = _in_folder(submission)
    if submission.suffix not in GRADED:
        raise UsageError(
            f"{submission.name} is not a .py file or a .ipynb notebook, the only kinds grader check "
            f"grades: give your engine's file ({MODULE_FILE}) or your notebook"
        )
    if tests is not None and not os.path.lexists(tests):
        raise UsageError(f"--tests {tests}: no such file")
    to_stdout = json_path == Path("-")
    json_file = None if to_stdout else json_path
    outputs = (
        [(json_file, None), (html_path, None)]
        if html_path
        else [(json_file, None), (Path("reports") / f"{submission.stem}.html", Path("."))]
    )
    for path, base in outputs:
        if path is not None:
            fileio.refuse_links(path, base)  # before grading, not after
    iso = isolation.require("check")
    lanes = 2 if (os.cpu_count() or 1) >= 2 else 1
    with _prestart(submission, assignment, tests, iso, lanes) as prestarted:
        # the grader's checks import here, while the sandboxes warm up on the other core
        from grader import catalog
        from grader.grading import Options, grade
        from grader.sandbox.trial import require_started

        task = catalog.load(assignment)
        progress, cells = Progress(sys.stderr), CellProgress(sys.stderr)
        try:
            result = grade(
                submission,
                task,
                Options(
                    public_only=public_only,
                    tests=tests,
                    isolation=iso,
                    suite_sandboxes=lanes,
                    on_check=progress.done,
                    progress=cells,
                    prestarted=prestarted,
                ),
            ).redacted()
        except SandboxError:
            # no trial up front (it cost every check a sandbox's start): the grading's own sandbox is the trial,
            # and when it cannot start, the trial says why and how to fix it (exit 3), as for a batch
            require_started("check")
            raise
        finally:
            cells.done()
    from grader.render import html
    from grader.render.terminal import render

    progress.clear()
    table = sys.stderr if to_stdout else sys.stdout  # --json -: stdout holds the JSON alone
    _say(render(result, task), table)
    if to_stdout:
        _say(result.to_json(), sys.stdout)
    elif json_file:
        fileio.atomic_write(json_file, result.to_json() + "\n", mode=0o666)
    html_path, base = outputs[1]
    try:
        source = fileio.read_regular(submission).decode("utf-8", errors="replace")
    except OSError:
        source = None
    fileio.atomic_write(html_path, html.student_report(result, source, task.title or task.id), mode=0o666, base=base)
    _say(printable(f"Report: {html_path}"), table)
    return ExitCode.OK if result.passed else ExitCode.FAILED


def _prestart(
    submission: Path, assignment: str, tests: Path | None, iso: isolation.Isolation, lanes: int
) -> Prestarted:
    """The sandboxes the grading will want, started now: the engine's, and the suite's when there are tests to
    run (a tests file, or a notebook's own test functions). None that cannot start here, and none when the
    assignment cannot be read: the grading then starts its own, and says what is wrong."""
    notebook = submission.suffix == ".ipynb"
    try:
        given = spec.limits(assignment)
        limits = SandboxLimits.for_grading(given.request_s, given.memory_mb, given.submission_s)
        has_tests = (
            tests is not None
            or os.path.lexists(submission.parent / TESTS_FILE)
            or notebook
            and b"def test_" in fileio.read_regular(submission)
        )
        engine, suites, _ = layout("notebook" if notebook else "py", has_tests, lanes, iso.shares_tmp)
        return Prestarted([(limits, warm) for warm in (engine, *suites)], iso)
    except (GraderError, OSError, ValueError):
        return Prestarted([], iso)


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


class Progress(_Line):
    """Each check on stderr as it ends (`[ 3/18] add  PASS 6/6 (0.4 s)`), so a slow engine is never graded
    in silence: one line per check, or on a terminal one line rewritten in place and cleared before the
    table. Status and points only: feedback waits for the table."""

    def done(self, check: CheckResult, count: int, total: int) -> None:
        from grader.render.terminal import MARK

        width = len(str(total))
        line = (
            f"[{count:>{width}}/{total}] {check.id}  {MARK[check.status]} {check.score:g}/{check.max_score:g} "
            f"({check.duration_s:.1f} s)"
        )
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
    """`cell N (code cell K of M)` on stderr while a notebook's cells run, once it has run for a few seconds (a
    quick notebook shows nothing); on a terminal, one line rewritten in place each second, cleared when the
    notebook has run (the checks' progress then takes the line)."""

    AFTER_S = 3.0

    def __init__(self, stream: TextIO):
        super().__init__(stream)
        self.started: float | None = None
        self.current: tuple[int, int, int] | None = None
        self.shown = ""
        self.stop = threading.Event()
        self.ticker: threading.Thread | None = None

    def __call__(self, number: int, place: int, count: int) -> None:
        self.current = (number, place, count)
        if self.ticker is None:
            self.started = time.monotonic()
            self.ticker = threading.Thread(target=self._tick, daemon=True)
            self.ticker.start()
        if place == count:  # the last cell: the notebook's run ends with it
            self.stop.set()

    def _tick(self) -> None:
        while not self.stop.wait(self.AFTER_S if not self.shown else 1.0):
            number, place, count = self.current
            line = (
                f"running your notebook: cell {number} (code cell {place} of {count}), "
                f"{time.monotonic() - self.started:.0f} s so far"
            )
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
