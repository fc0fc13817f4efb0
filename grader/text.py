"""Text a student controls, made safe to show.

A student's exception message, assertion line, file name or notebook output reaches a
terminal (`grader check`, a batch's notes) and Gradescope's page. A control character in
it would be obeyed rather than shown: OSC 52 writes the clipboard, OSC 0 retitles the
window, CSI clears the screen, a carriage return overwrites the grader's own line with
"Score: 100 / 100". So every character that is not printable is shown as its Python escape
(`\\x1b`, `\\x9b`, `\\u202e`): the C0 and C1 controls, DEL, and Unicode's format and
separator characters; newline and tab stay (where a caller allows them).
"""

from __future__ import annotations

from typing import Any


def printable(text: str, keep: str = "\n\t") -> str:
    """The text with every unprintable character but those in `keep` escaped, not obeyed."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)


def printable_data(value: Any) -> Any:
    """JSON-like data with every string in it made printable (newlines and tabs kept)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_data(v) for v in value]
    return value


FAILURE_CHARS = 200


def failure(exc: BaseException, most: int = FAILURE_CHARS) -> str:
    """An exception as a note or a message names it: its type and the first line of what it says, capped and
    printable. Never raises, though str() of an exception can (its argument may be an int too long to write)."""
    try:  # an OSError's text names a path (of the grader's machine): its reason alone is said
        said = exc.strerror or "" if isinstance(exc, OSError) and exc.strerror else str(exc)
    except Exception:
        said = ""
    first = said.strip().splitlines()[0] if said.strip() else ""
    first = first if len(first) <= most else first[: most - 1] + "…"
    return printable(f"{type(exc).__name__}: {first}" if first else type(exc).__name__, keep="")


def counted(n: int, noun: str, plural: str = "") -> str:
    """A count and its noun, agreeing: `1 row`, `9 rows`, `1 student`, `0 students` (plural: the noun's plural, when
    it is not the noun and an s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
