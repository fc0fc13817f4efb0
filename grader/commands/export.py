"""`grader export TARGET`: what the grader builds for somewhere else, each target in a module of its own.

TARGETS names each target's module; its main(**options) takes the options it needs of out, assignment,
graded (a graded batch's folder), roster, column, percent, zero_missing, allow_unmatched and mapping, by
keyword.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

TARGETS = {
    "gradescope": "grader.gradescope.export",
    "canvas": "grader.batch.export",
    "moodle": "grader.batch.export",
    "gradescope-csv": "grader.batch.export",
    "feedback": "grader.batch.export",
    "reteach": "grader.commands.reteach",
}
"""Each export target, and the module whose main builds it."""


def main(
    *,
    target: str,
    out: Path,
    assignment: str,
    graded: Path | None = None,
    roster: Path | None = None,
    column: str | None = None,
    percent: bool = False,
    zero_missing: bool = False,
    allow_unmatched: bool = False,
    mapping: Path | None = None,
) -> int:
    run = importlib.import_module(TARGETS[target]).main
    options = {
        "target": target,
        "out": out,
        "assignment": assignment,
        "graded": graded,
        "roster": roster,
        "column": column,
        "percent": percent,
        "zero_missing": zero_missing,
        "allow_unmatched": allow_unmatched,
        "mapping": mapping,
    }
    wanted = inspect.signature(run).parameters
    return run(**{name: value for name, value in options.items() if name in wanted})
