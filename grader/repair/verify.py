"""Verified before shown: a repair is offered only once the edited file, graded like any student's code, proves it.

After a grading, each cause a failing check names that has an inverse (inverse.py) gets its edit found in the
student's file; the edited copy is graded again (the grader's own grade(), in a sandbox, with the engine checks
the submission was graded with, in the time the submission has left). An edit is offered only when every check
that failed from its cause passes on the edited code and no check that passed fails there. With several causes,
each edit is graded alone and all of them together (a regrade wants each check's status only: no failure is
shrunk to its smallest case nor diagnosed): an edit is offered when, alone, it breaks nothing and either fixes
its own checks or, with the others, fixes every check the causes failed.

A correct engine costs nothing: with no check failed from a cause that has an inverse, nothing is regraded.
The regrades' sandboxes start early (Ahead): as soon as a check fails from a cause whose edit is found in the
file, one more sandbox starts warming up in its own process, while the grading goes on (its other checks, the
runs of the student's tests), so a regrade finds its sandbox ready rather than waiting for a Python to start.
The repair goes on the first visible check naming its cause (`artifacts.repair`): where (`line`, `method`,
`where`), what (`before`, and at `diff` the `after`), `verified`, and `fixes`, the visible checks it makes pass.
A hidden check never gets one, and `fixes` never names one.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from grader.checks.suite import SUITE_CHECKS
from grader.files import MODULE_FILE
from grader.repair.edits import Edit, applied
from grader.repair.inverse import edit_for
from grader.repair.notebook import NotebookCode
from grader.result import CheckResult, Result
from grader.sandbox.prestarted import Prestarted, Wanted
from grader.spec import Assignment

Regrade = Callable[[Path, Assignment], Result]
"""grade(path, assignment) with the grading's own options, keeping to its deadline, in the sandboxes of its
Ahead where there are some."""
FAILED = ("failed", "error")
LEAST_S = 5.0
"""Seconds the submission must have left for a repair to be verified: less, and none is offered."""


REPAIR_CHARS = 200_000
"""Characters of a student's file above which no repair is looked for: each cause's inverse parses it in the
grader's own process (a lesson's engine is under 20,000)."""


AHEAD = 3
"""Sandboxes started ahead for the regrades at most (the rest start when their regrade does)."""


def wanted(text: str | None, assignment: Assignment) -> bool:
    """Whether a grading of this text may offer repairs (so may need regrades)."""
    return assignment.feedback.repair != "off" and text is not None and len(text) <= REPAIR_CHARS


class Ahead:
    """The regrades' sandboxes, started while the grading still runs: told of each check as it ends (heard), it
    starts one sandbox for each cause whose edit the file holds, and one for all of them together once there are
    two, up to AHEAD. The regrades take them (pool, as the lanes take those `grader check` prestarts); close()
    ends those left over. A correct engine's grading starts none."""

    def __init__(self, code: str | NotebookCode, sandbox: Wanted, most: int = AHEAD):
        """code: what the inverse edits read (a .py file's text or a notebook's code cells), which offered() is
        given too. most: sandboxes started ahead at most (a batch, whose every core is busy grading, starts one:
        the rest start when their regrade does, so a class's gradings never hold more than one spare each)."""
        self.code = code
        self.text = code.text if isinstance(code, NotebookCode) else code
        self.most = most
        self.pool = Prestarted([], sandbox.iso)
        self.sandbox = sandbox
        self.failed: list[CheckResult] = []
        self.started = 0

    def heard(self, check: CheckResult) -> None:
        if check.status not in FAILED or not check.cause or check.id in SUITE_CHECKS:
            return
        if any(c.cause == check.cause for c in self.failed):
            return
        self.failed.append(check)
        edits = len(_candidates(self.failed, self.text))
        needed = min(self.most, edits + (edits > 1))
        while self.started < needed:
            self.pool.add(self.sandbox)
            self.started += 1

    def close(self) -> None:
        self.pool.close()


def offered(
    result: Result, text: str | NotebookCode | None, assignment: Assignment, ends: float, regrade: Regrade
) -> Result:
    """The result with each verified repair on the check naming its cause (or the result as it was: repairs
    off, no code the inverses can read, no cause with an inverse, no time left to verify). A notebook's code
    (grader/repair/notebook.py): its cells as one text, an edit kept only when it is in one cell, graded as a
    copy of the notebook with that cell changed, and shown in the cell's own lines."""
    notebook = text if isinstance(text, NotebookCode) else None
    code = text.text if isinstance(text, NotebookCode) else text
    if not wanted(code, assignment) or code is None or result.status != "graded":
        return result
    if notebook is not None:
        regrade = _in_notebook(notebook, regrade)
    started = time.monotonic()
    edits = candidates(result, code)
    if notebook is not None:
        edits = [edit for edit in edits if notebook.local(edit) is not None]
    if not edits or ends - started < LEAST_S:
        return result
    engine = {c.id for c in result.checks if c.id not in SUITE_CHECKS}
    again = dataclasses.replace(
        assignment,
        checks=tuple(c for c in assignment.checks if c.id in engine),
        feedback=dataclasses.replace(assignment.feedback, repair="off"),
    )
    verified = proven(result, code, edits, lambda source: _graded(source, again, ends, regrade))
    if notebook is not None:
        verified = [(local, fixes) for edit, fixes in verified if (local := notebook.local(edit)) is not None]
    shown = _attached(result, verified, assignment.feedback.repair)
    return dataclasses.replace(shown, duration_s=round(result.duration_s + time.monotonic() - started, 3))


def _in_notebook(notebook: NotebookCode, regrade: Regrade) -> Regrade:
    """The regrade of an edited text of the notebook's cells: a copy of the notebook, beside it, with the cells
    it changes."""
    return lambda path, again: regrade(notebook.written(path.read_text(encoding="utf-8"), path.parent), again)


def candidates(result: Result, text: str) -> list[Edit]:
    """The edit of each cause a failing check names, in the order the checks name them, where one is found. A
    misconception found in several methods (artifacts' causes: `=` for `+=` in __add__, __mul__ and tanh) is one
    edit of every method's line, under the cause the check names; none when one method's line is not found."""
    return _candidates(result.checks, text)


def _candidates(checks, text: str) -> list[Edit]:
    named: dict[str, list[str]] = {}
    for check in checks:
        if check.status in FAILED and check.cause and check.cause not in named:
            named[check.cause] = _every_method(check.cause, check.artifacts.get("causes"))
    found = (_joined(cause, [edit_for(text, each) for each in methods]) for cause, methods in named.items())
    return [edit for edit in found if edit is not None]


def _every_method(cause: str, causes: object) -> list[str]:
    """The cause, and the same misconception's ids in the other methods the check found it in."""
    if isinstance(causes, list) and causes and causes[0] == cause:
        return list(dict.fromkeys(str(c) for c in causes))
    return [cause]


def _joined(cause: str, edits: list[Edit | None]) -> Edit | None:
    """One edit making every method's change, or None when a method's is missing (or two touch one line)."""
    if not edits or any(edit is None for edit in edits):
        return None
    changes = {(c.line, c.before): c for edit in edits if edit is not None for c in edit.changes}
    if len({line for line, _ in changes}) != len(changes):
        return None
    return Edit(cause, tuple(changes[key] for key in sorted(changes)))


def _graded(source: str, assignment: Assignment, ends: float, regrade: Regrade) -> dict[str, str] | None:
    """Each check's status on the edited source, graded in the time left (the regrade keeps to the grading's
    deadline, ends); None when there was none."""
    if ends - time.monotonic() < 1.0:
        return None
    with tempfile.TemporaryDirectory(prefix="grader-repair-") as folder:
        path = Path(folder) / MODULE_FILE
        path.write_text(source, encoding="utf-8")
        graded = regrade(path, assignment)
    if graded.status != "graded":
        return None
    return {c.id: c.status for c in graded.checks}


def proven(
    result: Result, text: str, edits: list[Edit], grade: Callable[[str], dict[str, str] | None]
) -> list[tuple[Edit, list[str]]]:
    """The edits verified, each with the checks it makes pass. grade: each check's status on a source."""
    before: dict[str, str] = {c.id: c.status for c in result.checks if c.id not in SUITE_CHECKS}
    # one after another, not in threads: Python 3.11's ast is not safe to use from two threads at once ("AST
    # constructor recursion depth mismatch"), and a grading parses the file
    alone = [_statuses(grade, text, [edit]) for edit in edits]
    together = alone[0] if len(edits) == 1 else _statuses(grade, text, edits)
    causes = {edit.cause for edit in edits}
    all_fixed = together is not None and _fixes(result, causes, before, together)
    verified = []
    for edit, statuses in zip(edits, alone, strict=True):
        if statuses is None or _broken(before, statuses):
            continue
        if _fixes(result, {edit.cause}, before, statuses):
            verified.append((edit, _made_pass(result, before, statuses)))
        elif all_fixed and together is not None:  # its checks pass once the other causes are undone too
            verified.append((edit, _made_pass(result, before, together, edit.cause)))
    return verified


def _statuses(grade, text: str, edits: list[Edit]) -> dict[str, str] | None:
    try:
        source = applied(text, [change for edit in edits for change in edit.changes])
    except ValueError:  # two edits on one line: not verified together
        return None
    return grade(source)


def _broken(before: dict[str, str], after: dict[str, str]) -> bool:
    """Does a check that passed fail (or not run) on the edited code?"""
    return any(status == "passed" and after.get(check) != "passed" for check, status in before.items())


def _fixes(result: Result, causes: set[str], before: dict[str, str], after: dict[str, str]) -> bool:
    """Does every check that failed from the causes pass, and no check that passed fail?"""
    failing = [c.id for c in result.checks if c.cause in causes and c.status in FAILED and c.id in before]
    return bool(failing) and all(after.get(check) == "passed" for check in failing) and not _broken(before, after)


def _made_pass(result: Result, before: dict[str, str], after: dict[str, str], cause: str | None = None) -> list[str]:
    """The visible checks that failed and pass on the edited code (only the cause's, when given)."""
    return [
        c.id
        for c in result.checks
        if c.visibility == "visible"
        and c.id in before
        and c.status in FAILED
        and after.get(c.id) == "passed"
        and (cause is None or c.cause == cause)
    ]


def _attached(result: Result, verified: list[tuple[Edit, list[str]]], level: str) -> Result:
    """The result with each repair on the first visible check naming its cause."""
    checks = list(result.checks)
    for edit, fixes in verified:
        at = next(
            (
                i
                for i, c in enumerate(checks)
                if c.cause == edit.cause and c.visibility == "visible" and c.status in FAILED
            ),
            None,
        )
        if at is not None and fixes:
            checks[at] = _with_repair(checks[at], edit, fixes, level)
    return dataclasses.replace(result, checks=tuple(checks))


def _with_repair(check: CheckResult, edit: Edit, fixes: list[str], level: str) -> CheckResult:
    shown = [dataclasses.replace(c, after="" if level != "diff" else c.after) for c in edit.changes]
    repair = {
        **shown[0].to_dict(),
        "verified": True,
        "fixes": fixes,
        "level": level,
    }
    if len(shown) > 1:
        repair["also"] = [c.to_dict() for c in shown[1:]]
    return dataclasses.replace(check, artifacts={**check.artifacts, "repair": repair})
