"""Notebook submissions: read with nbformat, run in the sandbox with nbclient, and turn
what ran into a module graded exactly as a .py submission is.

The notebook runs top to bottom on a fresh kernel, as Restart & Run All would, inside
the same sandbox and limits as any student code (the kernel is student code too). The
module is then the code cells in order: a cell that raised is kept as far as it got
(inside try/except, as the kernel's state would be), a cell that timed out or never ran
is left out, and IPython magics and shell escapes become calls that do nothing.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

from grader.errors import WorkerFailure
from grader.sandbox.runner import Limits, Sandbox

NOTEBOOK_NAME = "submission.ipynb"
STARTUP_S = 120  # a kernel starts in about a second, but a loaded machine can take far longer
PRELUDE = '''# Built by the grader from a notebook: its code cells, in order, as they ran.
class _NoShell:  # IPython magics and shell escapes do nothing when graded
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def get_ipython():
    return _NoShell()
'''


class NotebookError(Exception):
    """The file is not a notebook nbformat can read; the message says why."""


@dataclass(frozen=True)
class CellReport:
    number: int
    """The cell's position among all cells, from 1 as Jupyter shows it."""
    status: str
    """ok, error (it raised), timeout (interrupted), killed (the kernel died in it), or not_run (after that)."""
    error: str = ""


@dataclass(frozen=True)
class Execution:
    cells: tuple[CellReport, ...]
    died: str | None
    """Why the kernel died, if it did."""

    def problems(self) -> list[str]:
        """One line per cell that did not run cleanly, for the student."""
        lines = [f"cell {c.number}: {c.error}" if c.status == "error" else
                 f"cell {c.number}: interrupted after running past its time limit" if c.status == "timeout" else
                 f"cell {c.number}: the kernel died while running it" if c.status == "killed" else
                 f"cell {c.number}: not run, the kernel had died" for c in self.cells if c.status != "ok"]
        if self.died:
            lines.append(f"the kernel died: {self.died}")
        return lines

    def to_dict(self) -> dict:
        return {"cells": [c.__dict__ for c in self.cells if c.status != "ok"], "died": self.died,
                "problems": self.problems()}


def read(path: Path) -> nbformat.NotebookNode:
    """The notebook as nbformat 4 (older versions are upgraded); NotebookError if it is not one."""
    try:
        return nbformat.read(str(path), as_version=4)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError) as exc:
        raise NotebookError(f"{path.name} is not a notebook: it is not valid JSON ({exc}). Was it saved completely?") \
            from None
    except (KeyError, ValueError, nbformat.ValidationError, AttributeError, TypeError) as exc:
        raise NotebookError(f"{path.name} is not a notebook nbformat can read: {exc}") from None


def execute(path: Path, nb: nbformat.NotebookNode, limits: Limits, cell_timeout: float) -> Execution:
    """Run the notebook (read already as nb) with nbclient inside a sandbox; what happened to each code cell."""
    budget = cell_timeout * (len(nb.cells) + 2) + 60
    with Sandbox(path, limits, name=NOTEBOOK_NAME) as sandbox:
        try:
            reply = sandbox.call({"op": "notebook", "cell_timeout": cell_timeout, "startup_timeout": STARTUP_S},
                                 budget + STARTUP_S)
        except WorkerFailure as failure:
            raise NotebookError(f"running the notebook, the kernel or your code {failure.message}") from None
    if not reply["ok"]:
        err = reply["error"]
        raise NotebookError(f"the notebook could not be run: {err['type']}: {err['message']}")
    cells = []
    for cell in reply["result"]["cells"]:
        status = "timeout" if cell.get("ename") == "KeyboardInterrupt" else cell["status"]
        error = f"{cell.get('ename', '')}: {cell.get('evalue', '')}".strip(": ")
        cells.append(CellReport(cell["index"] + 1, status, error))
    return Execution(tuple(cells), reply["result"]["died"])


def to_module(nb: nbformat.NotebookNode, execution: Execution) -> str:
    """Python source of the code cells that ran, in order, for grading as a .py file."""
    status = {c.number: c.status for c in execution.cells}
    transform = TransformerManager().transform_cell
    parts = [PRELUDE]
    for index, cell in enumerate(nb.cells):
        number = index + 1
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        state = status.get(number, "ok")
        if state in ("timeout", "killed", "not_run"):
            parts.append(f"# cell {number}: left out ({state.replace('_', ' ')})\n")
            continue
        code = transform(cell.source)
        if state == "error":
            parts.append(f"# cell {number} (raised when the notebook ran; kept as far as it got)\n"
                         f"try:\n{textwrap.indent(code, '    ')}\n    pass\nexcept BaseException:\n    pass\n")
        else:
            parts.append(f"# cell {number}\n{code}\n")
    return "\n".join(parts)


TEST_SHIM = "from micrograd_mine import *  # the notebook's test_* functions are its test suite\n"


def has_tests(nb: nbformat.NotebookNode) -> bool:
    return any(cell.cell_type == "code" and "def test_" in cell.source for cell in nb.cells)
