"""Benchmark: the sabotage detector's time against its floor.

The detector runs the student's suite once per engine: the student's, each wheat and each
sabotage. The floor is that many times the suite's own run time in a warm process (pytest
and the engine already imported). The suite here is a diligent student's suite plus a
test that trains for about 0.4 s, so that one run takes about half a second.

    python bench/bench_sabotage.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader import spec
from grader.grading import grade
from grader.checks.suite import SUITE_CHECKS
from grader.sabotage import catalogue

ROOT = Path(__file__).resolve().parent.parent
SLOW_TEST = '''

def test_long_training():
    import time
    random.seed(1)
    n = Neuron(2)
    started = time.perf_counter()
    while time.perf_counter() - started < 0.4:
        loss = sum((n(x) - y) ** 2 for x, y in zip([[1.0, -1.0], [2.0, 0.5]], [1.0, -1.0]))
        for p in n.parameters():
            p.grad = 0.0
        loss.backward()
        for p in n.parameters():
            p.data += -0.01 * p.grad
'''
WARM_RUN = '''
import sys, time
sys.path.insert(0, ".")
import pytest
import micrograd_mine
times = []
for _ in range(3):
    sys.modules.pop("test_micrograd", None)
    t = time.perf_counter()
    pytest.main(["test_micrograd.py", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--tb=no"])
    times.append(time.perf_counter() - t)
print("SUITE", min(times))
'''


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copy(ROOT / "tests" / "zoo" / "correct" / "list_iterative.py", folder / "micrograd_mine.py")
        suite = (ROOT / "tests" / "fixtures" / "suites" / "good.py").read_text() + SLOW_TEST
        (folder / "test_micrograd.py").write_text(suite)
        warm = subprocess.run([sys.executable, "-c", WARM_RUN], cwd=folder, capture_output=True, text=True,
                              env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"})
        one_run = float(warm.stdout.split("SUITE")[-1])
        cat = catalogue()
        runs = 1 + len(cat.wheats) + len(cat.sabotages)
        task = spec.load("micrograd")
        task = task.without([c.id for c in task.checks if c.id not in SUITE_CHECKS])
        started = time.perf_counter()
        result = grade(folder / "micrograd_mine.py", task)
        total = time.perf_counter() - started
        suite_time = sum(c.duration_s for c in result.checks)
    floor = runs * one_run
    print(f"one run of the suite in a warm process: {one_run:.3f} s")
    print(f"runs: {runs} (1 student + {len(cat.wheats)} wheats + {len(cat.sabotages)} sabotages)")
    print(f"floor: {floor:.2f} s   actual (the three checks): {suite_time:.2f} s   "
          f"overhead: {100 * (suite_time / floor - 1):.0f}%")
    print(f"whole submission with only these checks (worker start and import included): {total:.2f} s")
    print(f"score: {result.score:g}/{result.max_score:g}")


if __name__ == "__main__":
    main()
