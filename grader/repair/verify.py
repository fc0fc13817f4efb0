"""Verified before shown: a repair is offered only once the edited code, graded like any student's code, proves it.

The rule is written once, here (Rule): what is judged, and what proves an edit. The edited copy is graded again
(the grader's own grade(), in a sandbox, in the time the submission has left) on the visible checks of the engine
the submission was graded with, and judged on those alone. A check failed from a cause when the cause is its own or
one of the other causes it found (`other_causes`: forward's several wrong operations). An edit is proven when, alone,
it breaks no judged check that passed and either clears every judged check that failed from its cause or, made
together with the other causes' edits, clears every judged check the causes failed (graded together only where
some cause's edit alone did not: proven()). A check is cleared when it passes on the copy, or is skipped there only
for want of other checks, each of which failed in the grading verified for, and from another cause or none named:
the hand examples of micrograd's engine without tanh wait for tanh once its missing seed is written. The edit then
fixes its cause, proven by a regrade, though that check can be judged only once the other is fixed (the repair says
it waits: Repair.waiting). A regrade wants each check's status only (no failure is shrunk to its smallest case nor
diagnosed), and a skip's blockers.

No hidden check is judged, nor graded on the copy: the student's code can tell the copy from the original (the
edit itself is in it), so a copy that behaved differently on a hidden check would make whether a repair is shown
say, one bit per submission, how that hidden check went. No check of the student's tests is graded again either
(their runs are the tests', not the engine's).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from grader.checks.suite import SUITE_CHECKS
from grader.files import MODULE_FILE
from grader.repair.edits import Edit, applied
from grader.repair.notebook import NotebookCode
from grader.result import CheckResult, Result
from grader.spec import Assignment

Regrade = Callable[[Path, Assignment], Result]
"""grade(path, assignment) with the grading's own options, keeping to its deadline, in the sandboxes started ahead
where there are some."""


@dataclass(frozen=True)
class Graded:
    """A check as a copy graded it: its status, and where it was skipped, the checks whose bugs kept it from probing
    (its artifacts' blocked_by)."""

    status: str
    blocked_by: tuple[str, ...] = ()


Statuses = dict[str, Graded]
"""Each check as a copy graded it, by id."""
FAILED = ("failed", "error")
LEAST_S = 5.0
"""Seconds the submission must have left for a repair to be verified: less, and none is offered."""
RESERVE_S = 1.0
"""Seconds of the grading's time the regrades leave to the checks after them: a grading verifies its repairs once
its engine checks are done, while the student's tests still run, and the suite checks that read those runs come
after (grading.py)."""


def causes_named(check: CheckResult) -> tuple[str, ...]:
    """The causes a check failed from, its own first, then the other causes it found (artifacts' other_causes:
    forward's several wrong operations); none where it did not fail."""
    if check.status not in FAILED or not check.cause:
        return ()
    others = check.artifacts.get("other_causes")
    found = [check.cause, *(str(c) for c in others if c)] if isinstance(others, list) else [check.cause]
    return tuple(dict.fromkeys(found))


def judged(check: CheckResult) -> bool:
    """Is the check one a verification judges (and so one whose cause may get a repair)? A visible check of the
    engine."""
    return check.visibility == "visible" and check.id not in SUITE_CHECKS


@dataclass(frozen=True)
class Rule:
    """The verification's rule, with what it judges: the result's judged checks (judged()), each with its status
    before any edit and the causes it failed from."""

    before: dict[str, str]
    causes: dict[str, frozenset[str]]
    """Each judged check's causes (causes_named: none where it did not fail)."""

    @classmethod
    def of(cls, checks: Iterable[CheckResult]) -> Rule:
        """The rule judging a grading's checks (a result's, or each as it ended: the judged ones are the same)."""
        judging = [c for c in checks if judged(c)]
        return cls({c.id: c.status for c in judging}, {c.id: frozenset(causes_named(c)) for c in judging})

    def again(self, assignment: Assignment) -> Assignment:
        """The assignment a copy is graded on: the judged checks only, and no repair looked for."""
        return dataclasses.replace(
            assignment,
            checks=tuple(c for c in assignment.checks if c.id in self.before),
            feedback=dataclasses.replace(assignment.feedback, repair="off"),
        )

    def broken(self, after: Statuses) -> bool:
        """Does a judged check that passed fail (or not run) on the edited code?"""
        return any(status == "passed" and _status(after, check) != "passed" for check, status in self.before.items())

    def fixes(self, causes: set[str], after: Statuses) -> bool:
        """Is every judged check that failed from the causes cleared on the edited code, and none that passed
        broken?"""
        failing = self.failing(causes)
        return bool(failing) and all(self.cleared(c, causes, after) for c in failing) and not self.broken(after)

    def failing(self, causes: set[str]) -> list[str]:
        """The judged checks that failed from any of the causes."""
        return [check for check, named in self.causes.items() if named & causes]

    def cleared(self, check: str, causes: set[str], after: Statuses) -> bool:
        """Does the check no longer fail from the causes on the edited code: it passes, or is skipped only for want
        of other checks, each of which failed (in the grading verified for) and from none of these causes?"""
        graded = after.get(check)
        if graded is None or graded.status == "passed":
            return graded is not None
        return (
            graded.status == "skipped"
            and bool(graded.blocked_by)
            and all(
                self.before.get(b) in FAILED and _status(after, b) in FAILED and not self.causes[b] & causes
                for b in graded.blocked_by
            )
        )

    def made_pass(self, after: Statuses, cause: str | None = None) -> tuple[str, ...]:
        """The judged checks that failed and pass on the edited code (only those failing from the cause, when
        given)."""
        return tuple(
            check
            for check, status in self.before.items()
            if status in FAILED and _status(after, check) == "passed" and (cause is None or cause in self.causes[check])
        )

    def waiting(self, causes: set[str], after: Statuses) -> tuple[str, ...]:
        """The judged checks that failed from the causes and, on the edited code, wait for another check's fix."""
        return tuple(
            c for c in self.failing(causes) if _status(after, c) != "passed" and self.cleared(c, causes, after)
        )


def _status(after: Statuses, check: str) -> str | None:
    graded = after.get(check)
    return graded.status if graded is not None else None


@dataclass(frozen=True)
class Proven:
    """An edit the rule proved: the judged checks it makes pass, and those of its cause that then wait for another
    check's fix (Rule.waiting)."""

    edit: Edit
    fixes: tuple[str, ...]
    waiting: tuple[str, ...] = ()


def proven(rule: Rule, text: str, edits: list[Edit], grade: Callable[[str], Statuses | None]) -> list[Proven]:
    """The edits proven by the rule, at most one per cause (its first candidate proven), each with the checks it
    makes pass. grade: each check on an edited text (None when it could not be graded).

    The candidates are tried rank by rank (each cause's first, then each unproven cause's second...). Each is graded
    alone; one that breaks nothing but leaves its cause's checks failing (they fail from another cause too: forward,
    with __radd__ and __rsub__ both missing; gradcheck, with pow's and tanh's bugs) is graded again together with
    the others of its rank left so and the edits already proven: proven when, all together, every check of their
    causes is cleared. Where every edit of a rank is proven alone, nothing is graded together (it would change no
    verdict)."""
    # one after another, not in threads: Python 3.11's ast is not safe to use from two threads at once ("AST
    # constructor recursion depth mismatch"), and a grading parses the file
    ranked: dict[str, list[Edit]] = {}
    for edit in edits:
        ranked.setdefault(edit.cause, []).append(edit)
    verified: dict[str, Proven] = {}
    for rank in range(max(map(len, ranked.values()), default=0)):
        tried = [found[rank] for cause, found in ranked.items() if cause not in verified and rank < len(found)]
        pending = [edit for edit in tried if not _alone(rule, text, edit, grade, verified)]
        if pending:
            _together(rule, text, pending, grade, verified)
    return [verified[cause] for cause in ranked if cause in verified]


def _alone(rule: Rule, text: str, edit: Edit, grade, verified: dict[str, Proven]) -> bool:
    """Grade the edit alone: proven (kept in verified), or broke something: True; it broke nothing but its cause's
    checks still fail: False (to be graded together)."""
    statuses = _statuses(grade, text, [edit])
    if statuses is None or rule.broken(statuses):
        return True
    if rule.fixes({edit.cause}, statuses):
        verified[edit.cause] = Proven(edit, rule.made_pass(statuses), rule.waiting({edit.cause}, statuses))
        return True
    return False


def _together(rule: Rule, text: str, pending: list[Edit], grade, verified: dict[str, Proven]) -> None:
    """Grade the pending edits together with those proven: each pending one proven (kept in verified) when, all
    together, every check of their causes is cleared."""
    together = [p.edit for p in verified.values()] + pending
    if len(together) < 2:
        return
    causes = {e.cause for e in together}
    statuses = _statuses(grade, text, together)
    if statuses is None or not rule.fixes(causes, statuses):
        return
    cleared = rule.waiting(causes, statuses)
    for e in pending:
        mine = tuple(c for c in cleared if e.cause in rule.causes[c])
        verified[e.cause] = Proven(e, rule.made_pass(statuses, e.cause), mine)


def _statuses(grade: Callable[[str], Statuses | None], text: str, edits: list[Edit]) -> Statuses | None:
    try:
        source = applied(text, [change for edit in edits for change in edit.changes])
    except ValueError:  # two edits on one line: not verified together
        return None
    return grade(source)


def regraded(assignment: Assignment, ends: float, regrade: Regrade, notebook: NotebookCode | None = None):
    """The grade() proven() takes: each check's status on an edited text, graded in the time left (the regrade
    keeps to the grading's deadline, ends), as a .py file, or of a notebook as a copy of it with the cells the text
    changes (grader/repair/notebook.py); None when there was no time or the copy could not be graded."""

    def grade(source: str) -> Statuses | None:
        if ends - time.monotonic() < 1.0:
            return None
        with tempfile.TemporaryDirectory(prefix="grader-repair-") as folder:
            if notebook is not None:
                path = notebook.written(source, Path(folder))
            else:
                path = Path(folder) / MODULE_FILE
                path.write_text(source, encoding="utf-8")
            graded = regrade(path, assignment)
        if graded.status != "graded":
            return None
        return {c.id: Graded(c.status, _blockers(c)) for c in graded.checks}

    return grade


def _blockers(check: CheckResult) -> tuple[str, ...]:
    """The checks a skipped check names as blocking it (its artifacts' blocked_by)."""
    found = check.artifacts.get("blocked_by") if check.status == "skipped" else None
    return tuple(str(b) for b in found) if isinstance(found, list) else ()
