"""Loading the student's code in the engine lane: importing the module, or running the notebook
(within its budget, capped by what is left of the submission's time limit), and what it means
for the student when it cannot be loaded: a Rejected, which grade() turns into a result with
status `error`."""

from __future__ import annotations

import re
import time

from grader import notebooks, protocol, slicing
from grader.checks.context import did_you_mean
from grader.errors import OutOfTime, Rejected, WorkerFailure
from grader.lanes import EngineLane
from grader.protocol import Code, Loaded
from grader.sandbox.inside.standins import UNAVAILABLE
from grader.spec import Assignment

LESSON_NAMES = ("Value", "Neuron", "Layer", "MLP", "numerical_grad")
"""The lesson's names the checks read: a later cell defining one again is named in a note."""


def load(engine: EngineLane, code: Code, assignment: Assignment, filename: str, ends: float, progress=None):
    """Load the student's code (running a notebook) before the grading's deadline, ends; the names it
    defines, and the notebook's report. progress: told each notebook cell as it starts (notebooks.Progress)."""
    limits = assignment.limits
    if code.kind == "notebook":
        return _load_notebook(engine, code, assignment, filename, ends, progress)
    try:
        reply = engine.load(code.request(), limits.request_s, ends)
    except WorkerFailure as failure:
        if isinstance(failure, OutOfTime) and failure.outer:
            raise Rejected(
                "timeout",
                f"importing {filename}: the submission's time limit of {limits.submission_s:g} "
                "s ran out before your code was imported.",
            ) from None
        raise Rejected(failure.result_kind, f"importing {filename}: your code {failure.message}") from None
    claim = protocol.loaded(reply)
    return _symbols(claim, assignment, filename, None, engine.sandbox.python), None, notes_of(claim, code)


def _load_notebook(engine: EngineLane, code: Code, assignment: Assignment, filename: str, ends: float, tell=None):
    """Run the notebook within its budget (cell_s for each cell, two more, and a minute), capped by what
    is left of the submission's time limit; a notebook still running when that runs out is an error,
    its report naming the cell cut off."""
    limits = assignment.limits
    cell_s, gap = limits.cell_s, limits.cell_s + notebooks.CELL_GRACE_S
    budget = cell_s * (len(code.cells) + 2) + 60
    until = min(time.monotonic() + budget, ends)
    limit = (
        f"the submission's time limit of {limits.submission_s:g} s"
        if until == ends
        else f"the notebook's time limit of {budget:g} s ({cell_s:g} s for each cell, and a minute)"
    )
    progress = notebooks.Progress(code.cells, tell)
    try:
        claim = protocol.loaded(engine.load(code.request(frozenset(), cell_s), budget, until, progress, gap))
        execution = notebooks.execution(code.cells, progress.ended if claim.cells is None else claim.cells)
    except OutOfTime:
        raise _out_of_time(code, filename, limit, progress) from None
    except WorkerFailure as failure:
        killer = progress.started
        if killer is None:
            raise Rejected("crash", f"running {filename}: your notebook {failure.message}") from None
        interrupted = failure.kind == "timeout"
        execution = notebooks.execution(code.cells, progress.ended, killer, f"your code {failure.message}", interrupted)
        try:
            # the cells before it again, as a kernel restarted would: those that timed out too, since a kernel
            # keeps what such a cell did before it was interrupted (tests/test_notebook_kernel.py)
            rerun = frozenset(i for i, _ in code.cells if i >= killer)
            claim = protocol.loaded(engine.load(code.request(rerun, cell_s), budget, until, None, gap))
        except OutOfTime:
            raise _out_of_time(code, filename, limit, progress, execution) from None
        except WorkerFailure as again:
            without = notebooks.cell_name(notebooks.places(code.cells).get(killer, 0))
            raise Rejected(
                "crash", f"running {filename} again without {without}: your notebook {again.message}"
            ) from None
    return (
        _symbols(claim, assignment, filename, execution),
        execution,
        notes_of(claim, code) + _again(code, assignment, execution) + _timed_once(code, execution),
    )


TIMEIT = re.compile(r"^[ \t]*%%?timeit\b", re.MULTILINE)


def _timed_once(code: Code, execution: notebooks.Execution | None) -> tuple[str, ...]:
    """A note naming the cells whose %timeit ran its statement once (grader/sandbox/inside/notebook.py says why)."""
    unrun = {c.number for c in execution.cells if c.status == "not_run"} if execution else set()
    cells = [place for place, (_, source) in enumerate(code.cells, 1) if TIMEIT.search(source) and place not in unrun]
    if not cells:
        return ()
    named = ", ".join(str(n) for n in cells)
    return (
        f"%timeit in code cell{'s' if len(cells) > 1 else ''} {named} ran its statement once: timings are not graded, "
        "and how many times IPython repeats a statement depends on the machine it runs on.",
    )


def _again(code: Code, assignment: Assignment, execution: notebooks.Execution) -> tuple[str, ...]:
    """A note for each of the lesson's names a later cell defines again: the one graded is the last."""
    names = tuple(dict.fromkeys(assignment.required_symbols + LESSON_NAMES))
    again = slicing.defined_again(code.cells, names, execution.left_out() if execution else frozenset())
    place = notebooks.places(code.cells)
    return tuple(
        f"{notebooks.cell_name(place[index])} defines `{name}` again; "
        f"the {'engine' if name == 'Value' else f'`{name}`'} graded is that one."
        for name, index in sorted(again.items(), key=lambda item: (item[1], item[0]))
    )


def _out_of_time(code: Code, filename: str, limit: str, progress: notebooks.Progress, before=None) -> Rejected:
    """The notebook was still running when its time ran out: which cell was cut off, the cells after it
    not run (before: the report of a first run, when the time ran out running the notebook again)."""
    cut = progress.started
    if before is not None or cut is None:
        where = "while it ran again without the cells that stopped it" if before is not None else "between two cells"
        return Rejected(
            "timeout",
            f"running {filename}: {limit} ran out {where}. Make the slow cells faster (fewer "
            "training steps, smaller data) or move them out of the notebook you hand in.",
            before,
        )
    execution = notebooks.execution(code.cells, progress.ended, cut, out_of_time=f"{limit} ran out while it ran")
    left = sum(1 for c in execution.cells if c.status == "not_run")
    return Rejected(
        "timeout",
        f"running {filename}: {limit} ran out during {notebooks.cell_name(notebooks.places(code.cells).get(cut, 0))}, "
        "so it was cut off and "
        f"{left} cell{'s' if left != 1 else ''} after it did not run; nothing could be graded. Every cell "
        "ran within its own limit, but together they took too long: make the slow cells faster (fewer "
        "training steps, smaller data) or move them out of the notebook you hand in.",
        execution,
    )


def notes_of(claim: Loaded, code: Code) -> tuple[str, ...]:
    """What the student should know: each package that stood in for the real one, in one note with its magics that
    did nothing (a line each); an autograd library the assignment does not offer is not available, any other was
    not installed where the code ran."""
    notes = []
    place = notebooks.places(code.cells)
    magics = [m for m in claim.magics if m[1] in place]  # a claim: only the notebook's own cells are named
    for name in dict.fromkeys(claim.stand_ins + tuple(m[0] for m in magics)):
        absent = "is not available" if name in UNAVAILABLE and name not in code.stand_ins else "is not installed"
        did = "".join(
            f"\n  {notebooks.cell_name(place[index])}: {text}" for package, index, text in magics if package == name
        )
        if name not in claim.stand_ins:
            notes.append(
                f"Your notebook's magics for {name} did nothing, so the rest of their cells ran: {name} {absent} "
                f"where it is graded.{did}"
            )
            continue
        notes.append(
            f"Your code imports {name}, which {absent} where it is graded: a stand-in was imported instead, so the "
            f"rest of your file could be graded; anything that needs a value from {name} raises an error."
            + (f" Its magics did nothing, so the rest of their cells ran:{did}" if did else "")
        )
    return tuple(notes)


def _symbols(claim: Loaded, assignment: Assignment, filename: str, execution, python: str = "") -> list[str]:
    if claim.error is not None:
        raise _load_error(claim.error, assignment, filename, python)
    symbols = claim.symbols
    if symbols is None:
        raise Rejected(
            "crash",
            f"importing {filename}: your code answered the grader with something it cannot "
            "read (did it replace the grader's code in its process?)",
        )
    for name in assignment.required_symbols:
        if name not in symbols:
            maybe = did_you_mean(name, symbols)
            ran = (
                ("\nCells that did not run cleanly: " + "; ".join(execution.problems()))
                if execution and execution.problems()
                else ""
            )
            raise Rejected("missing_symbol", f"{filename} defines no {name}{_not_compiled(execution)}.{maybe}{ran}")
    return symbols


COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def _not_compiled(execution: notebooks.Execution | None) -> str:
    """Of a notebook whose code lacks a required name, the first cell that did not compile, and why, in the message's
    first line (the one a gradebook and a class page show)."""
    cell = next((c for c in execution.cells if c.error.startswith(COMPILE_ERRORS)), None) if execution else None
    return f": a syntax error in {notebooks.cell_name(cell.number)} stopped it, {cell.error}" if cell else ""


NEWER_SYNTAX = (
    # (pattern on the offending line, the Python that accepts it, what it is, how to write it before)
    (
        re.compile(r"""\bf(['"])[^'"]*\{[^{}]*\1[^{}]*\}"""),
        (3, 12),
        "an f-string that reuses its own quotes inside {}",
        "use the other kind of quotes inside the braces",
    ),
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
            return (
                f"\nThis line uses {what}, which Python {needs[0]}.{needs[1]} accepts but the Python that grades "
                f"your code ({python}) does not: {instead}."
            )
    return ""


def _load_error(err: protocol.StudentError, assignment: Assignment, filename: str, python: str = "") -> Rejected:
    kind, message = err.type or "Exception", err.message
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        line = str(err.text or "")
        text = f"\n    {line.strip()}" if line else ""
        return Rejected(
            "syntax_error", f"{filename}, line {err.lineno}: {kind}: {message}{text}{_newer_syntax(line, python)}"
        )
    if kind == "MemoryError":
        return Rejected(
            "memory", f"importing {filename} ran out of memory (the limit is {assignment.limits.memory_mb} MB)"
        )
    trace = err.traceback.rstrip()
    return Rejected("import_error", f"importing {filename} raised {kind}: {message}\n{trace}".rstrip())
