"""The rubric table printed in a terminal.

Most of what it shows comes from the student (the file name, exception messages, assertion
lines, notebook output, the values an engine computed). Every such string is escaped
(grader/text.py), so a control sequence in it is shown rather than obeyed, and every line
of it is indented or follows the grader's own words on its line, so no student text can
stand at the start of a line as if the grader had printed it ("Score: 100 / 100").

It leads with what to fix: what changed since the last check, the starter kit's methods still to write (each
once, with the checks waiting for them and what to write next), the table (each row's first sentence, never cut),
then a card for every check below full points, those that failed first; an advisory check (no points) comes after
everything that costs points, marked NOTE, never FAIL. Every line of the grader's is wrapped to the terminal's width
(`width`), and none at all when the output is not a terminal (a pipe, a file: `width` None), so no sentence breaks
where a reader's window would break it again.
"""

from __future__ import annotations

import textwrap

from grader.feedback import (
    SAME,
    advisory,
    first_sentence,
    held,
    kit_start,
    not_written,
    numbers,
    ordered,
    summary,
    to_fix,
)
from grader.history import Since
from grader.kit import NEEDS, Start, grouped
from grader.render.repairs import diff_lines, sentence
from grader.result import CheckResult, Result
from grader.spec import Assignment
from grader.text import printable

MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}
NOTE = "NOTE"
"""An advisory check (no points) that did not pass: advice, never a failure."""
TODO = "TODO"
"""A check stopped at a starter-kit method still to write."""
NARROWEST = 40
"""The narrowest width lines are wrapped to (a terminal narrower still wraps them again)."""


def mark(c: CheckResult) -> str:
    """A check's status word: PASS, FAIL, ERROR, SKIP; TODO for a method still to write, NOTE for advice."""
    if c.not_written and c.status in ("failed", "error"):
        return TODO
    if advisory(c) and c.status != "passed":
        return NOTE
    return MARK[c.status]


def points(c: CheckResult) -> str:
    return "no points" if advisory(c) else f"{round(c.score, 2):g}/{c.max_score:g}"


def render(
    result: Result,
    assignment: Assignment,
    change: Since | None = None,
    width: int | None = None,
    unwritten: tuple[str, ...] = (),
) -> str:
    """The whole report: `width` the terminal's columns (None: not a terminal, no line wrapped); `unwritten` the
    starter kit's methods the student's code leaves unwritten (grader/kit.py), named in the start-here box."""
    title = f"{_line(result.submission)} - {assignment.title or f'assignment {assignment.id}'}"
    lines = [*_wrap(title, width, "  "), ""]
    if change is not None:
        lines += [*_wrap(change.sentence(), width), ""]
    for note in result.notes:
        lines += [*_said(f"Note: {printable(note)}", width, ""), ""]
    if result.notebook and result.notebook["problems"]:
        lines += _wrap("Notebook cells that did not run cleanly (Restart & Run All):", width)
        lines += [line for p in result.notebook["problems"] for line in _said(printable(p), width, "  ")] + [""]
    if result.status == "error":
        lines += _error(result, width)
        return printable("\n".join(lines))
    begin = kit_start(result, unwritten)
    lines += _start(result, begin, width)
    boxed = set(begin.waiting if begin else ()) | set(held(result))
    lines += _table([c for c in ordered(result) if c.id not in boxed], width)
    for c in _carded(result, begin):
        lines += ["", *card(c, width)]
    hidden = [c for c in assignment.checks if c.visibility == "hidden" and c.id not in {x.id for x in result.checks}]
    lines += ["", f"Score: {round(result.score, 2):g} / {result.max_score:g}   ({result.duration_s:.1f} s)"]
    if hidden:
        lines += _wrap(
            f"{len(hidden)} hidden check(s) worth {sum(c.points for c in hidden):g} points run only when "
            "your instructor grades.",
            width,
        )
    return printable("\n".join(lines))  # the grader's own words hold no control character: this changes nothing


def _carded(result: Result, begin: Start | None) -> list[CheckResult]:
    """The checks to_fix gives a card; but while the starter kit is being filled and no check with points passes
    yet, only the engine's: the checks of the student's tests (no kit method of theirs) wait for an engine that runs,
    and show their rows (their cards are in the HTML report), so a first run fits a screen."""
    cards = to_fix(result)
    if begin is not None and not_written(result)[2]:
        return [c for c in cards if c.id in NEEDS]
    return cards


def brief(result: Result, change: Since | None, headline: str, width: int | None = None) -> str:
    """One line for a grading in a series (grader check --watch): the headline, the score and what changed,
    then the card of every check whose status changed and that is below full points now."""
    if result.status == "error":
        return printable("\n".join([f"{headline}: could not be graded", *_error(result, width)[1:]]))
    said = [f"{headline}: {round(result.score, 2):g} / {result.max_score:g}"]
    if change is not None:
        said += change.parts() or ["no check changed"]
    lines = _wrap("; ".join(said), width, "  ")
    moved = set(change.broken + change.fixed) | {i for i, _ in change.moved} if change is not None else set()
    for c in to_fix(result):
        if c.id in moved:
            lines += ["", *card(c, width)]
    return printable("\n".join(lines))


def _table(checks: list[CheckResult], width: int | None) -> list[str]:
    """A row per check: its status word, id, points and the first sentence of its feedback, wrapped beside them."""
    if not checks:
        return []
    id_width = max(len(c.id) for c in checks)
    points_width = max(len(points(c)) for c in checks)
    lines = []
    for c in checks:
        head = f"{mark(c):<5} {c.id:<{id_width}} {points(c):>{points_width}}  "
        first = f"{c.not_written.message}." if c.not_written else first_sentence(summary(c.feedback))
        if advisory(c) and c.status != "passed":
            first = f"Advisory, no points: {first}"
        lines += _wrap(_line(first), width, " " * len(head), head)
    return lines


def card(c: CheckResult, width: int | None = None) -> list[str]:
    """A check's card: its heading, the whole feedback, and for a smallest case the code to paste and the
    numbers (the code as it is, never wrapped: it is pasted)."""
    said = "advisory, no points" if advisory(c) and c.status != "passed" else f"{mark(c)} {points(c)}"
    lines = _wrap(f"--- {c.id}: {c.title} ({said})", width, "    ")
    lines += _said(printable(c.feedback), width, "  ")
    lines += _repair(c, width)
    example = c.counterexample
    if example and not c.artifacts.get("unstable"):  # a loop whose numbers change from run to run reproduces nothing
        lines += ["  Paste under your Value class to reproduce:", _block(example.code, "    ")]
        if example.expected:
            lines += _wrap(f"expected: {_pairs(example.expected, example.got)}", width, "            ", "  ")
            lines += _wrap(f"got:      {_pairs(example.got, example.expected)}", width, "            ", "  ")
    return lines


def _repair(c: CheckResult, width: int | None) -> list[str]:
    """A verified repair's sentence, and at `diff` the change (the student's lines, as written and as changed)."""
    repair = c.repair
    if repair is None:
        return []
    lines = _said(printable(sentence(repair)), width, "  ")
    if repair.diff:
        shown = diff_lines(repair)
        margin = min((len(t) - len(t.lstrip()) for _, _, t in shown if t.strip()), default=0)
        lines += [f"    {sign} {line:>4} | {_line(text[margin:])}" for sign, line, text in shown]
    return lines


def _error(result: Result, width: int | None) -> list[str]:
    """Why the submission could not be graded, in the message's words (its kind is the JSON's, for programs)."""
    assert result.error is not None, "an error result, and only one, has an error"
    return [
        "Could not grade this submission:",
        *_said(printable(result.error.message), width, "  "),
        "",
        f"Score: 0 / {result.max_score:g}",
    ]


def _start(result: Result, begin: Start | None, width: int | None) -> list[str]:
    """The start-here box, before the table, when checks wait for starter-kit methods still to write: every such
    method once (by class), the checks waiting for them, those not judged until an operation works, and the next
    step, which follows what the checks need (a first run is a few lines, not a card per check)."""
    if begin is None:
        return []
    count = len(begin.methods)
    lines = _wrap(
        f"--- Start here: {count} method{'s' if count != 1 else ''} of the starter kit "
        f"{'are' if count != 1 else 'is'} not written yet",
        width,
        "    ",
    )
    groups = [f"{owner}: {', '.join(methods)}" if methods else owner for owner, methods in grouped(begin.methods)]
    lines += _wrap("; ".join(groups), width, "    ", "  ")
    waiting = list(begin.waiting)
    lines += _wrap(
        f"{len(waiting)} of {len(result.checks)} checks wait for them: {', '.join(waiting)}.", width, "    ", "  "
    )
    if held(result):
        lines += _wrap(f"Not judged until an operation works: {', '.join(held(result))}.", width, "    ", "  ")
    lines += _wrap(
        f"Next: write {said_list(begin.next_methods)}, which {begin.next_check} needs.",
        width,
        "    ",
        "  ",
    )
    return [*lines, ""]


def said_list(names: tuple[str, ...] | list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _wrap(text: str, width: int | None, rest: str = "", first: str = "") -> list[str]:
    """One line of the grader's, wrapped to width (never within a word), its later lines starting with `rest`; as
    it is (after `first`) when width is None."""
    if width is None:
        return [first + text]
    return textwrap.wrap(
        text,
        max(width, NARROWEST),
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]


def _said(text: str, width: int | None, prefix: str) -> list[str]:
    """A text of several lines (printable already), each indented by prefix and wrapped to width, its later lines
    under its first word (a list's item keeps its indent, and goes two further)."""
    lines = []
    for line in text.split("\n"):
        if not line.strip():
            lines.append("")
            continue
        indent = prefix + line[: len(line) - len(line.lstrip())]
        lines += _wrap(line.strip(), width, indent + ("  " if indent != prefix else ""), indent)
    return lines


def _line(text: str) -> str:
    """Student text shown within one line: a newline or tab is escaped too."""
    return printable(str(text), keep="")


def _block(text: str, prefix: str) -> str:
    """Student text shown as lines of its own: escaped, and every line that is not blank indented."""
    return textwrap.indent(printable(str(text)), prefix)


def _pairs(values: dict, other: dict) -> str:
    """name = value, ..., each number with six significant digits (more where it and the other's differ)."""
    return ", ".join(f"{_line(k)} = {_line(numbers(v, other.get(k), close=SAME)[0])}" for k, v in values.items())
