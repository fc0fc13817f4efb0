"""Gradescope's side of an exported autograder: grade /autograder/submission into
/autograder/results/results.json. `run_autograder` runs it, as `python -m grader.gradescope`.

The grader runs as root here, beside the reference engine and the assignment's secret, and
the submission folder is the student's: a link in it is never followed. The walk that finds
the submission does not enter a folder link, and the files are read through no link
(grader/fileio.py), so a link to the reference or the secret is refused with a message. The walk
is bounded and does not recurse (grader/folders.py): a submission a thousand folders deep is walked
40 deep, never into a RecursionError that would leave Gradescope with no results.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from grader import catalog
from grader.errors import ExitCode, IsolationError
from grader.fileio import atomic_write
from grader.files import GRADESCOPE_RESULTS, MODULE_FILE, TESTS_FILE
from grader.folders import Walk
from grader.gradescope.results import message, results
from grader.grading import Options, grade
from grader.sandbox.trial import require_started
from grader.text import printable


def find_submission(folder: Path) -> tuple[Path | None, list[str]]:
    """micrograd_mine.py, else the only notebook, else the only .py file that is not a test file; and the
    folder links met on the way (never entered). A file that is a link is found, to be refused when read."""
    if os.path.lexists(folder / MODULE_FILE):
        return folder / MODULE_FILE, []
    files, links = [], []
    walk = Walk(folder)  # never follows a link
    for here, dirs, names, _ in walk:
        dirs[:] = [d for d in dirs if d != ".ipynb_checkpoints"]
        files += [here / n for n in names if not n.startswith("test_")]
    for link in walk.links:  # a link to a folder is named, never entered; one to a file is found, to be refused
        if link.is_dir():
            links.append(str(link.relative_to(folder)))
        elif not link.name.startswith("test_"):
            files.append(link)
    for suffix in (".ipynb", ".py"):
        found = sorted(p for p in files if p.suffix == suffix)
        if len(found) == 1:
            return found[0], links
    return None, links


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/autograder"))
    parser.add_argument("--assignment", required=True)
    args = parser.parse_args(argv)
    task = catalog.load(args.assignment)
    submission, links = find_submission(args.root / "submission")
    out = args.root / "results" / GRADESCOPE_RESULTS
    try:
        iso = require_started("gradescope", private=(args.root / "source", task.folder))
    except IsolationError as exc:
        atomic_write(
            out,
            json.dumps(
                message(
                    "The autograder cannot run your code safely on this machine (a problem "
                    "of the autograder's set-up, not of your work: tell your instructor)."
                    f"\n\n{exc}"
                ),
                indent=2,
            ),
        )
        print(f"grader: {printable(str(exc))}", file=sys.stderr)
        return exc.exit_code
    if submission is None:
        data = message(
            f"No submission found: upload {MODULE_FILE} (and {TESTS_FILE}), or one notebook."
            + "".join(
                f"\n{link} is a symbolic link to a folder, which the grader does not follow: upload "
                "the files themselves."
                for link in links
            )
        )
    else:
        tests = submission.parent / TESTS_FILE
        result = grade(submission, task, Options(tests=tests if os.path.lexists(tests) else None, isolation=iso))
        data = results(result)
    atomic_write(out, json.dumps(data, indent=2))
    return ExitCode.OK
