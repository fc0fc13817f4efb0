"""`grader export TARGET`: what the grader builds for somewhere else, each target in a module of its own.

TARGETS names each target's module; its main(**options) takes the options it needs of out, assignment,
graded (a graded batch's folder), roster, column, percent, zero_missing, allow_unmatched and mapping, by
keyword.
"""

from __future__ import annotations

import importlib
import inspect

TARGETS = {
    "gradescope": "grader.gradescope.export",
    "canvas": "grader.batch.export",
    "moodle": "grader.batch.export",
    "gradescope-csv": "grader.batch.export",
    "feedback": "grader.batch.export",
    "reteach": "grader.commands.reteach",
}
"""Each export target, and the module whose main builds it."""


def main(**options) -> int:
    """The target's main, given the options it takes (all of them, when it takes **options)."""
    run = importlib.import_module(TARGETS[options["target"]]).main
    wanted = inspect.signature(run).parameters
    every = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in wanted.values())
    return run(**{name: value for name, value in options.items() if every or name in wanted})
