"""Notebook submissions: read here (a notebook 4 from its JSON, any other version through nbformat), run once in the
sandbox, graded in the state they leave.

The notebook's code cells run top to bottom in the engine lane's process with IPython's
own shell (the one a Jupyter kernel runs cells with), as Restart & Run All would: a cell
that raises is reported and execution goes on, a cell past its time limit is interrupted
(KeyboardInterrupt, as Jupyter's interrupt), input() fails at once, and a cell that kills
the process is reported as the one that killed the kernel. The engine checks then probe
that very process: the notebook is run once, not once more as a module. If a cell killed
the process, the cells before it run again in a fresh one, without it and what came
after, and that state is graded.

Before any of that, the grader's own process reads each cell as IPython does (grader/slicing.py), and IPython
reads a cell again, whole, for each magic or shell line it turns into a call: its cost grows with the cell's
size times its magics (a 154 KB cell of 499 magics takes seconds), and past 500 it raises. That reading
happens outside any sandbox and before the submission's deadline, so it is bounded first (`too_long_to_read`):
a cell past MOST_MAGIC_LINES, or whose size times its magic lines is past READING_BUDGET (or a notebook's, past
NOTEBOOK_READING_BUDGET), is a `syntax_error` naming the cell and what to do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from grader.errors import NotebookError
from grader.files import MODULE

CELL_GRACE_S = 5.0
"""After a cell's interrupt, how long the grader waits before it stops the process itself."""
MOST_MAGIC_LINES = 200
"""The most lines of one cell that IPython may read as magics, shell commands or help (`%`, `!`, `?`...)."""
READING_BUDGET = 500_000
"""The most characters IPython's reading of one cell may go through: its size, once more for each magic line
(about a second of the grader's own time)."""
NOTEBOOK_READING_BUDGET = 4 * READING_BUDGET
"""The same, for all of a notebook's code cells."""
ESCAPES = tuple("%!?,;/")
"""What starts a line IPython turns into a call: a magic, a shell command, help, and its autocall escapes."""
_ASSIGNED_CALL = re.compile(r"=[ \t]*[%!]")
"""`x = %time ...`, `files = !ls`: linear (a run of blanks is tried once, from the `=` before it)."""


def cell_name(place: int) -> str:
    """A code cell as every message names it: by its place among the notebook's code cells (`code cell 3`), which is
    the number Jupyter shows beside it (`In [3]`) after Restart & Run All; markdown cells, which Jupyter numbers not,
    are not counted, nor empty code cells, which it runs not."""
    return f"code cell {place}"


def places(cells: tuple[tuple[int, str], ...]) -> dict[int, int]:
    """Each code cell's place (from 1, as cell_name names it), by its index among all the notebook's cells: `cells`
    as code_cells gives them."""
    return {index: place for place, (index, _) in enumerate(cells, 1)}


@dataclass(frozen=True)
class CellReport:
    number: int
    """The code cell's place among the notebook's code cells, from 1 (cell_name), as Jupyter numbers it."""
    status: str
    """ok, error (it raised), timeout (interrupted, or cut off when the notebook's time ran out), killed (the
    kernel died in it), or not_run (after that)."""
    error: str = ""
    index: int = 0
    """The cell's index among all the notebook's cells, from 0 (not in the result: the grader's own)."""


@dataclass(frozen=True)
class Execution:
    cells: tuple[CellReport, ...]
    died: str | None
    """Why the kernel died, if it did."""
    out_of_time: str = ""
    """Why the notebook was stopped when its time ran out, if it was."""

    def problems(self) -> list[str]:
        """One line per cell that did not run cleanly, for the student."""
        after = "the notebook's time had run out" if self.out_of_time else "the kernel had died"
        lines = [
            f"{cell_name(c.number)}: {c.error}"
            if c.status == "error"
            else f"{cell_name(c.number)}: cut off: {c.error}"
            if c.status == "timeout" and c.error
            else f"{cell_name(c.number)}: interrupted after running past its time limit"
            if c.status == "timeout"
            else f"{cell_name(c.number)}: the kernel died while running it"
            if c.status == "killed"
            else f"{cell_name(c.number)}: not run, {after}"
            for c in self.cells
            if c.status != "ok"
        ]
        if self.died:
            lines.append(f"the kernel died: {self.died}")
        return lines

    def to_dict(self) -> dict:
        return {
            "cells": [
                {"number": c.number, "status": c.status, "error": c.error} for c in self.cells if c.status != "ok"
            ],
            "died": self.died,
            "problems": self.problems(),
        }

    def left_out(self) -> frozenset[int]:
        """Indices (from 0) of the cells the runs of the tests leave out: those that timed out, killed the kernel
        or never ran (each would cost its time limit again in every run; the engine lane's own run again after a
        kill keeps the cells that timed out, as a kernel keeps what they did)."""
        return frozenset(c.index for c in self.cells if c.status in ("timeout", "killed", "not_run"))


@dataclass(frozen=True)
class Cell:
    """A cell as the grader reads it: its type, its source as one text, and (of a code cell) the execution count
    Jupyter saved with it."""

    cell_type: str
    source: str
    execution_count: int | None = None


@dataclass(frozen=True)
class Notebook:
    cells: tuple[Cell, ...]


def read(path: Path, source: bytes | None = None) -> Notebook:
    """The notebook's cells, as nbformat 4 has them (older versions are upgraded by nbformat); NotebookError if it is
    not a notebook. `source`: the file's bytes, already read (a student's file is read once, through no link:
    grader/fileio.py).

    A notebook 4, what Jupyter saves, is read from its JSON here: nbformat's import and its schema validation (which
    only logs what it finds) cost a grading 0.15 s of the grader's own time before anything else may start, and a
    cell nbformat lets through without a source would then fail the grading. Any other version goes through
    nbformat, which upgrades it."""
    try:
        text = source.decode("utf-8") if source is not None else path.read_text(encoding="utf-8")
        found = json.loads(text)
    except UnicodeDecodeError as exc:
        raise NotebookError(f"{path.name} is not a notebook: it is not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"{path.name} is not a notebook: it is not valid JSON ({exc}). Was it saved completely?"
        ) from None
    except RecursionError:  # JSON nested thousands deep: the decoder recurses
        raise NotebookError(
            f"{path.name} is not a notebook: its JSON is nested thousands deep. Was it saved by Jupyter?"
        ) from None
    if not (isinstance(found, dict) and found.get("nbformat") == 4):
        found = _upgraded(path, text)
    cells = found.get("cells")
    if not isinstance(cells, list):
        raise NotebookError(f"{path.name} is not a notebook as Jupyter saves one: it has no list of cells")
    return Notebook(tuple(_cell(path, k, cell) for k, cell in enumerate(cells, 1)))


def _upgraded(path: Path, text: str) -> dict:
    """A notebook of another version than 4, upgraded by nbformat (as a dict)."""
    import nbformat  # here, not at the top: a notebook 4 is read without it

    try:
        return nbformat.convert(nbformat.reader.reads(text), 4)
    except (KeyError, ValueError, nbformat.ValidationError, AttributeError, TypeError) as exc:
        raise NotebookError(f"{path.name} is not a notebook nbformat can read: {exc}") from None
    except RecursionError:
        raise NotebookError(
            f"{path.name} is not a notebook: its JSON is nested thousands deep. Was it saved by Jupyter?"
        ) from None


def _cell(path: Path, number: int, cell) -> Cell:
    """One cell (number: its place among all the notebook's cells, from 1), its source a text; NotebookError for a
    cell no Jupyter saves (no type, or a code cell without a source of text)."""
    kind = cell.get("cell_type") if isinstance(cell, dict) else None
    if not isinstance(kind, str):
        raise NotebookError(
            f"{path.name} is not a notebook as Jupyter saves one: its cell {number} (markdown cells counted) has no "
            "cell_type"
        )
    given = cell.get("source")
    if isinstance(given, list) and all(isinstance(line, str) for line in given):
        given = "".join(given)
    if not isinstance(given, str):
        if kind == "code":
            raise NotebookError(
                f"{path.name} is not a notebook as Jupyter saves one: its cell {number} (markdown cells counted) is a "
                "code cell without a source of text"
            )
        given = ""
    count = cell.get("execution_count")
    return Cell(kind, given, count if isinstance(count, int) and not isinstance(count, bool) else None)


def code_cells(nb: Notebook) -> tuple[tuple[int, str], ...]:
    """(index among all cells, source) of every non-empty code cell, its `%load_ext grader` and `%grade` lines
    made `pass`: they ask the student's own Jupyter for a grading (grader/jupyter.py), and a grading runs none."""
    return tuple(
        (i, _no_grading(cell.source))
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and cell.source.strip()
    )


def magic_lines(source: str) -> int:
    """How many lines of a cell IPython may turn into a call, counted generously (a line starting with one of
    ESCAPES, holding `= %` or `= !`, or ending with `?`), in linear time."""
    count = 0
    for line in source.split("\n"):
        count += (
            line.lstrip().startswith(ESCAPES)
            or line.rstrip().endswith("?")
            or (("%" in line or "!" in line) and _ASSIGNED_CALL.search(line) is not None)
        )
    return count


def too_long_to_read(cells: tuple[tuple[int, str], ...]) -> str | None:
    """Why a notebook's code cells (index, source) cannot be read as IPython reads them within bounds, naming the
    first cell past them; None when every one can."""
    total = 0
    for place, (_, source) in enumerate(cells, 1):
        name = cell_name(place)
        magics = magic_lines(source) if len(source) <= READING_BUDGET else 0
        cost = (magics + 1) * len(source)
        total += cost
        if magics > MOST_MAGIC_LINES:
            return (
                f"{name} has {magics} lines IPython reads as magics or shell commands (`%`, `!`, `?`), "
                f"more than the {MOST_MAGIC_LINES} it reads in one cell here: spread them over several cells"
            )
        if cost > READING_BUDGET:
            lines = f" with {magics} magic or shell lines (`%`, `!`, `?`) in it" if magics else ""
            return (
                f"{name} is {len(source):,} characters long{lines}: IPython reads a cell again, whole, "
                "for each such line, which would take too long here. Split the cell, and put its magics in a "
                "small cell of their own"
            )
        if total > NOTEBOOK_READING_BUDGET:
            return (
                f"the notebook's code, up to {name}, is more than IPython's reading of a notebook is "
                f"given here ({NOTEBOOK_READING_BUDGET:,} characters, a cell counted once more for each magic "
                "line in it): keep your engine and its tests in the notebook, and move data or long pasted "
                "output out of it"
            )
    return None


def is_grading_line(line: str) -> bool:
    """`%load_ext grader`, `%grade`, or `%grade` with options."""
    stripped = line.strip()
    return stripped in ("%load_ext grader", "%grade") or stripped.startswith("%grade ")


def _no_grading(source: str) -> str:
    if "%" not in source:
        return source
    lines = source.split("\n")
    for k, line in enumerate(lines):
        if is_grading_line(line):
            lines[k] = line[: len(line) - len(line.lstrip())] + "pass"
    return "\n".join(lines)


class Progress:
    """Follows a notebook run from the sandbox's events: which cell started, how each ended."""

    def __init__(self, cells: tuple[tuple[int, str], ...] = (), tell=None):
        self.started: int | None = None
        self.ended: dict[int, dict] = {}
        self.order = {index: k for k, (index, _) in enumerate(cells)}
        self.tell = tell
        """Told (the code cell's place from 1, code cells) as each of the notebook's cells starts."""

    def __call__(self, event: dict) -> None:
        cell = event.get("cell")
        if not isinstance(cell, int) or isinstance(cell, bool):
            return
        if event.get("phase") == "start":
            self.started = cell
            if self.tell is not None and cell in self.order:  # a claim: only cells the notebook has
                self.tell(self.order[cell] + 1, len(self.order))
        elif isinstance(event.get("status"), str):
            self.ended[cell] = event
            self.started = None


def execution(
    cells: tuple[tuple[int, str], ...],
    said: dict[int, dict],
    killed_at: int | None = None,
    why: str | None = None,
    interrupted: bool = False,
    out_of_time: str = "",
) -> Execution:
    """The per-cell report, from what the sandbox said of each cell and where the process died.

    A cell that could not be interrupted counts as a timeout; a cell during which the process
    died, as the one that killed the kernel; a cell running when the notebook's time ran out
    (out_of_time says why), as a timeout with that reason; every cell after it, as not run.
    """
    reports = []
    exited = next((i for i, entry in said.items() if entry.get("exit") is True), None)
    for number, (index, _) in enumerate(cells, 1):
        if killed_at is not None and index == killed_at:
            status = "timeout" if interrupted or out_of_time else "killed"
            reports.append(CellReport(number, status, out_of_time, index))
            continue
        if killed_at is not None and index > killed_at:
            reports.append(CellReport(number, "not_run", index=index))
            continue
        entry = said.get(index, {"status": "ok"})
        if exited is not None and index > exited:
            reports.append(CellReport(number, "not_run", index=index))
            continue
        given = entry.get("status")
        status = given if isinstance(given, str) and given in ("ok", "error", "timeout") else "ok"
        error = f"{entry.get('ename', '')}: {entry.get('evalue', '')}".strip(": ")[:500] if status == "error" else ""
        error = error if isinstance(error, str) else ""
        reports.append(CellReport(number, status, error, index))
    died = None if killed_at is None or interrupted or out_of_time else why
    if exited is not None and killed_at is None:
        died = f"{cell_name(places(cells).get(exited, 0))} called exit(), which shuts the kernel down"
    return Execution(tuple(reports), died, out_of_time)


TEST_SHIM = f"from {MODULE} import *  # the notebook's test_* functions are its test suite\n"


def has_tests(nb: Notebook) -> bool:
    return any(cell.cell_type == "code" and "def test_" in cell.source for cell in nb.cells)
