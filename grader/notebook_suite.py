"""The suite lane's way with a notebook: its demo cells run once.

Each run of the tests on another engine runs only the cells the tests need (grader/slicing.py says
why not a fork of the executed notebook), once a run on the student's own engine with only those
cells gives every test the same outcome, and every probe the same numbers, as the run on the whole
notebook. With sandboxes of the lane's own, the runs start at once, while the engine lane runs the
notebook: the run on the needed cells first, then the other engines', shared with the engine lane's
sandbox once it joins (or a second of the lane's own), and the run on the whole notebook on the first
of them free to take it. They stand when the engine lane's run shows no needed cell
timed out or killed the kernel, and the two runs on the student's engine agree; otherwise the lane
goes the usual way (every run on the whole notebook but the cells that stopped it).

The suite lane (grader/lanes/suite.py, SuiteLane._early and SuiteLane._only_needed) makes the runs; what is judged of
them is here, from values alone: which cells are demo cells, and whether two runs on the student's engine agree.
"""

from __future__ import annotations

from typing import Any, Protocol

from grader import protocol, suite_replies
from grader.protocol import Code


class Said(Protocol):
    """What is compared of a run of the tests (grader/lanes/run.py's RunReply): its reply, a claim, and the engine's
    numbers on the probes, as the run said them before its test file was written."""

    reply: dict[str, Any] | None
    probes: tuple | None


def demo(code: Code, needed: frozenset[int]) -> frozenset[int]:
    """The notebook's cells its tests do not need (numbered from 0)."""
    return frozenset(i for i, _ in code.cells if i not in needed)


def same_run(whole: Said, needed: Said | None) -> bool:
    """Did two runs of the tests on the student's engine (claims) give every test the same outcome, the
    same collection errors and the same probe numbers?"""

    def summary(run: Said) -> tuple | None:
        reply = run.reply
        if not isinstance(reply, dict) or protocol.raised(reply) is not None:
            return None
        try:
            claim = suite_replies.suite_run(reply.get("result"), None)
        except ValueError:
            return None
        return {n: t["outcome"] for n, t in claim.tests.items()}, claim.collection_errors, run.probes

    first = summary(whole)
    return first is not None and needed is not None and first == summary(needed)
