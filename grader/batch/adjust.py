"""What an instructor's overrides (grader/batch/overrides.py) do to one student's grade.

An override replaces the grader's points for one check, or the final score (`total`), for the work it was
made about: it records what the grader gave then (the check's points, or the final score) and the
submission's sha256. When the grader's own result has changed since (new work handed in, or the same work
graded to another number by a new grader or assignment), the override is not applied: it waits for a second
look, and the grade is the grader's own for the work as it is now. That is the safe choice: the grade shown is
always one someone answers for, the grader's rules on this very work or a person's decision about it, never a
decision about other work carried over blindly (an extra point for a bug the new work may not have, or a
penalty for work no longer there); the decision itself is kept, flagged, and `grader override` applies it
again in one command once someone has looked.

A check override changes the points earned, and a late penalty is then taken from those, as the late policy
says (a share of the points earned); a `total` override is the final score, with no penalty taken from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from grader.batch.overrides import TOTAL, Override, number
from grader.classfiles import NO_SUBMISSION
from grader.final import Adjusted, Final
from grader.result import Result


@dataclass(frozen=True)
class Graded:
    """What the grader itself gave a student, before any override: what an override is made and checked against."""

    student: str
    status: str
    """graded, error, or no_submission."""
    result: Result | None
    """The grader's result (None: nothing of theirs was graded)."""
    max_score: float
    """The assignment's points."""
    late_percent: float = 0.0
    """The share of the points earned the late policy takes, in percent."""

    @property
    def sha256(self) -> str:
        return (self.result.sha256 or "") if self.result is not None and self.status != NO_SUBMISSION else ""

    @property
    def raw(self) -> float:
        return float(self.result.score) if self.result is not None and self.status != NO_SUBMISSION else 0.0

    def penalty(self, raw: float) -> float:
        return round(raw * self.late_percent / 100, 2)

    @property
    def final(self) -> float:
        """The grader's own final score (the late penalty taken)."""
        return round(max(self.raw - self.penalty(self.raw), 0.0), 2)

    def check(self, check: str) -> tuple[float, float] | None:
        """The grader's points for a check and the check's points, or None when it has no result for it."""
        if self.result is None or self.status != "graded":
            return None
        found = next((c for c in self.result.checks if c.id == check), None)
        return (float(found.score), float(found.max_score)) if found is not None else None

    def points(self, check: str) -> float | None:
        """What the grader gives now for a check (the final score for TOTAL), or None when it gives nothing."""
        if check == TOTAL:
            return self.final
        found = self.check(check)
        return found[0] if found else None


@dataclass(frozen=True)
class Waiting:
    """An override not applied, since the grader's own result changed after it was made."""

    override: Override
    now: float | None
    """What the grader gives now (None: no result for that check now)."""
    resubmitted: bool
    """The submission is not the one the override was made about."""

    def why(self) -> str:
        o = self.override
        parts = ["new work was handed in since"] if self.resubmitted else []
        if self.now is None:
            parts.append(f"the grader has no result for {o.what} now (the submission could not be graded)")
        elif o.grader_points is not None and not math.isclose(self.now, o.grader_points, abs_tol=1e-6):
            parts.append(
                f"the grader now gives {number(self.now)} for {o.what} (it gave {number(o.grader_points)} "
                "when the override was made)"
            )
        return " and ".join(parts) or "the grader's result changed"

    def text(self) -> str:
        """A sentence for the instructor (the batch's stderr, the class page, summary.json)."""
        o = self.override
        who = f" by {o.by}" if o.by else ""
        when = f" on {o.date}" if o.date else ""
        shown = f"the grader's {number(self.now)}" if self.now is not None else "the grader's own result"
        return (
            f'the override of {o.what} ({number(o.points)} points{who}{when}: "{o.reason}") waits for a second '
            f"look: {self.why()}; the gradebook shows {shown} until you decide (grader override again to keep a "
            "decision for this work, or --remove)"
        )

    def cell(self) -> str:
        """The gradebook's `review` cell for this override."""
        return f"{self.override.what}: override of {number(self.override.points)} not applied: {self.why()}"


@dataclass(frozen=True)
class Adjustment:
    """A student's overrides, as they stand against the grader's result now."""

    applied: tuple[Override, ...]
    waiting: tuple[Waiting, ...]
    checks: dict[str, float]
    """Each check whose override is applied, and the points that count for it."""
    raw: float
    """The points earned, with the applied check overrides."""
    penalty: float
    """The late penalty taken from them (0 under a `total` override)."""
    score: float
    """The final score."""

    def applied_cell(self) -> str:
        """The gradebook's `override` cell: what was applied, and why."""
        return "; ".join(
            f"{o.what}: {number(o.points)} instead of the grader's {number(o.grader_points or 0.0)}"
            + (f" ({o.by})" if o.by else "")
            + f": {o.reason}"
            for o in self.applied
        )

    def data(self) -> dict[str, Any]:
        """summary.json's `overrides` and `review` of a student."""
        return {
            "overrides": [
                {
                    "check": o.check,
                    "points": o.points,
                    "grader_points": o.grader_points,
                    "reason": o.reason,
                    "by": o.by,
                    "date": o.date,
                }
                for o in self.applied
            ],
            "review": [
                {
                    "check": w.override.check,
                    "points": w.override.points,
                    "grader_points_then": w.override.grader_points,
                    "grader_points_now": w.now,
                    "resubmitted": w.resubmitted,
                    "reason": w.override.reason,
                    "by": w.override.by,
                    "date": w.override.date,
                    "text": w.text(),
                }
                for w in self.waiting
            ],
        }


def final(graded: Graded, adjusted: Adjustment | None) -> Final:
    """A student's final score as every page shows it: the grader's own less the late penalty, with what their
    instructor set (the overrides applied; those waiting for a second look are not shown to the student)."""
    if adjusted is None or not adjusted.applied:
        return Final(graded.final, graded.max_score, graded.raw, graded.penalty(graded.raw))
    items = []
    for o in adjusted.applied:
        found = graded.check(o.check)
        most = graded.max_score if o.check == TOTAL else (found[1] if found else 0.0)
        items.append(Adjusted(o.check, o.points, most, o.grader_points, o.reason))
    return Final(adjusted.score, graded.max_score, graded.raw, adjusted.penalty, tuple(items))


def adjust(graded: Graded, overrides: list[Override]) -> Adjustment | None:
    """A student's overrides (theirs only) applied to what the grader gave them now; None when there are none.
    An override not yet recorded against a result (a line added by hand, blank grader_points) is taken as made
    about the result now."""
    if not overrides:
        return None
    applied, waiting = [], []
    for o in overrides:
        now = graded.points(o.check)
        then = o.grader_points if o.pinned else now
        resubmitted = o.pinned and o.sha256 != graded.sha256
        if now is None or then is None or resubmitted or not math.isclose(now, then, abs_tol=1e-6):
            waiting.append(Waiting(o, now, resubmitted))
        else:
            applied.append(o if o.pinned else replace(o, grader_points=now, sha256=graded.sha256))
    checks = {o.check: o.points for o in applied if o.check != TOTAL}
    raw = graded.raw + sum(points - (graded.points(check) or 0.0) for check, points in checks.items())
    raw = round(raw, 6)
    total = next((o for o in applied if o.check == TOTAL), None)
    if total is not None:
        penalty, score = 0.0, round(total.points, 2)
    else:
        penalty = graded.penalty(raw)
        score = round(max(raw - penalty, 0.0), 2)
    return Adjustment(tuple(applied), tuple(waiting), checks, raw, penalty, score)


def pinned(o: Override, graded: Graded, now: datetime | None = None) -> Override:
    """The override recorded against what the grader gives this student now (and dated, if it was not)."""
    return replace(
        o,
        grader_points=graded.points(o.check),
        sha256=graded.sha256,
        date=o.date or stamp(now),
    )


def stamp(now: datetime | None = None) -> str:
    """The date of a decision: local time, to the second, with its offset."""
    return (now or datetime.now()).astimezone().isoformat(timespec="seconds")


def pin_all(overrides: list[Override], graded: dict[str, Graded]) -> tuple[list[Override], bool]:
    """Every override not yet recorded against a result, recorded against the student's result in `graded` (by
    student id) where it has one for that check; and whether any was."""
    done, changed = [], False
    for o in overrides:
        g = graded.get(o.student)
        if not o.pinned and g is not None and g.points(o.check) is not None:
            o, changed = pinned(o, g), True
        done.append(o)
    return done, changed


def by_student(overrides: list[Override]) -> dict[str, list[Override]]:
    found: dict[str, list[Override]] = {}
    for o in overrides:
        found.setdefault(o.student, []).append(o)
    return found
