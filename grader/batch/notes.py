"""What discovery tells the instructor, counted rather than listed.

Finding a class's submissions leaves notes: a file left out, an older submission given
way, two students graded under one name. A single student's zip can hold thousands of
files left out, and a note per file buries the few that matter (a duplicate name is often
the only trace of a student planting work under a classmate's name). So each note has a
kind and the student (or input) it is about; the notes shown are one line per student and
kind, with counts and a few example names, the important kinds first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass

KINDS = {
    # kind: (important, what a count of it is called)
    "duplicate": (True, "submissions under one name"),
    "superseded": (True, "submissions or tests given way"),
    "renamed": (True, "names with no usable id"),
    "not_graded": (True, "pieces of work not graded"),
    "choice": (True, "choices of the file to grade"),
    "left_out": (False, "files left out"),
    "input": (False, "inputs not read"),
}
"""Every kind of note, the most important first."""
REASONS = 4
"""Most distinct reasons a grouped note spells out."""
EXAMPLES = 3
"""Most example names a grouped note gives for each reason."""
NAME_CHARS = 80
"""Longest example name quoted (a zip member's name can be 64 KB)."""
ONE_NAME_CHARS = 240
"""Longest name quoted in a note that stands alone."""
WHY_CHARS = 1_000
"""Longest reason quoted (one can quote an exception's message, which can quote a member's name)."""


@dataclass(frozen=True)
class Note:
    """One thing the instructor should know about one file or name."""

    kind: str
    """One of KINDS."""
    student: str
    """Whose work it concerns: the student's zip, folder or file as found (or, for files no student owns,
    the input named on the command line; for a duplicate, the name). Notes are counted per student and kind."""
    item: str
    """The file or name the note is about."""
    why: str
    """What happened to it, and why."""

    @property
    def text(self) -> str:
        return f"{self.item}: {self.why}"


@dataclass(frozen=True)
class Grouped:
    """One line for the instructor: every note of one kind about one student."""

    kind: str
    important: bool
    student: str
    count: int
    text: str
    examples: tuple[str, ...]


def grouped(notes: tuple[Note, ...] | list[Note]) -> tuple[Grouped, ...]:
    """One line per student and kind, the important kinds first (in KINDS' order), else in the order found."""
    groups: dict[tuple[str, str], list[Note]] = {}
    for note in notes:
        note = Note(note.kind, note.student, note.item, _short(note.why, WHY_CHARS))
        groups.setdefault((note.kind, note.student), []).append(note)
    rank = {kind: i for i, kind in enumerate(KINDS)}
    lines = []
    for (kind, student), members in sorted(groups.items(), key=lambda g: rank.get(g[0][0], len(rank))):
        important, noun = KINDS.get(kind, (False, "notes"))
        if len(members) == 1:
            item = _short(members[0].item, ONE_NAME_CHARS)
            lines.append(Grouped(kind, important, student, 1, f"{item}: {members[0].why}", (item,)))
            continue
        reasons = Counter(n.why for n in members)
        parts, examples = [], []
        for why, count in reasons.most_common(REASONS):
            names = [_short(_within(n.item, student)) for n in members if n.why == why][:EXAMPLES]
            examples += names
            parts.append(f"{count:,} × {why} ({', '.join(names)}{', ...' if count > len(names) else ''})")
        others = reasons.most_common()[REASONS:]
        if others:
            parts.append(f"{sum(count for _, count in others):,} more, for {len(others):,} other reasons")
        lines.append(
            Grouped(
                kind,
                important,
                student,
                len(members),
                f"{student}: {len(members):,} {noun}: " + "; ".join(parts),
                tuple(examples),
            )
        )
    return tuple(lines)


def as_data(lines: tuple[Grouped, ...]) -> list[dict]:
    return [asdict(line) | {"examples": list(line.examples)} for line in lines]


def listed(names: list[str], most: int = EXAMPLES) -> str:
    """A few names, and how many more: 'a, b, c and 4,996 more'."""
    shown = ", ".join(_short(n) for n in names[:most])
    return shown + (f" and {len(names) - most:,} more" if len(names) > most else "")


def _within(item: str, student: str) -> str:
    return item[len(student) + 1 :] if item.startswith(student + "/") else item


def _short(name: str, most: int = NAME_CHARS) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"
