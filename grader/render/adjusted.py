"""A student's report already written, made to show their final score (grader/final.py) once an instructor's
override changes it, or takes it back: its title, its headline, the sentence on lateness, the box saying what was
adjusted and each check's points. The report and its result stay as graded; only the parts that show a score are
written again, from the same macros the report was written with (templates/score.html.j2).

Each such part sits between two HTML comments the grader writes (`<!-- score -->` ... `<!-- /score -->`, and
`<!-- points:ID -->` for a check's points). A student cannot write a comment into their report (every text of
theirs is escaped), so every pair is the grader's own; the page's <title>, which holds no comment, comes before any
text of the student's and is written again whole. A report written before these parts were marked gets the box
alone, at the top of its main content, as before.
"""

from __future__ import annotations

from typing import Any

from markupsafe import escape

from grader.final import Final
from grader.render.html import ENV, page_title
from grader.result import Result

MAIN = "<main>"
OPEN, CLOSE = "<!-- ", " -->"


def restamped(report: str, result: Result, final: Final, name: str, title: str) -> str:
    """The report showing `final` (for `result`, the one it was written from; `name` and `title` head it as
    html.student_report's `student` and `title` did)."""
    parts: Any = ENV.get_template("score.html.j2").make_module()  # its macros, as attributes
    checks = {c.id: c for c in result.checks}

    def part(kind: str) -> str | None:
        if kind == "score":
            return str(parts.score(final))
        if kind == "late":
            return str(parts.late(final))
        if kind == "adjusted":
            return str(parts.adjusted(final))
        check = checks.get(kind.removeprefix("points:")) if kind.startswith("points:") else None
        return str(parts.points(check.score, check.max_score, final.check(check.id))) if check else None

    marked, found = _parts(report, part)
    if "adjusted" not in found:  # a report written before its parts were marked
        marked = _boxed(marked, str(parts.adjusted(final)))
    return _titled(marked, page_title(name, final, title))


def _parts(report: str, part: Any) -> tuple[str, set[str]]:
    """The report with each marked part written again (`part(kind)`, None: left as it is), in one pass; and the kinds
    found."""
    out, found = [], set()
    at = 0
    while (start := report.find(OPEN, at)) >= 0:
        head_end = report.find(CLOSE, start + len(OPEN))
        if head_end < 0:
            break
        kind = report[start + len(OPEN) : head_end]
        content_start = head_end + len(CLOSE)
        closing = f"{OPEN}/{kind}{CLOSE}"
        text = part(kind)  # the grader's parts only: a closing is looked for once per part
        end = report.find(closing, content_start) if text is not None else -1
        if end < 0:
            out.append(report[at:content_start])
            at = content_start
            continue
        found.add(kind)
        out += [report[at:content_start], str(text), closing]
        at = end + len(closing)
    out.append(report[at:])
    return "".join(out), found


def _boxed(report: str, box: str) -> str:
    """A report of before the marks (and with no box yet) with the box at the top of its main content."""
    at = report.find(MAIN)
    if at < 0 or not box:
        return report
    at += len(MAIN)
    return report[:at] + f"\n<!-- adjusted -->\n{box}<!-- /adjusted -->" + report[at:]


def _titled(report: str, text: str) -> str:
    start = report.find("<title>")
    end = report.find("</title>", start)
    if start < 0 or end < 0:
        return report
    return report[: start + len("<title>")] + str(escape(text)) + report[end:]
