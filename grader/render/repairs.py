"""A verified repair (a check's `artifacts.repair`, grader/repair/) in words, for the terminal and the HTML report.

The repair comes from a result that may have been read back from a file: each field is checked before use, and
one that is not what the grader writes is no repair. Every line shown is the student's own code (`before`),
or the student's line as the edit leaves it (`after`, only when the assignment shows the change: `diff`). A
notebook's repair is in one cell (`cell`, its place among the code cells, as notebooks.cell_name names it), its lines
the lines of that cell.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.notebooks import cell_name
from grader.result import CheckResult

QUOTED = 80
"""The longest line a repair's sentence quotes (in code style) as the line to change."""


@dataclass(frozen=True)
class Place:
    line: int
    where: str
    before: str
    after: str
    cell: int | None = None
    """Of a notebook, the code cell (its place from 1) whose line `line` is."""


@dataclass(frozen=True)
class Repair:
    places: tuple[Place, ...]
    method: str
    fixes: tuple[str, ...]

    @property
    def diff(self) -> bool:
        """Does it show the change (the assignment's `diff`), or only where it is?"""
        return any(p.after for p in self.places)

    @property
    def cell(self) -> int | None:
        """Of a notebook, the cell the repair is in."""
        return self.places[0].cell


def repair_of(check: CheckResult) -> Repair | None:
    data = check.artifacts.get("repair") if check.visibility == "visible" else None
    if not isinstance(data, dict) or data.get("verified") is not True:
        return None
    more = data.get("also", [])
    places = [_place(p) for p in [data, *more]] if isinstance(more, list) else []
    kept = [p for p in places if p is not None]
    fixes = data.get("fixes")
    if (
        not kept
        or len(kept) != len(places)
        or len({p.cell for p in kept}) != 1
        or not isinstance(fixes, list)
        or not all(isinstance(f, str) for f in fixes)
    ):
        return None
    method = data.get("method")
    return Repair(tuple(kept), method if isinstance(method, str) else "", tuple(fixes))


def _place(data) -> Place | None:
    if not isinstance(data, dict):
        return None
    line, where, before, after, cell = (data.get(k) for k in ("line", "where", "before", "after", "cell"))
    if cell is not None and not (type(cell) is int and cell > 0):
        return None
    if type(line) is int and line > 0 and isinstance(where, str) and isinstance(before, str):
        return Place(line, where, before, after, cell) if isinstance(after, str) else None
    return None


def sentence(repair: Repair) -> str:
    """Where to change, in one sentence, and what the grader saw when it made the change."""
    first = repair.places[0]
    changed = [p for p in repair.places if p.before]
    of = f" of {cell_name(repair.cell)}" if repair.cell is not None else ""
    if not changed:
        what = f"In {first.where}, before line {first.line}{of}, something is missing"
        if repair.method and repair.method.startswith("__"):
            what += f": {repair.method}"
    else:
        lines = sorted({p.line + k for p in changed for k in range(p.before.count("\n") + 1)})
        wheres = list(dict.fromkeys(p.where for p in changed))
        said = f"line {lines[0]}" if len(lines) == 1 else f"lines {', '.join(map(str, lines[:-1]))} and {lines[-1]}"
        one = len(lines) == 1
        quoted = changed[0].before.strip()
        shown = f" (`{quoted}`)" if one and quoted and "`" not in quoted and len(quoted) <= QUOTED else ""
        what = f"{said}{of}{shown}, in {_wheres_said(wheres)}, {'is the line' if one else 'are the lines'} to change"
    fixed = ", ".join(repair.fixes)
    copy = "notebook" if repair.cell is not None else "file"
    return (
        f"Verified fix: {what}. The grader made that change in a copy of your {copy} and graded it again: "
        f"{fixed} then pass{'es' if len(repair.fixes) == 1 else ''}."
    )


def _wheres_said(wheres: list[str]) -> str:
    """Where the lines are, in words: `__add__'s _backward`, or, of several methods' one part, `the _backward of
    __add__, __mul__ and tanh`."""
    if len(wheres) == 1:
        return wheres[0]
    parts = {where.partition("'s ")[2] for where in wheres}
    if len(parts) == 1 and all("'s " in where for where in wheres):
        owners = [where.partition("'s ")[0] for where in wheres]
        return f"the {parts.pop()} of {', '.join(owners[:-1])} and {owners[-1]}"
    return f"{', '.join(wheres[:-1])} and {wheres[-1]}"


def diff_lines(repair: Repair) -> list[tuple[str, int, str]]:
    """The change, line by line: ('-', line, text) for each line as written, ('+', line, text) as changed."""
    shown = []
    for place in repair.places:
        before = place.before.split("\n") if place.before else []
        shown += [("-", place.line + k, text) for k, text in enumerate(before)]
        shown += [("+", place.line + k, text) for k, text in enumerate(place.after.split("\n"))]
    return shown


def plain(repair: Repair) -> str:
    """The repair as plain text (Gradescope's output): its sentence, and at `diff` the change, each line as
    `- 42 | as written` and `+ 42 | as changed`, the lines' common indent taken off."""
    shown = diff_lines(repair) if repair.diff else []
    margin = min((len(t) - len(t.lstrip()) for _, _, t in shown if t.strip()), default=0)
    return "\n".join([sentence(repair), *(f"{sign} {line:>4} | {text[margin:]}" for sign, line, text in shown)])
