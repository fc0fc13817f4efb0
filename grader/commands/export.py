"""`grader export TARGET`: what the grader builds for somewhere else, each target in a module of its own.

TARGETS names each target's module; its main(**options) takes the options it needs of out, assignment
and graded (a graded batch's folder), by keyword.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

TARGETS = {
    "gradescope": "grader.gradescope.export",
    "reteach": "grader.commands.reteach",
}
"""Each export target, and the module whose main builds it."""


def main(*, target: str, out: Path, assignment: str, graded: Path | None = None) -> int:
    run = importlib.import_module(TARGETS[target]).main
    options = {"target": target, "out": out, "assignment": assignment, "graded": graded}
    wanted = inspect.signature(run).parameters
    return run(**{name: value for name, value in options.items() if name in wanted})
