"""Which submissions are worth a second look as the same work: by structure, and by behaviour.

Structure: each file's fingerprints (fingerprints.py), less those of the starter kit and of the
lesson's own code (a base file). Each fingerprint weighs 1 / (the number of files holding it): code
the whole class wrote alike (the lesson's) weighs next to nothing, and a structure only two files
share weighs most. A pair's structure score is the weight of the fingerprints they share over the
mean of their own weights: 1 for a copy, however disguised. An index from each fingerprint held by
at most COMMON_MIN files (or COMMON_SHARE of a large class; MOSS likewise sets aside a passage found
in more than 10) to the files holding it gives the candidate pairs: only files that share a rare
fingerprint are ever compared, never all pairs.

Behaviour: two engines that give the same WRONG numbers on the same case are far more telling than
two that are right, and the rarer the wrong answer in the class, the more so. Each answer shared
adds evidence 1 / (how many others gave it), a right one a tenth of that; the score is
1 - exp(-evidence).

A pair is listed when its structure score is at least STRUCTURE, or at least MAYBE with a behaviour
score of at least BEHAVIOUR. Nothing here is a verdict: the class page says "worth a look", and shows
both files side by side with the matching lines marked.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypedDict

from grader.insight.fingerprints import MAX_CHARS, Fingerprints, fingerprints, lines_of
from grader.result import Result

STRUCTURE = 0.7
"""Structure score from which a pair is listed (renamed, reordered, reformatted copies score 1; the
project's independently written correct engines at most 0.29 against each other)."""
MAYBE = 0.45
"""Structure score from which a pair is listed when its behaviour score is at least BEHAVIOUR too."""
BEHAVIOUR = 0.6
COMMON_MIN = 10
COMMON_SHARE = 0.005
MIN_SHARED = 5
"""Fewest fingerprints a listed pair shares (two files left with a handful each prove nothing)."""
RIGHT_WEIGHT = 0.1
"""What a shared right answer weighs against a shared wrong one."""
SHARED_SHOWN = 5
"""Most shared wrong answers a pair lists."""
LISTED = 200
"""Most pairs listed (the highest scores first)."""


@dataclass(frozen=True)
class Work:
    """One submission as the similarity pass sees it."""

    student: str
    source: str
    """The code (a notebook's code cells, one after the other)."""
    wrong: frozenset[str] = frozenset()
    """Its wrong answers: each a case and what its engine gave (JSON), as its result's checks recorded them."""
    right: frozenset[str] = frozenset()
    """The checks it passed."""
    previous: bool = False
    """From an earlier term's graded folder (--previous): compared with this term's, never with its own."""


class Pair(TypedDict):
    """Two submissions worth a look, as summary.json lists them."""

    a: str
    b: str
    a_previous: bool
    b_previous: bool
    structure: float
    behaviour: float
    shared_wrong: list[Any]
    """The wrong answers both gave (each a case and what was got), at most SHARED_SHOWN."""
    shared_wrong_count: int
    a_lines: list[tuple[int, int]]
    b_lines: list[tuple[int, int]]
    """The (first, last) line ranges of each file that the fingerprints they share cover."""


def answers(result: Result) -> tuple[frozenset[str], frozenset[str]]:
    """(wrong, right): a failed check's case and the numbers given on it; the checks passed."""
    wrong, right = set(), set()
    for check in result.checks:
        if check.status == "passed":
            right.add(check.id)
        elif check.status == "failed" and check.counterexample is not None:
            example = check.counterexample
            wrong.add(json.dumps({"code": example.code, "got": example.got}, sort_keys=True, default=str))
    return frozenset(wrong), frozenset(right)


def similar(works: list[Work], excluded_sources: tuple[str, ...] = ()) -> dict[str, Any]:
    """The pairs worth a look, highest score first, and what was compared (for summary.json)."""
    excluded = frozenset(h for source in excluded_sources for h in fingerprints(source).spans)
    prints = [_fingerprints(w.source).without(excluded) for w in works]
    held = Counter(h for p in prints for h in p.spans)
    weight = {h: 1 / n for h, n in held.items()}
    totals = [sum(weight[h] for h in p.spans) for p in prints]
    limit = max(COMMON_MIN, COMMON_SHARE * len(works))
    index: dict[int, list[int]] = {}
    for i, p in enumerate(prints):
        for h in p.spans:
            if held[h] <= limit:
                index.setdefault(h, []).append(i)
    candidates = {
        pair
        for holders in index.values()
        if len(holders) > 1
        for pair in combinations(holders, 2)
        if not (works[pair[0]].previous and works[pair[1]].previous)
    }
    gave = Counter(a for w in works for a in w.wrong) + Counter(a for w in works for a in w.right)
    pairs: list[Pair] = []
    for i, j in sorted(candidates):
        a, b = works[i], works[j]
        both = prints[i].hashes & prints[j].hashes
        structure = 2 * sum(weight[h] for h in both) / (totals[i] + totals[j])
        if structure < MAYBE or len(both) < MIN_SHARED:
            continue
        behaviour, wrong = _behaviour(a, b, gave)
        if structure < STRUCTURE and behaviour < BEHAVIOUR:
            continue
        pairs.append(
            {
                "a": a.student,
                "b": b.student,
                "a_previous": a.previous,
                "b_previous": b.previous,
                "structure": round(structure, 3),
                "behaviour": round(behaviour, 3),
                "shared_wrong": [json.loads(x) for x in sorted(wrong)[:SHARED_SHOWN]],
                "shared_wrong_count": len(wrong),
                "a_lines": lines_of(prints[i], both),
                "b_lines": lines_of(prints[j], both),
            }
        )
    pairs.sort(key=lambda p: (-max(p["structure"], p["behaviour"]), -p["structure"], p["a"], p["b"]))
    too_long = sorted(w.student for w in works if len(w.source) > MAX_CHARS and not w.previous)
    return {
        "pairs": pairs[:LISTED],
        "more_pairs": max(0, len(pairs) - LISTED),
        "compared": len(works),
        "not_compared": too_long,
        "candidates": len(candidates),
        "common_fingerprints": sum(n > limit for n in held.values()),
        "thresholds": {"structure": STRUCTURE, "maybe": MAYBE, "behaviour": BEHAVIOUR},
    }


def _fingerprints(source: str) -> Fingerprints:
    """A student's fingerprints; none, as for code that does not parse, if reading them fails: one student's code
    never stops the pass for the class."""
    try:
        return fingerprints(source)
    except Exception:
        return Fingerprints({}, 0)


def _behaviour(a: Work, b: Work, gave: Counter) -> tuple[float, frozenset[str]]:
    """The behaviour score, and the wrong answers the two share."""
    wrong = a.wrong & b.wrong
    evidence = sum(1 / max(gave[x] - 1, 1) for x in wrong)
    evidence += sum(RIGHT_WEIGHT / max(gave[x] - 1, 1) for x in a.right & b.right)
    return 1 - math.exp(-evidence), wrong
