"""Benchmark: seconds per check and per submission for `grader check`.

Grades the reference engine and a buggy engine (each as a student's file) a few times
and prints the median seconds of each check and of the whole submission. Run:

    python bench/bench_check.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from grader import spec
from grader.checks.suite import SUITE_CHECKS
from grader.grading import Options, grade

ROOT = Path(__file__).resolve().parent.parent
GOOD_TESTS = ROOT / "tests" / "fixtures" / "suites" / "good.py"
SUBMISSIONS = {
    "reference (with Neuron, and a good test suite)": ROOT / "examples" / "correct_engine.py",
    "buggy (= instead of +=)": ROOT / "tests" / "zoo" / "buggy" / "assign_not_accumulate.py",
    "buggy (topo not reversed)": ROOT / "tests" / "zoo" / "buggy" / "topo_not_reversed.py",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    assignment = spec.load("micrograd")
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  repeat: {args.repeat}")
    for label, path in SUBMISSIONS.items():
        per_check: dict[str, list[float]] = {}
        totals = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            result = grade(path, assignment, Options(tests=GOOD_TESTS))
            totals.append(time.perf_counter() - started)
            for c in result.checks:
                per_check.setdefault(c.id, []).append(c.duration_s)
        print(f"\n{label}: {result.score:g}/{result.max_score:g}, "
              f"median {statistics.median(totals):.2f} s per submission (min {min(totals):.2f}, max {max(totals):.2f})")
        for check_id, seconds in per_check.items():
            print(f"  {check_id:<15} {statistics.median(seconds):6.3f} s")
        engine = sum(statistics.median(s) for c, s in per_check.items() if c not in SUITE_CHECKS)
        print(f"  engine checks together: {engine:.2f} s; the student's suite on 16 engines: "
              f"{sum(statistics.median(s) for c, s in per_check.items() if c in SUITE_CHECKS):.2f} s")


if __name__ == "__main__":
    main()
