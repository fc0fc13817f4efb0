"""The checks registry: each check registers itself by id; assignments refer to them by id.

A check is a plain function `(ctx: Context) -> Outcome`. `grader.grading` turns each
call into a frozen CheckResult (status, score, feedback, duration). The modules that
declare checks are listed once, in grader/checks/__init__.py.
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


REGISTRY: dict[str, Check] = {}


def check(check_id: str, title: str, backward: bool = False):
    """Register a check function under a stable id (the ids of docs/results.md); backward: it calls the
    student's backward()."""

    def register(fn: Callable[..., Outcome]) -> Callable[..., Outcome]:
        if check_id in REGISTRY:
            raise ValueError(f"check {check_id!r} is registered twice")
        REGISTRY[check_id] = Check(check_id, title, fn, backward)
        return fn

    return register
