"""Benchmark: what verified repairs (issue 31, issue 39 item 6) add to a grading's wall time.

Each submission is graded as a student's `grader check` grades it, in a fresh process (the grader imported, its
caches cold, its sandboxes started: what a student waits for, and what a batch's fresh process per student
does), with the assignment's `[feedback] repair` set to "off" and to "where" (the default) in turn, --repeat
times each, interleaved; it prints the median of each and the seconds added, and the same as a percentage:
- a buggy submission (examples/tanh_from_input.py: one cause with an inverse edit, so one regrade);
- the same with two bugs (tanh's derivative on its input and `k * x**k`: three regrades, each edit alone
  and both together);
- a correct submission (examples/correct_engine.py): no check fails, so nothing may be added (and the
  repair step's own time on its result, offered() alone, in microseconds: no regrade).
Each with the good test suite beside it (tests/fixtures/suites/good.py), as the lesson's submission has it,
and without tests (the engine checks only), where the regrade is a larger share: a grading verifies its repairs
once its engine checks are done, while the student's tests still run, so with tests a regrade costs only what
outlasts the runs. With --in-process, the gradings run one after another in this process (caches warm, as in a
long-lived kernel's %grade).

Then a batch: --batch submissions (40 by default; 0 for none), each one of the grader's own one-bug mutants whose
cause has an inverse edit (the assignment's sabotage operators on its wheats, in turn), with the good tests
beside it, graded by `grader batch --jobs J` with repairs off and where: the wall time of each and what the
repairs add, and how many of the batch got a verified repair.

    python bench/bench_repair.py [--repeat 5] [--no-tests] [--in-process] [--batch 40] [--jobs J]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import catalog, spec  # noqa: E402
from grader.grading import Options, grade  # noqa: E402
from grader.repair.repairs import Repairs  # noqa: E402

GOOD_TESTS = ROOT / "tests" / "fixtures" / "suites" / "good.py"
BUGGY = ROOT / "examples" / "tanh_from_input.py"
CORRECT = ROOT / "examples" / "correct_engine.py"
TASK = ROOT / "assignments" / "micrograd"
GRADER = str(Path(sys.executable).with_name("grader"))
"""The grader command beside this Python (the project installed in it: pip install -e .)."""


def two_bugs() -> str:
    text = BUGGY.read_text(encoding="utf-8")
    changed = text.replace("** (k - 1)", "** k")
    if changed == text:
        raise SystemExit(f"bench_repair: {BUGGY} no longer holds `** (k - 1)`; update the benchmark")
    return changed


def placed(source: str, tests: bool, folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "micrograd_mine.py").write_text(source, encoding="utf-8")
    if tests:
        shutil.copy(GOOD_TESTS, folder / "test_micrograd.py")
    return folder / "micrograd_mine.py"


def assignment_folder(level: str, tmp: Path) -> Path:
    """The micrograd assignment with `[feedback] repair = level`, in a folder of its own."""
    folder = tmp / f"assignment-{level}"
    if not folder.exists():
        shutil.copytree(TASK, folder)
        with (folder / "assignment.toml").open("a", encoding="utf-8") as f:
            f.write(f'\n[feedback]\nrepair = "{level}"\n')
    return folder


def fresh(source: str, level: str, tests: bool, tmp: Path) -> tuple[float, int]:
    """One `grader check` in a fresh process: its wall time, and how many repairs its JSON offers."""
    path = placed(source, tests, tmp / "s")
    out = tmp / "result.json"
    command = [GRADER, "check", str(path), "--assignment", str(assignment_folder(level, tmp))]
    command += ["--json", str(out), "--html", str(tmp / "report.html")]
    t0 = time.monotonic()
    subprocess.run(command, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    spent = time.monotonic() - t0
    checks = json.loads(out.read_text(encoding="utf-8"))["checks"]
    return spent, sum("repair" in (c.get("artifacts") or {}) for c in checks)


def in_process(source: str, level: str, tests: bool, tmp: Path) -> tuple[float, int]:
    """One grading in this process (its caches warm after the first)."""
    task = dataclasses.replace(catalog.load("micrograd"), feedback=spec.Feedback(level))
    path = placed(source, tests, tmp / "s")
    t0 = time.monotonic()
    result = grade(path, task, Options(suite_sandboxes=2))
    return time.monotonic() - t0, sum(c.repair is not None for c in result.checks)


def own_cost(tmp: Path) -> float:
    """Seconds the repair step itself takes on the correct submission's result (no check failed: nothing to
    find, nothing regraded), measured around Repairs.offered() alone."""
    base = catalog.load("micrograd")
    source = CORRECT.read_text(encoding="utf-8")
    path = placed(source, False, tmp / "c")
    result = grade(path, dataclasses.replace(base, feedback=spec.Feedback("off")))
    t0 = time.perf_counter()
    for _ in range(100):
        Repairs(source, base, None).offered(result, time.monotonic() + 100, lambda *_: None)
    return (time.perf_counter() - t0) / 100


def one_bug_each(count: int) -> list[tuple[str, str]]:
    """count submissions (name, code), each a mutant of a wheat by one of the assignment's sabotage operators whose
    cause has an inverse edit, taken in turn; each names its student in a comment, so no two are the same file."""
    from grader.repair.inverse import INVERSES
    from grader.sabotage import all_operators, mutant, wheats

    task = catalog.load("micrograd")
    operators = [op for op in task.sabotages if all_operators()[op].cause.id in INVERSES]
    mutants = [(f"{op}@{w.id}", m) for op in operators for w in wheats() if (m := mutant(op, w.id)) is not None]
    if not mutants:
        raise SystemExit("bench_repair: no mutant to make a batch of")
    chosen = [mutants[k % len(mutants)] for k in range(count)]
    return [(f"s{k:02d}", f"# student s{k:02d}: {name}\n{code}") for k, (name, code) in enumerate(chosen)]


def batch(students: list[tuple[str, str]], level: str, jobs: int, tests: bool, tmp: Path) -> tuple[float, int]:
    """One `grader batch` of the students with repairs at level: its wall time, and how many got a repair."""
    inputs = tmp / f"class-{level}"
    shutil.rmtree(inputs, ignore_errors=True)
    for name, code in students:
        placed(code, tests, inputs / name)
    out = tmp / f"out-{level}"
    shutil.rmtree(out, ignore_errors=True)
    command = [GRADER, "batch", str(inputs), "--out", str(out), "--jobs", str(jobs), "--force"]
    command += ["--assignment", str(assignment_folder(level, tmp))]
    t0 = time.monotonic()
    subprocess.run(command, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    spent = time.monotonic() - t0
    repaired = 0
    for result in out.rglob("result.json"):
        checks = json.loads(result.read_text(encoding="utf-8")).get("checks", [])
        repaired += any("repair" in (c.get("artifacts") or {}) for c in checks)
    return spent, repaired


def batch_row(count: int, jobs: int, tests: bool, tmp: Path) -> None:
    students = one_bug_each(count)
    off, _ = batch(students, "off", jobs, tests, tmp)
    where, repaired = batch(students, "where", jobs, tests, tmp)
    added = where - off
    print(
        f"batch of {count} (one bug each, tests {'yes' if tests else 'no'}, --jobs {jobs}): off {off:.1f} s, "
        f"where {where:.1f} s, added {added:+.1f} s ({100 * added / off:+.0f}%, {added / count:+.2f} s a student); "
        f"{repaired} of {count} got a verified repair",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-tests", action="store_true", help="only the engine checks, without a test suite")
    parser.add_argument("--in-process", action="store_true", help="grade in this process, caches warm")
    parser.add_argument("--batch", type=int, default=40, help="submissions of the batch (0: no batch)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="the batch's --jobs")
    parser.add_argument("--batch-only", action="store_true", help="only the batch")
    args = parser.parse_args()
    once = in_process if args.in_process else fresh
    cases = [
        ("buggy (1 cause)", BUGGY.read_text(encoding="utf-8")),
        ("buggy (2 causes)", two_bugs()),
        ("correct", CORRECT.read_text(encoding="utf-8")),
    ]
    with tempfile.TemporaryDirectory(prefix="bench-repair-") as folder:
        tmp = Path(folder)
        if not args.batch_only:
            singles(args, cases, once, tmp)
        if args.batch:
            batch_row(args.batch, args.jobs, not args.no_tests, tmp)


def singles(args: argparse.Namespace, cases: list[tuple[str, str]], once, tmp: Path) -> None:
    """Each submission graded alone, repairs off and where, interleaved: the medians and what repairs add."""
    print(f"each grading {'in this process' if args.in_process else 'in a fresh process (grader check)'}")
    print(f"{'submission':<18} {'tests':<6} {'off (s)':>8} {'where (s)':>10} {'added s':>8} {'added %':>8} repairs")
    for tests in (False,) if args.no_tests else (True, False):
        for name, source in cases:
            runs: dict[str, list[tuple[float, int]]] = {"off": [], "where": []}
            for _ in range(args.repeat):
                for level in runs:  # interleaved, so a drift in the machine's load falls on both alike
                    runs[level].append(once(source, level, tests, tmp))
            times = {level: statistics.median(r[0] for r in found) for level, found in runs.items()}
            offered_ = max(r[1] for r in runs["where"])
            added = times["where"] - times["off"]
            print(
                f"{name:<18} {'yes' if tests else 'no':<6} {times['off']:>8.2f} {times['where']:>10.2f} "
                f"{added:>+8.2f} {100 * added / times['off']:>+7.0f}% {offered_}",
                flush=True,
            )
    print(f"repairs' own time on the correct submission: {1e6 * own_cost(tmp):.0f} us (no regrade)")


if __name__ == "__main__":
    main()
