"""The checks registry: each check registers itself by id; assignments refer to them by id.

A check is a plain function `(ctx: Context) -> Outcome`. The runner (checks/runner.py) turns each
call into a frozen CheckResult (status, score, feedback, duration). A check that reads other checks'
results declares them (`reads`): the runner runs those first and lets it read those alone
(checks/reads.py). The modules that declare checks are listed once, in grader/checks/__init__.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from grader.result import Outcome


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    run: Callable[..., Outcome]
    backward: bool = False
    """It calls the student's backward(): skipped, without waiting, once backward() is known never to end."""
    reads: tuple[str, ...] = ()
    """The checks whose results it reads (ctx.reads), in the order it reads them: each runs before it, when the
    grading has it."""


REGISTRY: dict[str, Check] = {}


def check(check_id: str, title: str, backward: bool = False, reads: tuple[str, ...] = ()):
    """Register a check function under a stable id (the ids of docs/results.md); backward: it calls the
    student's backward(); reads: the checks whose results it reads."""

    def register(fn: Callable[..., Outcome]) -> Callable[..., Outcome]:
        if check_id in REGISTRY:
            raise ValueError(f"check {check_id!r} is registered twice")
        REGISTRY[check_id] = Check(check_id, title, fn, backward, tuple(reads))
        return fn

    return register
