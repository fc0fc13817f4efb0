"""Benchmark: the grader's own CPU time to build a grading's plan of engines, for an engine
that makes mutation expensive (issue 17, item 11).

The engine is the zoo's correct engine (tests/zoo/correct/list_iterative.py) with harmless
`self.grad += 0.0` lines added to its addition's backward: 40,000 of them make the 1.5 MB engine of
the issue. The plan for it (every wheat and one mutant per operator) skips mutants of the student's
engine above the size budget; below it, mutating, disguising and rewriting the student's engine once per operator grows
linearly with its size, which the second table shows with the budget lifted.

    python bench/bench_plan.py
"""

from __future__ import annotations

import time
from pathlib import Path

from grader.sabotage import OWN_BUDGET, _own_mutant, _own_variant, all_operators, own_block, plan

ROOT = Path(__file__).resolve().parent.parent
MARK = "            other.grad += out.grad\n"
LINE = "            self.grad += 0.0\n"


def engine(updates: int) -> str:
    source = (ROOT / "tests" / "zoo" / "correct" / "list_iterative.py").read_text()
    return source.replace(MARK, MARK + LINE * updates, 1)


def cpu(fn) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def main() -> None:
    operators = tuple(sorted(all_operators()))
    source = engine(40_000)
    own = own_block(source)
    print(f"engine of 40,000 updates: {len(source) / 1e6:.2f} MB, its block {len(own) / 1e6:.2f} MB")
    print(f"  own_block (parse and unparse):     {cpu(lambda: own_block(source)):6.2f} s CPU")
    print(f"  plan (own mutants skipped):         {cpu(lambda: plan(operators, 'bench', 'pool', own)):6.2f} s CPU")
    plan(operators, "warm", "pool")  # the wheats' variants, cached across a batch's gradings
    updates = max(n for n in range(0, 2000, 25) if len(own_block(engine(n))) <= OWN_BUDGET)
    near = own_block(engine(updates))
    seconds = cpu(lambda: plan(operators, "bench", "pool", near))
    print(
        f"engine of {updates} updates ({len(near) / 1000:.1f} KB, under the {OWN_BUDGET // 1000} KB budget): plan "
        f"with its own mutants and decoy {seconds:.2f} s CPU"
    )
    print("\nmutants of the student's engine with the budget lifted (every operator, disguised and rewritten):")
    print(f"  {'updates':>8} {'KB':>6} {'CPU s':>7} {'s per 1,000 updates':>20}")
    for updates in (2_500, 5_000, 10_000, 20_000):
        block = own_block(engine(updates))

        def build(block=block):
            for op_id in operators:
                mine = _own_mutant(all_operators()[op_id], block)
                if mine is not None:
                    _own_variant(mine, f"bench:{op_id}")

        seconds = cpu(build)
        print(f"  {updates:>8} {len(block) // 1000:>6} {seconds:>7.2f} {seconds / updates * 1000:>20.3f}")


if __name__ == "__main__":
    main()
