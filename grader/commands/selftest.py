"""`grader selftest`: grade the reference and every sabotaged engine with the engine checks,
and show that each sabotage is caught by the check named for it."""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grader import spec
from grader.grading import grade
from grader.checks.suite import SUITE_CHECKS
from grader.result import Result
from grader.sabotage import Engine, catalogue, submission_source

MARK = {"passed": ".", "failed": "X", "error": "E", "skipped": "-"}


def main(*, assignment: str) -> int:
    task = spec.load(assignment).without(SUITE_CHECKS)
    cat = catalogue()
    engines = [cat.wheats[0]] + [s for s in cat.sabotages if s.id in task.sabotages]
    with tempfile.TemporaryDirectory(prefix="grader-selftest-") as tmp, \
            ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda e: _grade(e, Path(tmp), task), engines))
    print(render(engines, results, [c.id for c in task.checks]))
    return 0 if problems(engines, results) == [] else 1


def _grade(engine: Engine, tmp: Path, task: spec.Assignment) -> Result:
    folder = tmp / engine.id
    folder.mkdir()
    (folder / "micrograd_mine.py").write_text(submission_source(engine), encoding="utf-8")
    return grade(folder / "micrograd_mine.py", task)


def problems(engines: list[Engine], results: list[Result]) -> list[str]:
    """What is wrong with the catalogue: a reference that fails, a sabotage no check catches."""
    found = []
    reference, *sabotaged = zip(engines, results)
    if not reference[1].passed:
        found.append("the reference engine fails: " + ", ".join(c.id for c in reference[1].checks if c.status != "passed"
                                                               and c.max_score > 0))
    for engine, result in sabotaged:
        statuses = {c.id: c.status for c in result.checks}
        if statuses.get(engine.check) not in ("failed", "error"):
            found.append(f"{engine.id} is not caught by {engine.check}, the check named for it")
        if result.passed:
            found.append(f"{engine.id} passes every check: it is equivalent to a correct engine")
    return found


def render(engines: list[Engine], results: list[Result], check_ids: list[str]) -> str:
    width = max(len(e.id) for e in engines) + 2
    header = " " * width + " ".join(f"{i:>3}" for i in range(1, len(check_ids) + 1))
    lines = ["Engine checks on the reference and each sabotaged engine", "(. passed, X failed, E error, "
             "- skipped; [ ] marks the check named for the sabotage)", "", header]
    for engine, result in zip(engines, results):
        statuses = {c.id: c.status for c in result.checks}
        cells = []
        for check_id in check_ids:
            mark = MARK[statuses[check_id]]
            cells.append(f"[{mark}]" if check_id == engine.check else f" {mark} ")
        lines.append(f"{engine.id:<{width}}" + " ".join(cells))
    lines += ["", "Checks: " + ", ".join(f"{i} {c}" for i, c in enumerate(check_ids, 1)), ""]
    found = problems(engines, results)
    lines += [f"PROBLEM: {p}" for p in found] or [
        f"OK: the reference passes; each of the {len(engines) - 1} sabotaged engines is caught by the check named "
        "for it, and none is equivalent to a correct engine."]
    return "\n".join(lines)
