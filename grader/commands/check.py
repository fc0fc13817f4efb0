"""`grader check`: grade one submission, print the rubric, write the JSON and the HTML report.

A TA may run this in a student's folder, so neither the submission nor the outputs go
through a link the student left there: the submission and the tests are read through none
(grader/fileio.py), and each output is written atomically, refused if it is a link, and
the default `reports/` folder, the grader's choice and not the user's, must be a real folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from grader import catalog, fileio
from grader.errors import ExitCode, UsageError
from grader.files import MODULE_FILE
from grader.grading import Options, grade
from grader.render import html
from grader.render.terminal import render
from grader.sandbox.isolation import require
from grader.text import printable


def main(*, submission: Path, assignment: str, tests: Path | None = None, json_path: Path | None = None,
         html_path: Path | None = None, public_only: bool = False) -> int:
    if not os.path.lexists(submission):
        raise UsageError(f"{submission} does not exist (run grader check from the folder holding "
                         f"{MODULE_FILE}, or give its path)")
    if tests is not None and not os.path.lexists(tests):
        raise UsageError(f"--tests {tests}: no such file")
    outputs = [(json_path, None), (html_path, None)] if html_path else \
        [(json_path, None), (Path("reports") / f"{submission.stem}.html", Path("."))]
    for path, base in outputs:
        if path is not None:
            fileio.refuse_links(path, base)  # before grading, not after
    task = catalog.load(assignment)
    iso = require("check")
    lanes = 2 if (os.cpu_count() or 1) >= 2 else 1
    result = grade(submission, task, Options(public_only=public_only, tests=tests, isolation=iso,
                                             suite_sandboxes=lanes)).redacted()
    print(render(result, task))
    if json_path:
        fileio.atomic_write(json_path, result.to_json() + "\n", mode=0o666)
    html_path, base = outputs[1]
    try:
        source = fileio.read_regular(submission).decode("utf-8", errors="replace")
    except OSError:
        source = None
    fileio.atomic_write(html_path, html.student_report(result, source, task.title or task.id), mode=0o666,
                        base=base)
    print(printable(f"Report: {html_path}"))
    return ExitCode.OK if result.passed else ExitCode.FAILED
