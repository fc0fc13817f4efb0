"""A batch's class insight: the misconceptions counted and the pairs worth a look, from the class's rows.

The similarity pass needs each student's code, which a batch's own folders do not keep: so the code
of every student (a notebook's code cells) is written to WORK_FILE beside summary.json, with the
answers their results recorded, and a later term's batch reads it back with `--previous DIR`. The
starter kit's code is never a match, nor is the lesson's own code given with `--base FILE`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat

from grader.errors import UsageError
from grader.files import MODULE_FILE, NOTEBOOK_FILE, template_files
from grader.insight.misconceptions import tally
from grader.insight.similarity import Work, answers, similar
from grader.notebooks import code_cells

WORK_FILE = "work.json"
"""Each student's code and answers, for --previous in a later term (readable by its owner only)."""


def code_of(name: str, source: bytes) -> str:
    """The code of a student's file: a notebook's code cells, one after the other, or the file's text."""
    text = source.decode("utf-8", "replace")
    if not name.endswith(".ipynb"):
        return text
    try:
        return "\n\n".join(cell for _, cell in code_cells(nbformat.reads(text, as_version=4)))
    except Exception:  # noqa: BLE001 (nbformat raises many kinds): a notebook it cannot read has no code to compare
        return ""


def starter_code() -> tuple[str, ...]:
    """The starter kit's code: its module, and its notebook's code cells."""
    kit = template_files()
    return kit[MODULE_FILE], code_of(NOTEBOOK_FILE, kit[NOTEBOOK_FILE].encode())


def previous_works(folder: Path) -> list[Work]:
    """An earlier term's students, from its WORK_FILE (UsageError when there is none or it is not one)."""
    try:
        data = json.loads((folder / WORK_FILE).read_text(encoding="utf-8"))
        students = data["students"]
        return [
            Work(
                str(s["student"]),
                str(s["source"]),
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
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--previous {folder}: {WORK_FILE} is not one a batch wrote ({exc})") from None


def class_insight(
    students: list[tuple[str, Any, str]], previous: Path | None = None, base: str | None = None
) -> tuple[dict[str, Any], dict[str, str], str]:
    """(summary.json's insight, every compared student's code by key for the side-by-side view, WORK_FILE's
    text) from (student, result, code) of each student. A previous term's student's key is 'previous:<id>'."""
    works = []
    for student, result, code in students:
        wrong, right = answers(result) if result.status == "graded" else (frozenset(), frozenset())
        works.append(Work(student, code, wrong, right))
    earlier = previous_works(previous) if previous else []
    data = tally([(s, r) for s, r, _ in students])
    data["similarity"] = similar(works + earlier, starter_code() + ((base,) if base else ()))
    data["similarity"] |= {"previous": len(earlier), "base": base is not None}
    sources = {w.student: w.source for w in works} | {f"previous:{w.student}": w.source for w in earlier}
    work = {
        "schema": 1,
        "students": [
            {"student": w.student, "source": w.source, "wrong": sorted(w.wrong), "right": sorted(w.right)}
            for w in works
        ],
    }
    return data, sources, json.dumps(work)
