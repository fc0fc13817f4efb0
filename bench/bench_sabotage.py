"""Benchmark: the sabotage detector's time against its floor.

The detector runs the student's suite once per engine: the student's own, each wheat and
each mutant of this grading's plan. The floor is that many times the suite's own run time
in a warm process (pytest and the engine already imported). The suite here is a diligent
student's suite plus a test that trains for about 0.4 s, so that one run takes about half
a second and the detector's own cost per run shows against it.

    python bench/bench_sabotage.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader import catalog, lanes
from grader.checks.suite import SUITE_CHECKS
from grader.grading import Options, grade

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plain_pytest import warm_suite_seconds

ROOT = Path(__file__).resolve().parent.parent
SLOW_TEST = """

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
"""


def measure(folder: Path, sandboxes: int) -> tuple[float, int, object]:
    """Seconds the suite's runs took (the sandboxes' start left out), how many, and the result."""
    runs: list[float] = []
    original = lanes.SuiteLane._run

    def timed(self, *args):
        started = time.perf_counter()
        try:
            return original(self, *args)
        finally:
            runs.append(time.perf_counter() - started)

    lanes.SuiteLane._run = timed
    try:
        task = catalog.load("micrograd")
        task = task.without([c.id for c in task.checks if c.id not in SUITE_CHECKS])
        started = time.perf_counter()
        result = grade(folder / "micrograd_mine.py", task, Options(suite_sandboxes=sandboxes))
        wall = time.perf_counter() - started
    finally:
        lanes.SuiteLane._run = original
    return sum(runs) if sandboxes == 1 else wall, len(runs), result


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copy(ROOT / "tests" / "zoo" / "correct" / "list_iterative.py", folder / "micrograd_mine.py")
        suite = (ROOT / "tests" / "fixtures" / "suites" / "good.py").read_text() + SLOW_TEST
        (folder / "test_micrograd.py").write_text(suite)
        one_run = warm_suite_seconds(folder, repeats=3)
        sequential, runs, result = measure(folder, 1)
        wall_two, _, _ = measure(folder, 2)
    floor = runs * one_run
    print(f"one run of the suite in a warm process: {one_run:.3f} s")
    print(f"runs: {runs} (the student's engine, the wheats and one mutant per operator)")
    print(f"floor: {floor:.2f} s   the runs one after another: {sequential:.2f} s   ratio {sequential / floor:.2f}")
    print(f"the three checks on two sandboxes at once (their start included): {wall_two:.2f} s")
    print(f"score: {result.score:g}/{result.max_score:g}")


if __name__ == "__main__":
    main()
