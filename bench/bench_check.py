"""Benchmark: a student's `grader check` on a full submission with a good test suite.

Prints, all measured in this one run on this machine:
- the wall time of `grader check` (as a student types it) and of one plain `pytest` run of the same suite on the
  same engine (in this Python, so hypothesis's pytest plugin loads as in a venv holding the grader), run in turn,
  check and pytest, --repeat pairs, and their ratio pair by pair (pairing keeps the ratio meaningful on a machine
  whose load drifts); each with bytecode written, as a student's machine runs them (each run once first), and,
  where this environment forbids bytecode (PYTHONDONTWRITEBYTECODE), also as the environment runs them
  (bench/bytecode.py says why both);
- how busy the whole machine was meanwhile;
- the peak memory of the whole grading (every process of the job, sandboxes included) and of its largest process;
- where one check's wall time goes: phases of the main thread that add up to the process's wall time, from its
  spawn (Python's start and the imports included) to its exit, and what ran beside them (bench/phases.py);
- what the boundary costs per run of the suite: a run's wall time beside one pytest.main of the suite in a warm
  process (pytest's start, its configuration and the assertion rewrite included, which a run no longer repeats).

    python bench/bench_check.py [--repeat 5] [--phases 3]      (--repeat 1 --phases 1: a quick look)
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
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bytecode
import phases
from plain_pytest import warm_suite_seconds

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "examples" / "correct_engine.py"
GOOD_TESTS = ROOT / "tests" / "fixtures" / "suites" / "good.py"
CHECK = [sys.executable, "-m", "grader.cli", "check", "micrograd_mine.py", "--json", "r.json"]
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_micrograd.py"]


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


@dataclass
class Pairs:
    """grader check and plain pytest, run in turn under one condition."""

    condition: bytecode.Condition
    check: list[float] = field(default_factory=list)
    pytest: list[float] = field(default_factory=list)
    tree_mb: float = 0.0
    single_mb: float = 0.0

    @property
    def ratios(self) -> list[float]:
        return [c / p for c, p in zip(self.check, self.pytest)]


def timed(cmd: list[str], folder: Path, env: dict[str, str], memory: Pairs | None = None) -> float:
    """The wall time of cmd run to its end in folder (and, given memory, its process tree's peak memory noted)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sampler = TreeMemory(proc.pid) if memory is not None else None
    proc.wait()
    wall = time.perf_counter() - started
    if sampler is not None and memory is not None:
        sampler.stop()
        memory.tree_mb = max(memory.tree_mb, sampler.peak_total / 2**20)
        memory.single_mb = max(memory.single_mb, sampler.peak_single / 2**20)
    return wall


def paired(folder: Path, condition: bytecode.Condition, repeat: int) -> Pairs:
    """Each command run once first (bytecode written, plans kept), then repeat pairs, the order flipping each pair."""
    env, pairs = condition.env, Pairs(condition)
    timed(CHECK, folder, env)
    timed(PYTEST, folder, env)
    for i in range(repeat):
        if i % 2 == 0:
            pairs.check.append(timed(CHECK, folder, env, pairs))
            pairs.pytest.append(timed(PYTEST, folder, env))
        else:
            pairs.pytest.append(timed(PYTEST, folder, env))
            pairs.check.append(timed(CHECK, folder, env, pairs))
    return pairs


def spread(values: list[float], unit: str = " s") -> str:
    return f"{statistics.median(values):6.2f}{unit}  (min {min(values):.2f}, max {max(values):.2f})"


def print_pairs(pairs: Pairs) -> None:
    print(f"\n{pairs.condition.words}:")
    print(f"  grader check, wall:          {spread(pairs.check)}")
    print(f"  plain pytest of the suite:   {spread(pairs.pytest)}")
    print(f"  ratio check / pytest:        {spread(pairs.ratios, '  ')}  pair by pair, {len(pairs.ratios)} pairs")
    if pairs.tree_mb:
        print(
            f"  peak memory of the job:      {pairs.tree_mb:6.0f} MB for every process together, "
            f"{pairs.single_mb:.0f} MB the largest one"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="pairs of runs, check and pytest, per condition")
    parser.add_argument("--phases", type=int, default=3, help="checks timed from inside (the median one is shown)")
    args = parser.parse_args()
    busy = bytecode.Busy()
    with tempfile.TemporaryDirectory() as tmp, bytecode.conditions() as conditions:
        folder = Path(tmp)
        shutil.copy(ENGINE, folder / "micrograd_mine.py")
        shutil.copy(GOOD_TESTS, folder / "test_micrograd.py")
        measured = [paired(folder, condition, args.repeat) for condition in conditions]
        written = conditions[0]
        timed_runs = [phases.run(folder, written.env) for _ in range(args.phases)]
        suite_floor = warm_suite_seconds(folder, repeats=5)
    result = timed_runs[-1].result
    print(
        f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  pairs: {args.repeat}  "
        f"score: {result['score']:g}/{result['max_score']:g}"
    )
    print(f"{busy.words()}: quote the medians and the ratios, not single runs")
    for pairs in measured:
        print_pairs(pairs)
    print(
        f"\nphases of one grader check ({written.words.split(',')[0]}; of {len(timed_runs)}, the run of median wall "
        "time), adding up to its wall time:"
    )
    for line in phases.table(timed_runs):
        print(line)
    suite_runs = [e - s for name, s, e, _ in phases.middle(timed_runs).spans if name == "_run"]
    if suite_runs:
        run = statistics.median(suite_runs)
        print(
            f"\nthe boundary per run of the suite: {run:.3f} s a run against {suite_floor:.3f} s for one pytest.main "
            f"of the suite in a warm process: {run - suite_floor:+.3f} s (a run is a fresh process that loads the "
            "student's code and the engine, reports, and is cleaned up after; it goes on from a pytest session its "
            "template started, with the tests' assertions rewritten once a grading, where pytest.main starts, "
            "configures and rewrites each time)"
        )


if __name__ == "__main__":
    main()
