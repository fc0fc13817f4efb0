"""Does every `grader` command shown in the docs run as shown?

Commands are read from the ```bash blocks of README.md, docs/*.md and the student kit's
README, and run in a scratch folder holding a copy of examples/ (the student kit's in a
folder made by `grader template`). Exit code 1 means a graded submission failed a
check, which the examples are meant to show; anything else, or a traceback, fails.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "student_template" / "README.md"]


def commands(path: Path) -> list[str]:
    found = []
    for block in re.findall(r"```bash\n(.*?)```", path.read_text(), re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("grader "):
                found.append(line)
    return found


CASES = list(dict.fromkeys((doc, cmd) for doc in DOCS for cmd in commands(doc)))


def test_docs_show_every_command():
    """Do the docs show each of the grader's commands at least once?"""
    shown = " ".join(cmd for _, cmd in CASES)
    for command in ("check", "batch", "template", "selftest", "export gradescope"):
        assert f"grader {command}" in shown


def _selftest_args(argv: list[str]) -> list[str]:
    """A documented `grader selftest`'s arguments, without `--assignment` naming the default (the same run)."""
    from grader.cli import ASSIGNMENT

    default = ASSIGNMENT[1]["default"]
    pairs = [argv[i : i + 2] for i in range(2, len(argv), 2)]
    return ["selftest", *(a for pair in pairs if pair != ["--assignment", default] for a in pair)]


@pytest.mark.parametrize("doc, command", CASES, ids=[f"{d.name}: {c}" for d, c in CASES])
def test_command_runs_as_documented(doc, command, tmp_path, grader_once):
    """Does this documented command run, without a traceback, from where its reader would run it?"""
    argv = shlex.split(command)
    if argv[1] == "selftest":  # its output depends on its arguments alone: one run serves every test reading it
        returncode, stdout, stderr = grader_once(*_selftest_args(argv))
        assert returncode in (0, 1), stdout[-2000:] + stderr[-2000:]
        assert "Traceback" not in stderr, stderr[-3000:]
        return
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    cwd = tmp_path
    if doc.parent.name == "student_template":
        subprocess.run(
            [sys.executable, "-m", "grader.cli", "template", "kit"], cwd=tmp_path, check=True, capture_output=True
        )
        cwd = tmp_path / "kit"
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert run.returncode in (0, 1), run.stdout[-2000:] + run.stderr[-2000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]


def test_the_result_format_page_names_every_check_and_error_kind():
    """Does docs/results.md document every check id the grader registers, and every error kind?"""
    from grader.checks import REGISTRY
    from grader.result import ERROR_KINDS

    page = (ROOT / "docs" / "results.md").read_text()
    missing = [f"`{name}`" for name in [*REGISTRY, *ERROR_KINDS] if f"`{name}`" not in page]
    assert not missing, f"docs/results.md does not document {', '.join(missing)}"


def test_the_docs_name_only_the_projects_own_files():
    """Do the docs and assignments point only at files of this project that exist, and at nothing
    outside it?"""
    for path in [*DOCS, *(ROOT / "assignments").glob("*/assignment.toml")]:
        for name in re.findall(r"`((?:docs|bench|grader|assignments)/[\w./-]+\.(?:md|py|toml))`", path.read_text()):
            assert (ROOT / name).exists(), f"{path.name} names {name}, which does not exist"
        assert "../" not in path.read_text(), f"{path.name} names a file outside the project"


def test_the_readme_is_a_front_page():
    """README.md is a front page, not a manual: it starts with the two commands that work on a fresh machine (set up
    and grade the examples; set up and run the tests, the command .ci/run runs), then says what the grader is, the
    student's three steps and the instructor's three steps, all within 40 lines, and links every page of docs/,
    which holds the rest."""
    text = (ROOT / "README.md").read_text()
    lines = text.splitlines()
    first = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first is not None and text[: first.start()].strip() == "# micrograd-grader", text[: first.start()]
    assert "grader batch examples" in first[1] and first[1].rstrip().endswith("python -m pytest"), first[1]
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == "python -m pytest" and ci in first[1]
    for who in ("## Students, in three steps", "## Instructors, in three steps"):
        at = lines.index(who)
        steps = [line for line in lines[at:] if re.match(r"\d\. ", line)][:3]
        assert at < 40 and [s[:3] for s in steps] == ["1. ", "2. ", "3. "], (who, at, steps)
    assert len(lines) <= 80, len(lines)
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"`docs/{page.name}`" in text, f"README.md does not link docs/{page.name}"
