"""Verified before shown: a repair is offered only once the edited code, graded like any student's code, proves it.

The rule is written once, here (Rule): what is judged, and what proves an edit. The edited copy is graded again
(the grader's own grade(), in a sandbox, in the time the submission has left) on the visible checks of the engine
the submission was graded with, and judged on those alone. An edit is proven when, alone, it breaks no judged check
that passed and either makes every judged check that failed from its cause pass or, made together with the other
causes' edits, makes every judged check the causes failed pass. A regrade wants each check's status only (no failure
is shrunk to its smallest case nor diagnosed).

No hidden check is judged, nor graded on the copy: the student's code can tell the copy from the original (the
edit itself is in it), so a copy that behaved differently on a hidden check would make whether a repair is shown
say, one bit per submission, how that hidden check went. No check of the student's tests is graded again either
(their runs are the tests', not the engine's).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable
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
Statuses = dict[str, str]
"""Each check's status on a copy, by id."""
FAILED = ("failed", "error")
LEAST_S = 5.0
"""Seconds the submission must have left for a repair to be verified: less, and none is offered."""


def judged(check: CheckResult) -> bool:
    """Is the check one a verification judges (and so one whose cause may get a repair)? A visible check of the
    engine."""
    return check.visibility == "visible" and check.id not in SUITE_CHECKS


@dataclass(frozen=True)
class Rule:
    """The verification's rule, with what it judges: the result's judged checks (judged()), each with its status
    before any edit and the cause it failed from."""

    before: Statuses
    causes: dict[str, str | None]
    """Each judged check's cause, where it failed from one."""

    @classmethod
    def of(cls, result: Result) -> Rule:
        checks = [c for c in result.checks if judged(c)]
        return cls({c.id: c.status for c in checks}, {c.id: c.cause if c.status in FAILED else None for c in checks})

    def again(self, assignment: Assignment) -> Assignment:
        """The assignment a copy is graded on: the judged checks only, and no repair looked for."""
        return dataclasses.replace(
            assignment,
            checks=tuple(c for c in assignment.checks if c.id in self.before),
            feedback=dataclasses.replace(assignment.feedback, repair="off"),
        )

    def broken(self, after: Statuses) -> bool:
        """Does a judged check that passed fail (or not run) on the edited code?"""
        return any(status == "passed" and after.get(check) != "passed" for check, status in self.before.items())

    def fixes(self, causes: set[str], after: Statuses) -> bool:
        """Does every judged check that failed from the causes pass on the edited code, and none that passed fail?"""
        failing = [check for check, cause in self.causes.items() if cause in causes]
        return bool(failing) and all(after.get(check) == "passed" for check in failing) and not self.broken(after)

    def made_pass(self, after: Statuses, cause: str | None = None) -> tuple[str, ...]:
        """The judged checks that failed and pass on the edited code (only the cause's, when given)."""
        return tuple(
            check
            for check, status in self.before.items()
            if status in FAILED and after.get(check) == "passed" and (cause is None or self.causes[check] == cause)
        )


def proven(rule: Rule, text: str, edits: list[Edit], grade: Callable[[str], Statuses | None]):
    """The edits proven by the rule, at most one per cause (its first candidate proven), each with the checks it
    makes pass. grade: each check's status on an edited text (None when it could not be graded)."""
    # one after another, not in threads: Python 3.11's ast is not safe to use from two threads at once ("AST
    # constructor recursion depth mismatch"), and a grading parses the file
    firsts: list[Edit] = []  # each cause's first candidate, which are graded together
    for edit in edits:
        if all(e.cause != edit.cause for e in firsts):
            firsts.append(edit)
    together = _statuses(grade, text, firsts) if len(firsts) > 1 else None
    all_fixed = together is not None and rule.fixes({edit.cause for edit in firsts}, together)
    verified: list[tuple[Edit, tuple[str, ...]]] = []
    for edit in edits:
        if any(e.cause == edit.cause for e, _ in verified):
            continue
        statuses = _statuses(grade, text, [edit])
        if statuses is None or rule.broken(statuses):
            continue
        if rule.fixes({edit.cause}, statuses):
            verified.append((edit, rule.made_pass(statuses)))
        elif all_fixed and together is not None and edit in firsts:  # its checks pass once the others are undone
            verified.append((edit, rule.made_pass(together, edit.cause)))
    return verified


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
        return {c.id: c.status for c in graded.checks} if graded.status == "graded" else None

    return grade
