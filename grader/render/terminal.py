"""The rubric table printed in a terminal."""

from __future__ import annotations

import shutil
import textwrap

from grader.result import Result
from grader.spec import Assignment

MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


def render(result: Result, assignment: Assignment) -> str:
    width = max(shutil.get_terminal_size((100, 24)).columns, 60)
    lines = [f"{result.submission} - {assignment.title or assignment.id} (assignment {assignment.id})", ""]
    for note in result.notes:
        lines += [f"Note: {note}", ""]
    if result.notebook and result.notebook["problems"]:
        lines += ["Notebook cells that did not run cleanly (Restart & Run All):"]
        lines += [f"  {p}" for p in result.notebook["problems"]] + [""]
    if result.status == "error":
        lines += [f"Could not grade this submission ({result.error.kind}):", textwrap.indent(result.error.message, "  "),
                  "", f"Score: 0 / {result.max_score:g}"]
        return "\n".join(lines)
    id_width = max(len(c.id) for c in result.checks)
    for c in result.checks:
        points = f"{round(c.score, 2):g}/{c.max_score:g}"
        head = f"{MARK[c.status]:<5} {c.id:<{id_width}} {points:>7}  "
        first = c.feedback.splitlines()[0] if c.feedback else ""
        lines.append(head + textwrap.shorten(first, max(width - len(head), 20), placeholder=" ..."))
    failing = [c for c in result.checks if c.status in ("failed", "error")]
    for c in failing:
        lines += ["", f"--- {c.id}: {c.title} ({MARK[c.status]})", textwrap.indent(c.feedback, "  ")]
        if c.counterexample:
            lines += ["  Paste under your Value class to reproduce:", textwrap.indent(c.counterexample.code, "    ")]
            if c.counterexample.expected:
                lines += [f"  expected: {_pairs(c.counterexample.expected)}",
                          f"  got:      {_pairs(c.counterexample.got)}"]
    hidden = [c for c in assignment.checks if c.visibility == "hidden" and c.id not in {x.id for x in result.checks}]
    lines += ["", f"Score: {round(result.score, 2):g} / {result.max_score:g}   ({result.duration_s:.1f} s)"]
    if hidden:
        lines.append(f"{len(hidden)} hidden check(s) worth {sum(c.points for c in hidden):g} points run only when "
                     "your instructor grades.")
    return "\n".join(lines)


def _pairs(values: dict) -> str:
    return ", ".join(f"{k} = {v:.6g}" if isinstance(v, float) else f"{k} = {v}" for k, v in values.items())
