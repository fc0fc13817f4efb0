"""The rubric table printed in a terminal.

Most of what it shows comes from the student (the file name, exception messages, assertion
lines, notebook output, the values an engine computed). Every such string is escaped
(grader/text.py), so a control sequence in it is shown rather than obeyed, and every line
of it is indented or follows the grader's own words on its line, so no student text can
stand at the start of a line as if the grader had printed it ("Score: 100 / 100").
"""

from __future__ import annotations

import shutil
import textwrap

from grader.feedback import not_written, numbers, summary
from grader.result import Result
from grader.spec import Assignment
from grader.text import printable

MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


def render(result: Result, assignment: Assignment) -> str:
    width = max(shutil.get_terminal_size((100, 24)).columns, 60)
    lines = [f"{_line(result.submission)} - {assignment.title or assignment.id} (assignment {assignment.id})", ""]
    for note in result.notes:
        lines += [f"Note: {_block(note, '  ').lstrip()}", ""]
    if result.notebook and result.notebook["problems"]:
        lines += ["Notebook cells that did not run cleanly (Restart & Run All):"]
        lines += [_block(p, "  ") for p in result.notebook["problems"]] + [""]
    if result.status == "error":
        lines += [
            f"Could not grade this submission ({result.error.kind}):",
            _block(result.error.message, "  "),
            "",
            f"Score: 0 / {result.max_score:g}",
        ]
        return printable("\n".join(lines))
    id_width = max(len(c.id) for c in result.checks)
    for c in result.checks:
        points = f"{round(c.score, 2):g}/{c.max_score:g}"
        head = f"{MARK[c.status]:<5} {c.id:<{id_width}} {points:>7}  "
        first = _line(summary(c.feedback))
        lines.append(head + textwrap.shorten(first, max(width - len(head), 20), placeholder=" ..."))
    failing = [c for c in result.checks if c.status in ("failed", "error") and not c.artifacts.get("not_written")]
    lines += _not_written(result)
    for c in failing:
        lines += ["", f"--- {c.id}: {c.title} ({MARK[c.status]})", _block(c.feedback, "  ")]
        if c.counterexample:
            lines += ["  Paste under your Value class to reproduce:", _block(c.counterexample.code, "    ")]
            if c.counterexample.expected:
                lines += [
                    f"  expected: {_pairs(c.counterexample.expected, c.counterexample.got)}",
                    f"  got:      {_pairs(c.counterexample.got, c.counterexample.expected)}",
                ]
    hidden = [c for c in assignment.checks if c.visibility == "hidden" and c.id not in {x.id for x in result.checks}]
    lines += ["", f"Score: {round(result.score, 2):g} / {result.max_score:g}   ({result.duration_s:.1f} s)"]
    if hidden:
        lines.append(
            f"{len(hidden)} hidden check(s) worth {sum(c.points for c in hidden):g} points run only when "
            "your instructor grades."
        )
    return printable("\n".join(lines))  # the grader's own words hold no control character: this changes nothing


def _not_written(result: Result) -> list[str]:
    """One section for every check that stopped at a starter-kit method still raising NotImplementedError:
    each method once, with the checks waiting for it, and where to start (a first run is a few lines, not a
    card per check)."""
    waiting, first, nothing = not_written(result)
    if not waiting:
        return []
    lines = ["", "--- Not written yet (the starter kit's methods that still raise NotImplementedError)"]
    lines += [f"  {_line(name)}: needed by {', '.join(ids)}" for name, ids in waiting.items()]
    lines.append(
        f"  {'Nothing is implemented yet: start' if nothing else 'Next, carry on'} with {_line(first)}, then run "
        "grader check again; each check shows its smallest failing case once it can run."
    )
    return lines


def _line(text: str) -> str:
    """Student text shown within one line: a newline or tab is escaped too."""
    return printable(str(text), keep="")


def _block(text: str, prefix: str) -> str:
    """Student text shown as lines of its own: escaped, and every line that is not blank indented."""
    return textwrap.indent(printable(str(text)), prefix)


def _pairs(values: dict, other: dict) -> str:
    """name = value, ..., each number with six significant digits (more where it and the other's differ)."""
    return ", ".join(f"{_line(k)} = {_line(numbers(v, other.get(k))[0])}" for k, v in values.items())
