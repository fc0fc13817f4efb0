"""The similarity pass on a large generated class: how long it takes and how much memory it holds.

    python bench/bench_similarity.py [--count 2000] [--copies 50] [--seed 0]

The class comes from bench/similargen.py: every student one of the lesson's correct engines in their
own version (their habits, names, method order and layout), one in five with a misconception planted,
and `--copies` students who handed in a classmate's file, disguised. Each student also carries wrong
answers as a batch would record them (the planted misconception's case), so behaviour is scored too.
Prints the time (wall and CPU: on a busy machine the CPU time is the pass's own) and peak memory
(Python's allocations, tracemalloc) of the pass, the candidate pairs it compared (never all pairs) and
how many planted copies it listed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from similargen import many

from grader.batch.insight import starter_code
from grader.insight.similarity import Work, similar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--copies", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    students, copied = many(args.count, args.seed, args.copies)
    print(
        f"generated {len(students)} submissions ({args.copies} copies) in {time.perf_counter() - started:.1f} s; "
        f"{sum(len(code) for _, code, _ in students) / len(students) / 1024:.1f} KB of code each on average"
    )
    works = [
        Work(
            student,
            code,
            frozenset({json.dumps({"code": cause, "got": {}})}) if cause else frozenset(),
            frozenset({"forward", "add", "mul"}),
        )
        for student, code, cause in students
    ]
    started, cpu = time.perf_counter(), time.process_time()
    found = similar(works, starter_code())
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    tracemalloc.start()
    similar(works, starter_code())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    listed = {frozenset((p["a"], p["b"])) for p in found["pairs"]}
    planted = {frozenset(pair) for pair in copied}
    print(
        f"similarity pass: {seconds:.2f} s ({cpu:.2f} s of CPU) for {len(works)} submissions; "
        f"peak memory {peak / 2**20:.1f} MB "
        f"(tracemalloc); {found['candidates']:,} candidate pairs compared of {len(works) * (len(works) - 1) // 2:,}; "
        f"{found['common_fingerprints']:,} fingerprints too common to index"
    )
    print(
        f"listed {len(found['pairs']) + found['more_pairs']} pairs: {len(listed & planted)} of {len(planted)} "
        f"planted copies, {len(listed - planted)} others"
    )


if __name__ == "__main__":
    main()
