"""Does `grader selftest` prove each sabotage is caught by its own check, and can it fail?"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from grader import spec
from grader.checks.suite import SUITE_CHECKS
from grader.commands.selftest import _grade, problems
from grader.sabotage import catalogue


def test_selftest_passes_and_prints_the_matrix():
    """Does selftest exit 0 with a row per engine, each sabotage marked failing in its named column?"""
    run = subprocess.run([sys.executable, "-m", "grader.cli", "selftest"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {line.split()[0]: line for line in run.stdout.splitlines() if line and line.split()[0] in
            {e.id for e in catalogue().sabotages} | {"reference"}}
    assert len(rows) == len(catalogue().sabotages) + 1
    assert "[X]" not in rows["reference"] and "X" not in rows["reference"]
    for sabotage in catalogue().sabotages:
        assert "[X]" in rows[sabotage.id] or "[E]" in rows[sabotage.id], rows[sabotage.id]
    assert "OK: the reference passes" in run.stdout


def test_selftest_flags_a_sabotage_that_is_really_correct(tmp_path: Path):
    """Would selftest notice a 'sabotage' that is in fact a correct engine?"""
    task = spec.load("micrograd").without(SUITE_CHECKS)
    wheat = catalogue().wheats[0]
    fake = replace(wheat, id="not_really_broken", check="add")
    results = [_grade(wheat, tmp_path, task), _grade(replace(fake, id="fake"), tmp_path, task)]
    found = problems([wheat, fake], results)
    assert any("not caught by add" in p for p in found)
    assert any("equivalent to a correct engine" in p for p in found)
