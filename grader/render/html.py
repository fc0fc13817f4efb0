"""HTML reports from recorded results, through jinja2 templates with autoescaping on.

Every page is self-contained: inline CSS and SVG, no script or font from the network,
readable on a phone and when printed; status is always written out, never shown by
colour alone.
"""

from __future__ import annotations

import ast
from dataclasses import asdict
from pathlib import Path
from typing import Any

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from grader import kit
from grader.causes import CAUSES
from grader.feedback import (
    CARD_LINES,
    advisory,
    first_sentence,
    held,
    kit_start,
    ordered,
    summary,
    to_fix,
)
from grader.final import Final, points
from grader.history import Since
from grader.kit import grouped
from grader.notebooks import cell_name
from grader.render.pictures import curve_svg, graph_svg
from grader.render.repairs import diff_lines, sentence
from grader.render.templating import ENV
from grader.result import CheckResult, Result

# The part of a student's file most likely at fault when a check fails and no recognised cause
# names a method (grader/causes.py): names of Value methods, or of top-level functions and classes.
SUSPECTS = {
    "forward": ["__add__", "__radd__", "__mul__", "__rmul__", "__sub__", "__rsub__"],
    "add": ["__add__"],
    "mul": ["__mul__"],
    "pow": ["__pow__"],
    "tanh": ["tanh"],
    "relu": ["relu"],
    "neg_sub": ["__neg__", "__sub__"],
    "accumulate": ["__add__", "__mul__"],
    "topo_order": ["backward"],
    "deep_graph": ["backward"],
    "hand_examples": ["backward"],
    "gradcheck": ["backward"],
    "numerical_grad": ["numerical_grad"],
    "neuron": ["Neuron"],
    "training": ["Neuron"],
}
KIT = "starter kit unchanged"
"""The flag a batch gives the starter kit handed in unchanged (grader/batch/outputs.py's KIT_FLAG)."""
STATUS_TEXT = {"passed": "✓ PASS", "failed": "✗ FAIL", "error": "⚠ ERROR", "skipped": "– SKIP"}
ADVISORY_TEXT = "ℹ advisory, no points"
TODO_TEXT = "✎ not written yet"


def status_of(check: CheckResult) -> dict[str, str]:
    """How a check's status is shown: its words, the class its colour comes from, its points, and the first sentence
    of its feedback. A method still to write is `not written yet` (a neutral colour, not an error's), and an
    advisory check that did not pass is advice (no points, a neutral colour), never a failure."""
    if check.not_written and check.status in ("failed", "error"):
        text, kind = TODO_TEXT, "todo"
    elif advisory(check) and check.status != "passed":
        text, kind = ADVISORY_TEXT, "advisory"
    else:
        text, kind = STATUS_TEXT[check.status], check.status
    summary_said = f"{check.not_written.message}." if check.not_written else first_sentence(summary(check.feedback))
    return {
        "status_text": text,
        "status_class": kind,
        "points_text": "no points" if advisory(check) else f"{round(check.score, 2):g} / {check.max_score:g}",
        "summary": summary_said,
    }


def start_view(result: Result, unwritten: tuple[str, ...]) -> dict[str, Any] | None:
    """The start-here box's content (grader/kit.py): the methods still to write by class, the checks waiting for
    them, those not judged until an operation works, and what to write next; None when no check waits."""
    begin = kit_start(result, unwritten)
    if begin is None:
        return None
    return {
        "count": len(begin.methods),
        "groups": grouped(begin.methods),
        "waiting": list(begin.waiting),
        "total": len(result.checks),
        "held": held(result),
        "next": begin.next_methods,
        "next_check": begin.next_check,
    }


def student_report(
    result: Result,
    source: str | None = None,
    title: str = "",
    final: Final | None = None,
    student: str | None = None,
    class_page: str | None = None,
) -> str:
    """The report a student reads: score, rubric, and for each failed check what went wrong. Its headline is the
    final score (`final`: by default the result's own), which says how late the work was and what the late policy
    took, and each check an instructor adjusted shows the points they set. In a batch, it is headed by the
    student's id (not the file name the LMS gave), with a late badge, and links back to the class page."""
    final = final or Final.of(result)
    checks: list[dict[str, Any]] = []
    shown: dict[str | None, str] = {}  # each code shown, and the check whose card shows it
    carded = {c.id for c in to_fix(result)}
    boxed = set(held(result)) | {c.id for c in result.checks if c.visibility != "hidden" and c.not_written}
    notebook = result.submission.endswith(".ipynb")  # source: the notebook's JSON, whose cells a repair names
    begin = start_view(result, kit.unwritten(source, notebook))
    repaired = any(c.repair is not None for c in result.checks)
    cells = _cell_sources(source) if source and notebook and repaired else {}
    for check in ordered(result):
        hidden = check.visibility == "hidden"
        view = dict(
            asdict(check),
            **status_of(check),
            hidden=hidden,
            carded=check.id in carded or check.id in boxed,
            boxed=check.id in boxed,
        )
        if check.id in carded and check.status in ("failed", "error"):
            graph = check.artifacts.get("graph")
            view["graph_svg"] = graph_svg(graph) if graph else None
            cause = CAUSES.get(check.cause) if check.cause else None
            code = (
                suspect_source(
                    source, check.id, cause.method if cause else None, cause.beside if cause else (), _also(check)
                )
                if source and not notebook
                else None
            )
            view.update(_repair_view(check, source, cells))
            view["source_html"] = None if code in shown else code  # the same code once, on the first card
            view["source_shown_in"] = shown.get(code) if code else None
            shown.setdefault(code, check.id)
        if not hidden and check.id == "training" and check.artifacts.get("student_loss"):
            view["curve_svg"] = curve_svg(check.artifacts)
        checks.append(view)
    by_id = {view["id"]: view for view in checks}
    return ENV.get_template("student.html.j2").render(
        result=result,
        checks=checks,
        cards=[by_id[c.id] for c in to_fix(result)],
        title=title or result.assignment,
        heading=page_title(student or result.submission, final, title or result.assignment),
        final=final,
        student=student,
        class_page=class_page,
        start=begin,
    )


def page_title(name: str, final: Final, title: str) -> str:
    """A student's report's <title>: who, their final score, and the assignment's title."""
    return f"{name}: {points(final.score)} / {points(final.max_score)} ({title})"


def without_class_link(page: str) -> str:
    """A batch's student report as it is given to the student alone (the LMS's feedback): without its link back
    to the class page, which the student does not have (nor may see). The link is the grader's own line; a
    student's text in a report is escaped, so no other line can carry its id."""
    return "\n".join(line for line in page.split("\n") if 'id="class-link"' not in line)


def inline_report(result: Result, change: Since | None, report: str, unwritten: tuple[str, ...] = ()) -> str:
    """The result as a notebook's output shows it (`%grade`): what changed, the start-here box (`unwritten`: the kit's
    methods the notebook leaves unwritten, grader/kit.py), a card for each check to fix with its case as a code
    block to copy, then the table. A fragment of plain HTML: a notebook runs no script and keeps no style sheet of
    an output's."""
    checks = [dict(asdict(c), **status_of(c), **_inline_repair(c)) for c in ordered(result)]
    by_id = {view["id"]: view for view in checks}
    return ENV.get_template("inline.html.j2").render(
        result=result,
        change=change,
        report=report,
        checks=checks,
        cards=[by_id[c.id] for c in to_fix(result)],
        start=start_view(result, unwritten),
    )


def class_report(data: dict[str, Any], sources: dict[str, str] | None = None) -> str:
    """The instructor's class summary: misconceptions, histogram, checks by pass rate, students, errors, flags,
    and the pairs of submissions worth a look, side by side (their code from sources, by student)."""
    histogram = data["histogram"]
    tallest = max(histogram) or 1
    bars = [
        {"x": 40 + i * 52, "height": 160 * n / tallest, "count": n, "label": f"{i * 10}–{i * 10 + 10}"}
        for i, n in enumerate(histogram)
    ]
    views = [_side_by_side(pair, sources or {}) for pair in (data.get("similarity") or {}).get("pairs", [])[:VIEWS]]
    counts = {
        "graded_work": sum(histogram),  # the histogram counts the graded work only (grader/batch/outputs.py)
        "kits": sum(KIT in (s.get("flags") or ()) for s in data["students"]),
        "absent": sum(s.get("status") == "no_submission" for s in data["students"]),
    }
    return ENV.get_template("class.html.j2").render(data=data, bars=bars, views=views, **counts)


VIEWS = 50
"""Most pairs shown side by side (the rest are listed with their scores)."""
VIEW_LINES = 600
"""Most lines of each file shown side by side."""
VIEW_CHARS = 300
"""Most characters of one line shown (side by side, or of the method at fault in a student's report)."""
PARSED_CHARS = 200_000
"""Longest file whose methods a report shows (an engine is 5 KB): a longer one is not parsed in the grader's
own process."""


def _side_by_side(pair: dict[str, Any], sources: dict[str, str]) -> dict[str, Any]:
    """Both files' lines, each marked when it is in a region the two share."""
    sides = []
    for side in ("a", "b"):
        key = f"previous:{pair[side]}" if pair.get(f"{side}_previous") else pair[side]
        lines = sources.get(key, "").splitlines()
        marked = {n for first, last in pair[f"{side}_lines"] for n in range(first, min(last, VIEW_LINES) + 1)}
        sides.append(
            {
                "name": pair[side] + (" (previous term)" if pair.get(f"{side}_previous") else ""),
                "lines": [
                    {"number": n, "text": _line(text), "marked": n in marked}
                    for n, text in enumerate(lines[:VIEW_LINES], 1)
                ],
                "more": max(0, len(lines) - VIEW_LINES),
            }
        )
    return {"pair": pair, "sides": sides}


def _line(text: str) -> str:
    return text if len(text) <= VIEW_CHARS else text[: VIEW_CHARS - 1] + "…"


def write(path: Path, html: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


def _also(check) -> tuple[str, ...]:
    """The other methods a misconception found in several was found in (the check's artifacts' causes)."""
    found = check.artifacts.get("causes")
    if not isinstance(found, list) or not found or found[0] != check.cause:
        return ()
    return tuple(CAUSES[c].method or "" for c in found[1:] if isinstance(c, str) and c in CAUSES)


def suspect_source(
    source: str, check_id: str, suspect: str | None = None, beside: tuple[str, ...] = (), also: tuple[str, ...] = ()
) -> Markup | None:
    """The student's own code for the method most likely at fault, highlighted, in the file's line order:
    the one the recognised cause names (suspect) if the student's file has it, with the other methods the same
    misconception was found in (also), else the methods the cause says it is written beside (a missing __radd__:
    __add__), else those the check is about. None for code over PARSED_CHARS, or that does not parse; lines over
    VIEW_CHARS are cut."""
    tree = _parsed(source)
    if tree is None:
        return None
    found = _suspects(tree, check_id, suspect, beside, also)
    if not found:
        return None
    lines = source.splitlines()
    blocks = []
    room = CARD_LINES  # a card stays under the cap: the methods' first lines, and how much is left out
    for node in sorted(found.values(), key=lambda node: node.lineno):
        if room <= 1:
            break
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        shown = [_line(line) for line in lines[start - 1 : node.end_lineno]]
        if len(shown) > room:
            shown = shown[: room - 1] + [f"# ... {len(shown) - room + 1} more lines of {node.name}"]
        room -= len(shown)
        formatter = HtmlFormatter(noclasses=True, linenos="inline", linenostart=start, style="default")
        blocks.append(highlight("\n".join(shown), PythonLexer(), formatter))
    return Markup("".join(blocks))


def _parsed(source: str) -> ast.Module | None:
    """The student's code parsed; None for code over PARSED_CHARS, or that does not parse."""
    if len(source) > PARSED_CHARS:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _suspects(
    tree: ast.Module, check_id: str, suspect: str | None, beside: tuple[str, ...], also: tuple[str, ...] = ()
) -> dict[str, ast.FunctionDef | ast.ClassDef]:
    """The first definition of each suspect function or class the code has, by name (see suspect_source)."""
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    wanted = SUSPECTS.get(check_id, [])
    if suspect and suspect in defined:
        wanted = [suspect, *also]
    elif suspect and set(beside) & defined:
        wanted = list(beside)
    found: dict[str, ast.FunctionDef | ast.ClassDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in wanted and node.name not in found:
            found[node.name] = node
    return found


REPAIR_CONTEXT = 3
"""Lines of the student's code shown above and below a repair's lines."""


def _inline_repair(check) -> dict[str, Any]:
    """A verified repair as a notebook's output shows it (`%grade`, which has the result and not the file): its
    sentence, and the lines it names as the student wrote them, or at `diff` the change."""
    repair = check.repair
    if repair is None:
        return {}
    shown = (
        diff_lines(repair) if repair.diff else [(" ", n, text) for sign, n, text in diff_lines(repair) if sign == "-"]
    )
    margin = min((len(text) - len(text.lstrip()) for _, _, text in shown if text.strip()), default=0)
    return {"repair_text": sentence(repair), "repair_lines": [(sign, n, text[margin:]) for sign, n, text in shown]}


def _cell_sources(source: str) -> dict[int, str]:
    """A notebook's code cells by their place among the code cells (from 1, as notebooks.cell_name names them), or
    none when source is no notebook."""
    from grader import notebooks
    from grader.errors import NotebookError

    try:
        nb = notebooks.read(Path("notebook.ipynb"), source.encode("utf-8"))
    except (NotebookError, UnicodeError):
        return {}
    return {place: nb.cells[index].source for place, (index, _) in enumerate(notebooks.code_cells(nb), 1)}


def _repair_view(check, source: str | None, cells: dict[int, str] | None = None) -> dict[str, Any]:
    """A verified repair on a card: its sentence, the student's code around its lines with those lines marked
    (of a notebook, the lines of the repair's cell, from cells), and at `diff` the change. Nothing when the source
    is not the one the repair was found in."""
    repair = check.repair
    if repair is None:
        return {}
    view: dict[str, Any] = {"repair_text": sentence(repair), "repair_diff": diff_lines(repair) if repair.diff else []}
    if repair.cell is not None:
        source = (cells or {}).get(repair.cell)
        view["repair_cell"] = cell_name(repair.cell)
        view["repair_cell_starts"] = next((line for line in (source or "").splitlines() if line.strip()), "")[
            :VIEW_CHARS
        ]
    lines = source.splitlines() if source else []
    marked = [p.line + k for p in repair.changes for k in range(max(p.before.count("\n") + 1, 1))]
    matches = all(
        lines[p.line - 1 : p.line - 1 + p.before.count("\n") + 1] == p.before.split("\n")
        for p in repair.changes
        if p.before
    )
    if lines and matches and max(marked) <= len(lines) + 1:
        start = max(min(marked) - REPAIR_CONTEXT, 1)
        end = min(max(marked) + REPAIR_CONTEXT, len(lines))
        view["repair_html"] = _marked_code(lines, start, end, set(marked))
    return view


def _marked_code(lines: list[str], start: int, end: int, marked: set[int]) -> Markup:
    """The student's lines start..end, highlighted one by one and numbered, the marked ones marked: a code box
    (pre.code) that scrolls on a phone instead of wrapping."""
    formatter = HtmlFormatter(noclasses=True, nowrap=True, style="default")
    shown = []
    for number in range(start, end + 1):
        code = highlight(_line(lines[number - 1]), PythonLexer(), formatter).rstrip("\n")
        row = Markup('<span class="lineno">{:>4} </span>').format(number) + Markup(code)
        shown.append(Markup('<mark class="repair-line">{}</mark>').format(row) if number in marked else row)
    return Markup('<pre class="code repair-code">') + Markup("\n").join(shown) + Markup("</pre>")
