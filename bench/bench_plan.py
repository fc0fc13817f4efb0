"""Benchmark: the grader's own CPU time to build a grading's plan of engines (issue 17, item 11; issue 44).

Three tables:

1. A lesson-sized engine (examples/correct_engine.py, the assignment's sabotages): the plan as `grader check` makes
   it, the first in a fresh process (each measured in a process of its own), and a later grading's in the same
   process (as in a batch, where what the grader makes of its own engines once is kept).
2. An engine that makes mutation expensive: the zoo's correct engine (tests/zoo/correct/list_iterative.py) with
   harmless `self.grad += 0.0` lines added to its addition's backward; 40,000 of them make the 1.5 MB engine of
   issue 17. The plan for it skips mutants of the student's engine above the size budget; an engine just under the
   budget is mutated, disguised and rewritten.
3. With the budget lifted, the plan's cost grows linearly with the engine's size.

    python bench/bench_plan.py             # every table
    python bench/bench_plan.py --lesson    # the first table alone
    python bench/bench_plan.py --cold      # one cold plan's CPU seconds (what the first table runs in each process)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from grader import catalog
from grader.sabotage import OWN_BUDGET, all_operators, own_block, plan, planning

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "examples" / "correct_engine.py"
MARK = "            other.grad += out.grad\n"
LINE = "            self.grad += 0.0\n"
RUNS = 7


def engine(updates: int) -> str:
    source = (ROOT / "tests" / "zoo" / "correct" / "list_iterative.py").read_text()
    return source.replace(MARK, MARK + LINE * updates, 1)


def cpu(fn) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def lesson_plan(seed: str) -> float:
    """One plan for the lesson-sized engine, as a grading makes it; its CPU seconds."""
    sabotages = tuple(catalog.load("micrograd").sabotages)
    own = own_block(LESSON.read_text(encoding="utf-8"))
    return cpu(lambda: plan(sabotages, seed, "pool", own, f"shape:{seed}"))


def lesson() -> None:
    cold = [float(subprocess.check_output([sys.executable, __file__, "--cold"], text=True)) for _ in range(RUNS)]
    lesson_plan("warm-up")
    warm = [lesson_plan(f"grading-{i}") for i in range(RUNS)]
    engines = len(plan(tuple(catalog.load("micrograd").sabotages), "count", "pool", own_block(LESSON.read_text())))
    print(f"lesson-sized engine ({LESSON.relative_to(ROOT)}, {engines} engines), CPU of the plan, median of {RUNS}:")
    print(f"  first plan in a process (grader check): {statistics.median(cold) * 1000:6.1f} ms")
    print(f"  a later grading's plan (a batch):       {statistics.median(warm) * 1000:6.1f} ms")


def large() -> None:
    operators = tuple(sorted(all_operators()))
    source = engine(40_000)
    own = own_block(source)
    print(f"\nengine of 40,000 updates: {len(source) / 1e6:.2f} MB, its block {len(own) / 1e6:.2f} MB")
    print(f"  own_block (parse and unparse):     {cpu(lambda: own_block(source)):6.2f} s CPU")
    print(f"  plan (own mutants skipped):         {cpu(lambda: plan(operators, 'bench', 'pool', own)):6.2f} s CPU")
    updates = max(n for n in range(0, 2000, 25) if len(own_block(engine(n))) <= OWN_BUDGET)
    near = own_block(engine(updates))
    seconds = cpu(lambda: plan(operators, "bench", "pool", near))
    print(
        f"engine of {updates} updates ({len(near) / 1000:.1f} KB, under the {OWN_BUDGET // 1000} KB budget): plan "
        f"with its own mutants and decoy {seconds:.2f} s CPU"
    )


def lifted() -> None:
    operators = tuple(sorted(all_operators()))
    print("\nthe plan with the budget lifted (the student's engine mutated; the mutants drawn disguised, rewritten):")
    print(f"  {'updates':>8} {'KB':>6} {'CPU s':>7} {'s per 1,000 updates':>20}")
    planning.OWN_BUDGET = 10**9  # read by plan() when it runs
    for updates in (1_000, 2_000, 4_000, 8_000):
        block = own_block(engine(updates))
        seconds = cpu(lambda block=block: plan(operators, "bench", "pool", block))
        print(f"  {updates:>8} {len(block) // 1000:>6} {seconds:>7.2f} {seconds / updates * 1000:>20.3f}")


def main() -> None:
    if "--cold" in sys.argv:
        print(f"{lesson_plan('cold'):.6f}")
        return
    lesson()
    if "--lesson" not in sys.argv:
        large()
        lifted()


if __name__ == "__main__":
    main()
