"""A verified repair (a check's `repair`, grader/result.py's Repair, found by grader/repair/) in words, for the
terminal, the HTML report and Gradescope.

Every line shown is the student's own code (`before`), or the student's line as the edit leaves it (`after`, only
when the assignment shows the change: `diff`). A notebook's repair is in one cell (`cell`, its place among the code
cells, as notebooks.cell_name names it), its lines the lines of that cell. A repair read back from a file was checked
by Result.from_dict.
"""

from __future__ import annotations

from grader.notebooks import cell_name
from grader.result import Repair

QUOTED = 80
"""The longest line a repair's sentence quotes (in code style) as the line to change."""


def sentence(repair: Repair) -> str:
    """Where to change, in one sentence, and what the grader saw when it made the change."""
    first = repair.changes[0]
    changed = [p for p in repair.changes if p.before]
    of = f" of {cell_name(repair.cell)}" if repair.cell is not None else ""
    if not changed:
        what = f"In {first.where}, before line {first.line}{of}, something is missing"
        if first.method.startswith("__"):
            what += f": {first.method}"
    else:
        lines = sorted({p.line + k for p in changed for k in range(p.before.count("\n") + 1)})
        wheres = list(dict.fromkeys(p.where for p in changed))
        said = f"line {lines[0]}" if len(lines) == 1 else f"lines {', '.join(map(str, lines[:-1]))} and {lines[-1]}"
        one = len(lines) == 1
        quoted = changed[0].before.strip()
        shown = f" (`{quoted}`)" if one and quoted and "`" not in quoted and len(quoted) <= QUOTED else ""
        what = f"{said}{of}{shown}, in {_wheres_said(wheres)}, {'is the line' if one else 'are the lines'} to change"
    copy = "notebook" if repair.cell is not None else "file"
    made = f"The grader made that change in a copy of your {copy} and graded it again"
    return f"Verified fix: {what}. {made}: {_then(repair)}."


def _then(repair: Repair) -> str:
    """What the copy showed: the checks that then pass, and those that no longer fail from the cause but wait for
    another check's fix."""
    said = []
    if repair.fixes:
        said.append(f"{', '.join(repair.fixes)} then pass{'es' if len(repair.fixes) == 1 else ''}")
    if repair.waiting:
        one = len(repair.waiting) == 1
        said.append(
            f"{', '.join(repair.waiting)} no longer fail{'s' if one else ''} from it, and can be judged once the "
            f"check{'' if one else 's'} {'it waits' if one else 'they wait'} for {'is' if one else 'are'} fixed"
        )
    return "; ".join(said)


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
    for place in repair.changes:
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
