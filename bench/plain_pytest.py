"""The floor the grader's suite runs are measured against: one plain pytest run of a student's
suite in a warm process (pytest and the student's module already imported), the best of a few."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

WARM_RUN = """
import sys, time
sys.path.insert(0, ".")
import pytest
import micrograd_mine
times = []
for _ in range({repeats}):
    sys.modules.pop("test_micrograd", None)
    t = time.perf_counter()
    pytest.main(["test_micrograd.py", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--tb=no"])
    times.append(time.perf_counter() - t)
print("SUITE", min(times))
"""


def warm_suite_seconds(folder: Path, repeats: int = 3) -> float:
    """Seconds of the fastest of `repeats` runs of folder's test_micrograd.py on its micrograd_mine.py."""
    run = subprocess.run(
        [sys.executable, "-c", WARM_RUN.format(repeats=repeats)],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    return float(run.stdout.split("SUITE")[-1])
