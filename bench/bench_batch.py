"""Benchmark: `grader batch` against `nbgrader autograde` on the same generated class.

The class is bench/classgen.py's: by default 40 micrograd notebooks (30 correct, 10 with
one bug each), each with the engine, a Neuron, numerical_grad, a 50-step training demo and
11 nbgrader test cells. Each round times, one after the other (the order of the first two
flips every round):

- `nbgrader autograde micrograd --force` on an nbgrader course holding those notebooks
  (nbgrader's own default: one notebook at a time);
- `grader batch CLASS --out DIR --jobs J --force` with the full rubric of the default
  assignment;
- the floor: merely executing the notebooks with nbclient, J at a time;
- `grader batch ... --jobs 1`, to show how wall time scales with jobs (--no-jobs-1 skips it);
- with --baseline DIR, `grader batch` of another checkout of the grader (DIR: main's, say) on the same class, beside
  this one's in every round, so that a change is measured before and after in one run.

Every tool runs with bytecode written, as on a user's machine (bench/bytecode.py: PYTHONDONTWRITEBYTECODE unset,
a PYTHONPYCACHEPREFIX of the benchmark's own, each tool run once first on a class of two notebooks); where this
environment forbids bytecode, each round also runs them as the environment is, and both figures are printed.

nbgrader is never a dependency of the grader: it lives in its own virtual environment,
bench/.nbgrader-venv, made on first use (`python -m venv` and pip, nbgrader pinned).

Columns (bench/tree.py times each tool's whole process tree): "core-s/nb" is wall time * processes at once /
notebooks; "cpu-s/nb" the CPU seconds every process of the tool's tree spent (sandboxes and kernels included), per
notebook, counted in a cgroup of the benchmark's own ("-" where this machine lets it make none): on a machine others
share, the wall time depends on them and the CPU time much less, so compare both. "largest" is the peak RSS of the
tool's largest single process; "tree peak" the largest sum of PSS over its whole tree. "busy" is how many cores the
whole machine kept busy meanwhile, the tool included: above the tool's own processes at once, something else was
competing and the times are noisy.

    python bench/bench_batch.py [--count 40] [--jobs N] [--rounds 2] [--no-jobs-1] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bytecode
import classgen
from tree import Measure, timed

ROOT = Path(__file__).resolve().parent.parent
NBGRADER_VERSION = "0.9.6"
NBGRADER_VENV = ROOT / "bench" / ".nbgrader-venv"
ASSIGNMENT = "micrograd"
RSS_TARGET_MB = 300
NBGRADER_TARGET = 0.6
"""grader batch's wall time at most this much of nbgrader autograde's, on the class of 40 (issue 44)."""
FLOOR_TARGET = 1.0
"""grader batch's wall time at most this much of the nbclient floor's (as many at once as its jobs), at 10
notebooks, where the fixed costs weigh most (issue 44)."""


# ---- nbgrader -------------------------------------------------------------------------


def nbgrader_env(base: dict[str, str]) -> dict[str, str]:
    """The environment to run nbgrader in (base's, with its virtual environment's), making that on first use."""
    nbgrader = NBGRADER_VENV / "bin" / "nbgrader"
    if not nbgrader.exists():
        print(f"making {NBGRADER_VENV.relative_to(ROOT)} with nbgrader=={NBGRADER_VERSION} (once)...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(NBGRADER_VENV)], check=True)
        subprocess.run(
            [str(NBGRADER_VENV / "bin" / "pip"), "install", "-q", f"nbgrader=={NBGRADER_VERSION}"], check=True
        )
    env = {k: v for k, v in base.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # nbgrader runs `alembic` from PATH when it opens the gradebook: the venv's bin must come first.
    env["PATH"] = f"{NBGRADER_VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(NBGRADER_VENV)
    return env


def build_course(course: Path, class_dir: Path, students: list[classgen.Student], env: dict[str, str]) -> None:
    """An nbgrader course: config, the source assignment and its release, every student's submission."""
    course.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.CourseDirectory.course_id = 'micrograd-bench'\n"
        f"c.CourseDirectory.db_url = {'sqlite:///' + str(course / 'gradebook.db')!r}\n"
    )
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    nbformat.write(classgen.source_notebook(), str(source / classgen.NOTEBOOK))
    subprocess.run(
        [str(NBGRADER_VENV / "bin" / "nbgrader"), "generate_assignment", ASSIGNMENT, "--force"],
        cwd=course,
        env=env,
        check=True,
        capture_output=True,
    )
    if not (course / "release" / ASSIGNMENT / classgen.NOTEBOOK).exists():
        sys.exit("nbgrader generate_assignment made no release version")
    for s in students:
        folder = course / "submitted" / s.student / ASSIGNMENT
        folder.mkdir(parents=True)
        shutil.copyfile(class_dir / f"{s.student}.ipynb", folder / classgen.NOTEBOOK)


def nbgrader_autograde(course: Path, env: dict[str, str], log: Path) -> Measure:
    shutil.rmtree(course / "autograded", ignore_errors=True)  # so what is there afterwards was made now
    return timed(
        [str(NBGRADER_VENV / "bin" / "nbgrader"), "autograde", ASSIGNMENT, "--force"], log, 1, cwd=course, env=env
    )


SCORES = """
import json, sys
from nbgrader.api import Gradebook
with Gradebook(sys.argv[1]) as gb:
    print(json.dumps({s.id: gb.find_submission_notebook(sys.argv[2], sys.argv[3], s.id).score for s in gb.students}))
"""


def nbgrader_scores(course: Path, students: list[classgen.Student], env: dict[str, str]) -> tuple[dict, list]:
    """Each student's score from the gradebook, and the students whose notebook was not autograded."""
    missing = [
        s.student for s in students if not (course / "autograded" / s.student / ASSIGNMENT / classgen.NOTEBOOK).exists()
    ]
    out = subprocess.run(
        [
            str(NBGRADER_VENV / "bin" / "python"),
            "-c",
            SCORES,
            f"sqlite:///{course / 'gradebook.db'}",
            ASSIGNMENT,
            Path(classgen.NOTEBOOK).stem,
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout), missing


# ---- grader batch and the floor -------------------------------------------------------


def grader_batch(class_dir: Path, out: Path, jobs: int, log: Path, env: dict[str, str], root: Path = ROOT) -> Measure:
    """`grader batch` of the checkout at root (its folder first on the path: an editable install's finder comes
    after it, and the grading processes it starts inherit the folder)."""
    shutil.rmtree(out, ignore_errors=True)
    return timed(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(class_dir),
            "--out",
            str(out),
            "--jobs",
            str(jobs),
            "--force",
        ],
        log,
        jobs,
        cwd=root,
        env=env,
    )


def grader_scores(out: Path, students: list[classgen.Student]) -> tuple[dict[str, float], float, list[str]]:
    """Each student's score from the gradebook, the most points, and the students not graded (with why)."""
    with open(out / "grades.csv", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    missing = []
    for s in students:
        if rows.get(s.student, {}).get("status") != "graded":
            try:
                why = json.loads((out / s.student / "result.json").read_text())["error"]["message"]
            except (OSError, KeyError, TypeError, ValueError):
                why = "no result"
            missing.append(f"{s.student} ({why})")
    most = max((float(r["max_score"]) for r in rows.values()), default=0.0)
    return {k: float(r["score"]) for k, r in rows.items()}, most, missing


def execute(path: Path) -> int:
    """Run the notebook with nbclient; how many times its kernel had to be started again."""
    for attempt in range(3):
        nb = nbformat.read(str(path), as_version=4)
        try:
            NotebookClient(nb, timeout=60, startup_timeout=30, allow_errors=True, kernel_name="python3").execute(
                cwd=str(path.parent)
            )
            return attempt
        except RuntimeError as exc:  # a kernel that died starting: its TCP port was taken meanwhile (busy machine)
            if attempt == 2 or "respond" not in str(exc) and "died" not in str(exc):
                raise
    raise AssertionError("unreachable")


def floor(class_dir: Path, jobs: int, log: Path, env: dict[str, str]) -> Measure:
    """Merely executing the notebooks with nbclient, jobs at a time, measured as the tools are."""
    return timed(
        [sys.executable, __file__, "--floor", str(class_dir), "--jobs", str(jobs)], log, jobs, cwd=ROOT, env=env
    )


def run_floor(class_dir: Path, jobs: int) -> None:
    with ProcessPoolExecutor(jobs) as pool:
        restarts = sum(pool.map(execute, sorted(class_dir.glob("*.ipynb"))))
    print(f"kernel restarts: {restarts}")


def floor_restarts(log: Path) -> int:
    lines = [line for line in log.read_text().splitlines() if line.startswith("kernel restarts: ")]
    return int(lines[-1].split(": ")[1]) if lines else 0


# ---- report ----------------------------------------------------------------------------

HEADER = f"{'wall s':>7} {'s/nb':>6} {'core-s/nb':>9} {'cpu-s/nb':>8} {'largest':>8} {'tree peak':>9} {'busy':>5}"
"""core-s/nb: wall * processes at once / notebooks; cpu-s/nb: CPU seconds of the whole tree / notebooks; largest,
tree peak: MB; busy: cores busy on the machine."""


def row(name: str, count: int, m: Measure) -> str:
    cpu = f"{m.cpu / count:8.2f}" if m.cpu is not None else f"{'-':>8}"
    return (
        f"  {name:<26} {m.wall:7.1f} {m.wall / count:6.2f} {m.wall * m.jobs / count:9.2f} {cpu} {m.largest_mb:8.0f} "
        f"{m.tree_mb:9.0f} {m.machine:5.1f}"
    )


def spread(scores: dict[str, float], most: float, students: list[classgen.Student]) -> str:
    """Correct and buggy notebooks' scores: how many got full marks, the lowest and the median."""
    parts = []
    for label, buggy in (("correct", False), ("buggy", True)):
        got = sorted(scores.get(s.student, 0.0) for s in students if s.buggy == buggy)
        if got:
            parts.append(
                f"{label} {len(got)}: {sum(g >= most for g in got)} full, min {got[0]:.1f}, "
                f"median {statistics.median(got):.1f}"
            )
    return f"of {most:g}; " + "; ".join(parts)


def check(m: Measure, what: str) -> Measure:
    if m.returncode != 0:
        sys.exit(f"{what} exited with {m.returncode}; its output: {m.log}\n{m.log.read_text()[-3000:]}")
    return m


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=40, help="notebooks in the class (default 40)")
    parser.add_argument("--buggy", type=int, help="notebooks with one bug (default: a quarter)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="grader batch --jobs (default: cores)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-jobs-1", dest="jobs_1", action="store_false", help="skip the grader batch --jobs 1 run")
    parser.add_argument("--keep", type=Path, help="keep the class, course and logs here instead of a temporary folder")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout of the grader whose batch is timed beside this one's, each round",
    )
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)  # internal: the floor's own process
    return parser.parse_args()


@dataclass
class Bench:
    """What every round works on: the command line's arguments, the folders, the class."""

    args: argparse.Namespace
    work: Path
    class_dir: Path
    students: list[classgen.Student]
    tests: int  # the test cells of each notebook, one point each


@dataclass
class Round:
    nbg: Measure
    grd: Measure
    flo: Measure
    one: Measure | None
    nb_scores: dict
    nb_missing: list
    gr_scores: dict[str, float]
    gr_most: float
    gr_missing: list[str]
    base: Measure | None = None
    """--baseline's grader batch."""
    base_missing: list[str] = field(default_factory=list)


@dataclass
class Tally:
    """The rounds' figures under one condition (bench/bytecode.py): the ratios and the memory."""

    condition: bytecode.Condition
    ratios: list[float] = field(default_factory=list)
    floors: list[float] = field(default_factory=list)
    scaling: list[float] = field(default_factory=list)
    versus: list[float] = field(default_factory=list)
    """This checkout's grader batch / --baseline's, wall time."""
    cpu: dict[str, list[float]] = field(default_factory=dict)
    """Each tool's CPU seconds, round by round (where counted)."""
    mem: dict[str, list[Measure]] = field(default_factory=lambda: {"nbgrader": [], "grader": []})

    def add(self, done: Round) -> None:
        if done.one:
            self.scaling.append(done.one.wall / done.grd.wall)
        self.ratios.append(done.grd.wall / done.nbg.wall)
        self.floors.append(done.grd.wall / done.flo.wall)
        if done.base:
            self.versus.append(done.grd.wall / done.base.wall)
        for tool, m in (("nbgrader", done.nbg), ("grader", done.grd), ("floor", done.flo), ("baseline", done.base)):
            if m is not None and m.cpu is not None:
                self.cpu.setdefault(tool, []).append(m.cpu)
        self.mem["nbgrader"].append(done.nbg)
        self.mem["grader"] += [done.grd] + ([done.one] if done.one else [])


def run_round(bench: Bench, r: int, condition: bytecode.Condition) -> Round:
    """Round r under a condition: nbgrader, the grader and --baseline's (in an order that flips every round), their
    scores, the floor, --jobs 1."""
    args, work, class_dir, env = bench.args, bench.work, bench.class_dir, condition.env
    name = f"{r}-{'written' if condition.written else 'as-is'}"
    runs = {
        "nbgrader": lambda: nbgrader_autograde(work / "course", nbgrader_env(env), work / f"nbgrader-{name}.log"),
        "grader": lambda: grader_batch(class_dir, work / f"out-{name}", args.jobs, work / f"grader-{name}.log", env),
    }
    if args.baseline:
        runs["baseline"] = lambda: grader_batch(
            class_dir, work / f"out-{name}-base", args.jobs, work / f"base-{name}.log", env, args.baseline
        )
    order = list(runs) if r % 2 else list(reversed(runs))
    done = {
        tool: check(runs[tool](), f"{tool} ({'nbgrader autograde' if tool == 'nbgrader' else 'grader batch'})")
        for tool in order
    }
    nbg, grd = done["nbgrader"], done["grader"]
    nb_scores, nb_missing = nbgrader_scores(work / "course", bench.students, nbgrader_env(env))
    gr_scores, gr_most, gr_missing = grader_scores(work / f"out-{name}", bench.students)
    base_missing = grader_scores(work / f"out-{name}-base", bench.students)[2] if args.baseline else []
    flo = check(floor(class_dir, args.jobs, work / f"floor-{name}.log", env), "the nbclient floor")
    one = (
        check(
            grader_batch(class_dir, work / f"out-{name}-j1", 1, work / f"grader-{name}-j1.log", env),
            "grader batch --jobs 1",
        )
        if args.jobs_1
        else None
    )
    done_round = Round(nbg, grd, flo, one, nb_scores, nb_missing, gr_scores, gr_most, gr_missing)
    done_round.base, done_round.base_missing = done.get("baseline"), base_missing
    return done_round


def warm_up(work: Path, jobs: int, condition: bytecode.Condition, baseline: Path | None) -> None:
    """Each tool run once under the condition, on a class of two notebooks: the bytecode a user's machine has
    written by then (and any cache of the tools' own) is there for the rounds."""
    warm = work / f"warm-{'written' if condition.written else 'as-is'}"
    students = classgen.write_class(warm / "class", 2, 1)
    env = nbgrader_env(condition.env)
    build_course(warm / "course", warm / "class", students, env)
    check(nbgrader_autograde(warm / "course", env, warm / "nbgrader.log"), "nbgrader autograde (warming up)")
    check(grader_batch(warm / "class", warm / "out", jobs, warm / "grader.log", condition.env), "grader batch")
    if baseline:
        check(grader_batch(warm / "class", warm / "base", jobs, warm / "base.log", condition.env, baseline), "baseline")
    check(floor(warm / "class", jobs, warm / "floor.log", condition.env), "the nbclient floor (warming up)")


def print_round(bench: Bench, r: int, done: Round, condition: bytecode.Condition) -> None:
    n, students = len(bench.students), bench.students
    title = f"round {r}" + (" (in reverse order)" if r % 2 == 0 else "")
    print(f"\n  {title}, {condition.words}")
    print(f"  {'':<26} {HEADER}")
    print(row("nbgrader autograde", n, done.nbg))
    print(row(f"grader batch --jobs {bench.args.jobs}", n, done.grd))
    if done.base:
        print(row("  the same, --baseline's", n, done.base))
    print(row(f"nbclient floor, {bench.args.jobs} at once", n, done.flo))
    if done.one:
        print(row("grader batch --jobs 1", n, done.one))
    print(f"  scores, nbgrader {spread(done.nb_scores, bench.tests, students)}")
    print(f"  scores, grader   {spread(done.gr_scores, done.gr_most, students)}")
    if restarts := floor_restarts(done.flo.log):
        print(
            f"  the floor started {restarts} kernel(s) again (died starting, a port taken: its time includes the waits)"
        )
    for tool, missing in (
        ("nbgrader", done.nb_missing),
        ("grader batch", done.gr_missing),
        ("--baseline's grader batch", done.base_missing),
    ):
        if missing:
            print(f"  NOT GRADED by {tool}: {len(missing)}: {'; '.join(missing)}")


def print_summary(args: argparse.Namespace, tally: Tally) -> None:
    print(
        f"\n{tally.condition.words}, median of {args.rounds} round(s): grader/nbgrader "
        f"{statistics.median(tally.ratios):.2f} (target <= {NBGRADER_TARGET} on the class of 40), grader/floor "
        f"{statistics.median(tally.floors):.2f} (target <= {FLOOR_TARGET} at 10 notebooks)"
        + (f", grader --jobs 1 / --jobs {args.jobs} {statistics.median(tally.scaling):.2f}" if tally.scaling else "")
    )
    if tally.versus:
        print(f"  this grader / --baseline's ({args.baseline}), wall time: {statistics.median(tally.versus):.2f}")
    if "grader" in tally.cpu:
        cpu = {tool: statistics.median(seconds) / args.count for tool, seconds in tally.cpu.items()}
        print(
            "  CPU seconds of every process, per notebook: "
            + ", ".join(f"{tool} {seconds:.2f}" for tool, seconds in cpu.items())
            + "; grader/"
            + ", grader/".join(f"{tool} {cpu['grader'] / cpu[tool]:.2f}" for tool in cpu if tool != "grader")
        )
    mem = tally.mem
    print(
        f"  peak memory (target <= {RSS_TARGET_MB} MB per grading job): largest process "
        + ", ".join(f"{k} {max(m.largest_mb for m in v):.0f} MB" for k, v in mem.items())
        + "; whole tree / jobs "
        + ", ".join(f"{k} {max(m.tree_mb / m.jobs for m in v):.0f} MB" for k, v in mem.items())
    )


def main() -> None:
    args = parse_args()
    if args.floor:
        return run_floor(args.floor, args.jobs)
    buggy = args.count // 4 if args.buggy is None else args.buggy
    busy = bytecode.Busy()
    with tempfile.TemporaryDirectory() as tmp, bytecode.conditions() as conditions:
        work = args.keep or Path(tmp)
        if args.keep:
            shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        class_dir = work / "class"
        students = classgen.write_class(class_dir, args.count, buggy)
        build_course(work / "course", class_dir, students, nbgrader_env(conditions[0].env))
        n = len(students)
        tests = len(classgen.suite_cells()[1])  # one point each
        print(
            f"{n} notebooks ({n - buggy} correct, {buggy} with one bug), {tests} test "
            f"cells each; grader batch --jobs {args.jobs}; {os.cpu_count()} cores; nbgrader {NBGRADER_VERSION}"
        )
        for condition in conditions:
            warm_up(work, args.jobs, condition, args.baseline)
        bench = Bench(args, work, class_dir, students, tests)
        tallies = [Tally(condition) for condition in conditions]
        for r in range(1, args.rounds + 1):
            for tally in tallies:
                done = run_round(bench, r, tally.condition)
                print_round(bench, r, done, tally.condition)
                tally.add(done)
        for tally in tallies:
            print_summary(args, tally)
        print(f"{busy.words()}: the busy column says the same per run")
        if args.keep:
            print(f"class, course, outputs and logs: {work}")


if __name__ == "__main__":
    main()
