"""The student's file names, once: the engine's module, its tests, the starter kit.

Code inside the sandbox cannot import this package; it takes the same names from
grader/sandbox/inside/names.py, which this module re-exports, so each is written once.
"""

from __future__ import annotations

from importlib import resources

from grader.sandbox.inside.names import MODULE, MODULE_FILE, TESTS_FILE

NOTEBOOK_FILE = "micrograd.ipynb"
KIT = (MODULE_FILE, TESTS_FILE, NOTEBOOK_FILE, "README.md")
"""The starter kit `grader template` copies (student_template/)."""

__all__ = ["KIT", "MODULE", "MODULE_FILE", "NOTEBOOK_FILE", "TESTS_FILE", "template_files"]


def template_files() -> dict[str, str]:
    kit = resources.files("student_template")
    return {name: (kit / name).read_text(encoding="utf-8") for name in KIT}
