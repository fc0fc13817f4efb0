"""The repairs of one grading: one object finds them, verifies them and attaches them.

A grading that may offer repairs (`[feedback] repair` is not `off`, and the student's code is one the inverses can
read: a .py file's text, or a notebook's code cells as one text, grader/repair/notebook.py) makes one Repairs
before its checks run, and hands it each check as it ends (heard) and the result at the end (offered):

- find: each cause a failing visible check of the engine names (its own, and the other causes it found) gets its
  candidate edits, from each finder in turn (FINDERS: the inverse edits, grader/repair/inverse.py, then the lesson's
  line for the cause's rule, grader/repair/canonical.py), in the student's code read once
  (grader/repair/reading.py: bounded). A misconception found in several methods (artifacts' `causes`: `=` for `+=`
  in __add__, __mul__ and tanh) is one edit of every method's line, under the cause the check names. Of a notebook,
  an edit is kept only when it lies in one cell.
- start ahead: as soon as a check fails from a cause whose edit the code holds, one sandbox starts warming up for
  its regrade (and one for all the causes together once there are two: two causes' bugs most often fail one check,
  gradcheck, which neither edit alone clears), up to `most`, while the grading goes on; the regrades take them. A
  correct engine's grading starts none, finds nothing and regrades nothing.
- verify: once the engine checks are done (verify(), while the student's tests still run), the edited copies are
  graded again and judged by the one rule (grader/repair/verify.py).
- attach: each repair proven goes, as the typed field `repair` (grader/result.py's Repair), on the first visible
  check naming its cause: where (each change's line, method, where in words, the lines as written), at `diff` the
  lines as the edit writes them, and the visible checks it makes pass. The result is cleaned after (grading.py),
  the repair's text with the rest.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Iterable

from grader.errors import NotApplicable
from grader.protocol import Code
from grader.repair.canonical import canonical
from grader.repair.edits import Edit
from grader.repair.inverse import edit_for
from grader.repair.notebook import NotebookCode
from grader.repair.reading import Source
from grader.repair.verify import FAILED, LEAST_S, Proven, Regrade, Rule, causes_named, judged, proven, regraded
from grader.result import CheckResult, Repair, Result
from grader.sandbox.prestarted import Prestarted, Wanted
from grader.spec import Assignment

OnCheck = Callable[[CheckResult, int, int], None]
"""Told of each check as it ends: its result, how many are done, how many there are (grading.OnCheck)."""
Finder = Callable[[Source, str], Edit | None]
"""Finds, in the student's code, an edit that may undo a cause (None: none found); the rule decides."""
FINDERS: tuple[Finder, ...] = (edit_for, canonical)
"""The finders of candidate edits, tried in turn for each cause: the inverse edit (the mistake undone in its own
spelling), then the lesson's line for the cause's rule in the student's names (grader/repair/canonical.py). Each
one's candidate is verified, in this order, and the first proven of a cause is offered: the canonical rewrite is
regraded only where the inverse's is missing or not proven."""
REPAIR_CHARS = 200_000
"""Characters of a student's code above which no repair is looked for: it is parsed in the grader's own process (a
lesson's engine is under 20,000)."""
AHEAD = 3
"""Sandboxes started ahead for the regrades at most (the rest start when their regrade does)."""


def wanted(text: str | None, assignment: Assignment) -> bool:
    """Whether a grading of this text may offer repairs (so may need regrades)."""
    return assignment.feedback.repair != "off" and text is not None and len(text) <= REPAIR_CHARS


def readable(code: Code, submitted: bytes, name: str, assignment: Assignment) -> str | NotebookCode | None:
    """The student's code as the finders read it: a .py file's text, or a notebook's code cells (submitted: the
    notebook's bytes, name: its file's name); None where a grading of it may offer no repair (repairs off, code too
    large to look in, a notebook whose text would not hold its classes: grader/repair/notebook.py)."""
    if not wanted(code.text, assignment):
        return None
    return code.text if code.kind == "py" else NotebookCode.of(code, submitted, name)


class Candidates:
    """The candidate edits in the student's code (a .py file's text or a notebook's code cells), read once, each
    cause's found once."""

    def __init__(self, code: str | NotebookCode):
        self.notebook = code if isinstance(code, NotebookCode) else None
        self.text = code.text if isinstance(code, NotebookCode) else code
        self.found: dict[tuple[str, ...], list[Edit]] = {}
        """The candidates of each cause, by the ids of the cause and of every other method it is in."""

    @functools.cached_property
    def source(self) -> Source | None:
        """The code the finders read, read once (on the first failure: a correct engine's is never read); None
        where it does not parse or is past reading's bounds."""
        try:
            return Source(self.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError, NotApplicable):
            return None

    def of(self, checks: Iterable[CheckResult]) -> list[Edit]:
        """The candidate edits of each cause the failing judged checks name (each one's own, and the other causes it
        found), in the order they name them (of a notebook, only those in one cell)."""
        named: dict[str, tuple[str, ...]] = {}
        for check in checks:
            for cause in causes_named(check) if judged(check) else ():
                if cause not in named:
                    own = cause == check.cause
                    named[cause] = _every_method(cause, check.artifacts.get("causes")) if own else (cause,)
        found = []
        for methods in named.values():
            if methods not in self.found:
                self.found[methods] = self._found(methods)
            found += self.found[methods]
        return found

    def _found(self, methods: tuple[str, ...]) -> list[Edit]:
        """Each finder's edit of the cause (methods[0]) in every method it is in, where it finds every one."""
        source = self.source
        if source is None:
            return []
        found: list[Edit] = []
        for finder in FINDERS:
            edit = _joined(methods[0], [finder(source, each) for each in methods])
            if edit is not None and edit not in found and (self.notebook is None or self.notebook.local(edit)):
                found.append(edit)
        return found


class Repairs:
    """The repairs of one grading (the module's docstring says how): heard() each check as it ends, offered() the
    result, close() (or a `with` block) at the end, which closes the sandboxes started ahead and left over."""

    def __init__(self, code: str | NotebookCode, assignment: Assignment, sandbox: Wanted | None, most: int = AHEAD):
        """code: a .py file's text or a notebook's code cells. sandbox: the sandbox a regrade's engine lane asks for
        (the grading's own engine lane's), started ahead; None starts none ahead. most: sandboxes started ahead at
        most (a batch, whose every core is busy grading, starts one: the rest start when their regrade does)."""
        self.candidates = Candidates(code)
        self.assignment = assignment
        self.sandbox = sandbox
        self.most = most
        self.pool = Prestarted([], sandbox.iso if sandbox is not None else None)
        self.failed: list[CheckResult] = []
        self.judged: list[CheckResult] = []
        """The judged checks heard so far, each as it ended (verify() judges them once the engine checks are done)."""
        self.verified: list[Proven] | None = None
        """The repairs verify() proved (None: it has not run)."""
        self.started = 0
        """Sandboxes started ahead so far (those taken are no longer in the pool)."""

    def told(self, on_check: OnCheck | None) -> OnCheck:
        """What a grading tells of each check as it ends: this, then on_check."""

        def both(check: CheckResult, done: int, total: int) -> None:
            self.heard(check)
            if on_check is not None:
                on_check(check, done, total)

        return both

    def heard(self, check: CheckResult) -> None:
        """A check ended: a judged one is kept for verify(); where it failed from a new cause whose edit the code
        holds, a sandbox starts ahead."""
        if judged(check):
            self.judged.append(check)
        if not causes_named(check) or not judged(check) or self.sandbox is None:
            return
        if any(causes_named(c) == causes_named(check) for c in self.failed):
            return
        self.failed.append(check)
        causes = len({edit.cause for edit in self.candidates.of(self.failed)})
        needed = min(self.most, causes + (causes > 1))  # each cause's regrade, and one of them all together
        while self.started < needed:
            self.pool.add(self.sandbox)
            self.started += 1

    def verify(self, ends: float, regrade: Regrade) -> None:
        """Once the engine checks are done, every judged one heard (each as it ended): the repairs of their causes,
        verified by regrades keeping to ends, while the student's tests may still run; offered() attaches them."""
        self.verified = self._proven(self.judged, ends, regrade)

    def offered(self, result: Result, ends: float, regrade: Regrade) -> Result:
        """The result with each verified repair on the check naming its cause, or the result as it was (nothing
        to repair, or no time left to verify: a regrade keeps to the grading's deadline, ends). The repairs verify()
        proved while the tests ran, or, where it did not run, those verified now (their time added to the
        result's)."""
        if result.status != "graded":
            return result
        level = self.assignment.feedback.repair
        if self.verified is not None:
            return _attached(result, self.verified, level)
        started = time.monotonic()
        verified = self._proven(result.checks, ends, regrade)
        if not verified:
            return result
        shown = _attached(result, verified, level)
        return dataclasses.replace(shown, duration_s=round(result.duration_s + time.monotonic() - started, 3))

    def _proven(self, checks: Iterable[CheckResult], ends: float, regrade: Regrade) -> list[Proven]:
        """The candidate edits of the checks' causes proven by regrades keeping to ends (none: nothing to repair, or
        no time left); of a notebook, each in its cell's lines."""
        checks = list(checks)
        edits = self.candidates.of(checks)
        if not edits or ends - time.monotonic() < LEAST_S:
            return []
        rule = Rule.of(checks)
        notebook = self.candidates.notebook
        grade = regraded(rule.again(self.assignment), ends, regrade, notebook)
        verified = proven(rule, self.candidates.text, edits, grade)
        if notebook is not None:
            verified = [
                dataclasses.replace(p, edit=local) for p in verified if (local := notebook.local(p.edit)) is not None
            ]
        return verified

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Repairs:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def candidates(result: Result, code: str | NotebookCode) -> list[Edit]:
    """The candidate edits of the causes the result's failing visible checks name, in the student's code (what a
    grading would verify; none for a correct engine)."""
    return Candidates(code).of(result.checks)


def _every_method(cause: str, causes: object) -> tuple[str, ...]:
    """The cause, and the same misconception's ids in the other methods the check found it in."""
    if isinstance(causes, list) and causes and causes[0] == cause:
        return tuple(dict.fromkeys(str(c) for c in causes))
    return (cause,)


def _joined(cause: str, edits: list[Edit | None]) -> Edit | None:
    """One edit making every method's change, or None when a method's is missing (or two touch one line)."""
    if not edits or any(edit is None for edit in edits):
        return None
    changes = {(c.line, c.before): c for edit in edits if edit is not None for c in edit.changes}
    if len({line for line, _ in changes}) != len(changes):
        return None
    return Edit(cause, tuple(changes[key] for key in sorted(changes)))


def _attached(result: Result, verified: list[Proven], level: str) -> Result:
    """The result with each repair on the first visible check failing from its cause (its own cause, else one of the
    other causes it found); a check failing from several causes with a repair each gets them as one."""
    checks = list(result.checks)
    for found in verified:
        cause = found.edit.cause
        failing = [(i, c) for i, c in enumerate(checks) if judged(c) and c.status in FAILED]
        at = next((i for i, c in failing if c.cause == cause), None)
        if at is None:
            at = next((i for i, c in failing if cause in causes_named(c)), None)
        if at is None or not (found.fixes or found.waiting):
            continue
        shown = tuple(dataclasses.replace(c, after=c.after if level == "diff" else "") for c in found.edit.changes)
        repair = _with(checks[at].repair, Repair(shown, found.fixes, level, found.waiting))
        if repair is not None:
            checks[at] = dataclasses.replace(checks[at], repair=repair)
    return dataclasses.replace(result, checks=tuple(checks))


def _with(held: Repair | None, more: Repair) -> Repair | None:
    """One repair making both's changes (a check failing from two causes, each with its own), in the file's order;
    None where they cannot be one (two cells of a notebook, or one line changed two ways)."""
    if held is None:
        return more
    changes = tuple(sorted(dict.fromkeys((*held.changes, *more.changes)), key=lambda c: (c.cell or 0, c.line)))
    if len({c.cell for c in changes}) != 1 or len({c.line for c in changes}) != len(changes):
        return None
    fixes = tuple(dict.fromkeys((*held.fixes, *more.fixes)))
    waiting = tuple(c for c in dict.fromkeys((*held.waiting, *more.waiting)) if c not in fixes)
    return Repair(changes, fixes, held.level, waiting)
