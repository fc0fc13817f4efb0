"""No pass without evidence: what a check probed, and what it could not probe and why.

A check passes only when every property it is worth points for was probed and held: each operation it is
about, in each shape its rubric names (an incoming gradient other than 1, a value used twice through each
operation, shared nodes). A property it could not probe, because another check's bug stands in the way,
makes it skipped, naming that check: never passed. What was probed goes into the result as
`artifacts.probed`, and the checks that blocked the rest as `artifacts.blocked_by`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace

from grader.checks.context import reference_run
from grader.programs import Program, ancestors, consumers
from grader.result import Outcome
from grader.sandbox.inside.ops import WORDS


@dataclass(frozen=True)
class Missing:
    """A property a check could not probe: why, in a few words, and the check whose bug blocked it."""

    property: str
    why: str
    blocker: str | None = None


@dataclass(frozen=True)
class Evidence:
    probed: tuple[str, ...] = ()
    """What the check probed (and found to hold, when it passed)."""
    missing: tuple[Missing, ...] = ()
    """What it is worth points for and could not probe."""

    def settle(self, outcome: Outcome) -> Outcome:
        """The outcome of a check with this evidence: a pass keeps its points only when nothing is missing, and
        is skipped otherwise, saying what could not be probed and which check blocked it; a pass or a skip
        records what was probed."""
        if outcome.status not in ("passed", "skipped"):
            return outcome
        if outcome.status == "skipped" or not self.missing:
            return replace(outcome, artifacts={**outcome.artifacts, "probed": list(self.probed)})
        return self.skipped()

    def skipped(self) -> Outcome:
        """The skip this evidence calls for: what could not be probed and why, each naming the check whose bug
        blocked it, then what was probed."""
        groups: dict[tuple[str, str | None], list[str]] = {}
        for m in self.missing:  # one sentence per reason, naming every property it kept from being probed
            groups.setdefault((m.why, m.blocker), []).append(m.property)
        said = [(_listed(properties), why) for (why, _), properties in groups.items()]
        lines = [f"Not judged: {said[0][0]} could not be probed yet: {said[0][1]}."]
        lines += [f"Nor could {what}: {why}." for what, why in said[1:]]
        if self.probed:
            lines.append(f"What could be probed held: {_listed(list(self.probed))}.")
        blockers = list(dict.fromkeys(m.blocker for m in self.missing if m.blocker))
        return Outcome("skipped", "\n".join(lines), artifacts={"probed": list(self.probed), "blocked_by": blockers})


def _listed(items: list[str]) -> str:
    """Properties in one phrase, the words they start with said once: 'a value used twice through + and *'."""
    if len(items) == 1:
        return items[0]
    common = os.path.commonprefix(items)
    common = common[: common.rfind(" ") + 1] if " " in common else ""
    common = common if len(common) >= 12 else ""  # whole words said once, never the start of an operation
    rest = [item[len(common) :] for item in items]
    return f"{common}{', '.join(rest[:-1])} and {rest[-1]}"


def blocked(why: str, blocker: str | None) -> str:
    """why, followed by the check to see: 'why (see blocker)'."""
    return f"{why} (see {blocker})" if blocker else why


def word(op: str) -> str:
    """How feedback names an operation: +, *, **, tanh."""
    return WORDS.get(op, op)


def listed_ops(ops: Iterable[str]) -> str:
    """Operations named in one phrase: '-x and a - b', '*, ** and tanh'."""
    return listed([word(op) for op in ops])


def listed(names: list[str]) -> str:
    """Names in one phrase: 'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


INCOMING = " under an incoming gradient other than 1"


def incoming(op: str) -> str:
    return word(op) + INCOMING


def rule_properties(ops: Iterable[str]) -> tuple[str, ...]:
    """What a rule check is worth points for, per operation: the rule itself, and the rule times an incoming
    gradient other than 1 (a rule that forgets out.grad is right only when it is 1)."""
    return tuple(p for op in ops for p in (word(op), incoming(op)))


def rule_probed(programs: Iterable[Program], ops: Iterable[str]) -> tuple[str, ...]:
    """The rule properties of ops that the programs (each judged) probe: an operation node the output depends on,
    and one whose gradient on the reference engine is not 1."""
    wanted = set(ops)
    found: set[str] = set()
    for program in programs:
        expected = reference_run(program)
        if expected is None or expected.grad is None:
            continue
        for i in ancestors(program):
            op = program[i][0]
            if op in wanted:
                found.add(word(op))
                if abs(expected.grad[i] - 1.0) > 1e-9:
                    found.add(incoming(op))
    return tuple(p for p in rule_properties(ops) if p in found)


def ops_probed(programs: Iterable[Program], ops: Iterable[str]) -> tuple[str, ...]:
    """Which of ops appear among the nodes the output depends on, in the programs (each judged)."""
    seen = {program[i][0] for program in programs for i in ancestors(program)}
    return tuple(word(op) for op in ops if op in seen)


def shares(program: Program) -> bool:
    """Does an operation node of the program feed the output along two paths (a diamond, fan-out)?"""
    return any(count > 1 and program[j][0] != "leaf" for j, count in consumers(program).items())


def not_judged(why: str, *blockers: str) -> Outcome:
    """A skip, naming in its artifacts (blocked_by) the checks whose bugs stand in the way (those its reason
    points the student at: '(see forward)')."""
    return Outcome("skipped", f"Not judged: {why}.", artifacts={"probed": [], "blocked_by": list(blockers)})
