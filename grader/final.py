"""A student's final score, as every page shows it: one value with its history ("the grader gave 57, the late policy
took 5.7, your instructor set 70"), so that no page recomputes it and no two pages differ.

The batch and `grader override` make it (grader/batch/adjust.py applies an instructor's overrides and the late
policy to the grader's result); the student's report (its headline, its title, each adjusted check's points, the box
saying what was adjusted), the batch's Gradescope results and the class page read it. The gradebook's `score` is
its `score`.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.result import Result

TOTAL = "total"
"""The `check` of an adjustment of the final score itself."""


def points(x: float) -> str:
    """A number of points as every page writes it: at most two decimals, no trailing zeros (`72.67`, `70`)."""
    return f"{round(float(x), 2):g}"


@dataclass(frozen=True)
class Adjusted:
    """What an instructor set: a check's points, or the final score (check TOTAL), and why."""

    check: str
    points: float
    max_score: float
    """The check's points (the assignment's, for TOTAL)."""
    grader: float | None
    """What the grader gave for it (its final score, for TOTAL); None when not recorded."""
    reason: str

    @property
    def what(self) -> str:
        return "your score" if self.check == TOTAL else self.check


@dataclass(frozen=True)
class Final:
    """A student's final score and how it came to be."""

    score: float
    """The final score: what every page shows as the student's score."""
    max_score: float
    grader: float
    """The grader's own score (the result's)."""
    penalty: float = 0.0
    """The points the late policy took (from the points earned, an adjusted check's included; none from a score an
    instructor set)."""
    adjusted: tuple[Adjusted, ...] = ()
    """What an instructor set, in the order of overrides.csv."""
    late: str = ""
    """The late policy's sentence on this work ("" when it was on time, or when the page showing it says it
    already)."""

    @classmethod
    def of(cls, result: Result, penalty: float = 0.0, late: str = "") -> Final:
        """The grader's own result, less a late penalty (`late`: the policy's sentence): nothing adjusted."""
        return cls(round(max(result.score - penalty, 0.0), 2), result.max_score, result.score, penalty, (), late)

    @property
    def total(self) -> Adjusted | None:
        """The final score an instructor set, if one did."""
        return next((a for a in self.adjusted if a.check == TOTAL), None)

    def check(self, check: str) -> Adjusted | None:
        """The points an instructor set for a check, if one did."""
        return next((a for a in self.adjusted if a.check == check), None)

    @property
    def earned(self) -> float:
        """The points earned before the late penalty: the grader's, with each adjusted check's points instead."""
        return round(self.score + self.penalty, 2) if self.total is None else self.score

    @property
    def changed(self) -> bool:
        """Does the final score differ from the grader's own, or did an instructor set anything?"""
        return bool(self.adjusted) or abs(self.score - self.grader) > 1e-9

    def sentence(self) -> str:
        """How the final score came to be, in one sentence for the student ("" when it is the grader's own)."""
        if not self.changed:
            return ""
        checks = [a for a in self.adjusted if a.check != TOTAL]
        did = []
        if checks:
            did.append(
                "adjusted "
                + ", ".join(
                    f"{a.check} ({points(a.points)} / {points(a.max_score)} points"
                    + (f" instead of {points(a.grader)})" if a.grader is not None else ")")
                    for a in checks
                )
            )
        if self.total is not None:
            did.append(f"set your score to {points(self.score)}")
        parts = ["your instructor " + " and ".join(did)] if did else []
        if self.penalty and self.total is None:
            parts.append(f"the late policy took {points(self.penalty)}")
        return f"The grader gave {points(self.grader)}; " + " and ".join(parts) + "."
