"""The hostile-class fuzz, for as long as it is given: seed after seed of bench/hostilegen.py's classes.

    python bench/bench_hostile.py [--minutes 10] [--students 12] [--scale 4] [--batch-every 8]
                                  [--limit 60] [--seed 0]

Each class (`--students` hostile students, every size up to `--scale` times the test's) goes through
every pass `grader batch` makes in its own process (hostilegen.drive: discovery, extraction and
staging, each student's result cleaned and rendered, the class outputs, the exports, and the files beside
the class with the repairs' reading of each student's code: bench/hostilefiles.py), in a process
of its own killed after `--limit` seconds; every `--batch-every`-th class, smaller, goes through the
real `grader batch` as well (sandboxes and grading processes, under the same limit and five minutes
more). A class that raises, stalls past its limit, or whose files miss a class file or give a student
other than exactly one row is a finding: the script prints each one (the seed reproduces it:
`--seed N --minutes 0`), the classes and students run, and the slowest class. Not a timed test:
tests/test_hostile_class.py runs a few of the same classes in CI.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ASSIGNMENT = """id = "hostile"
version = "1"
title = "A hostile class"
required_symbols = ["Value"]
sabotages = ["add_half", "mul_own_data"]
[limits]
request_s = 3.0
tests_s = 10.0
[search]
max_examples = 10
[checks]
forward = { points = 6 }
add = { points = 6 }
student_tests = { points = 2 }
wheat = { points = 1 }
sabotage = { points = 1 }
"""


def one(seed: int, students: int, scale: float, folder: Path, batch: bool) -> dict:
    """One class, in this process: what was found (an empty list when all is well) and how long it took."""
    from hostilegen import drive, make_class, problems

    from grader import catalog
    from grader.folders import remove_tree

    assignment = folder / "hostile"
    assignment.mkdir(parents=True, exist_ok=True)
    (assignment / "assignment.toml").write_text(ASSIGNMENT)
    cls = make_class(folder / "class", seed, students, scale)
    try:
        if batch:
            out = folder / "out"
            command = [sys.executable, "-m", "grader.cli", "batch", *map(str, cls.inputs), "--out", str(out)]
            command += ["--assignment", str(assignment), "--jobs", "2"]
            command += ["--roster", str(cls.roster)] if cls.roster else []
            started = time.monotonic()
            done = subprocess.run(command, capture_output=True, text=True)
            took = time.monotonic() - started
            found = problems(cls, out) if done.returncode == 0 else [f"exit {done.returncode}: {done.stderr[-1500:]}"]
        else:
            took = drive(cls, folder / "out", catalog.load(str(assignment)), folder / "exports")
            found = problems(cls, folder / "out", folder / "exports")
    finally:
        remove_tree(folder)
    return {"seed": seed, "kinds": cls.kinds, "rows": cls.rows, "took": round(took, 2), "found": found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--scale", type=float, default=4.0)
    parser.add_argument("--batch-every", type=int, default=8)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds a class's passes may take")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--batch", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.seed, args.students, args.scale, args.folder, args.batch)))
        return
    from grader.folders import temporary_folder

    ends = time.monotonic() + 60 * args.minutes
    findings, runs, slowest = [], [], None
    seed = args.seed
    while True:
        batch = args.batch_every > 0 and len(runs) % args.batch_every == args.batch_every - 1
        rng = random.Random(seed)
        scale = 1.0 if batch else rng.uniform(1.0, args.scale)
        students = max(3, args.students // 3) if batch else args.students
        limit = args.limit + (300 if batch else 0)
        with temporary_folder("bench-hostile-") as tmp:  # a class killed midway leaves deep trees: no rmtree
            command = [sys.executable, __file__, "--one", "--seed", str(seed), "--students", str(students)]
            command += ["--scale", str(scale), "--folder", str(Path(tmp) / "c")] + (["--batch"] if batch else [])
            started = time.monotonic()
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=limit)
                report = (
                    json.loads(done.stdout.strip().splitlines()[-1])
                    if done.returncode == 0
                    else {"seed": seed, "found": [f"raised: {done.stderr[-2000:]}"], "took": None}
                )
            except subprocess.TimeoutExpired:
                report = {"seed": seed, "found": [f"stalled: still running after {limit:g} s"], "took": None}
            report |= {"batch": batch, "scale": round(scale, 2), "wall": round(time.monotonic() - started, 1)}
        runs.append(report)
        if report["found"]:
            findings.append(report)
        if report.get("took") is not None and (slowest is None or report["took"] > slowest["took"]):
            slowest = report
        print(
            f"seed {seed} {'grader batch' if batch else 'host passes'} scale {report['scale']}: "
            f"{report.get('rows', '?')} rows, {report.get('took')} s"
            + (f"  FOUND: {report['found']}" if report["found"] else ""),
            flush=True,
        )
        seed += 1
        if time.monotonic() >= ends:
            break
    print(
        f"\n{len(runs)} classes ({sum(r['batch'] for r in runs)} through grader batch), "
        f"{sum(r.get('rows', 0) for r in runs)} students' rows, {len(findings)} findings"
    )
    if slowest:
        print(
            f"slowest: seed {slowest['seed']} ({'grader batch' if slowest['batch'] else 'host passes'}), "
            f"{slowest['took']} s, kinds {slowest.get('kinds')}"
        )
    for finding in findings:
        print(f"FOUND (seed {finding['seed']}, batch={finding['batch']}): {finding['found']}")


if __name__ == "__main__":
    main()
