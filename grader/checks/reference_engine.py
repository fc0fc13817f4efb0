"""The reference engine's numbers on a program, in the grader's own process: what every check judges the
student's engine against, on the programs the lesson's own engine can compute."""

from __future__ import annotations

import functools
import math

import reference
from grader.programs import Program
from grader.protocol import Observation
from grader.sandbox.inside import probes


@functools.lru_cache(maxsize=50_000)
def reference_run(program: Program, backward: bool = True) -> Observation | None:
    """The reference engine's numbers, or None when the program is outside its domain (a negative base to a
    fractional power, a division by zero, an overflow), or outside the lesson's engine's (lesson_computes)."""
    try:
        result = probes.evaluate(program, reference.Value, backward)
    except (ArithmeticError, TypeError, ValueError):
        return None
    numbers_ = result["data"] + (result["grad"] or [])
    if not all(isinstance(x, float) and math.isfinite(x) and abs(x) < 1e8 for x in numbers_):
        return None
    if not lesson_computes(program, result["data"]):
        return None
    return Observation(data=result["data"], grad=result["grad"])


def lesson_computes(program: Program, data: list[float]) -> bool:
    """Can the lesson's own engine compute the program, its forward pass and its backward, given the reference's
    value of every node? The lesson writes tanh as (exp(2x) - 1) / (exp(2x) + 1), which overflows once 2x passes
    what a float's exp can hold, and x ** k's derivative as k * x ** (k - 1), which divides by zero at x = 0 for
    k < 1; a student who copies those formulas is right, so no check may judge a case where they fail. The
    domain is bounded here by evaluating the lesson's formulas on each node's input: the reference's value, which
    the lesson's engine computes as well wherever its formulas do."""
    try:
        for ins in program:
            if ins[0] == "tanh":
                x = data[ins[1]]
                (math.exp(2 * x) - 1) / (math.exp(2 * x) + 1)
            elif ins[0] == "exp":
                math.exp(data[ins[1]])
            elif ins[0] == "pow":
                x, k = data[ins[1]], ins[2]
                _ = x**k, k * x ** (k - 1)
    except (ArithmeticError, ValueError):
        return False
    return True
