"""Which submissions are worth a second look as the same work: by structure, and by behaviour.

Structure: each file's fingerprints (fingerprints.py), less those of the starter kit and of the
lesson's own code (a base file), and less those so common in the class (in more than COMMON_MIN
files, or COMMON_SHARE of a large class) that they are the lesson's too, as MOSS sets aside a
passage found in more than 10 files. An index from each
fingerprint to the files holding it gives the candidate pairs: only files that share a fingerprint
are ever compared, never all pairs. A pair's structure score is the share of fingerprints they hold
in common (2 |A ∩ B| / (|A| + |B|)).

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
from typing import Any

from grader.insight.fingerprints import Fingerprints, fingerprints, lines_of
from grader.result import Result

STRUCTURE = 0.7
"""Structure score from which a pair is listed (renamed, reordered, reformatted copies score near 1;
independently written correct engines of the lesson at most about 0.55)."""
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


def _scored(works: list[Work], excluded: frozenset[int]) -> tuple[list[Fingerprints], set[int]]:
    prints = [fingerprints(w.source).without(excluded) for w in works]
    held = Counter(h for p in prints for h in p.spans)
    limit = max(COMMON_MIN, COMMON_SHARE * len(works))
    common = {h for h, n in held.items() if n > limit}
    return [p.without(common) for p in prints], common


def similar(works: list[Work], excluded_sources: tuple[str, ...] = ()) -> dict[str, Any]:
    """The pairs worth a look, highest score first, and what was compared (for summary.json)."""
    excluded = frozenset(h for source in excluded_sources for h in fingerprints(source).spans)
    prints, common = _scored(works, excluded)
    index: dict[int, list[int]] = {}
    for i, p in enumerate(prints):
        for h in p.spans:
            index.setdefault(h, []).append(i)
    shared: Counter[tuple[int, int]] = Counter()
    for holders in index.values():
        if len(holders) > 1:
            shared.update(pair for pair in combinations(holders, 2) if not (works[pair[0]].previous
                                                                             and works[pair[1]].previous))
    gave = Counter(a for w in works for a in w.wrong) + Counter(a for w in works for a in w.right)
    pairs = []
    for (i, j), count in shared.items():
        a, b = works[i], works[j]
        structure = 2 * count / (len(prints[i].spans) + len(prints[j].spans))
        if structure < MAYBE or count < MIN_SHARED:
            continue
        behaviour, wrong = _behaviour(a, b, gave)
        if structure < STRUCTURE and behaviour < BEHAVIOUR:
            continue
        common_prints = prints[i].hashes & prints[j].hashes
        pairs.append({"a": a.student, "b": b.student, "a_previous": a.previous, "b_previous": b.previous,
                      "structure": round(structure, 3), "behaviour": round(behaviour, 3),
                      "shared_wrong": [json.loads(x) for x in sorted(wrong)[:SHARED_SHOWN]],
                      "shared_wrong_count": len(wrong),
                      "a_lines": lines_of(prints[i], common_prints), "b_lines": lines_of(prints[j], common_prints)})
    pairs.sort(key=lambda p: (-max(p["structure"], p["behaviour"]), -p["structure"], p["a"], p["b"]))
    return {"pairs": pairs[:LISTED], "more_pairs": max(0, len(pairs) - LISTED), "compared": len(works),
            "candidates": len(shared), "common_fingerprints": len(common),
            "thresholds": {"structure": STRUCTURE, "maybe": MAYBE, "behaviour": BEHAVIOUR}}


def _behaviour(a: Work, b: Work, gave: Counter) -> tuple[float, set[str]]:
    """The behaviour score, and the wrong answers the two share."""
    wrong = a.wrong & b.wrong
    evidence = sum(1 / max(gave[x] - 1, 1) for x in wrong)
    evidence += sum(RIGHT_WEIGHT / max(gave[x] - 1, 1) for x in a.right & b.right)
    return 1 - math.exp(-evidence), wrong
