"""The rubric table printed in a terminal.

Most of what it shows comes from the student (the file name, exception messages, assertion
lines, notebook output, the values an engine computed). Every such string is escaped
(grader/text.py), so a control sequence in it is shown rather than obeyed, and every line
of it is indented or follows the grader's own words on its line, so no student text can
stand at the start of a line as if the grader had printed it ("Score: 100 / 100").

It leads with what to fix: what changed since the last check, the starter kit's methods still to write, the
table (each row's first sentence, wrapped, never cut), then a card for every check below full points,
those that failed first.
"""

from __future__ import annotations

import shutil
import textwrap

from grader.feedback import SAME, first_sentence, held, not_written, numbers, summary, to_fix
from grader.history import Change
from grader.render.repairs import diff_lines, sentence
from grader.result import CheckResult, Result
from grader.spec import Assignment
from grader.text import printable

MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


def render(result: Result, assignment: Assignment, change: Change | None = None) -> str:
    width = max(shutil.get_terminal_size((100, 24)).columns, 60)
    lines = [f"{_line(result.submission)} - {assignment.title or assignment.id} (assignment {assignment.id})", ""]
    if change is not None:
        lines += [change.sentence(), ""]
    for note in result.notes:
        lines += [f"Note: {_block(note, '  ').lstrip()}", ""]
    if result.notebook and result.notebook["problems"]:
        lines += ["Notebook cells that did not run cleanly (Restart & Run All):"]
        lines += [_block(p, "  ") for p in result.notebook["problems"]] + [""]
    if result.status == "error":
        lines += _error(result)
        return printable("\n".join(lines))
    lines += _not_written(result)
    id_width = max(len(c.id) for c in result.checks)
    for c in result.checks:
        head = f"{MARK[c.status]:<5} {c.id:<{id_width}} {_points(c):>7}  "
        first = f"{c.not_written.message}." if c.not_written else first_sentence(summary(c.feedback))
        said = textwrap.wrap(_line(first), max(width - len(head), 30)) or [""]
        lines += [head + said[0], *(" " * len(head) + more for more in said[1:])]
    for c in to_fix(result):
        lines += ["", *card(c)]
    hidden = [c for c in assignment.checks if c.visibility == "hidden" and c.id not in {x.id for x in result.checks}]
    lines += ["", f"Score: {round(result.score, 2):g} / {result.max_score:g}   ({result.duration_s:.1f} s)"]
    if hidden:
        lines.append(
            f"{len(hidden)} hidden check(s) worth {sum(c.points for c in hidden):g} points run only when "
            "your instructor grades."
        )
    return printable("\n".join(lines))  # the grader's own words hold no control character: this changes nothing


def brief(result: Result, change: Change | None, headline: str) -> str:
    """One line for a grading in a series (grader check --watch): the headline, the score and what changed,
    then the card of every check whose status changed and that is below full points now."""
    if result.status == "error":
        assert result.error is not None, "an error result, and only one, has an error"
        return printable("\n".join([f"{headline}: could not be graded ({result.error.kind})", *_error(result)[1:]]))
    said = [f"{headline}: {round(result.score, 2):g} / {result.max_score:g}"]
    if change is not None:
        said += change.parts() or ["no check changed"]
    lines = ["; ".join(said)]
    moved = set(change.broken + change.fixed) | {i for i, _ in change.moved} if change is not None else set()
    for c in to_fix(result):
        if c.id in moved:
            lines += ["", *card(c)]
    return printable("\n".join(lines))


def card(c: CheckResult) -> list[str]:
    """A check's card: its heading, the whole feedback, and for a smallest case the code to paste and the
    numbers."""
    lines = [f"--- {c.id}: {c.title} ({MARK[c.status]} {_points(c)})", _block(c.feedback, "  ")]
    lines += _repair(c)
    if c.counterexample:
        lines += ["  Paste under your Value class to reproduce:", _block(c.counterexample.code, "    ")]
        if c.counterexample.expected:
            lines += [
                f"  expected: {_pairs(c.counterexample.expected, c.counterexample.got)}",
                f"  got:      {_pairs(c.counterexample.got, c.counterexample.expected)}",
            ]
    return lines


def _repair(c: CheckResult) -> list[str]:
    """A verified repair's sentence, and at `diff` the change (the student's lines, as written and as changed)."""
    repair = c.repair
    if repair is None:
        return []
    lines = [_block(textwrap.fill(sentence(repair), 100, subsequent_indent="  "), "  ")]
    if repair.diff:
        shown = diff_lines(repair)
        margin = min((len(t) - len(t.lstrip()) for _, _, t in shown if t.strip()), default=0)
        lines += [f"    {sign} {line:>4} | {_line(text[margin:])}" for sign, line, text in shown]
    return lines


def _error(result: Result) -> list[str]:
    assert result.error is not None, "an error result, and only one, has an error"
    return [
        f"Could not grade this submission ({result.error.kind}):",
        _block(result.error.message, "  "),
        "",
        f"Score: 0 / {result.max_score:g}",
    ]


def _points(c: CheckResult) -> str:
    return f"{round(c.score, 2):g}/{c.max_score:g}"


def _not_written(result: Result) -> list[str]:
    """One section for every check that stopped at a starter-kit method still raising NotImplementedError:
    each method once, with the checks waiting for it, and where to start (a first run is a few lines, not a
    card per check). It comes first, before the table."""
    waiting, first, nothing = not_written(result)
    if not waiting or first is None:  # first is None exactly when nothing is waiting
        return []
    lines = ["--- Start here: the starter kit's methods that still raise NotImplementedError"]
    lines += [f"  {_line(name)}: needed by {', '.join(ids)}" for name, ids in waiting.items()]
    if held(result):
        lines.append(f"  Not judged until an operation works: {', '.join(held(result))}")
    lines.append(
        f"  {'Nothing is implemented yet: start' if nothing else 'Next, carry on'} with {_line(first)}, then run "
        "grader check again; each check shows its smallest failing case once it can run."
    )
    return lines + [""]


def _line(text: str) -> str:
    """Student text shown within one line: a newline or tab is escaped too."""
    return printable(str(text), keep="")


def _block(text: str, prefix: str) -> str:
    """Student text shown as lines of its own: escaped, and every line that is not blank indented."""
    return textwrap.indent(printable(str(text)), prefix)


def _pairs(values: dict, other: dict) -> str:
    """name = value, ..., each number with six significant digits (more where it and the other's differ)."""
    return ", ".join(f"{_line(k)} = {_line(numbers(v, other.get(k), close=SAME)[0])}" for k, v in values.items())
