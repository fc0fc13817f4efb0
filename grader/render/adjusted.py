"""The part of a student's report that says what their instructor adjusted (grader/batch/adjust.py), put into a
report already written, in place of the one there before, so that a report and its result stay as graded.

The part sits between two HTML comments at the top of the report's main content. A student cannot write
either comment into their report (every text of theirs is escaped), so the first pair is the grader's own.
"""

from __future__ import annotations

from typing import Any

from grader.render.html import ENV

START, END = "<!-- adjusted -->", "<!-- /adjusted -->"
MAIN = "<main>"


def with_adjustment(report: str, view: dict[str, Any] | None) -> str:
    """The report saying what `view` (Adjustment.report's) adjusted, or saying nothing of it when view is None;
    a report without a main part is returned as it is."""
    part = f"{START}\n{ENV.get_template('adjusted.html.j2').render(view=view)}{END}" if view else ""
    start = report.find(START)
    end = report.find(END, start) if start >= 0 else -1
    if start >= 0 and end >= 0:
        return report[:start] + part + report[end + len(END) :]
    at = report.find(MAIN)
    if at < 0 or not part:
        return report
    at += len(MAIN)
    return report[:at] + "\n" + part + report[at:]
