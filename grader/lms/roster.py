"""The class list, as the LMS exports it: so that every student of the course gets exactly one row.

A batch finds only the students who handed something in. With `--roster FILE`, every student
on the LMS's own export is in the gradebook: graded, not gradable (with the reason), or
`no_submission` with 0. The file is read as the LMS writes it (docs/lms.md names the versions):

- Canvas: the Gradebook's Export (CSV): `Student` (or `LastName, FirstName`), `ID`, `SIS User ID`,
  `SIS Login ID`[, `Integration ID`][, `Root Account`], `Section`, `<assignment (id)>`..., a `Points
  Possible` row, sometimes a posting-policy row with no ID, and the `Student, Test` account (left out).
  Separated by `,` or, as the user's setting or locale asks, `;` (told apart as Canvas's importer
  does, by the first three lines).
- Moodle: the assignment's grading worksheet (Download grading worksheet), in the site's language:
  recognised by its identifier column, the first, which is `<word> <digits>` on every row
  (`Participant 881234`, `Participante 881234`); the other columns by their English names (`Full
  name`, `Grade`, `Maximum Grade`, `Email address`, `Group`), or else by position: `Maximum Grade`
  is the first column holding one number on every row after a column of numbers or blanks (the
  grade). An anonymous worksheet (blind marking) has no names, only the identifier.
- Gradescope: the course roster (CSV): `First Name`/`Last Name` or `Name`, `Email`, `SID`,
  `Role` (only students are kept).

Each student is matched to what was found by the LMS's own id (Canvas's user id, Moodle's
participant id, Gradescope's SID or email); work from a plain folder matches a student whose
login, SIS id, SID or email (or the email's user part) is its name.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from grader.csvfile import numbered_rows
from grader.errors import UsageError
from grader.lms import numbers
from grader.lms.identity import Identity
from grader.lms.names import bounded, safe_id

CANVAS_ID_COLUMNS = (
    "Student",
    "LastName",
    "FirstName",
    "ID",
    "SIS User ID",
    "SIS Login ID",
    "Integration ID",
    "Root Account",
    "Section",
)
"""The student-information columns of Canvas's gradebook export (its importer's reserved names)."""
CANVAS_TOTALS = (
    "Current Score",
    "Current Points",
    "Current Grade",
    "Final Score",
    "Final Points",
    "Final Grade",
    "Override Score",
    "Override Grade",
    "Override Status",
)
"""Columns Canvas's importer never reads as assignments (also with `Unposted ` or a group's name before)."""
TEST_STUDENT = ("student, test", "test student")
MOST_BYTES = 50 * 2**20
MOODLE_ENGLISH = {"name": "Full name", "grade": "Grade", "maximum": "Maximum Grade", "email": "Email address"}


@dataclass(frozen=True)
class RosterStudent:
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
    team: str = ""
    """The group a Moodle team assignment's worksheet names for them (its `Group` column), if any."""

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
    students: tuple[RosterStudent, ...]
    rows: tuple[tuple[str, ...], ...]
    """Every row after the header, as read (for exports that write the file back)."""
    path: Path
    delimiter: str = ","
    """The file's separator, `,` or `;`: an export writes the file back with it."""
    columns: dict[str, int] = field(default_factory=dict)
    """Where the columns an export needs are (Moodle: `grade`, `maximum`; Canvas: `id`), by role."""

    def match(self, who: Identity, student_id: str) -> RosterStudent | None:
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

    def by_id(self, user_id: str) -> RosterStudent | None:
        return next((s for s in self.students if s.user_id == user_id), None)


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
    delimiter = separator(text)
    rows = [tuple(r) for _, r in numbered_rows(text, f"the roster {path}", delimiter)]
    if not rows:
        raise UsageError(f"the roster {path} is empty")
    header, body = rows[0], rows[1:]
    if _canvas_header(header):
        ident = 2 if header[0].strip() == "LastName" else 1
        students = tuple(_canvas(header, body, ident))
        return Roster("canvas", header, students, tuple(body), path, delimiter, {"id": ident})
    columns = _moodle_columns(header, body)
    if columns is not None:
        return Roster("moodle", header, tuple(_moodle(header, body, columns)), tuple(body), path, delimiter, columns)
    if "Email" in header and ({"SID", "Name", "First Name", "Full Name"} & set(header)):
        return Roster("gradescope", header, tuple(_gradescope(header, body)), tuple(body), path, delimiter)
    raise UsageError(
        f"{path} is not a roster this grader reads: expected a Canvas gradebook export (Student, ID, "
        "SIS User ID, SIS Login ID, Section...), a Moodle grading worksheet (its first column `Participant "
        "<id>` on every row) or a Gradescope roster (Name or First Name, Email, SID...); its header is "
        + ", ".join(header)[:500]
    )


def separator(text: str) -> str:
    """`;` or `,`, told apart as Canvas's importer does: the one that splits each of the first three lines into
    the same number of fields, `;` only when it gives more fields than `,`."""
    lines = text.splitlines()[:3]
    counts = {}
    for sep in (";", ","):
        try:
            sizes = {len(next(csv.reader([line], delimiter=sep), [])) for line in lines}
        except csv.Error:  # a cell past csv's limit: reading the file says which line
            sizes = set()
        counts[sep] = sizes.pop() if len(sizes) == 1 else 0
    return ";" if counts[";"] > counts[","] else ","


def _canvas_header(header) -> bool:
    """Canvas's importer's test: `Student, ID...` or `LastName, FirstName, ID...`."""
    cells = [h.strip() for h in header]
    return (len(cells) > 3 and "Student" in cells[0] and "ID" in cells[1]) or (
        len(cells) > 4 and "LastName" in cells[0] and "FirstName" in cells[1] and "ID" in cells[2]
    )


def _cell(header, row, name: str) -> str:
    return row[header.index(name)].strip() if name in header and header.index(name) < len(row) else ""


def _at(row, index: int) -> str:
    return row[index].strip() if 0 <= index < len(row) else ""


def _aliases(*values: str) -> tuple[str, ...]:
    found = []
    for value in values:
        value = value.strip().lower()
        if value:
            found.append(value)
            if "@" in value:
                found.append(value.split("@", 1)[0])
    return tuple(dict.fromkeys(found))


def _canvas(header, body, ident: int):
    split = ident == 2
    for row in body:
        uid = _at(row, ident)
        name = f"{_at(row, 0)}, {_at(row, 1)}" if split else _at(row, 0)
        if not uid.isascii() or not uid.isdigit() or "points possible" in name.lower() or name.lower() in TEST_STUDENT:
            continue  # the Points Possible row, a posting-policy row, the test student
        yield RosterStudent(
            "canvas",
            uid,
            name,
            _aliases(_cell(header, row, "SIS Login ID"), _cell(header, row, "SIS User ID")),
            cells=row,
        )


def moodle_number(cell: str) -> str:
    """The participant id in a Moodle identifier cell, `<word> <digits>` (`Participant 881234`); "" otherwise."""
    prefix, _, number = cell.strip().rpartition(" ")
    return number if prefix.strip() and number.isascii() and number.isdigit() else ""


def _moodle_columns(header, body) -> dict[str, int] | None:
    """Where a Moodle worksheet's columns are, in any language; None when it is not a worksheet. The first
    column is the identifier on every row (an empty worksheet: its English header)."""
    rows = [r for r in body if any(c.strip() for c in r)]
    if rows and not all(moodle_number(_at(r, 0)) for r in rows):
        return None
    if not rows and (not header or header[0].strip() != "Identifier"):
        return None
    names = [h.strip() for h in header]
    columns = {"identifier": 0}
    for role, english in MOODLE_ENGLISH.items():
        if english in names:
            columns[role] = names.index(english)
    if "Group" in names:
        columns["team"] = names.index("Group")
    if "maximum" not in columns and "Scale" not in names:
        _set(columns, "maximum", _maximum_column(names, rows))
    if "grade" not in columns and "maximum" in columns:
        columns["grade"] = columns["maximum"] - 1
    if "name" not in columns and columns.get("grade", 0) >= 3:
        columns["name"] = 1
    if "email" not in columns:
        _set(columns, "email", _email_column(names, rows))
    return columns


def _set(columns: dict[str, int], role: str, column: int | None) -> None:
    if column is not None:
        columns[role] = column


def _maximum_column(names: list[str], rows) -> int | None:
    """The first column (past the second) holding one number on every row, after a column of numbers or blanks:
    the maximum grade, after the grade."""
    for j in range(2, len(names)):
        maxima = {_at(r, j) for r in rows}
        if (
            len(maxima) == 1
            and numbers.is_number(next(iter(maxima)))
            and all(not _at(r, j - 1) or numbers.is_number(_at(r, j - 1)) for r in rows)
        ):
            return j
    return None


def _email_column(names: list[str], rows) -> int | None:
    """The first column (past the identifier) whose filled cells all hold an @."""
    for j in range(1, len(names)):
        cells = [_at(r, j) for r in rows if _at(r, j)]
        if cells and all("@" in c for c in cells):
            return j
    return None


def _moodle(header, body, columns: dict[str, int]):
    for row in body:
        number = moodle_number(_at(row, 0))
        if not number:
            continue
        email = _at(row, columns.get("email", -1))
        yield RosterStudent(
            "moodle",
            number,
            _at(row, columns.get("name", -1)) or _at(row, 0),
            _aliases(email, _cell(header, row, "ID number"), _cell(header, row, "Username")),
            email,
            row,
            _at(row, columns.get("team", -1)),
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
            yield RosterStudent("gradescope", sid or email, name, _aliases(email, sid), email, row)
