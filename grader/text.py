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
