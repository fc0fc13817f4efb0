"""Fingerprints of a student's code that survive renaming, reordering and reformatting.

Two files are the same work when they share long runs of the same structure, whatever the names,
comments, layout and method order. The code is parsed, and its syntax tree read in order as a
stream of node kinds (an assignment, an attribute, a multiplication, the number 0.5): names,
strings, comments, docstrings, brackets and line breaks leave no token. Every run of K tokens is
hashed, and winnowing (Schleimer, Wilkerson and Aiken, as MOSS and Dolos use it) keeps the
smallest hash of each window of W runs: any shared run of K + W - 1 tokens or more is certain to
leave a shared fingerprint, and a file keeps about 2 / (W + 1) of its runs. Each fingerprint keeps
the lines it spans, so a match can be shown in both files. Each function and method (and the code
between them) is read on its own, so no run crosses from one to the next: moving methods about
changes nothing.
"""

from __future__ import annotations

import ast
import functools
import warnings
import zlib
from dataclasses import dataclass

MAX_CHARS = 200_000
"""Longest code fingerprinted: a longer file (an engine is 5 KB) is not compared, so that no submission can
make the grader's own process parse for minutes."""
K = 15
"""Tokens per hashed run (a statement is 5 to 15)."""
W = 10
"""Runs per winnowing window: a shared run of K + W - 1 tokens always leaves a shared fingerprint."""
SKIPPED = (ast.expr_context, ast.Load, ast.Store, ast.Del)


@dataclass(frozen=True)
class Fingerprints:
    """A file's kept fingerprints: each hash, with the lines (first, last) of every run that gave it."""

    spans: dict[int, tuple[tuple[int, int], ...]]
    tokens: int
    """How many tokens the file's code made (0: it could not be parsed, or holds no code)."""

    @property
    def hashes(self) -> frozenset[int]:
        return frozenset(self.spans)

    def without(self, common: frozenset[int] | set[int]) -> Fingerprints:
        """These fingerprints but those in common (the starter kit's, the lesson's)."""
        return Fingerprints({h: s for h, s in self.spans.items() if h not in common}, self.tokens)


def tokens(source: str) -> list[list[tuple[int, int]]]:
    """The code's normalised token streams, one per top-level function or method and one for the rest:
    (token, line), in the order the syntax tree is read."""
    if len(source) > MAX_CHARS:
        return []
    try:
        with warnings.catch_warnings():  # a student's "\d" is their business, not the batch's stderr
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    rest: list[tuple[int, int]] = []
    segments = [rest]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            rest.append((_code("ClassDef"), node.lineno))
            for item in node.body:
                _walk(item, segments, rest)
        else:
            _walk(node, segments, rest)
    return [segment for segment in segments if segment]


def _walk(statement: ast.stmt, segments: list[list[tuple[int, int]]], rest: list[tuple[int, int]]) -> None:
    """Read one statement's tree; a function gets a stream of its own."""
    out = rest
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        out = []
        segments.append(out)
    stack: list[tuple[ast.AST, int]] = [(statement, statement.lineno)]
    while stack:
        node, line = stack.pop()
        kind = type(node)
        if kind is ast.Expr and _is_docstring(node):
            continue
        line = getattr(node, "lineno", line)
        # a class is hashable: mypy checks type[AST] against Hashable with AST's instance __hash__
        code = _code(_word(node)) if isinstance(node, ast.Constant) else _kind_code(kind)  # type: ignore[arg-type]
        out.append((code, line))
        children: list[ast.AST] = []
        for name in _fields(kind):  # type: ignore[arg-type]  # a class is hashable (as above)
            value = getattr(node, name, None)
            if isinstance(value, list):
                children.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST) and not isinstance(value, SKIPPED):
                children.append(value)
        stack.extend((child, line) for child in reversed(children))


@functools.cache
def _fields(kind: type[ast.AST]) -> tuple[str, ...]:
    return tuple(name for name in kind._fields if name not in ("ctx", "type_comment"))


@functools.cache
def _kind_code(kind: type[ast.AST]) -> int:
    return _code(kind.__name__)


INT_BITS = 64
"""An int literal wider than this leaves a token of its size and residue, never its digits: writing an int of
over 4,300 digits raises ValueError (Python's limit), and a hex literal can hold one."""
RESIDUE = 2**61 - 1


def _word(node: ast.Constant) -> str:
    """The token a constant leaves: for a number its value (0.5 is not 1); for a string, only that it is one."""
    value = node.value
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > INT_BITS:
        return f"Constant:int:{value.bit_length()}:{value % RESIDUE}"
    if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
        return f"Constant:{value!r}"
    return f"Constant:{type(value).__name__}"


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


_CODES: dict[str, int] = {}


def _code(word: str) -> int:
    """A token as a number, the same in every process (Python's own str hash is salted per process)."""
    code = _CODES.get(word)
    if code is None:
        code = _CODES.setdefault(word, zlib.crc32(word.encode()))
    return code


def fingerprints(source: str, k: int = K, w: int = W) -> Fingerprints:
    """The winnowed fingerprints of the code (none when it cannot be parsed or is shorter than K tokens)."""
    spans: dict[int, list[tuple[int, int]]] = {}
    count = 0
    for stream in tokens(source):
        count += len(stream)
        codes = [c for c, _ in stream]
        lines = [line for _, line in stream]
        runs = [hash(tuple(codes[i : i + k])) for i in range(len(codes) - k + 1)]  # ints hash alike in every process
        chosen = -1
        for start in range(max(len(runs) - w + 1, 1 if runs else 0)):
            window = runs[start : start + w]
            smallest = min(window)
            at = start + len(window) - 1 - window[::-1].index(smallest)  # the rightmost smallest, as winnowing says
            if at != chosen:
                chosen = at
                spans.setdefault(smallest, []).append((min(lines[at : at + k]), max(lines[at : at + k])))
    return Fingerprints({h: tuple(s) for h, s in spans.items()}, count)


def lines_of(prints: Fingerprints, shared: frozenset[int] | set[int]) -> list[tuple[int, int]]:
    """The lines of a file covered by the shared fingerprints, as merged (first, last) ranges."""
    ranges = sorted(span for h in shared for span in prints.spans.get(h, ()))
    merged: list[tuple[int, int]] = []
    for first, last in ranges:
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged
