"""What discovery finds in a class's folders and zips (grader/batch/discover.py): each student's
submission, staged alone with its tests, each student found whose work cannot be graded, with the
reason, and the notes for the instructor."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.batch.notes import Note
from grader.lms.identity import Identity


@dataclass(frozen=True)
class Submission:
    student: str
    """A safe id: letters, digits and `_.-`, never starting with '.', unique in the batch."""
    path: Path
    """The .py file or notebook to grade (a copy in the staging folder, under its own name)."""
    tests: Path | None
    late: bool = False
    source: str = ""
    """Where it came from, relative to the input named on the command line (for notes)."""
    lms_id: int | None = None
    """The LMS's submission id, when its name carried one."""
    identity: Identity | None = None
    """Who the student is in the LMS the work came from (grader/lms/identity.py)."""


@dataclass(frozen=True)
class Ungradable:
    """A student something was found for that cannot be graded, and why (a row, never only a note)."""

    student: str
    identity: Identity
    reason: str
    source: str = ""


@dataclass(frozen=True)
class Found:
    submissions: tuple[Submission, ...]
    notes: tuple[Note, ...]
    """What the instructor should know: files left out and why, duplicates, renamed ids (one note per
    file: grader.batch.notes.grouped counts them per student for display)."""
    missing: tuple[Ungradable, ...] = ()
    """The students found whose work cannot be graded, each with the reason."""
