"""The class list, as the LMS exports it: so that every student of the course gets exactly one row.

A batch finds only the students who handed something in. With `--roster FILE`, every student
on the LMS's own export is in the gradebook: graded, not gradable (with the reason), or
`no_submission` with 0. The file is read as the LMS writes it (docs/lms.md names the versions):

- Canvas: the Gradebook's Export (CSV): `Student, ID, SIS User ID, SIS Login ID[, Integration
  ID], Section, <assignment (id)>...`, a `Points Possible` row, sometimes a posting-policy row
  with no ID, and the `Student, Test` account (left out).
- Moodle: the assignment's grading worksheet (Download grading worksheet): `Identifier` is
  `Participant <id>`, then `Full name`, the identity fields shown, `Status`, `Grade`...
- Gradescope: the course roster (CSV): `First Name`/`Last Name` or `Name`, `Email`, `SID`,
  `Role` (only students are kept).

Each student is matched to what was found by the LMS's own id (Canvas's user id, Moodle's
participant id, Gradescope's SID or email); work from a plain folder matches a student whose
login, SIS id, SID or email (or the email's user part) is its name.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from grader.batch.names import bounded, safe_id
from grader.errors import UsageError
from grader.lms.identity import Identity

CANVAS_ID_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section")
CANVAS_TOTALS = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points", "Final Grade")
TEST_STUDENT = ("student, test", "test student")
MOST_BYTES = 50 * 2**20


@dataclass(frozen=True)
class Student:
    """One student on the roster."""

    lms: str
    user_id: str
    name: str
    """As the roster writes it (Canvas: `Last, First`)."""
    aliases: tuple[str, ...] = ()
    """Other ids a plain folder's name may be: login, SIS id, SID, email and the email's user part."""
    email: str = ""
    cells: tuple[str, ...] = ()
    """The student's row as read."""

    def identity(self) -> Identity:
        return Identity(self.lms, self.name, self.user_id, email=self.email)

    @property
    def id_base(self) -> str:
        """The id a student with no submission gets: Canvas's `lastfirst`, else the name made safe."""
        if self.lms == "canvas":
            return bounded("".join(c for c in self.name.lower() if c.isalnum())) or f"canvas-{safe_id(self.user_id)}"
        return safe_id(self.name) or f"{self.lms}-{safe_id(self.user_id)}"


@dataclass(frozen=True)
class Roster:
    lms: str
    header: tuple[str, ...]
    students: tuple[Student, ...]
    rows: tuple[tuple[str, ...], ...]
    """Every row after the header, as read (for exports that write the file back)."""
    path: Path

    def match(self, who: Identity, student_id: str) -> Student | None:
        """The roster student this work is from, by the LMS's id (by name only for a plain folder)."""
        for s in self.students:
            if who.lms == self.lms and who.user_id and who.user_id == s.user_id:
                return s
            if (
                self.lms == "gradescope"
                and who.lms == "gradescope"
                and who.email
                and who.email.lower() == s.email.lower()
            ):
                return s
        if who.lms == "plain":
            named = [s for s in self.students if student_id.lower() in s.aliases]
            return named[0] if len(named) == 1 else None
        return None


def read(path: Path) -> Roster:
    """The roster in `path`, whichever LMS wrote it; a UsageError naming what is wrong otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the roster {path}: {exc.strerror}") from None
    if len(data) > MOST_BYTES:
        raise UsageError(f"the roster {path} is larger than {MOST_BYTES // 2**20} MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"the roster {path} is not UTF-8 text (export it again as CSV)") from None
    rows = [tuple(r) for r in csv.reader(io.StringIO(text, newline=""))]
    if not rows:
        raise UsageError(f"the roster {path} is empty")
    header, body = rows[0], rows[1:]
    if len(header) > 1 and header[0].strip() == "Student" and header[1].strip() == "ID":
        return Roster("canvas", header, tuple(_canvas(header, body)), tuple(body), path)
    if "Identifier" in header and "Full name" in header:
        return Roster("moodle", header, tuple(_moodle(header, body)), tuple(body), path)
    if "Email" in header and ({"SID", "Name", "First Name", "Full Name"} & set(header)):
        return Roster("gradescope", header, tuple(_gradescope(header, body)), tuple(body), path)
    raise UsageError(
        f"{path} is not a roster this grader reads: expected a Canvas gradebook export (Student, ID, "
        "SIS User ID, SIS Login ID, Section...), a Moodle grading worksheet (Identifier, Full name...) "
        f"or a Gradescope roster (Name or First Name, Email, SID...); its header is {', '.join(header)}"
    )


def _cell(header, row, name: str) -> str:
    return row[header.index(name)].strip() if name in header and header.index(name) < len(row) else ""


def _aliases(*values: str) -> tuple[str, ...]:
    found = []
    for value in values:
        value = value.strip().lower()
        if value:
            found.append(value)
            if "@" in value:
                found.append(value.split("@", 1)[0])
    return tuple(dict.fromkeys(found))


def _canvas(header, body):
    for row in body:
        name, uid = _cell(header, row, "Student"), _cell(header, row, "ID")
        if not uid.isdigit() or "points possible" in name.lower() or name.lower() in TEST_STUDENT:
            continue  # the Points Possible row, a posting-policy row, the test student
        yield Student(
            "canvas",
            uid,
            name,
            _aliases(_cell(header, row, "SIS Login ID"), _cell(header, row, "SIS User ID")),
            cells=row,
        )


def _moodle(header, body):
    for row in body:
        ident = _cell(header, row, "Identifier")
        number = ident.rsplit(" ", 1)[-1]
        if not number.isdigit():
            continue
        email = _cell(header, row, "Email address")
        yield Student(
            "moodle",
            number,
            _cell(header, row, "Full name"),
            _aliases(email, _cell(header, row, "ID number"), _cell(header, row, "Username")),
            email,
            row,
        )


def _gradescope(header, body):
    for row in body:
        role = _cell(header, row, "Role")
        if role and role.lower() != "student":
            continue
        email, sid = _cell(header, row, "Email"), _cell(header, row, "SID")
        name = (
            _cell(header, row, "Name")
            or _cell(header, row, "Full Name")
            or f"{_cell(header, row, 'First Name')} {_cell(header, row, 'Last Name')}".strip()
        )
        if email or sid:
            yield Student("gradescope", sid or email, name, _aliases(email, sid), email, row)
