"""The student's file names, once: the engine's module, its tests, the starter kit; and the names of
the files written for each graded student and for a graded class (a batch's --out folder).

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
KEY_FILE = "key.txt"
"""Beside a student's outputs: what tells a rerun it may skip them (grader/batch/keys.py)."""

GRADEBOOK_FILE = "grades.csv"
"""A whole class's gradebook (grader/classfiles.py: `Gradebook`)."""
INCOMPLETE_FILE = "grades.incomplete.csv"
"""The gradebook of an interrupted batch: those graded so far. It takes grades.csv's place until a run
finishes the batch, so a gradebook named grades.csv is always a whole class's."""
SUMMARY_FILE = "summary.json"
"""Everything the class page shows, as data (grader/classfiles.py: `ClassSummary`)."""
CLASS_PAGE_FILE = "index.html"
"""The class page."""
WORK_FILE = "work.json"
"""Each student's code and answers, for a later term's similarity pass (grader/batch/insight.py)."""
OVERRIDES_FILE = "overrides.csv"
"""An instructor's overrides (grader/batch/overrides.py)."""
STUDENTS_FOLDER = "students"
"""The folder of a batch's output holding one folder per student."""

__all__ = [
    "CLASS_PAGE_FILE",
    "GRADEBOOK_FILE",
    "GRADESCOPE_FILE",
    "GRADESCOPE_RESULTS",
    "INCOMPLETE_FILE",
    "KEY_FILE",
    "KIT",
    "MODULE",
    "MODULE_FILE",
    "NOTEBOOK_FILE",
    "OVERRIDES_FILE",
    "REPORT_FILE",
    "RESULT_FILE",
    "STUDENTS_FOLDER",
    "STUDENT_OUTPUTS",
    "SUMMARY_FILE",
    "TESTS_FILE",
    "WORK_FILE",
    "template_files",
]


def template_files() -> dict[str, str]:
    kit = resources.files("student_template")
    return {name: (kit / name).read_text(encoding="utf-8") for name in KIT}
