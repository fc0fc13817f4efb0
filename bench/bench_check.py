"""Benchmark: a student's `grader check` on a full submission with a good test suite.

Prints, all measured in this one run on this machine:
- the wall time of `grader check` (median of --repeat runs, as a student types it);
- one plain `pytest` run of the same suite on the same engine, and the ratio of the two;
- a figure per phase of one grading (in-process, timed around each step): the sandboxes'
  start (the boundary's fixed cost), loading the student's code, each engine check, the
  suite on the student's own engine and on every other engine, and the closing;
- what the boundary costs per run of the suite: a run's wall time beside the suite's own
  time in a warm pytest process (the floor a fork could reach);
- the peak memory of the whole grading (every process of the job, sandboxes included) and
  of its largest single process.

    python bench/bench_check.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plain_pytest import warm_suite_seconds

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "examples" / "correct_engine.py"
GOOD_TESTS = ROOT / "tests" / "fixtures" / "suites" / "good.py"


class TreeMemory:
    """Samples the RSS of a process and all its descendants, ten times a second."""

    def __init__(self, pid: int):
        self.root = psutil.Process(pid)
        self.peak_total = self.peak_single = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                return
            sizes = []
            for proc in procs:
                try:
                    sizes.append(proc.memory_info().rss)
                except psutil.Error:
                    continue
            self.peak_total = max(self.peak_total, sum(sizes))
            self.peak_single = max(self.peak_single, max(sizes, default=0))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def timed_cli(folder: Path, repeat: int) -> tuple[list[float], float, float]:
    walls, totals, singles = [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "grader.cli", "check", "micrograd_mine.py", "--json", "r.json"],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        memory = TreeMemory(proc.pid)
        proc.wait()
        walls.append(time.perf_counter() - started)
        memory.stop()
        totals.append(memory.peak_total)
        singles.append(memory.peak_single)
    return walls, max(totals) / 2**20, max(singles) / 2**20


def plain_pytest(folder: Path, repeat: int) -> list[float]:
    walls = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_micrograd.py"],
            cwd=folder,
            capture_output=True,
        )
        walls.append(time.perf_counter() - started)
    return walls


def phases(folder: Path) -> dict:
    """One grading in this process, with every step timed."""
    from grader import catalog, grading, lanes
    from grader.grading import Options, grade
    from grader.sandbox import supervisor

    marks: dict[str, list[float]] = {}

    def timing(name, fn):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                marks.setdefault(name, []).append(time.perf_counter() - started)

        return wrapper

    patches = [
        (supervisor.Sandbox, "wait_ready"),
        (supervisor.Sandbox, "close"),
        (lanes.EngineLane, "load"),
        (lanes.SuiteLane, "_run"),
        (grading, "suite_job"),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name in patches]
    for owner, name, fn in saved:
        setattr(owner, name, timing(f"{owner.__name__.rsplit('.', 1)[-1]}.{name}", fn))
    try:
        task = catalog.load("micrograd")
        started = time.perf_counter()
        result = grade(
            folder / "micrograd_mine.py", task, Options(suite_sandboxes=2 if (os.cpu_count() or 1) >= 2 else 1)
        )
        total = time.perf_counter() - started
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)
    return {"total": total, "marks": marks, "result": result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copy(ENGINE, folder / "micrograd_mine.py")
        shutil.copy(GOOD_TESTS, folder / "test_micrograd.py")
        phases(folder)  # once, so that the programs' plans are cached as they are for a student
        walls, tree_mb, single_mb = timed_cli(folder, args.repeat)
        pytest_walls = plain_pytest(folder, args.repeat)
        suite_floor = warm_suite_seconds(folder, repeats=5)
        timing = phases(folder)
    check, plain = statistics.median(walls), statistics.median(pytest_walls)
    result, marks = timing["result"], timing["marks"]
    print(
        f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  repeat: {args.repeat}  "
        f"score: {result.score:g}/{result.max_score:g}"
    )
    print(f"grader check, wall:          {check:6.2f} s   (min {min(walls):.2f}, max {max(walls):.2f})")
    print(f"plain pytest of the suite:   {plain:6.2f} s   ratio check / pytest: {check / plain:.2f}")
    print(
        f"peak memory of the job:      {tree_mb:6.0f} MB for every process together, {single_mb:.0f} MB the largest one"
    )
    print(f"\nphases of one grading (in-process, {timing['total']:.2f} s in all):")
    starts = marks.get("Sandbox.wait_ready", [])
    print(f"  sandboxes' start (waiting):   {sum(starts):6.3f} s  ({len(starts)} sandboxes)")
    print(f"  plan of engines (rewriting):  {sum(marks.get('grading.suite_job', [])):6.3f} s")
    print(f"  loading the student's code:   {sum(marks.get('EngineLane.load', [])):6.3f} s")
    engine = [c for c in result.checks if c.id not in ("student_tests", "wheat", "sabotage")]
    for c in engine:
        print(f"  check {c.id:<15}         {c.duration_s:6.3f} s")
    print(f"  engine checks together:       {sum(c.duration_s for c in engine):6.3f} s")
    runs = marks.get("SuiteLane._run", [])
    print(
        f"  suite runs: {len(runs)} (own engine first), {sum(runs):.3f} s in all, median "
        f"{statistics.median(runs):.3f} s each, on {len(starts) - 1} sandboxes at once"
    )
    print(f"  closing sandboxes:            {sum(marks.get('Sandbox.close', [])):6.3f} s")
    print(
        f"\nthe boundary per run of the suite: {statistics.median(runs):.3f} s a run against "
        f"{suite_floor:.3f} s for the suite in a warm process: {statistics.median(runs) - suite_floor:+.3f} s "
        "(a fresh process that loads the student's code and the engine, reports, and is cleaned up after)"
    )


if __name__ == "__main__":
    main()
