"""`grader export TARGET`: what the grader builds for somewhere else, each target in a module of its own.

TARGETS names each target's module; its main(**options) takes the options it needs of out, assignment,
graded (a graded batch's folder), roster, column and percent, by keyword.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

TARGETS = {
    "gradescope": "grader.gradescope.export",
    "canvas": "grader.lms.export",
    "moodle": "grader.lms.export",
    "gradescope-csv": "grader.lms.export",
    "feedback": "grader.lms.export",
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
    }
    wanted = inspect.signature(run).parameters
    return run(**{name: value for name, value in options.items() if name in wanted})
