"""An edit of the student's own source: the lines it changes, as they are and as the edit writes them.

An inverse operator (inverse.py) finds the code a misconception left in the student's file and says what to
put where, as spans of the source (a byte range and its new text, so that the student's own spelling,
spacing and names are kept around the change). Spans become Changes (reading.Source.changes), one per run of
lines they touch: the line, the method it is in, the lines before and after, the very type a verified repair
carries on its check (grader/result.py's Change). A Change is also how an edit is applied, to the student's
text or to a copy a reader of the result JSON has: the `before` lines are replaced by the `after` lines (an
insertion has no `before`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from grader.result import Change

LONGEST_LINE = 300
"""Characters of a line above which no edit is offered: the line would not be shown whole."""

Located = ast.stmt | ast.expr
"""A node with a place in the source (statements and expressions have positions; ast.AST itself has none)."""

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
"""A function or class a node can be in (Source.functions)."""


@dataclass(frozen=True)
class Edit:
    """The edit that undoes one misconception in the student's file: one Change or more (the same mistake
    made in several methods, or on two lines of one)."""

    cause: str
    changes: tuple[Change, ...] = field(default_factory=tuple)

    def applied(self, source: str) -> str:
        return applied(source, self.changes)


def applied(source: str, changes: tuple[Change, ...] | list[Change]) -> str:
    """source with each change made, from the last line up (so no change moves another's line). Lines are
    counted as Python counts them, by their line feeds (a form feed or a line separator in a string is no line end).
    Raises ValueError when a change's `before` is not what the source holds at its line."""
    lines = source.split("\n")
    for change in sorted(changes, key=lambda c: (c.line, bool(c.before)), reverse=True):
        old = change.before.split("\n") if change.before else []
        start = change.line - 1
        if [line.removesuffix("\r") for line in lines[start : start + len(old)]] != old:
            raise ValueError(f"line {change.line} is not {change.before!r}")
        lines[start : start + len(old)] = change.after.split("\n")
    return "\n".join(lines)


@dataclass(frozen=True)
class Span:
    start: int
    """Byte offset in the source's UTF-8 encoding."""
    end: int
    text: str
    method: str = ""
    """The method to name instead of the one the span is in (an insertion names the method it adds)."""
    where: str = ""
