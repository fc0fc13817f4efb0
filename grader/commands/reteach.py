"""`grader export reteach --from DIR --out FILE.ipynb`: the reteach notebook of a graded class (a batch's
--out folder), one section per misconception, most common first (grader/insight/reteach.py)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import nbformat

from grader.classfiles import ClassSummary
from grader.errors import BadResult, ExitCode, UsageError
from grader.fileio import atomic_write
from grader.files import SUMMARY_FILE
from grader.insight.reteach import notebook
from grader.repair.lesson import on_lesson
from grader.text import counted


def lesson_engine() -> str:
    """The reference engine and its Neuron, Layer and MLP, as one cell's code."""
    kit = resources.files("reference")
    engine = (kit / "engine.py").read_text(encoding="utf-8")
    nn = (
        (kit / "nn.py")
        .read_text(encoding="utf-8")
        .replace("from reference.engine import Value\n", "")
        .replace("from __future__ import annotations\n", "")
    )
    return engine + "\n\n" + nn


def main(*, out: Path, graded: Path | None) -> int:
    if graded is None:
        raise UsageError("grader export reteach needs --from DIR, the --out folder of a `grader batch`")
    path = graded / SUMMARY_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(
            f"--from {graded}: no {SUMMARY_FILE} there ({exc.strerror}); give the --out folder of a `grader batch`"
        ) from None
    except ValueError as exc:
        raise UsageError(f"--from {graded}: {SUMMARY_FILE} is not JSON ({exc})") from None
    try:
        summary = ClassSummary.from_dict(data)
    except (BadResult, RecursionError) as exc:
        raise UsageError(f"--from {graded}: its {SUMMARY_FILE} is not one a batch wrote ({exc})") from None
    if summary.misconceptions is None:
        raise UsageError(
            f"--from {graded}: its {SUMMARY_FILE} counts no misconceptions; grade the class again "
            "with this version of `grader batch`"
        )
    engine = lesson_engine()
    nb = notebook(summary, engine, lambda cause: on_lesson(cause, engine))
    atomic_write(out, nbformat.writes(nb) + "\n")
    print(f"Reteach notebook ({counted(len(summary.misconceptions), 'misconception')}) written to {out}")
    return ExitCode.OK
