"""An edit of the student's own source: the lines it changes, as they are and as the edit writes them.

An inverse operator (inverse.py) finds the code a misconception left in the student's file and says what to
put where, as spans of the source (a byte range and its new text, so that the student's own spelling,
spacing and names are kept around the change). Spans become Changes, one per run of lines they touch: the
line, the method it is in, the lines before and after. A Change is also how an edit is applied, to the
student's text or to a copy a reader of the result JSON has: the `before` lines are replaced by the `after`
lines (an insertion has no `before`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

LONGEST_LINE = 300
"""Characters of a line above which no edit is offered: the line would not be shown whole."""

Located = ast.stmt | ast.expr
"""A node with a place in the source (statements and expressions have positions; ast.AST itself has none)."""

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
"""A function or class a node can be in (Source.functions)."""


@dataclass(frozen=True)
class Change:
    line: int
    """The first line changed (1-based), or, for an insertion, the line the new lines go before."""
    method: str
    """The method the change is in (`__mul__`, `Neuron.__call__`), or beside (an insertion)."""
    where: str
    """Where, in words: `__mul__'s _backward`, `backward`."""
    before: str
    """The lines as the student wrote them (empty for an insertion)."""
    after: str
    """The lines the edit writes instead."""
    cell: int | None = None
    """Of a notebook, the cell the lines are in (its place among the code cells, from 1, as the grader's notebook
    messages name it: notebooks.cell_name): `line` is then the line in that cell (grader/repair/notebook.py). None
    in a .py file."""

    def to_dict(self) -> dict:
        found: dict = {"line": self.line}
        if self.cell is not None:
            found["cell"] = self.cell
        return {**found, "method": self.method, "where": self.where, "before": self.before, "after": self.after}


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


class Source:
    """The student's text with its syntax tree, positions in bytes as ast gives them."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8")
        self.tree = ast.parse(text)
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.parents: dict[int, ast.AST] = {}
        for parent in ast.walk(self.tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def start(self, node: Located) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: Located) -> int:
        """Raises ValueError for a node without an end (never one ast.parse made: it gives every node one)."""
        if node.end_lineno is None or node.end_col_offset is None:
            raise ValueError(f"{type(node).__name__} at line {node.lineno} has no end position")
        return self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def code(self, node: Located) -> str:
        return self.segment(self.start(node), self.end(node))

    def replace(self, node: Located, text: str) -> Span:
        return Span(self.start(node), self.end(node), text)

    def line_of(self, offset: int) -> int:
        """The 1-based line holding a byte offset."""
        low, high = 0, len(self.starts) - 1
        while low < high - 1:
            middle = (low + high) // 2
            if self.starts[middle] <= offset:
                low = middle
            else:
                high = middle
        return low + 1

    def functions(self, node: ast.AST) -> list[Scope]:
        """The functions and classes node is in, the outermost first."""
        found: list[Scope] = []
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append(parent)
            parent = self.parents.get(id(parent))
        return found[::-1]

    def changes(self, spans: list[Span]) -> tuple[Change, ...] | None:
        """The spans as Changes, one per run of lines they touch; None when they overlap or a line is too long
        to show."""
        spans = sorted(spans, key=lambda s: (s.start, s.end))
        if any(a.end > b.start for a, b in zip(spans, spans[1:], strict=False)):
            return None
        groups: list[list[Span]] = []
        for span in spans:
            if groups and self.line_of(span.start) <= self.line_of(max(groups[-1][-1].end - 1, groups[-1][-1].start)):
                groups[-1].append(span)
            else:
                groups.append([span])
        changes = tuple(self._change(group) for group in groups)
        if any(len(line) > LONGEST_LINE for c in changes for line in (c.before + "\n" + c.after).split("\n")):
            return None
        return changes

    def _change(self, group: list[Span]) -> Change:
        first = self.line_of(group[0].start)
        span = group[0]
        if len(group) == 1 and span.start == span.end == self.starts[first - 1] and span.text.endswith("\n"):
            return Change(first, *self._named(group[0]), "", group[0].text[:-1])
        last = self.line_of(max(group[-1].end - 1, group[-1].start))
        begin, finish = self.starts[first - 1], self.starts[last]
        new = self.data[begin:finish]
        for span in reversed(group):
            new = new[: span.start - begin] + span.text.encode("utf-8") + new[span.end - begin :]
        before = self.segment(begin, finish).replace("\r\n", "\n").rstrip("\n")
        after = new.decode("utf-8").replace("\r\n", "\n").rstrip("\n")
        return Change(first, *self._named(group[0]), before, after)

    def _named(self, span: Span) -> tuple[str, str]:
        return (span.method, span.where or span.method) if span.method else self._place(span.start)

    def _place(self, offset: int) -> tuple[str, str]:
        """The method holding an offset (`__mul__`, `Neuron.__call__`), and where in words (`__mul__'s
        _backward`)."""
        node = self._innermost(offset)
        scopes = self.functions(node) + ([node] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [])
        if not scopes:
            return "", "the module"
        names = [s.name for s in scopes]
        cls, rest = (names[0], names[1:]) if isinstance(scopes[0], ast.ClassDef) else ("", names)
        if not rest:
            return cls, cls
        method = rest[0] if cls in ("Value", "") else f"{cls}.{rest[0]}"
        return method, f"{method}'s {rest[-1]}" if len(rest) > 1 else method

    def _innermost(self, offset: int) -> ast.AST:
        best: ast.AST = self.tree
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.stmt):
                continue
            inside = self.start(node) <= offset < max(self.end(node), self.start(node) + 1)
            if inside and (not isinstance(best, ast.stmt) or self.start(node) >= self.start(best)):
                best = node
        return best
