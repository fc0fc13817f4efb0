"""The one writer of every CSV the grader writes (the gradebook, the incomplete gradebook, every LMS export):
each cell is data, never a formula; and the reader of the CSV files an instructor gives (a roster, groups, a
--map), each row with the line it starts on, a line that is no CSV row (a cell past csv's limit of 131,072
characters) a UsageError naming it.

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (or a tab or carriage return before one)
as a formula, and a roster's display name or a student's file name can be such a cell
(`=HYPERLINK("https://...?d="&C2, "Open")`). So, by the usual rule (OWASP's "CSV injection"), a text cell
starting with one of them, after any spaces, is written with a `'` in front, which spreadsheets show as
text. Numbers stay numbers: a float or int the grader computed, and a text cell that is a plain number
(`-1.5`, `7,50`, `85.5%`), are written as they are, and so is a cell that is only `-` (Moodle's "no date").
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from grader.errors import UsageError

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER_CHARS = frozenset("0123456789.,")


def cell(value: object) -> str:
    """A value as a cell that is data: numbers as they are, a text that could start a formula quoted."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return str(value)
    text = "" if value is None else str(value)
    head = text.lstrip(" ")
    if not head.startswith(FORMULA_START) or head == "-" or _plain_number(head):
        return text
    return "'" + text


def uncell(text: str) -> str:
    """A cell as `cell` wrote it, read back as the text it was: the `'` put before a text that could start a
    formula is taken off (any other `'` is the text's own). Nothing in the cell is evaluated."""
    rest = text[1:]
    head = rest.lstrip(" ")
    if text.startswith("'") and head.startswith(FORMULA_START) and head != "-" and not _plain_number(head):
        return rest
    return text


def _plain_number(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    body = body[:-1] if body.endswith("%") else body
    return bool(body) and len(body) <= 40 and set(body) <= NUMBER_CHARS and any(c.isdigit() for c in body)


class Writer:
    """csv.writer whose every cell goes through `cell`."""

    def __init__(self, delimiter: str = ",", lineterminator: str = "\n"):
        self.buffer = io.StringIO()
        self._writer = csv.writer(self.buffer, delimiter=delimiter, lineterminator=lineterminator)
        self._quoted = csv.writer(
            self.buffer, delimiter=delimiter, lineterminator=lineterminator, quoting=csv.QUOTE_ALL
        )

    def writerow(self, row: Iterable[object]) -> None:
        """One row; a row with a line break in a cell (a CR csv would not quote under a "\n" terminator) is
        written with every cell quoted, so that it stays one row."""
        cells = [cell(v) for v in row]
        quoted = any("\r" in c or "\n" in c for c in cells)
        (self._quoted if quoted else self._writer).writerow(cells)

    def text(self) -> str:
        return self.buffer.getvalue()


def numbered_rows(text: str, named: str, delimiter: str = ",") -> list[tuple[int, list[str]]]:
    """Each row of a CSV text an instructor gave, with the line it starts on; a UsageError naming the file (as
    `named` says it) and the line, for one that cannot be read as CSV."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    found = []
    while True:
        start = reader.line_num + 1
        try:
            found.append((start, next(reader)))
        except StopIteration:
            return found
        except csv.Error as exc:
            raise UsageError(f"{named}, line {start}: cannot be read as CSV ({exc})") from None
