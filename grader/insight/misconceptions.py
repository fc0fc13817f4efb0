"""What the class got wrong, counted by misconception rather than by check.

An instructor preparing the next lecture wants "7 students: `=` for `+=` (5 in __mul__, 2 in
__add__)", not "accumulate 9/15". Every graded check that failed from a recognised cause carries
the cause's id (grader/causes.py, the same source as the students' feedback); a student is counted
once per cause, however many checks failed from it. `=` for `+=` is one misconception whichever
rule it is in, so its causes are counted together and then by method. Each misconception comes with
the smallest case the class's own engines failed on, for the instructor to show. Checks worth no
points (deep_graph, advisory) are kept apart and never head the list; students whose pointed checks
failed with no recognised cause at all are counted by check.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from grader.causes import CAUSES
from grader.result import Result

FAMILIES = {
    "assign_in_": "`=` for `+=` in a backward: a value used twice keeps only one path's gradient",
    "detached_": "an operation built without its inputs as children: nothing flows back through it",
    "missing_outgrad_": "a backward that does not multiply by out.grad: right on the output only, wrong inside any "
    "larger expression",
    "backward_on_input_": "a rule's _backward set on the operation's input instead of on its output: the input's "
    "own rule is lost",
}
"""Causes counted as one misconception, by id prefix, with the family's words."""


@dataclass(frozen=True)
class Seen:
    """One student's check failing from one cause, with its smallest case."""

    student: str
    cause: str
    check: str
    counterexample: dict[str, Any] | None
    repaired: bool = False
    """Did the student's result offer a verified repair for the cause (grader/repair/: one edit fixes it)?"""


class Part(TypedDict):
    """The students whose checks failed from one cause of a misconception, as summary.json lists them."""

    cause: str
    method: str | None
    words: str
    count: int
    students: list[str]
    repaired: int
    """How many of those students got a verified repair for the cause (always present: 0 when none did)."""
    counterexample: dict[str, Any] | None


def family(cause: str) -> str:
    return next((prefix.rstrip("_") for prefix in FAMILIES if cause.startswith(prefix)), cause)


def _seen(students: list[tuple[str, Result]]) -> list[Seen]:
    seen = []
    for student, result in students:
        if result.status != "graded":
            continue
        repaired = _repaired(result)
        for check in result.checks:
            if check.status in ("failed", "error") and check.cause in CAUSES and check.max_score > 0:
                example = asdict(check.counterexample) if check.counterexample else None
                seen += [Seen(student, cause, check.id, example, cause in repaired) for cause in _every_method(check)]
    return seen


def _every_method(check) -> list[str]:
    """The check's cause, and the same misconception's in the other methods it was found in (artifacts' causes)."""
    found = check.artifacts.get("causes")
    if not isinstance(found, list) or not found or found[0] != check.cause:
        return [check.cause]
    return [cause for cause in dict.fromkeys(found) if cause in CAUSES]


def _repaired(result: Result) -> set[str]:
    """The causes a verified repair of the result undoes."""
    return {c.cause for c in result.checks if c.cause and c.repair is not None}


SLOPES = frozenset({"gradcheck"})
"""The checks whose case's expected numbers are central differences of the student's own forward pass, not the
lesson's engine's (a reteach notebook shows the lesson's, and runs its engine on the case)."""


def _smallest(seen: list[Seen]) -> dict[str, Any] | None:
    """The shortest case among them (by lines, then characters; the first found on a tie), with its check,
    preferring one whose every value is a Python expression (`a.grad`, not an order of calls: a reteach notebook
    prints them by running the case), then one whose expected numbers are the lesson's engine's (a gradcheck
    case's are slopes of a student's forward pass, a little off the lesson's exact numbers)."""
    cases = [(s.check, s.counterexample) for s in seen if s.counterexample]
    if not cases:
        return None
    check, example = min(
        cases,
        key=lambda case: (
            not all(expression(name) for name in case[1]["expected"]),
            case[0] in SLOPES,
            case[1]["code"].count("\n"),
            len(case[1]["code"]),
        ),
    )
    return {"check": check, **example}


def expression(name: str) -> bool:
    """Is a case's name a Python expression (`a.grad`), which the case's code can print?"""
    try:
        compile(name, "<name>", "eval")
    except SyntaxError:
        return False
    return True


def _entry(key: str, seen: list[Seen]) -> dict[str, Any]:
    students = sorted({s.student for s in seen})
    parts: list[Part] = []
    for cause in sorted({s.cause for s in seen}):
        mine = [s for s in seen if s.cause == cause]
        parts.append(
            {
                "cause": cause,
                "method": CAUSES[cause].method,
                "words": CAUSES[cause].sentence,
                "count": len({s.student for s in mine}),
                "students": sorted({s.student for s in mine}),
                "repaired": len({s.student for s in mine if s.repaired}),
                "counterexample": _smallest(mine),
            }
        )
    parts.sort(key=lambda p: (-p["count"], p["cause"]))
    words = next((w for prefix, w in FAMILIES.items() if key == prefix.rstrip("_")), None) or CAUSES[key].sentence
    return {
        "id": key,
        "words": words,
        "count": len(students),
        "students": students,
        "repaired": len({s.student for s in seen if s.repaired}),
        "checks": sorted({s.check for s in seen}),
        "parts": parts,
        "counterexample": _smallest(seen),
    }


def tally(students: list[tuple[str, Result]], apart: Collection[str] = ()) -> dict[str, Any]:
    """summary.json's class insight: `misconceptions` (most students first, each counted once per student),
    `unexplained` (students with a pointed check failed and no recognised cause, by check; never a check of
    `apart`, those on the students' own tests, whose failure is no misconception of the engine) and `advisory`
    (checks worth no points, by check)."""
    seen = _seen(students)
    by_family: dict[str, list[Seen]] = {}
    for s in seen:
        by_family.setdefault(family(s.cause), []).append(s)
    misconceptions = sorted(
        (_entry(key, members) for key, members in by_family.items()), key=lambda e: (-e["count"], e["id"])
    )
    misconceptions = [{**e, "headline": headline(e)} for e in misconceptions]
    unexplained: dict[str, set[str]] = {}
    explained = {s.student for s in seen}
    advisory: dict[str, dict[str, Any]] = {}
    for student, result in students:
        if result.status != "graded":
            continue
        for check in result.checks:
            if check.status not in ("failed", "error"):
                continue
            if check.max_score == 0:
                entry = advisory.setdefault(check.id, {"check": check.id, "title": check.title, "students": set()})
                entry["students"].add(student)
            elif student not in explained and check.id not in apart:
                unexplained.setdefault(check.id, set()).add(student)
    return {
        "misconceptions": misconceptions,
        "unexplained": [
            {"check": c, "count": len(s), "students": sorted(s)}
            for c, s in sorted(unexplained.items(), key=lambda i: (-len(i[1]), i[0]))
        ],
        "advisory": [
            {**e, "count": len(e["students"]), "students": sorted(e["students"])} for _, e in sorted(advisory.items())
        ],
    }


def headline(entry: dict[str, Any]) -> str:
    """One line for a misconception: '3 students: `=` for `+=` ... (2 in __mul__, 1 in __add__)'."""
    noun = "student" if entry["count"] == 1 else "students"
    split = ""
    if len(entry["parts"]) > 1 or entry["id"] != entry["parts"][0]["cause"]:
        split = " (" + ", ".join(f"{p['count']} in {p['method'] or p['cause']}" for p in entry["parts"]) + ")"
    return f"{entry['count']} {noun}: {entry['words']}{split}"
