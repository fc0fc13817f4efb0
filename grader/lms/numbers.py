"""Numbers as an LMS writes them, read as its own importer reads them, and written back in the form read.

Canvas formats every number with the user's locale (`I18n.n(x, precision: 2)`: `10.00`, or `10,00` in
Swedish, German, French, Spanish, Dutch, Italian...) and its gradebook importer normalises a cell made
only of digits, `.` and `,` (and an optional `%`) by taking the last separator as the decimal one and
dropping the others. Moodle's worksheet writes `format_float` with the site language's decimal separator
and reads it back with `unformat_float`. So a cell is read here by Canvas's rule, and a number written
into a column takes that column's form: its decimal separator and its count of decimals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DIGITS = frozenset("0123456789")
MOST_CHARS = 40
"""A number cell longer than this is not a number an LMS wrote."""


@dataclass(frozen=True)
class Form:
    """How a column writes its numbers."""

    separator: str = "."
    decimals: int = 2

    def write(self, value: float, percent: bool = False) -> str:
        text = f"{value:.{self.decimals}f}"
        if self.separator != ".":
            text = text.replace(".", self.separator)
        return text + ("%" if percent else "")


POINT = Form()


def parse(cell: str) -> tuple[float, Form] | None:
    """The number in a cell and the form it was written in, by Canvas's importer's rule (the last `.` or `,`
    is the decimal separator; a leading `-` and a trailing `%` are allowed); None when the cell is not a
    plain number (blank, `EX`, `-`, `N/A`, text)."""
    text = cell.strip()
    if text.endswith("%"):
        text = text[:-1]
    negative = text.startswith("-")
    if negative:
        text = text[1:]
    if not text or len(text) > MOST_CHARS or not set(text) <= DIGITS | {".", ","}:
        return None
    cut = max(text.rfind("."), text.rfind(","))
    whole, fraction = (text[:cut], text[cut + 1 :]) if cut >= 0 else (text, "")
    whole = whole.replace(".", "").replace(",", "")
    if not whole and not fraction:
        return None
    value = float(f"{whole or '0'}.{fraction or '0'}")
    if not math.isfinite(value):
        return None
    form = Form(text[cut], len(fraction)) if cut >= 0 else Form(".", 0)
    return (-value if negative else value), form


def is_number(cell: str) -> bool:
    return parse(cell) is not None
