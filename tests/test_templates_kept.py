"""Are the report templates compiled once, not in every process that renders a report (a student's every
`grader check` paid jinja2's compile of them, tens of milliseconds, for one render)? They are kept compiled in the
grader's own cache folder, and that folder is trusted only when it is the user's alone: what it holds is loaded as
code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RENDER = """
import sys
import jinja2
from grader.render import html
from grader.result import CheckResult, Result

compiled = []
real = jinja2.Environment._compile
jinja2.Environment._compile = lambda self, source, filename: compiled.append(filename) or real(self, source, filename)
check = CheckResult("add", "Addition", "failed", 0.0, 6.0, "visible", "Each input gets `+= out.grad`.", None, {}, 0.1)
result = Result("micrograd_mine.py", "0" * 64, "micrograd", "1", "graded", None, 0.0, 6.0, 0.2, (check,))
page = html.student_report(result, "class Value:\\n    pass\\n", "micrograd")
sys.stdout.write(f"{len(compiled)}\\n{page}")
"""
"""Renders a student's report; prints how many templates jinja2 compiled in this process, then the page."""


def render(cache: Path) -> tuple[int, str]:
    run = subprocess.run(
        [sys.executable, "-c", RENDER],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    count, page = run.stdout.split("\n", 1)
    return int(count), page


def test_a_second_process_renders_from_the_templates_compiled_by_the_first(tmp_path):
    """Does the first process compile the templates it renders, and keep them, and the next one compile none and
    render the very same page?"""
    compiled, page = render(tmp_path)
    assert compiled > 0 and "Addition" in page
    assert list((tmp_path / "micrograd-grader" / "templates").iterdir())
    again, same = render(tmp_path)
    assert again == 0
    assert same == page


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only folder")
def test_a_cache_folder_that_cannot_be_written_costs_a_compile_not_the_report(tmp_path):
    """Where the cache folder cannot be written (a read-only home), is the report rendered all the same?"""
    folder = tmp_path / "micrograd-grader" / "templates"
    folder.mkdir(parents=True, mode=0o700)
    folder.chmod(0o500)
    try:
        compiled, page = render(tmp_path)
        assert compiled > 0 and "Addition" in page
    finally:
        folder.chmod(0o700)


def test_a_full_disk_costs_a_compile_not_the_report(tmp_path):
    """Where the compiled templates cannot be written (the cache folder is a file's place, so nothing can be
    made in it), is the report rendered all the same, compiled in memory?"""
    (tmp_path / "micrograd-grader").mkdir()
    (tmp_path / "micrograd-grader" / "templates").write_text("not a folder")
    compiled, page = render(tmp_path)
    assert compiled > 0 and "Addition" in page


@pytest.mark.parametrize("shared", ["writable by others", "a link"])
def test_compiled_templates_are_read_only_from_a_folder_the_user_alone_may_write(tmp_path, shared):
    """Compiled templates are code: are they read from the cache only where no other user could have put them
    there (a folder writable by others, or a link to one, is passed over, and the templates compiled afresh)?"""
    _, page = render(tmp_path)  # kept, in the user's own folder
    folder = tmp_path / "micrograd-grader" / "templates"
    if shared == "writable by others":
        folder.chmod(0o777)
    else:
        elsewhere = tmp_path / "elsewhere"
        folder.rename(elsewhere)
        folder.symlink_to(elsewhere)
    compiled, again = render(tmp_path)
    assert compiled > 0
    assert again == page
