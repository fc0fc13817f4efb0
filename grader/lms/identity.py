"""Who a student is in the LMS their work was downloaded from, read from what the LMS wrote.

An instructor joins the grader's results back to a course by the LMS's own ids, never by a
name: two students can share a name, and a name is spelled differently by every export.
Each LMS's download names its students its own way, and each has a small reader here:

- Canvas ("Download Submissions"): every file is `lastfirst[_late]_<user id>_<attachment
  id>_<file name>`. The user id is the gradebook's `ID`; the second number is the id of the
  file the student attached (it grows with every resubmission, so the highest is the newest),
  and `_late` (`_LATE` in newer versions) is Canvas's late marker. `lastfirst` is the sortable
  name lowercased with every non-word character removed: letters of any script stay
  (`garcíamárquezjosé`, `王`, `o_brienpat`), and Canvas itself removes each `_<digits>_` from
  it, so the name ends where the first two all-digit `_` parts begin.
- Moodle ("Download all submissions"): one folder per participant, `<Full Name>_<participant
  id>_assignsubmission_file[_]` (the trailing `_` before Moodle 4.1), or flat files with that
  prefix; Moodle writes the name with each `_` made a space (anonymous: `Participant`, in the
  site's language; a team submission: the group's name and the group's id). The participant id
  is the grading worksheet's `Participant <id>`.
- Gradescope ("Export Submissions"): folders `submission_<id>/` beside `submission_metadata.yml`,
  which names each submission's submitters (name, SID, email) and its submission time.
- Anything else is a plain folder: the file, zip or folder name is all there is.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.errors import BadMetadata
from grader.lms import yamlfile

MOODLE_PLUGIN = "assignsubmission"
GRADESCOPE_FOLDER = re.compile(r"^submission_(?P<sid>\d+)$")
GRADESCOPE_METADATA = "submission_metadata.yml"
MOST_METADATA_BYTES = 4 * 2**20
"""The largest metadata read: a class of thousands writes a few hundred KB."""
MOST_SUBMITTERS = 100
"""The most submitters one submission's entry may name (a Gradescope group has a handful)."""
TEXT_CHARS = 1_000
"""The longest name, id or email read from the metadata (its values can be anything YAML writes)."""


@dataclass(frozen=True)
class Identity:
    """A student as their LMS knows them; `lms` is canvas, moodle, gradescope or plain."""

    lms: str
    name: str
    """As the LMS wrote it (Canvas: lastfirst; Moodle and Gradescope: the full name; plain: the file's name)."""
    user_id: str = ""
    """Canvas's user id, Moodle's participant id, Gradescope's SID (else the email)."""
    submission_id: str = ""
    """Canvas's attachment id, Gradescope's submission id; empty for Moodle and plain folders."""
    email: str = ""
    late: bool = False
    """The LMS marked the submission late (Canvas's `_late`)."""
    submitted_at: str = ""
    """When the LMS says it was submitted (ISO 8601, with its offset), if it says."""
    group: tuple[Identity, ...] = ()
    """The other members of a group submission (Gradescope's other submitters): each gets the grade too."""

    @classmethod
    def from_dict(cls, data: object, depth: int = 0) -> Identity | None:
        """An identity as summary.json holds it (dataclasses.asdict), read as untrusted data; None if it is not
        one."""
        if not isinstance(data, dict) or not isinstance(data.get("lms"), str):
            return None
        text = {k: str(data.get(k) or "")[:1000] for k in ("lms", "name", "user_id", "submission_id", "email")}
        given = data.get("group")
        group = given if depth == 0 and isinstance(given, list) else []
        members = tuple(m for m in (cls.from_dict(g, 1) for g in group[:1000]) if m is not None)
        return cls(
            **text, late=data.get("late") is True, submitted_at=str(data.get("submitted_at") or "")[:100], group=members
        )

    @property
    def sort_key(self) -> int:
        """Which of one student's submissions is the newest: the highest LMS id wins."""
        return int(self.submission_id) if self.submission_id.isdigit() else -1


def plain(name: str) -> Identity:
    return Identity("plain", name)


def _digits(part: str) -> bool:
    return part.isascii() and part.isdigit()


def canvas_parts(name: str) -> tuple[str, bool, str, str, str] | None:
    """A Canvas download name split as Canvas writes it, `lastfirst[_late]_<user id>_<attachment id>_<file>`:
    (name, late, user id, attachment id, file); None when it is not one. The name is everything before the
    first two all-digit `_` parts, in any script and case (Canvas removes `_<digits>_` from it, so it holds
    none); no regular expression, one split."""
    parts = name.split("_")
    for i in range(1, len(parts) - 2):
        if _digits(parts[i]) and _digits(parts[i + 1]):
            head, late = parts[:i], False
            if len(head) > 1 and head[-1].lower() == "late":
                head, late = head[:-1], True
            file = "_".join(parts[i + 2 :])
            return ("_".join(head), late, parts[i], parts[i + 1], file) if file and head[0] else None
    return None


def _canvas(name: str) -> tuple[Identity, str] | None:
    parts = canvas_parts(name)
    if parts is None:
        return None
    who, late, uid, sub, file = parts
    return Identity("canvas", who, uid, sub, late=late), file


def _moodle(name: str) -> tuple[Identity, str] | None:
    """`Full Name_<id>_assignsubmission_<plugin>[_[file]]` as Moodle's own importer reads it: five `_` parts at
    most, the second numeric; the full name holds no `_` (Moodle writes each as a space)."""
    parts = name.split("_", 4)
    if len(parts) < 4 or not _digits(parts[1]) or parts[2] != MOODLE_PLUGIN or not parts[3].isalpha():
        return None
    if not parts[0].strip() or "/" in parts[0]:
        return None
    return Identity("moodle", parts[0].strip(), parts[1]), parts[4] if len(parts) == 5 else ""


def from_file_name(name: str) -> tuple[Identity, str] | None:
    """A loose file named by Canvas or Moodle: the student, and the file's own name; None for any other."""
    canvas = _canvas(name)
    if canvas:
        return canvas
    moodle = _moodle(name)
    if moodle and moodle[1]:
        return moodle
    return None


def from_folder_name(name: str) -> Identity | None:
    """A student's folder or zip named by Canvas or Moodle; None for any other."""
    canvas = _canvas(name)
    if canvas:
        return canvas[0]
    moodle = _moodle(name)
    if moodle and not moodle[1]:
        return moodle[0]
    return None


@dataclass(frozen=True)
class Metadata:
    """A Gradescope export's submission_metadata.yml, read as far as a parser's events and its document's nodes
    (bounded before anything is built, grader/lms/yamlfile.py); each submission's entry is built on its own, when
    its folder is read (`who`), so that an entry that cannot be read costs its own student their metadata only."""

    entries: dict[str, Any]
    """Each submission folder's entry, by folder name: a node of the composed document, not yet built."""

    def who(self, folder: str) -> Identity | None:
        """The submitters of a submission folder as its entry names them (a group submission is its first
        submitter's, with the others in `group`); None when the metadata does not name the folder, and
        BadMetadata when its entry cannot be read."""
        node = self.entries.get(folder)
        if node is None:
            return None
        entry = yamlfile.built(node)
        if not isinstance(entry, dict):
            return None
        submitters = entry.get(":submitters")
        people = [s for s in submitters if isinstance(s, dict)] if isinstance(submitters, list) else []
        if len(people) > MOST_SUBMITTERS:
            raise BadMetadata(f"names {len(people):,} submitters (a group has at most {MOST_SUBMITTERS})")
        if not people:
            return None
        match = GRADESCOPE_FOLDER.match(folder)
        assert match is not None, "entries holds submission folders' names only"
        when = _time(entry.get(":created_at"))
        first, *others = [_submitter(p, match["sid"], when) for p in people]
        return Identity(
            first.lms,
            first.name,
            first.user_id,
            first.submission_id,
            first.email,
            submitted_at=when,
            group=tuple(others),
        )


def gradescope(folder: Path) -> Metadata | None:
    """The metadata of a Gradescope export folder; None when it is not one, BadMetadata when its file cannot be
    read (too large, aliases that would write out too much, nested too deep, not YAML, not a mapping).

    submission_metadata.yml (Ruby symbols as keys, as Gradescope writes it):
    `submission_<id>: {":submitters": [{":name", ":sid", ":email"}...], ":created_at": <time>, ...}`."""
    path = folder / GRADESCOPE_METADATA
    if path.is_symlink() or not path.is_file():
        return None
    try:
        if path.stat().st_size > MOST_METADATA_BYTES:
            raise BadMetadata(f"larger than {MOST_METADATA_BYTES // 2**20} MB")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadMetadata(f"cannot be read ({type(exc).__name__}: {str(exc)[:200]})") from None
    return Metadata(
        {key: node for key, node in yamlfile.mapping(text).items() if GRADESCOPE_FOLDER.match(key) is not None}
    )


def _submitter(person: dict, submission: str, when: str) -> Identity:
    sid, email = _text(person.get(":sid")), _text(person.get(":email"))
    return Identity("gradescope", _text(person.get(":name")), sid or email, submission, email, submitted_at=when)


def _text(value) -> str:
    """A name, id or email as the metadata gives it: text or a number, at most TEXT_CHARS; anything else (a list,
    a mapping, an int too long to write) is none."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    if isinstance(value, int) and value.bit_length() > 64:
        return ""
    return str(value).strip()[:TEXT_CHARS]


def _time(value) -> str:
    """Gradescope's `2026-03-02 14:05:09.123456000 -08:00` (YAML reads it as a time) as ISO 8601."""
    if isinstance(value, datetime.datetime):
        return value.isoformat() if value.tzinfo is not None else ""  # no offset: not a time to compare
    text = _text(value)[:100]
    match = re.match(r"^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.\d+)?\s*([+-]\d\d:?\d\d|Z)?$", text)
    if not match or not match[3]:  # no offset: not a time to compare with a deadline
        return ""
    offset = match[3]
    if offset and offset != "Z" and ":" not in offset:
        offset = offset[:3] + ":" + offset[3:]
    when = f"{match[1]}T{match[2]}{offset.replace('Z', '+00:00')}"
    try:  # a date that is none (2026-13-45) is no time
        datetime.datetime.fromisoformat(when)
    except ValueError:
        return ""
    return when
