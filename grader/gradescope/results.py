"""Gradescope's results.json, from a Result (hidden checks stay hidden), or a message alone when
there is nothing to grade. A visible check's verified repair is in its output, after its feedback: the line
to change, and at `diff` the change (grader/render/repairs.py). The score is the final one (grader/final.py: a
batch's late penalty taken, an instructor's overrides applied), and each check an instructor adjusted has the
points they set and says so. Every string is made printable: a student's control characters are shown, never
obeyed."""

from __future__ import annotations

from typing import Any

from grader.feedback import advisory, ordered
from grader.final import Final, points
from grader.render.repairs import plain
from grader.result import CheckResult, Result
from grader.text import printable_data


def results(result: Result, final: Final | None = None) -> dict[str, Any]:
    """A result in Gradescope's results.json format, scored as `final` says (by default, the result's own)."""
    final = final or Final.of(result)
    tests = [_test(c, final) for c in ordered(result)]
    data = {"score": final.score, "execution_time": result.duration_s, "tests": tests}
    said = [final.sentence()] if final.changed else []
    said += [f"Adjusted by your instructor: {final.total.reason}"] if final.total else []
    if result.status == "error":
        assert result.error is not None, "an error result, and only one, has an error"
        said.append(f"Could not grade this submission: {result.error.message}")
    else:
        said += list(result.notes)
    if said:
        data["output"] = "\n".join(said)
    return printable_data(data)


def _test(c: CheckResult, final: Final) -> dict[str, Any]:
    """One check as a Gradescope test, with the points an instructor set. An advisory check (no points) that did not
    pass is advice, not a failure: it has no status (Gradescope then shows it neither passed nor failed), says so in
    its name and output, and comes after every check that costs points."""
    advice = advisory(c) and c.status != "passed"
    adjusted = final.check(c.id)
    test = {
        "name": f"{c.id}: {c.title}" + (" (advisory, no points)" if advice else ""),
        "score": adjusted.points if adjusted else c.score,
        "max_score": c.max_score,
        "status": "passed" if c.status == "passed" else "failed",
        "output": (
            f"Adjusted by your instructor to {points(adjusted.points)} / {points(c.max_score)} points "
            f"(the grader gave {points(c.score)}): {adjusted.reason}\n\n"
            if adjusted
            else ""
        )
        + ("Advisory, no points: " if advice else "Not judged (skipped): " if c.status == "skipped" else "")
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
    """A visible check's verified repair (its `repair`), as the terminal says it: where, and at `diff` the change, in
    the student's own lines only. A hidden check shows none (it never carries one)."""
    return f"\n\n{plain(check.repair)}" if check.repair is not None else ""


def message(output: str) -> dict[str, Any]:
    """results.json when nothing could be graded: no points, and why, for the student."""
    return printable_data({"score": 0.0, "execution_time": 0.0, "tests": [], "output": output})
