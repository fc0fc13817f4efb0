"""A notebook for the next lecture: one section per misconception the class held, most common first.

Each section says the misconception in the lesson's words (grader/causes.py, as the students read
it), how many students held it, and shows the smallest case the class's own engines failed on, with
the numbers the lesson's engine gives and those a student's engine gave; a cell runs the case on the
lesson's engine (the grader's reference, in the notebook's first cell), so it opens and runs top to
bottom in Jupyter. No student is named: the cases are the grader's own expressions, and only counts
are said. Where some students got a verified repair, the section shows that edit on the lesson's engine
(the mistake planted there, and the line as the repair writes it), never a student's code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.classfiles import ClassSummary
from grader.insight.misconceptions import SLOPES, expression
from grader.text import counted

KERNEL = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

LessonEdit = Callable[[str], Sequence[Any]]
"""A cause's verified repair on the lesson's engine: its changes (each with `where`, `before`, `after`), none when
it has no such edit. The command passes grader/repair/lesson.py's on the lesson's engine (insight reads no
repair code itself)."""


def notebook(summary: ClassSummary, engine: str, on_lesson: LessonEdit | None = None) -> nbformat.NotebookNode:
    """The reteach notebook from a batch's summary.json and the lesson's engine's code (Value, Neuron...), with
    the edit of each misconception some students got a verified repair of, on the lesson's engine, where
    on_lesson gives one."""
    misconceptions = summary.misconceptions or ()
    graded = sum(s.status == "graded" for s in summary.students)
    title = summary.title or summary.assignment
    cells = [
        new_markdown_cell(
            f"# Reteach: what the class got wrong in *{markdown(title)}*\n\n"
            f"{counted(graded, 'submission')} graded; {counted(len(misconceptions), 'misconception')} recognised, "
            "the most common first. Each section shows the smallest case the class's own engines failed on, run on "
            f"the lesson's engine. The first code cell holds that engine ({engine.strip().count(chr(10)) + 1} lines, "
            "folded: click it to show them): run it, then any section."
        ),
        new_code_cell(
            "# The lesson's engine: Value, and the Neuron built on it.\n" + engine.strip(),
            metadata={"jupyter": {"source_hidden": True}},  # folded in JupyterLab, Notebook 7 and VS Code
        ),
    ]
    for number, entry in enumerate(misconceptions, 1):
        cells += _section(number, entry, graded, on_lesson)
    if not misconceptions:
        cells.append(new_markdown_cell("No misconception was recognised in this class's failing checks."))
    return new_notebook(cells=cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}})


def markdown(text: str) -> str:
    """The grader's words (a cause's, written for the terminal) as markdown that shows them as written: a
    `code` span stays one, a name with underscores at its edge (__add__, _backward) becomes one, and every
    other character markdown would read as markup (* _ [ ] < > # | \\) is escaped, so `x**k ... x**(k-1)`
    is not bold and `__eq__` not a bold 'eq'."""
    pieces = str(text).split("`")
    if len(pieces) % 2 == 0:  # a lone backtick: no code span
        pieces[-2:] = [pieces[-2] + "`" + pieces[-1]]
    out = []
    for i, piece in enumerate(pieces):
        if i % 2:
            out.append(f"`{piece}`")
            continue
        words = []
        for word in _NAME.split(piece):
            if _NAME.fullmatch(word) and (word.startswith("_") or word.endswith("_")):
                words.append(f"`{word}`")
            else:
                words.append("".join(f"\\{c}" if c in _MARKUP else c for c in word))
        out.append("".join(words))
    return "".join(out)


_NAME = re.compile(r"(\w+)")
_MARKUP = set("\\*_[]<>#|`")


def _section(number: int, entry: dict[str, Any], graded: int, on_lesson: LessonEdit | None) -> list:
    share = f"{entry['count']} of {graded} students" if graded else f"{entry['count']} students"
    text = [
        f"## {number}. {markdown(entry['words'])}",
        "",
        f"**{share}.** Checks that failed from it: {', '.join(f'`{c}`' for c in entry['checks'])}.",
    ]
    if len(entry["parts"]) > 1 or entry["parts"][0]["cause"] != entry["id"]:
        text += [
            "",
            "Where: " + ", ".join(f"{p['count']} in `{p['method'] or p['cause']}`" for p in entry["parts"]) + ".",
        ]
    text += ["", f"The rule, as the students' feedback puts it: {markdown(entry['parts'][0]['words'])}."]
    text += _repairs(entry, on_lesson) if on_lesson is not None else []
    case = entry.get("counterexample")
    if not case:
        return [new_markdown_cell("\n".join(text))]
    source = "central differences of a student's forward" if case["check"] in SLOPES else "the lesson's engine"
    rows = [
        f"| `{name}` | {_number(value)} | {_number(case['got'].get(name, '-'))} |"
        for name, value in case["expected"].items()
    ]
    text += [
        "",
        f"The smallest case the class's engines failed on (from the `{case['check']}` check):",
        "",
        f"| | {source} | a student's engine |",
        "|---|---|---|",
        *rows,
    ]
    return [new_markdown_cell("\n".join(text)), new_code_cell(_runnable(case))]


def _repairs(entry: dict[str, Any], on_lesson: LessonEdit) -> list[str]:
    """When some students got a verified repair of the misconception: how many, and the edit on the lesson's
    engine (the mistake planted there, the line as a student got it wrong and as the repair writes it: never a
    student's code, grader/repair/lesson.py), for each of its causes one was verified for."""
    repaired = entry.get("repaired", 0)
    shown = [changes for part in entry["parts"] if part.get("repaired", 0) and (changes := on_lesson(part["cause"]))]
    if not repaired or not shown:
        return []
    noun = "student" if repaired == 1 else "students"
    text = [
        "",
        f"**One edit fixes it.** {repaired} {noun} got a verified repair: the grader found the line in each "
        "one's own file, made the edit in a copy and graded it again. On the lesson's engine (the first cell, "
        "as Python writes it back), the mistake and its repair read:",
    ]
    for changes in shown:
        where = ", ".join(dict.fromkeys(f"`{c.where}`" for c in changes))
        lines = [("-", c.before) for c in changes if c.before] + [("+", c.after) for c in changes]
        body = [(sign, line) for sign, chunk in lines for line in chunk.split("\n") if line.strip()]
        margin = min(len(line) - len(line.lstrip()) for _, line in body)
        text += ["", f"In {where}:", "", "```diff", *(f"{sign} {line[margin:]}" for sign, line in body), "```"]
    return text


def _runnable(case: dict[str, Any]) -> str:
    """The case's code, then a print of every named value that is an expression (`a.grad`)."""
    shown = [f"print({name!r}, '=', {name})" for name in case["expected"] if expression(name)]
    return "\n".join([case["code"].rstrip(), *shown])


def _number(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value).replace("|", "\\|")
