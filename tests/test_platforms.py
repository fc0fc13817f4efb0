"""The route off Linux, checked as far as a machine without a Docker engine can: the Dockerfile copies only
paths the project has, installs every package the grader is made of, points the sandbox at the Python it
makes, and grades in uid mode; the platforms page and the README say which platform grades with which
isolation; and a sandbox warning is one short line pointing at that page."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

from conftest import ROOT

from grader.sandbox import cgroups

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

DOCKERFILE = ROOT / "Dockerfile"
PAGE = "docs/platforms.md"


def instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) of each line of the Dockerfile, continuations joined."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def test_the_dockerfile_copies_what_exists_and_installs_the_whole_grader():
    steps = instructions()
    base = next(rest for word, rest in steps if word == "FROM")
    version = re.fullmatch(r"python:3\.(\d+)-slim-(bookworm|trixie)", base)
    assert version and int(version[1]) >= 10, base  # Debian's, with the Python the grader needs (3.10 or later)
    copied = []
    for word, rest in steps:
        if word == "COPY":
            *sources, target = shlex.split(rest)
            assert all((ROOT / s).exists() for s in sources), sources
            copied += sources
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert packages <= set(copied) and {"pyproject.toml", "README.md"} <= set(copied), copied
    ignored = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if not line.startswith("#")]
    assert not set(copied) & set(ignored), ignored


def test_the_dockerfile_grades_in_uid_mode_as_root_with_its_own_sandbox_python():
    steps = instructions()
    env = " ".join(rest for word, rest in steps if word == "ENV")
    runs = " ".join(rest for word, rest in steps if word == "RUN")
    assert "GRADER_NO_BWRAP=1" in env.split()
    sandbox = re.search(r"GRADER_SANDBOX_PYTHON=(\S+)", env)[1]
    assert sandbox.endswith("/bin/python") and f"venv {sandbox[: -len('/bin/python')]} " in runs
    assert "install --quiet pytest ipython" in runs  # what student code runs with: pytest, IPython for notebooks
    grader_venv = re.search(r"venv (/opt/grader) ", runs)[1]
    assert f"chmod -R go-rwx {grader_venv}" in runs  # the grader, the reference and the wheats: root's only
    assert not any(word == "USER" for word, _ in steps)  # root: each sandbox then gets a uid of its own
    entry = next(rest for word, rest in steps if word == "ENTRYPOINT")
    assert (
        entry == '["grader"]' and "grader" in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    )


def test_the_docs_say_which_platform_grades_with_which_isolation():
    page = (ROOT / PAGE).read_text()
    readme = (ROOT / "README.md").read_text()
    for platform in ("Linux with bubblewrap", "Linux as root without bubblewrap", "Docker", "macOS", "Windows"):
        assert platform in page and platform in readme, platform
    assert "docker build -t micrograd-grader ." in page and PAGE in readme
    assert "How this route was checked" in page
    section = page.split("## What each level stops", 1)[1].split("\n## ", 1)[0]
    header, _, *rows = [line for line in section.splitlines() if line.startswith("|")]
    for level in ("bubblewrap", "uid mode, with namespaces", "uid mode without namespaces", "limits only"):
        assert level in header, level
    assert len(rows) >= 5 and all(row.count("|") == header.count("|") for row in rows), rows
    given = next(row for row in rows if "--roster" in row)  # every path a command is given is said to be checked
    assert all(option in given for option in ("--groups", "--base", "--previous", "--map")), given
    assert "submission_metadata.yml" in section and "reports/.history/" in section  # the grader's own reading


def test_a_sandbox_warning_is_one_short_line_pointing_at_the_platforms_page():
    """The warning a student's grader check prints without bubblewrap (here forced off, in a process of its own),
    and the note on what bounds a sandbox: one line each, short, naming the page that explains them."""
    done = subprocess.run(
        [sys.executable, "-c", "from grader.sandbox import isolation; isolation.require('check')"],
        capture_output=True,
        text=True,
        env={**os.environ, "GRADER_NO_BWRAP": "1"},
        timeout=120,
    )
    said = done.stderr.strip().splitlines()
    assert (
        done.returncode == 0 and len(said) == 1 and said[0].startswith("grader: warning: GRADER_NO_BWRAP is set: ")
    ), said
    assert len(said[0]) <= 110 and said[0].endswith(f"see {PAGE}"), said[0]
    sentence, grouped = cgroups.bounds()
    assert "\n" not in sentence and len(sentence) <= 100 and (grouped or sentence.endswith(f"see {PAGE}")), sentence
    assert (ROOT / PAGE).is_file()
