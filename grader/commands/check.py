"""`grader check`: grade one submission, print the rubric, write the JSON."""

from __future__ import annotations

import os
from pathlib import Path

from grader import spec
from grader.errors import UsageError
from grader.grading import Options, grade
from grader.render import html
from grader.render.terminal import render
from grader.sandbox.isolation import require


def main(*, submission: Path, assignment: str, tests: Path | None = None, json_path: Path | None = None,
         html_path: Path | None = None, public_only: bool = False) -> int:
    if not submission.exists():
        raise UsageError(f"{submission} does not exist (run grader check from the folder holding "
                         f"micrograd_mine.py, or give its path)")
    if tests is not None and not tests.is_file():
        raise UsageError(f"--tests {tests}: no such file")
    task = spec.load(assignment)
    iso = require("check")
    lanes = 2 if (os.cpu_count() or 1) >= 2 else 1
    result = grade(submission, task, Options(public_only=public_only, tests=tests, isolation=iso,
                                             suite_sandboxes=lanes)).redacted()
    print(render(result, task))
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(result.to_json() + "\n", encoding="utf-8")
    html_path = html_path or Path("reports") / f"{submission.stem}.html"
    source = submission.read_text(encoding="utf-8", errors="replace") if submission.is_file() else None
    html.write(html_path, html.student_report(result.to_dict(), source, task.title or task.id))
    print(f"Report: {html_path}")
    return 0 if result.passed else 1
