"""The reference engine's numbers on a program, in the grader's own process: what every check judges the
student's engine against."""

from __future__ import annotations

import functools
import math

import reference
from grader.programs import Program
from grader.protocol import Observation
from grader.sandbox.inside import probes


@functools.lru_cache(maxsize=50_000)
def reference_run(program: Program, backward: bool = True) -> Observation | None:
    """The reference engine's numbers, or None when the program is outside its domain
    (a negative base to a fractional power, a division by zero, an overflow)."""
    try:
        result = probes.evaluate(program, reference.Value, backward)
    except (ArithmeticError, TypeError, ValueError):
        return None
    numbers_ = result["data"] + (result["grad"] or [])
    if not all(isinstance(x, float) and math.isfinite(x) and abs(x) < 1e8 for x in numbers_):
        return None
    return Observation(data=result["data"], grad=result["grad"])
