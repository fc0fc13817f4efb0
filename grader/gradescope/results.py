"""Gradescope's results.json, from a Result (hidden checks stay hidden), or a message alone when
there is nothing to grade. A visible check's verified repair is in its output, after its feedback: the line
to change, and at `diff` the change (grader/render/repairs.py). Every string is made printable: a student's
control characters are shown, never obeyed."""

from __future__ import annotations

from typing import Any

from grader.feedback import advisory, ordered
from grader.render.repairs import plain, repair_of
from grader.result import CheckResult, Result
from grader.text import printable_data


def results(result: Result) -> dict[str, Any]:
    """A result in Gradescope's results.json format."""
    tests = [_test(c) for c in ordered(result)]
    data = {"score": result.score, "execution_time": result.duration_s, "tests": tests}
    if result.notes:
        data["output"] = "\n".join(result.notes)
    if result.status == "error":
        assert result.error is not None, "an error result, and only one, has an error"
        data["output"] = f"Could not grade this submission: {result.error.message}"
    return printable_data(data)


def _test(c: CheckResult) -> dict[str, Any]:
    """One check as a Gradescope test. An advisory check (no points) that did not pass is advice, not a failure: it
    has no status (Gradescope then shows it neither passed nor failed), says so in its name and output, and comes
    after every check that costs points."""
    advice = advisory(c) and c.status != "passed"
    test = {
        "name": f"{c.id}: {c.title}" + (" (advisory, no points)" if advice else ""),
        "score": c.score,
        "max_score": c.max_score,
        "status": "passed" if c.status == "passed" else "failed",
        "output": ("Advisory, no points: " if advice else "Not judged (skipped): " if c.status == "skipped" else "")
        + c.feedback
        + _repair(c)
        + (
            f"\n\nSmallest case:\n{c.counterexample.code}"
            if c.counterexample and not c.artifacts.get("unstable")
            else ""
        ),
        "visibility": "hidden" if c.visibility == "hidden" else "visible",
    }
    if advice:
        del test["status"]
    return test


def _repair(check: CheckResult) -> str:
    """A visible check's verified repair (artifacts.repair), as the terminal says it: where, and at `diff` the
    change, in the student's own lines only. A hidden check shows none (it never carries one)."""
    repair = repair_of(check) if check.visibility == "visible" else None
    return f"\n\n{plain(repair)}" if repair is not None else ""


def message(output: str) -> dict[str, Any]:
    """results.json when nothing could be graded: no points, and why, for the student."""
    return printable_data({"score": 0.0, "execution_time": 0.0, "tests": [], "output": output})
