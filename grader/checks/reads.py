"""What a check may read of the checks before it: their results, and only those it declares.

A check declares the checks whose results it reads (`@check(..., reads=(...))`, registry.py); the runner
(runner.py) runs those first and hands the check a `Reads` of their results, as `ctx.reads`. Reading any other
check's result raises UndeclaredRead: what a check sees is fixed by its declaration, never by the order an
assignment lists its checks in, nor by whichever checks happened to run before it.

A result, `Ran`, is the check's outcome as the runner recorded it (a time limit's or a hang's included) and what
it found on its way (`Found`): the smallest failing cases of its searches, whether its numbers changed from try to
try, and the causes it named. A check records these in `ctx.finding` as it runs; the runner freezes them into its
result when it ends.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from grader.errors import UndeclaredRead
from grader.programs import Program
from grader.result import Outcome


@dataclass(frozen=True)
class Found:
    """What a check found on its way that the checks reading it use, beside its outcome."""

    cases: tuple[Program, ...] = ()
    """The smallest failing cases its searches found, in order (gradcheck judges them too: one search for all)."""
    unstable: str | None = None
    """The first check, of those judged in its run, whose numbers changed from try to try (the engine's order
    follows memory addresses): its own id, or a rule's it judged for itself (training's card names it first)."""
    named: tuple[str, ...] = ()
    """The causes it named (checks/diagnose.py), in order (training tests each one's replay on the whole loop)."""


@dataclass
class Finding:
    """What the running check has found so far (ctx.finding): the runner gives each check a new one, and keeps it,
    frozen, in the check's result."""

    cases: list[Program] = field(default_factory=list)
    unstable: str | None = None
    named: list[str] = field(default_factory=list)

    def case(self, program: Program) -> None:
        self.cases.append(program)

    def changed(self, check_id: str) -> None:
        """check_id's numbers changed from try to try (the first such check of this run is the one kept)."""
        self.unstable = self.unstable or check_id

    def name(self, cause_id: str) -> None:
        if cause_id not in self.named:
            self.named.append(cause_id)

    def frozen(self) -> Found:
        return Found(tuple(self.cases), self.unstable, tuple(self.named))


@dataclass(frozen=True)
class Ran:
    """A check's result as the checks that read it see it."""

    id: str
    outcome: Outcome
    """Its outcome as the runner recorded it: the check's own, or the error or skip a time limit or a hang made."""
    found: Found = Found()
    duration_s: float = 0.0

    @property
    def failed(self) -> bool:
        """Did it fail or end in an error (a skip is neither)?"""
        return self.outcome.status in ("failed", "error")


class Reads:
    """The results one check may read: those of the checks it declares, in the order it declares them."""

    def __init__(self, reader: str = "", declared: tuple[str, ...] = (), results: Mapping[str, Ran] | None = None):
        self.reader = reader
        self.declared = declared
        self._results = {i: results[i] for i in declared if results is not None and i in results}

    def get(self, check_id: str) -> Ran | None:
        """check_id's result, or None when that check is not part of this grading (the assignment has no such
        check, or runs only the visible ones). Raises UndeclaredRead for a check not declared."""
        if check_id not in self.declared:
            who = f"the check {self.reader!r}" if self.reader else "no check (outside the runner)"
            raise UndeclaredRead(
                f"{who} read the result of {check_id!r}, which it does not declare it reads "
                f"(@check(..., reads=...)): it declares {', '.join(self.declared) or 'none'}"
            )
        return self._results.get(check_id)

    def __iter__(self) -> Iterator[Ran]:
        """The results of the declared checks that ran, in the order declared."""
        return (self._results[i] for i in self.declared if i in self._results)

    def failed(self) -> list[str]:
        """The declared checks that failed or ended in an error, in the order declared."""
        return [ran.id for ran in self if ran.failed]

    def cases(self) -> list[Program]:
        """The smallest failing cases the declared checks found, in the order declared."""
        return [case for ran in self for case in ran.found.cases]

    def unstable(self) -> str | None:
        """The first check, of those the declared checks judged, whose numbers changed from try to try."""
        return next((ran.found.unstable for ran in self if ran.found.unstable), None)

    def named(self) -> tuple[str, ...]:
        """The causes the declared checks named, each once, in the order declared."""
        return tuple(dict.fromkeys(cause for ran in self for cause in ran.found.named))
