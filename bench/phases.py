"""Where one `grader check` spends its wall time, from its spawn to its exit, in phases that add up.

The check runs as a student runs it, in a process of its own, under a prelude that times it from inside: an import
hook that, as each watched module of the grader finishes loading, wraps the functions that mark a phase's end. The
phases are the spans of the main thread between those marks, in order, so they account for the whole wall time: from
the spawn to the prelude's first line (Python's start), the imports, each step of the grading the main thread takes
or waits on, the report, and from the last mark to the process's exit. What runs beside the main thread (the
sandboxes' start, the runs of the student's tests on the other sandboxes) is listed apart, not added. A mark a
refactoring removed merges its phase into the next one, and the table says which were not found.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PRELUDE = r"""
import time
STARTED = time.monotonic()
import atexit, functools, importlib.abc, json, os, runpy, sys, threading

OUT = os.environ.pop("BENCH_PHASES_OUT")
MAIN = threading.main_thread()
TARGETS = json.loads(os.environ.pop("BENCH_PHASES_TARGETS"))
marks = {"python": STARTED}
spans = []
modules = {}
missing = []


def timed(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        main = threading.current_thread() is MAIN
        start = time.monotonic()
        if main:
            marks.setdefault(name + ":in", start)
        try:
            return fn(*args, **kwargs)
        finally:
            end = time.monotonic()
            spans.append((name, start, end, threading.get_ident()))
            if main:
                marks[name + ":out"] = end

    return wrapper


def heard(fn):
    @functools.wraps(fn)
    def wrapper(self, check, *args, **kwargs):
        marks["check:" + check.id] = time.monotonic()
        return fn(self, check, *args, **kwargs)

    return wrapper


def patch(module, names):
    for dotted in names:
        owner, _, attr = dotted.rpartition(".")
        target = module
        for part in filter(None, owner.split(".")):
            target = getattr(target, part, None)
        fn = getattr(target, attr.rstrip("*"), None)
        if fn is None:
            missing.append(module.__name__ + "." + dotted)
        elif attr.endswith("*"):
            setattr(target, attr.rstrip("*"), heard(fn))
        else:
            setattr(target, attr, timed(attr, fn))


class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name not in TARGETS:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(name, path, target) if find else None
            if spec is not None:
                break
        else:
            return None
        real = getattr(spec.loader, "exec_module", None)
        if real is None:
            return spec

        def exec_module(module):
            start = time.monotonic()
            real(module)
            end = time.monotonic()
            if threading.current_thread() is MAIN:
                modules[name] = end - start
                marks.setdefault("imported:" + name, end)
            patch(module, TARGETS[name])

        spec.loader.exec_module = exec_module
        return spec


def written():
    with open(OUT, "w") as f:
        json.dump({"marks": marks, "spans": spans, "modules": modules, "missing": missing,
                   "hypothesis": "hypothesis" in sys.modules}, f)


atexit.register(written)
sys.meta_path.insert(0, Hook())
sys.argv[0] = "grader"
runpy.run_module("grader.cli", run_name="__main__", alter_sys=True)
"""
"""Run as `python -c PRELUDE check ...`: grader.cli's main, timed from inside (see the module's docstring)."""

TARGETS = {
    "grader.commands.check": ["grade_once", "_prestart", "show", "CheckProgress.done*"],
    "grader.catalog": [],
    "grader.grading": ["grade", "suite_plan", "load"],
    "grader.lanes.suite": ["SuiteLane.planned", "SuiteLane._run"],
    "grader.sandbox.supervisor": ["Sandbox.wait_ready"],
    "grader.render.html": ["student_report"],
    "hypothesis": [],
}
"""Each watched module, and what of it is timed: a function, a method (Class.method), or CheckProgress.done*, which
notes when each check ends."""

SUITE_CHECKS = ("student_tests", "wheat", "sabotage")

ROWS = (
    ("python", "Python's start: the interpreter and site"),
    ("grade_once:in", "the command line's imports, its arguments read"),
    ("_prestart:out", "the isolation found, the file read, the sandboxes spawned (not waited for)"),
    ("imported:grader.catalog", "the grader's checks imported (the sandboxes start meanwhile)"),
    ("grade:in", "the assignment read"),
    ("suite_plan:in", "the submission read, the lanes opened, the first run of the student's tests sent"),
    ("planned:in", "the plan of engines (wheats, mutants, decoy), written while the sandboxes warm up"),
    ("load:out", "waiting for the engine's sandbox; the student's code loaded"),
    ("engine checks", "the engine checks ({engine} checks)"),
    ("check:student_tests", "waiting for the runs of the student's tests (student_tests)"),
    ("suite checks", "the other checks of the tests (wheat, sabotage)"),
    ("grade:out", "the result scored, repairs looked for, the sandboxes closed"),
    ("show:out", "the report: the table, the JSON, the HTML report, the check remembered"),
    ("reaped", "the process's exit"),
)
"""The main thread's phases, in order, each named by the mark that ends it."""


@dataclass
class Timed:
    """One instrumented check: its marks and spans (time.monotonic(), shared by every process of the machine)."""

    spawned: float
    reaped: float
    marks: dict[str, float]
    spans: list[tuple[str, float, float, int]]
    modules: dict[str, float]
    missing: list[str]
    hypothesis: bool
    result: dict

    @property
    def wall(self) -> float:
        return self.reaped - self.spawned

    def rows(self) -> list[tuple[str, float]]:
        """The phases, each with its seconds; together, the wall time. A mark not found (or out of order) merges
        its phase into the next."""
        checks = {k.split(":", 1)[1]: t for k, t in self.marks.items() if k.startswith("check:")}
        engine = [t for c, t in checks.items() if c not in SUITE_CHECKS]
        found = dict(self.marks, reaped=self.reaped)
        if engine:
            found["engine checks"] = max(engine)
        if checks:
            found["suite checks"] = max(checks.values())
        rows, pending, last = [], [], self.spawned
        for key, words in ROWS:
            words = words.format(engine=len(engine))
            at = found.get(key)
            if at is None or at < last:
                pending.append(words)
                continue
            rows.append(("; ".join([*pending, words]), at - last))
            pending, last = [], at
        return rows

    def beside(self) -> list[str]:
        """What ran beside the main thread, and the imports inside its phases (not added to the total)."""
        lines = []
        waits = [s for s in self.spans if s[0] == "wait_ready"]
        if waits:
            lines.append(
                f"the sandboxes' start: {len(waits)} waited for, {sum(e - s for _, s, e, _ in waits):.3f} s "
                "of waiting in all (on the main thread and the suite's)"
            )
        runs = [e - s for name, s, e, _ in self.spans if name == "_run"]
        if runs:
            threads = len({t for name, _, _, t in self.spans if name == "_run"})
            lines.append(
                f"the runs of the student's tests: {len(runs)}, {statistics.median(runs):.3f} s each (median), "
                f"{sum(runs):.3f} s in all, from {threads} thread(s), one per sandbox"
            )
        for name, words in (("grader.catalog", "the grader's checks"), ("grader.render.html", "the HTML report's")):
            if name in self.modules:
                lines.append(f"imports of {words} ({name}): {self.modules[name]:.3f} s")
        report = [e - s for name, s, e, _ in self.spans if name == "student_report"]
        if report:
            lines.append(f"the HTML report rendered (jinja2's templates, pygments): {sum(report):.3f} s")
        lines.append(f"hypothesis imported: {'yes' if self.hypothesis else 'no'}")
        checks = self.result.get("checks", [])
        lines.append(
            "each check's own time: " + ", ".join(f"{c['id']} {c['duration_s']:.2f}" for c in checks if "id" in c)
        )
        return lines


def run(folder: Path, env: dict[str, str], target: str = "micrograd_mine.py") -> Timed:
    """One `grader check` of folder's target (micrograd_mine.py, or a notebook), timed from inside."""
    out = folder / "phases.json"
    env = {**env, "BENCH_PHASES_OUT": str(out), "BENCH_PHASES_TARGETS": json.dumps(TARGETS)}
    spawned = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", PRELUDE, "check", target, "--json", "r.json"],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    reaped = time.monotonic()
    data = json.loads(out.read_text())
    out.unlink()
    result = json.loads((folder / "r.json").read_text())
    return Timed(
        spawned,
        reaped,
        data["marks"],
        [tuple(s) for s in data["spans"]],
        data["modules"],
        data["missing"],
        data["hypothesis"],
        result,
    )


def middle(runs: list[Timed]) -> Timed:
    """The run of median wall time (the lower of the two middle ones)."""
    return sorted(runs, key=lambda r: r.wall)[(len(runs) - 1) // 2]


def table(runs: list[Timed]) -> list[str]:
    """The phases of the run of median wall time among runs, adding up to its wall time, then what ran beside."""
    shown = middle(runs)
    rows = shown.rows()
    total = sum(seconds for _, seconds in rows)
    lines = [f"  {seconds:7.3f} s {seconds / total:4.0%}  {words}" for words, seconds in rows]
    lines.append(f"  {total:7.3f} s 100%  in all: the process's wall time, from its spawn to its exit")
    if shown.missing:
        lines.append(f"  (not found, their phases merged into the next: {', '.join(shown.missing)})")
    lines.append("  beside the main thread, and inside its phases (not added):")
    lines += [f"    {line}" for line in shown.beside()]
    return lines
