"""Cause attribution: the pass after the checks that turns their typed results into CheckResults.

When several checks fail from one recognised cause (grader/causes.py), the first of them in the assignment's order
explains it and the others say "Same cause as <first>", keeping what they saw and their smallest case; a visible
check never names a hidden one (its first is the first visible check). This pass reads only the checks' results
(`Ran`: status, cause, the causes found with it), once every check has run: no check sees it, and the order the
checks ran in does not change it. It also scores each check.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from grader import feedback
from grader.causes import CAUSES, said_in
from grader.checks.reads import Ran
from grader.result import CheckResult, Outcome
from grader.spec import CheckSpec


def attributed(
    specs: Sequence[CheckSpec], ran: Mapping[str, Ran], titles: Mapping[str, str], hidden: Collection[str] = ()
) -> list[CheckResult]:
    """Each check's result, in the assignment's order (specs), its feedback saying its cause once: the first check
    failing from a cause explains it, the others point at it."""
    first: dict[tuple[str, bool], str] = {}
    return [_check_result(spec, titles[spec.id], ran[spec.id], first, hidden) for spec in specs]


def alone(spec: CheckSpec, title: str, ran: Ran, hidden: Collection[str] = ()) -> CheckResult:
    """A check's result as it ends, before the others have run (grader check's progress): its cause said in full."""
    return _check_result(spec, title, ran, {}, hidden)


def score(outcome: Outcome, points: float) -> float:
    """Points earned: all for a pass, a fraction for partial credit, none otherwise."""
    if outcome.fraction is not None:
        return round(points * min(max(outcome.fraction, 0.0), 1.0), 4)
    return points if outcome.status == "passed" else 0.0


def _check_result(
    spec: CheckSpec, title: str, ran: Ran, first: dict[tuple[str, bool], str], hidden: Collection[str]
) -> CheckResult:
    """The check's result, its feedback saying the outcome's cause: first holds each cause's first check so far (and
    first visible one), and learns this one's."""
    outcome = ran.outcome
    cause = outcome.cause if ran.failed and outcome.cause in CAUSES else None
    visible = spec.visibility != "hidden"
    earlier = None
    if cause:
        earlier = first.setdefault((cause, False), spec.id)
        if visible:
            earlier = first.setdefault((cause, True), spec.id)
    text = said_in(outcome.feedback, cause, earlier if earlier != spec.id else None, _also(outcome, cause))
    return CheckResult(
        id=spec.id,
        title=title,
        status=outcome.status,
        score=score(outcome, spec.points),
        max_score=spec.points,
        visibility=spec.visibility,
        feedback=feedback.without_hidden(text, frozenset(hidden)) if visible else text,
        counterexample=outcome.counterexample,
        artifacts=outcome.artifacts,
        duration_s=round(ran.duration_s, 3),
        cause=cause,
        not_written=outcome.not_written,
        timing=outcome.timing,
    )


def _also(outcome: Outcome, cause: str | None) -> tuple[str, ...]:
    """The same misconception's ids in other methods, which the check found with its cause (artifacts' causes)."""
    found = outcome.artifacts.get("causes")
    if not cause or not isinstance(found, list) or not found or found[0] != cause:
        return ()
    return tuple(str(c) for c in found[1:])
