"""Assignments checked against what this grader has: the ids of its checks and sabotage operators.

spec.py reads and validates an assignment's TOML and imports nothing above the model;
the registries live above it (grader/checks, grader/sabotage/operators). This module
joins the two, so every command loads an assignment through it and an unknown check or
operator id is a SpecError naming the ids there are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grader import spec
from grader.checks import REGISTRY
from grader.sabotage import all_operators
from grader.sabotage.operators import NOT_DRAWN


def load(name_or_path: str | Path) -> spec.Assignment:
    """An assignment by id (a folder under assignments/) or by a path to its folder or TOML."""
    return spec.load(name_or_path, checks=REGISTRY, operators=all_operators(), drawn=_drawn())


def parse(raw: dict[str, Any], path: Path) -> spec.Assignment:
    """An assignment from its parsed TOML (path names it in errors)."""
    return spec.parse(raw, path, checks=REGISTRY, operators=all_operators(), drawn=_drawn())


def _drawn() -> list[str]:
    """The sabotages an assignment has when it names none: every operator drawn into plans by default."""
    return [op_id for op_id in all_operators() if op_id not in NOT_DRAWN]
