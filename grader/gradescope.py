"""Gradescope's side of an exported autograder: grade /autograder/submission into
/autograder/results/results.json. `run_autograder` calls this module."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader import spec
from grader.batch.outputs import atomic_write, gradescope
from grader.grading import TESTS_NAME, Options, grade
from grader.sandbox.isolation import IsolationError, require


def find_submission(folder: Path) -> Path | None:
    """micrograd_mine.py, else the only notebook, else the only .py file that is not a test file."""
    if (folder / "micrograd_mine.py").is_file():
        return folder / "micrograd_mine.py"
    for pattern in ("*.ipynb", "*.py"):
        found = [p for p in sorted(folder.rglob(pattern)) if not p.name.startswith("test_")
                 and ".ipynb_checkpoints" not in p.parts]
        if len(found) == 1:
            return found[0]
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/autograder"))
    parser.add_argument("--assignment", required=True)
    args = parser.parse_args(argv)
    task = spec.load(args.assignment)
    submission = find_submission(args.root / "submission")
    out = args.root / "results" / "results.json"
    try:
        iso = require("gradescope", private=(args.root / "source", task.folder))
    except IsolationError as exc:
        atomic_write(out, json.dumps({"score": 0.0, "execution_time": 0.0, "tests": [],
                                      "output": "The autograder cannot run your code safely on this machine (a "
                                                "problem of the autograder's set-up, not of your work: tell your "
                                                f"instructor).\n\n{exc}"}, indent=2))
        print(f"grader: {exc}", file=sys.stderr)
        return IsolationError.exit_code
    if submission is None:
        data = {"score": 0.0, "execution_time": 0.0, "tests": [],
                "output": "No submission found: upload micrograd_mine.py (and test_micrograd.py), or one notebook."}
    else:
        tests = submission.parent / TESTS_NAME
        result = grade(submission, task, Options(tests=tests if tests.is_file() else None, isolation=iso))
        data = gradescope(result.to_dict())
    atomic_write(out, json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
