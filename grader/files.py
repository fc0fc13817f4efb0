"""The student's file names, once: the engine's module, its tests, the starter kit; and the names of
the files written for each graded student.

Code inside the sandbox cannot import this package; it takes the same names from
grader/sandbox/inside/names.py, which this module re-exports, so each is written once.
"""

from __future__ import annotations

from importlib import resources

from grader.sandbox.inside.names import MODULE, MODULE_FILE, TESTS_FILE

NOTEBOOK_FILE = "micrograd.ipynb"
KIT = (MODULE_FILE, TESTS_FILE, NOTEBOOK_FILE, "README.md")
"""The starter kit `grader template` copies (student_template/)."""

RESULT_FILE = "result.json"
"""The result in the grader's own contract (docs/results.md)."""
GRADESCOPE_FILE = "gradescope.json"
"""A batch's copy of the result as Gradescope reads it (named apart from result.json, which it is not)."""
GRADESCOPE_RESULTS = "results.json"
"""The name Gradescope requires: the autograder writes /autograder/results/results.json."""
REPORT_FILE = "report.html"
"""The student's HTML report."""
STUDENT_OUTPUTS = (RESULT_FILE, GRADESCOPE_FILE, REPORT_FILE)
"""What a batch writes in each student's folder."""

__all__ = [
    "GRADESCOPE_FILE",
    "GRADESCOPE_RESULTS",
    "KIT",
    "MODULE",
    "MODULE_FILE",
    "NOTEBOOK_FILE",
    "REPORT_FILE",
    "RESULT_FILE",
    "STUDENT_OUTPUTS",
    "TESTS_FILE",
    "template_files",
]


def template_files() -> dict[str, str]:
    kit = resources.files("student_template")
    return {name: (kit / name).read_text(encoding="utf-8") for name in KIT}
