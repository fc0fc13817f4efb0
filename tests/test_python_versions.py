"""Does the grader still run on Python 3.10, the Python of Gradescope's default image (Ubuntu 22.04)?

A static check (vermin) reads every module the package installs and fails the moment one needs a
later Python: a 3.11-only module (tomllib without its fallback), function, argument or syntax. A
real install and grading under 3.10 is what it stands in for; issue 21's report says how that went.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT

from grader.spec import tomllib

pytest.importorskip("vermin")

MINIMUM = "3.10"
PACKAGE = ["grader", "reference", "student_template", "assignments"]
"""What `pip install` puts on the machine (pyproject.toml's packages)."""


def vermin(*paths: str) -> subprocess.CompletedProcess:
    """vermin's verdict on paths: exit 0 when none needs a Python later than MINIMUM."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from vermin import main; sys.exit(main())",
            "--no-tips",
            "--violations",
            "--eval-annotations",
            "--processes=1",
            f"-t={MINIMUM}-",
            *paths,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_no_module_needs_a_python_later_than_3_10():
    """Does every module the package installs run on Python 3.10, as vermin reads it?"""
    run = vermin(*PACKAGE)
    assert run.returncode == 0 and f"Minimum required versions: {MINIMUM}" in run.stdout, run.stdout + run.stderr


def test_the_check_fails_on_a_3_11_module(tmp_path):
    """Would the check above fail on code that needs 3.11 (tomllib imported unconditionally)?"""
    (tmp_path / "new.py").write_text("import tomllib\n")
    run = vermin(str(tmp_path / "new.py"))
    assert run.returncode != 0 and "'tomllib' module requires !2, 3.11" in run.stdout


def test_the_package_says_it_installs_on_3_10():
    """Does pyproject.toml accept Python 3.10, with tomli where tomllib is missing?"""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == f">={MINIMUM}"
    assert "tomli>=1.1; python_version < '3.11'" in project["dependencies"]
    assert any(d.startswith("vermin") for d in project["optional-dependencies"]["test"])
