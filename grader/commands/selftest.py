"""`grader selftest`: the sabotage operators against the engines they mutate.

Says first what it proves, in plain words, and shows its progress on stderr. Prints which operators each
wheat and the reference admit, then grades every engine and
every mutant with the engine checks: each unmutated engine must pass, and each mutant
must be caught by the check named for its operator (and so differ from a correct engine).
Last, every operator's catch hint is run as the test it describes (hints.py): it must pass
on every correct engine and catch every mutant of its operator.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path

import reference
from grader import catalog, hints, spec
from grader.checks.suite import SUITE_CHECKS
from grader.errors import ExitCode, NotApplicable
from grader.files import MODULE_FILE
from grader.grading import grade
from grader.result import Result
from grader.sabotage import all_operators, mutant, wheats
from grader.sabotage.operators import NOT_DRAWN

MARK = {"passed": ".", "failed": "X", "error": "E", "skipped": "-"}
ADVISORY = "~"
"""The mark of an advisory check (no points, e.g. deep_graph) not passed: no failure, and never under an OK."""


@dataclass(frozen=True)
class Engine:
    id: str
    source: str
    check: str | None = None
    """For a mutant: the check named for its operator."""


def reference_source() -> str:
    """The reference engine and its Neuron, Layer and MLP as one student file (never sent to a sandbox but here)."""
    folder = Path(reference.__file__).parent
    nn = (folder / "nn.py").read_text(encoding="utf-8")
    nn = nn.replace("from __future__ import annotations\n", "").replace("from reference.engine import Value\n", "")
    return (folder / "engine.py").read_text(encoding="utf-8") + "\n\n" + nn


def engines(operator_ids: tuple[str, ...]) -> tuple[list[Engine], list[Engine]]:
    """The unmutated engines (the reference, then the wheats), and every mutant they admit."""
    bases = [Engine("reference", reference_source())] + [Engine(w.id, w.source) for w in wheats()]
    mutants = []
    for op_id in operator_ids:
        op = all_operators()[op_id]
        for base in bases:
            source = mutant(op_id, base.id) if base.id != "reference" else _try(op, base.source)
            if source is not None:
                mutants.append(Engine(f"{op_id}@{base.id}", source, op.check))
    return bases, mutants


def _try(op, source: str) -> str | None:
    try:
        return op.apply(source)
    except NotApplicable:
        return None


def main(*, assignment: str) -> int:
    task = catalog.load(assignment).without(SUITE_CHECKS)
    task = replace(task, sabotages=task.sabotages + tuple(op for op in NOT_DRAWN if op not in task.sabotages))
    bases, mutants = engines(task.sabotages)
    print(purpose(task.id, bases, mutants), flush=True)
    tell = Tell(sys.stderr)
    # One process per grading at a time, not threads: Python 3.11's ast is not safe to use from two threads
    # at once (a grading parses engines), and a thread pool marked random mutants E.
    with (
        tempfile.TemporaryDirectory(prefix="grader-selftest-") as tmp,
        ProcessPoolExecutor(
            max_workers=os.cpu_count() or 2, mp_context=multiprocessing.get_context("forkserver")
        ) as pool,
    ):
        everyone = bases + mutants
        futures = {pool.submit(grade_engine, engine, Path(tmp), task): k for k, engine in enumerate(everyone)}
        by_index: dict[int, Result] = {}
        for done, future in enumerate(as_completed(futures), 1):
            by_index[futures[future]] = future.result()
            tell(f"[{done}/{len(everyone)}] graded {everyone[futures[future]].id} with the engine checks")
        results = [by_index[k] for k in range(len(everyone))]  # every engine's, in their order
    tell.clear()
    print(admission(bases, task.sabotages))
    print(render(everyone, results, [c.id for c in task.checks]))
    print("\n" + repairs(everyone, results))
    tell(f"running each catch hint as a test on {len(everyone)} engines (one run of pytest per engine)...")
    outcomes = hints.prove(bases, mutants, task.sabotages)
    tell.clear()
    unproven = hints.problems(bases, mutants, outcomes, task.sabotages)
    print("\n" + hints.render(mutants, outcomes, task.sabotages))
    print(
        "\n".join(f"PROBLEM: {p}" for p in unproven)
        or "OK: every catch hint's test passes on every correct engine and catches every mutant of its operator."
    )
    wrong = problems(everyone, results) + unproven
    print(
        f"\nNot proved: {len(wrong)} problem{'s' if len(wrong) != 1 else ''} (the PROBLEM lines above)."
        if wrong
        else "\nProved: all three. This grader tells every correct engine from every planted bug, and each hint "
        "it gives students catches the bug it names."
    )
    return ExitCode.OK if not wrong else ExitCode.FAILED


def purpose(assignment: str, bases: list[Engine], mutants: list[Engine]) -> str:
    """What selftest proves, in plain words, before it starts (it takes a minute or two)."""
    return (
        f"grader selftest: does this grader tell right from wrong on assignment {assignment}?\n"
        f"It grades the reference engine, {len(bases) - 1} correct engines written in other styles, and "
        f"{len(mutants)} engines each with one\n"
        "classic bug planted (mutants); then it runs, on all of them, the test each catch hint describes (what a\n"
        "student whose tests missed a bug is told to write). It ends with 'Proved: all three.' once it has shown:\n"
        "  1. every correct engine passes every engine check: no false alarm;\n"
        "  2. every mutant fails the check named for its bug, and none is a correct engine in disguise;\n"
        "  3. every catch hint's test passes on every correct engine and fails on every mutant of its bug.\n"
        "It also shows which mutants the verified repair (the bug's inverse edit, found in the mutant's code and\n"
        "graded again) restores to full marks.\n"
    )


class Tell:
    """Progress on stderr: on a terminal one line rewritten in place, else one line per step."""

    def __init__(self, stream):
        self.stream, self.live = stream, stream.isatty()

    def __call__(self, line: str) -> None:
        self.stream.write(f"\r\x1b[K{line}" if self.live else f"{line}\n")
        self.stream.flush()

    def clear(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def grade_engine(engine: Engine, tmp: Path, task: spec.Assignment) -> Result:
    """One engine graded as a student's file would be, in a folder of its own under tmp."""
    folder = tmp / engine.id
    folder.mkdir()
    (folder / MODULE_FILE).write_text(engine.source, encoding="utf-8")
    return grade(folder / MODULE_FILE, task)


def admission(bases: list[Engine], operator_ids: tuple[str, ...]) -> str:
    """Which operators each engine admits (+) and which find nothing to change (-)."""
    width = max(len(o) for o in operator_ids) + 2
    lines = [
        "Operators each engine admits (+ applies, - finds nothing to change)",
        "",
        " " * width + " ".join(f"{b.id[:12]:>12}" for b in bases),
    ]
    for op_id in operator_ids:
        op = all_operators()[op_id]
        marks = [
            "+" if (mutant(op_id, b.id) if b.id != "reference" else _try(op, b.source)) is not None else "-"
            for b in bases
        ]
        lines.append(f"{op_id:<{width}}" + " ".join(f"{m:>12}" for m in marks))
    return "\n".join(lines) + "\n"


def problems(engines_: list[Engine], results: list[Result]) -> list[str]:
    """What is wrong: an unmutated engine that fails, a mutant its named check misses or that passes everything."""
    found = []
    for engine, result in zip(engines_, results, strict=False):
        if engine.check is None:
            if not result.passed:
                failing = ", ".join(c.id for c in result.checks if c.status != "passed" and c.max_score > 0)
                found.append(f"the correct engine {engine.id} fails: {failing or result.error}")
            continue
        statuses = {c.id: c.status for c in result.checks}
        if statuses.get(engine.check) not in ("failed", "error"):
            found.append(f"{engine.id} is not caught by {engine.check}, the check named for its operator")
        if result.passed:
            found.append(f"{engine.id} passes every check: it is equivalent to a correct engine")
    return found


def restored(engine: Engine, result: Result) -> str:
    """Whether the verified repair of the mutant's own bug gives it full marks: 'line N' when it does, else
    why not."""
    op = all_operators()[engine.id.split("@")[0]]
    failing = {c.id for c in result.checks if c.status in ("failed", "error") and c.max_score > 0}
    mine = [c.repair for c in result.checks if c.cause == op.cause.id and c.repair is not None]
    if not mine:
        named = any(c.cause == op.cause.id for c in result.checks)
        return "no repair: " + ("none verified" if named else "no check names the cause")
    fixes = {f for c in result.checks if c.repair is not None for f in c.repair.fixes}
    line = mine[0].changes[0].line
    return f"line {line}" if failing <= fixes else f"line {line}, but {', '.join(sorted(failing - fixes))} still fail"


def repairs(engines_: list[Engine], results: list[Result]) -> str:
    """For each operator, each of its mutants restored to full marks by its verified repair (or why not)."""
    lines = ["Verified repairs: each mutant's bug undone in its own code, and the copy graded again", ""]
    width = max(len(e.id) for e in engines_) + 2
    found = [(e, restored(e, r)) for e, r in zip(engines_, results, strict=False) if e.check is not None]
    lines += [f"  repair of {e.id:<{width}} {said}" for e, said in found]
    missing = [e.id for e, said in found if not said.startswith("line") or "still fail" in said]
    lines.append(
        f"NOT RESTORED: {', '.join(missing)} (informational: a cause no check names, or a rewrite)"
        if missing
        else f"OK: each of the {len(found)} mutants is restored to full marks by the repair the grader verified."
    )
    return "\n".join(lines)


def render(engines_: list[Engine], results: list[Result], check_ids: list[str]) -> str:
    width = max(len(e.id) for e in engines_) + 2
    header = " " * width + " ".join(f"{i:>3}" for i in range(1, len(check_ids) + 1))
    lines = [
        "Engine checks on the correct engines and each mutant",
        f"(. passed, X failed, E error, - skipped, {ADVISORY} an advisory check, worth no points, not passed; "
        "[ ] marks the check named for the mutant's operator)",
        "",
        header,
    ]
    for engine, result in zip(engines_, results, strict=False):
        by_id = {c.id: c for c in result.checks}
        cells = []
        for check_id in check_ids:
            mark = _mark(by_id.get(check_id))
            cells.append(f"[{mark}]" if check_id == engine.check else f" {mark} ")
        lines.append(f"{engine.id:<{width}}" + " ".join(cells))
    lines += ["", "Checks: " + ", ".join(f"{i} {c}" for i, c in enumerate(check_ids, 1)), ""]
    found = problems(engines_, results)
    mutants = sum(e.check is not None for e in engines_)
    lines += [f"PROBLEM: {p}" for p in found] or [
        f"OK: every correct engine passes every check worth points; each of the {mutants} mutants is caught by the "
        "check named for its operator, and none is equivalent to a correct engine."
    ]
    return "\n".join(lines)


def _mark(check) -> str:
    """A check's mark in the table: its status's, or ADVISORY for a check worth no points that did not pass."""
    if check is None:
        return MARK["skipped"]
    if check.max_score == 0 and check.status != "passed":
        return ADVISORY
    return MARK.get(check.status, "?")
