"""Who is in which group, from the LMS's own export (`grader batch --groups FILE`), so that every member of a
group gets the grade and report of the group's one submission.

A Canvas group assignment's download holds only the file of whoever submitted for the group, and a Moodle
team submission's folder is named by the group (`<group name>_<group id>_assignsubmission_file`), not by a
participant. Without the groups, the other members have nothing of their own: the export leaves their cells
as the LMS has them (never 0) and says how many it could not place. Read here:

- Canvas's group set export (People › Groups › the set's menu › Export): `name, canvas_user_id, user_id,
  login_id, sections, group_name, canvas_group_id, group_id`;
- any CSV whose first column is Moodle's participant identifier (`Participant 881234`, as the grading
  worksheet writes it) with a `Group` column, such as the worksheet of a team assignment itself, or a
  CSV of `group_name` and `canvas_user_id`/`participant` made by hand.

Gradescope needs none of this: its submission_metadata.yml names every submitter (grader/lms/identity.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from grader.csvfile import numbered_rows
from grader.errors import UsageError
from grader.lms.identity import Identity
from grader.lms.roster import moodle_number

MOST_BYTES = 20 * 2**20
MOST_NAME_CHARS = 1_000
"""The longest group name read (no LMS writes a longer one; notes and messages quote it)."""
GROUP_COLUMNS = ("group_name", "Group", "Group name", "group")


@dataclass(frozen=True)
class Groups:
    members: dict[str, tuple[Identity, ...]]
    """Each group's members, by group name."""

    def of(self, who: Identity) -> str | None:
        """The group a student is in, by their LMS id; a Moodle team folder (named by the group's name and id,
        which may equal some participant's id) by the group's name first."""
        if who.lms == "moodle":  # Moodle writes a group's name with each `_` made a space
            named = [name for name in self.members if name.replace("_", " ").strip() == who.name]
            if named:
                return named[0]
        for name, members in self.members.items():
            if any(m.lms == who.lms and m.user_id == who.user_id for m in members):
                return name
        return None


def read(path: Path) -> Groups:
    try:
        data = path.read_bytes()
        if len(data) > MOST_BYTES:
            raise UsageError(f"--groups {path} is larger than {MOST_BYTES // 2**20} MB")
        text = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--groups {path} cannot be read as UTF-8 text ({type(exc).__name__})") from None
    rows = numbered_rows(text, f"--groups {path}")
    header = [h.strip() for h in rows[0][1]] if rows else []
    group = next((header.index(g) for g in GROUP_COLUMNS if g in header), -1)
    if group < 0:
        raise UsageError(
            f"--groups {path} names no group column ({', '.join(GROUP_COLUMNS)}): give Canvas's group set export "
            "or a CSV of group and member"
        )
    members: dict[str, list[Identity]] = {}
    for line, row in rows[1:]:
        name = row[group].strip() if group < len(row) else ""
        if len(name) > MOST_NAME_CHARS:
            raise UsageError(
                f"--groups {path}, line {line}: a group name of {len(name):,} characters, longer than any LMS "
                f"writes (at most {MOST_NAME_CHARS:,})"
            )
        who = _member(header, row)
        if name and who is not None:
            members.setdefault(name, []).append(who)
    if not members:
        raise UsageError(f"--groups {path} holds no group with a member the grader can identify")
    return Groups({name: tuple(people) for name, people in members.items()})


def _member(header: list[str], row: list[str]) -> Identity | None:
    def cell(name: str) -> str:
        return row[header.index(name)].strip() if name in header and header.index(name) < len(row) else ""

    uid = cell("canvas_user_id")
    if uid.isascii() and uid.isdigit():
        return Identity("canvas", cell("name"), uid)
    number = moodle_number(row[0]) if row else ""
    if number:
        return Identity("moodle", cell("Full name") or row[0].strip(), number)
    return None


class Submitted(Protocol):
    """What apply needs of a submission (grader/batch/found.py's Submission, a frozen dataclass): whose it is."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def student(self) -> str: ...

    @property
    def identity(self) -> Identity | None: ...


S = TypeVar("S", bound=Submitted)


def apply(groups: Groups, submissions: tuple[S, ...]) -> tuple[tuple[S, ...], list[str]]:
    """Each submission of a group's member, with the group's other members in its identity (they get its grade
    and report); a Moodle team folder becomes its first member's. And a note for each group with more than
    one submission (each is graded; each member's own row is theirs)."""
    out: list[S] = []
    notes: list[str] = []
    seen: dict[str, str] = {}  # each group's first submission's student
    for sub in submissions:
        who = sub.identity
        name = groups.of(who) if who else None
        if who is None or name is None:
            out.append(sub)
            continue
        members = groups.members[name]
        submitter = next((m for m in members if m.lms == who.lms and m.user_id == who.user_id), None)
        if submitter is None:  # a team folder, named by the group
            submitter = replace(members[0], submission_id=who.submission_id, late=who.late)
        else:
            submitter = replace(who, name=who.name or submitter.name)
        others = tuple(
            replace(m, submission_id=who.submission_id, late=who.late, submitted_at=who.submitted_at)
            for m in members
            if m.user_id != submitter.user_id
        )
        if name in seen:
            notes.append(f"group '{name}' has several submissions ({seen[name]}, {sub.student}): each is graded")
        seen.setdefault(name, sub.student)
        out.append(replace(sub, identity=replace(submitter, group=others)))
    return tuple(out), notes
