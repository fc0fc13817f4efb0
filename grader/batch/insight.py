"""A batch's class insight: the misconceptions counted and the pairs worth a look, from the class's rows.

The similarity pass needs each student's code, which a batch's own folders do not keep: so the code
of every student (a notebook's code cells) is written to WORK_FILE beside summary.json, with the
answers their results recorded, and a later term's batch reads it back with `--previous DIR`. The
starter kit's code is never a match, nor is the lesson's own code given with `--base FILE`.

Every pass here runs in the instructor's own process over what students wrote, after the gradebook
is written (grader/batch/outputs.py): each is bounded before it starts (a notebook's code is read
from its JSON, no more than MAX_CHARS of it, not validated cell by cell), and each runs in a guard,
so a pass that fails costs its own section of summary.json and of the class page, which say so
(`failed_passes`), never the gradebook nor the other sections.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from grader.checks.suite import SUITE_CHECKS
from grader.errors import UsageError
from grader.files import MODULE_FILE, NOTEBOOK_FILE, WORK_FILE, template_files
from grader.insight.fingerprints import MAX_CHARS
from grader.insight.misconceptions import tally
from grader.insight.similarity import Work, answers, similar
from grader.text import failure

"""Each student's code and answers, for --previous in a later term (readable by its owner only)."""


KEPT_CHARS = MAX_CHARS + 1
"""The most of a student's code a batch keeps: one character more than the similarity pass compares, so that
code too long to compare is still known to be (and no more of it fills memory, work.json or the class page)."""


def code_of(name: str, source: bytes) -> str:
    """The code of a student's file: a notebook's code cells, one after the other, or the file's text; at most
    KEPT_CHARS of it. Never raises: a notebook that cannot be read has no code to compare."""
    text = source.decode("utf-8", "replace")
    if not name.endswith(".ipynb"):
        return text[:KEPT_CHARS]
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError):
        return ""
    cells, size = [], 0
    for cell in _cells(notebook):
        if not isinstance(cell, dict):
            continue
        code = cell.get("source", cell.get("input", ""))
        code = "".join(c for c in code if isinstance(c, str)) if isinstance(code, list) else code
        if cell.get("cell_type") == "code" and isinstance(code, str) and code.strip():
            cells.append(code)
            size += len(code) + 2
            if size > KEPT_CHARS:
                break
    return "\n\n".join(cells)[:KEPT_CHARS]


def _cells(notebook: Any) -> list:
    """A notebook's cells as its JSON holds them: nbformat 4's `cells`, or every worksheet's of nbformat 3 (read
    from the JSON, not through nbformat, whose validation takes seconds on a notebook of 100,000 cells)."""
    if not isinstance(notebook, dict):
        return []
    cells = notebook.get("cells")
    if isinstance(cells, list):
        return cells
    sheets = notebook.get("worksheets")
    if not isinstance(sheets, list):
        return []
    return [
        c
        for sheet in sheets
        if isinstance(sheet, dict) and isinstance(sheet.get("cells"), list)
        for c in sheet["cells"]
    ]


def starter_code() -> tuple[str, ...]:
    """The starter kit's code: its module, and its notebook's code cells."""
    kit = template_files()
    return kit[MODULE_FILE], code_of(NOTEBOOK_FILE, kit[NOTEBOOK_FILE].encode())


@functools.cache
def _kit() -> frozenset[str]:
    return frozenset(_plain(code) for code in starter_code())


def _plain(code: str) -> str:
    """Code with its line ends and the blanks at each line's end set aside (what an editor's saving can change)."""
    return "\n".join(line.rstrip() for line in code.replace("\r\n", "\n").split("\n")).strip()


def unchanged_kit(code: str) -> bool:
    """Is this code (code_of's: a module, or a notebook's code cells) the starter kit's, as handed out?"""
    return bool(code.strip()) and len(code) < KEPT_CHARS and _plain(code) in _kit()


def previous_works(folder: Path) -> list[Work]:
    """An earlier term's students, from its WORK_FILE (UsageError when there is none or it is not one)."""
    try:
        data = json.loads((folder / WORK_FILE).read_text(encoding="utf-8"))
        students = data["students"]
        return [
            Work(
                str(s["student"]),
                str(s["source"])[:KEPT_CHARS],
                frozenset(map(str, s["wrong"])),
                frozenset(map(str, s["right"])),
                previous=True,
            )
            for s in students
        ]
    except OSError as exc:
        raise UsageError(
            f"--previous {folder}: no {WORK_FILE} there ({exc.strerror}); give the --out folder of an "
            "earlier `grader batch`"
        ) from None
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise UsageError(f"--previous {folder}: {WORK_FILE} is not one a batch wrote ({exc})") from None


def class_insight(
    students: list[tuple[str, Any, str]],
    previous: Path | None = None,
    base: str | None = None,
    uncounted: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], dict[str, str], str]:
    """(summary.json's insight, every compared student's code by key for the side-by-side view, WORK_FILE's
    text) from (student, result, code) of each student who handed something in. A previous term's student's key
    is 'previous:<id>'. The students `uncounted` (the starter kit handed in unchanged) are compared, but their
    failures are no misconception; nor is a failure of the checks on the students' own tests. Each pass runs in
    a guard: one that fails leaves its section empty and says why in `failed_passes`."""
    works = []
    for student, result, code in students:
        try:
            wrong, right = answers(result) if result.status == "graded" else (frozenset(), frozenset())
        except Exception:
            wrong, right = frozenset(), frozenset()
        works.append(Work(student, code, wrong, right))
    failed: dict[str, str] = {}
    try:
        data = tally([(s, r) for s, r, _ in students if s not in uncounted], apart=SUITE_CHECKS)
    except Exception as exc:
        data = {"misconceptions": [], "unexplained": [], "advisory": []}
        failed["misconceptions"] = _failed("counting the misconceptions", exc)
    earlier: list[Work] = []
    try:
        earlier = previous_works(previous) if previous else []
        data["similarity"] = similar(works + earlier, starter_code() + ((base,) if base else ()))
        data["similarity"] |= {"previous": len(earlier), "base": base is not None}
    except Exception as exc:
        data["similarity"] = None
        failed["similarity"] = _failed("the similarity pass", exc)
    data["failed_passes"] = failed
    sources = {w.student: w.source for w in works} | {f"previous:{w.student}": w.source for w in earlier}
    work = {
        "schema": 1,
        "students": [
            {"student": w.student, "source": w.source, "wrong": sorted(w.wrong), "right": sorted(w.right)}
            for w in works
        ],
    }
    return data, sources, json.dumps(work)


def _failed(what: str, exc: BaseException) -> str:
    return (
        f"{what} could not finish ({failure(exc)}), so this section is empty; every grade is in the gradebook, "
        "and the rest of the class page stands"
    )
