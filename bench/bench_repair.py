"""Benchmark: what verified repairs (issue 31) add to a grading's wall time.

Grades, in this process, each submission with the assignment's `[feedback] repair` set to "off" and to
"where" (the default), in turn, --repeat times, and prints the median of each and the time added:
- a buggy submission (examples/tanh_from_input.py: one cause with an inverse edit, so one regrade);
- the same with two bugs (tanh's derivative on its input and `k * x**k`: three regrades, each edit alone
  and both together);
- a correct submission (examples/correct_engine.py): no check fails, so nothing may be added (and the
  repair step's own time on its result, offered() alone, in microseconds: no regrade).
Each with the good test suite beside it (tests/fixtures/suites/good.py), as a student's own check runs it,
and without tests (the engine checks only), where the regrade is a larger share.

    python bench/bench_repair.py [--repeat 3] [--no-tests]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import catalog, spec  # noqa: E402
from grader.grading import Options, grade  # noqa: E402
from grader.repair.verify import offered  # noqa: E402

GOOD_TESTS = ROOT / "tests" / "fixtures" / "suites" / "good.py"
BUGGY = ROOT / "examples" / "tanh_from_input.py"
CORRECT = ROOT / "examples" / "correct_engine.py"


def two_bugs() -> str:
    text = BUGGY.read_text(encoding="utf-8")
    changed = text.replace("** (k - 1)", "** k")
    if changed == text:
        raise SystemExit(f"bench_repair: {BUGGY} no longer holds `** (k - 1)`; update the benchmark")
    return changed


def seconds(source: str, task: spec.Assignment, tests: bool, folder: Path) -> tuple[float, int]:
    """One grading's wall time, and how many repairs it offered."""
    spent, result = graded(source, task, tests, folder)
    return spent, sum("repair" in c.artifacts for c in result.checks)


def graded(source: str, task: spec.Assignment, tests: bool, folder: Path):
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "micrograd_mine.py").write_text(source, encoding="utf-8")
    if tests:
        shutil.copy(GOOD_TESTS, folder / "test_micrograd.py")
    t0 = time.monotonic()
    result = grade(folder / "micrograd_mine.py", task, Options(suite_sandboxes=2))
    return time.monotonic() - t0, result


def own_cost(task: spec.Assignment, folder: Path) -> float:
    """Seconds the repair step itself takes on the correct submission's result (no check failed: nothing to
    find, nothing regraded), measured around offered() alone."""
    source = CORRECT.read_text(encoding="utf-8")
    _, result = graded(source, dataclasses.replace(task, feedback=spec.Feedback("off")), False, folder)
    t0 = time.perf_counter()
    for _ in range(100):
        offered(result, source, task, time.monotonic() + 100, lambda *_: None)
    return (time.perf_counter() - t0) / 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-tests", action="store_true", help="only the engine checks, without a test suite")
    args = parser.parse_args()
    base = catalog.load("micrograd")
    cases = [
        ("buggy (1 cause)", BUGGY.read_text(encoding="utf-8")),
        ("buggy (2 causes)", two_bugs()),
        ("correct", CORRECT.read_text(encoding="utf-8")),
    ]
    print(f"{'submission':<18} {'tests':<6} {'off (s)':>8} {'where (s)':>10} {'added':>8} {'added %':>8} repairs")
    with tempfile.TemporaryDirectory(prefix="bench-repair-") as tmp:
        for tests in (False,) if args.no_tests else (True, False):
            for name, source in cases:
                times = {}
                offered = 0
                for level in ("off", "where"):
                    task = dataclasses.replace(base, feedback=spec.Feedback(level))
                    runs = [seconds(source, task, tests, Path(tmp) / "s") for _ in range(args.repeat)]
                    times[level] = statistics.median(r[0] for r in runs)
                    offered = max(offered, *(r[1] for r in runs)) if level == "where" else offered
                added = times["where"] - times["off"]
                print(
                    f"{name:<18} {'yes' if tests else 'no':<6} {times['off']:>8.2f} {times['where']:>10.2f} "
                    f"{added:>+8.2f} {100 * added / times['off']:>+7.0f}% {offered}",
                    flush=True,
                )
        print(
            f"repairs' own time on the correct submission: {1e6 * own_cost(base, Path(tmp) / 'c'):.0f} us (no regrade)"
        )


if __name__ == "__main__":
    main()
