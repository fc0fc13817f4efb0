"""What lateness costs a student, from the assignment's `[late]` policy and what the LMS says.

An LMS says a submission was late in one of two ways: a time (Gradescope's submission time,
compared with `[late].due`) or a marker (Canvas's `_late` in the file name), which proves the
work was late without saying how late. A time decides: within `grace_minutes` of the
deadline is on time, whatever a marker says; past it, each day or part of a day costs
`penalty_per_day` percent of the points earned, up to `max_penalty`. A marker alone is
charged as one day late (the least it can be), and the sentence says so. With no penalty
(the default) late work is only flagged, as before. The same sentence goes into the
gradebook's `reason`, the student's report and the class page, so everyone reads one account.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grader.lms.identity import Identity
from grader.spec import LatePolicy, instant


@dataclass(frozen=True)
class Lateness:
    late: bool
    percent: float
    """Percent of the points earned taken off (0 when only flagged)."""
    text: str
    """What happened, for the student and the instructor."""

    def penalty(self, score: float) -> float:
        return round(score * self.percent / 100, 2)


ON_TIME = Lateness(False, 0.0, "")


def assess(policy: LatePolicy, who: Identity | None) -> Lateness:
    """How late this submission was, and what it costs under the policy."""
    if who is None:
        return ON_TIME
    lms = who.lms.capitalize()
    if who.submitted_at and policy.due:
        submitted, due = instant(who.submitted_at), instant(policy.due)
        minutes = (submitted - due).total_seconds() / 60
        if minutes <= policy.grace_minutes:
            return ON_TIME
        days = math.ceil((minutes - policy.grace_minutes) / (24 * 60))
        when = f"submitted {_span(minutes)} after the deadline ({lms}'s time {who.submitted_at}, due {policy.due}"
        when += f", with {policy.grace_minutes:g} minutes' grace)" if policy.grace_minutes else ")"
        return _charged(policy, days, when)
    if who.late:
        return _charged(policy, 1, f"marked late by {lms}, which gives no submission time: counted as 1 day late")
    return ON_TIME


def _charged(policy: LatePolicy, days: int, when: str) -> Lateness:
    percent = min(days * policy.penalty_per_day, policy.max_penalty)
    if not percent:
        return Lateness(True, 0.0, f"Late: {when}. No points are taken off (the late policy only flags it).")
    cap = (
        " (the most the policy takes)"
        if percent == policy.max_penalty and days * policy.penalty_per_day > percent
        else ""
    )
    return Lateness(
        True,
        percent,
        f"Late: {when}. The late policy takes {policy.penalty_per_day:g}% of the points "
        f"earned per day late: {percent:g}%{cap}.",
    )


def _span(minutes: float) -> str:
    hours = minutes / 60
    if hours < 1:
        return f"{math.ceil(minutes)} minutes"
    if hours < 48:
        return f"{hours:.1f} hours"
    return f"{hours / 24:.1f} days"
