"""Student ids from the names an LMS or a student gave (grader/lms/identity.py reads each LMS's),
made safe and unique (letters, digits and `_.-`, never starting with '.' or '-'): students the
LMS tells apart who share a name are told apart by their LMS user ids, never by a suffix; and
one submission per student where the LMS's ids say which is the newest."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from grader import text
from grader.files import MODULE
from grader.files import TESTS_FILE as TESTS

SUFFIXES_TO_DROP = (f"_{MODULE}", f"-{MODULE}", "_micrograd", "-micrograd")
SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")
MAX_ID = 100
"""The longest id: an id names the student's folders (staging, DIR/students/<id>), and an LMS's name can
be longer than a file system's 255 bytes (Gradescope's metadata names anyone at any length)."""
NAME_CHARS = 1_000
"""The most of a name read to make an id (NFKD can make a name longer, never shorter)."""


def plain_name(filename: str) -> tuple[str, str | None]:
    """A safe student id from a file, zip or folder name not in an LMS's format; and a note when it had none."""
    stem = filename
    for ext in (".py", ".ipynb", ".zip"):
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
            break
    for suffix in SUFFIXES_TO_DROP:
        if stem.lower().endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
    student = _safe(stem)
    if len(student) > MAX_ID:
        student = f"{student[: MAX_ID - 9]}-{short_hash(filename)}"
    if not student:
        student = f"student-{short_hash(filename)}"
        return student, f"no usable student id in its name; graded as {student}"
    return student, None


def safe_id(name: str) -> str:
    """A name as an id: letters, digits and `_.-` (accents dropped, anything else becomes `_`), never starting
    with '.' or '-', at most MAX_ID characters (a longer one keeps its start and ends with a hash of it all)."""
    return bounded(_safe(name))


def bounded(student: str) -> str:
    """An id of at most MAX_ID characters: a longer one keeps its start and ends with a hash of it all (of it in
    lower case, so that ids differing only in case still differ only in case)."""
    return student if len(student) <= MAX_ID else f"{student[: MAX_ID - 9]}-{short_hash(student.lower())}"


def _safe(name: str) -> str:
    name = name[:NAME_CHARS] + (short_hash(name) if len(name) > NAME_CHARS else "")
    ascii_name = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return SAFE_ID.sub("_", ascii_name).strip("._-")


def one_per_student(entries: list, note: Callable[[str, str, str], None]) -> list[tuple[Any, str]]:
    """Each student's entry (grader.batch.discover's _Entry) and id: of one LMS user's work, the highest
    submission id, with their tests; of work no LMS id tells apart, each one, the shallowest claimant of a
    name keeping it. `note(kind, item, why)` is told of what is given way, made up or shared."""
    groups: dict[tuple, list] = {}
    for entry in entries:
        groups.setdefault(entry.group, []).append(entry)
    kept = []
    for key, group in groups.items():
        if key[0] == "lms":
            chosen = settle_by_lms_id(group, note)
            if chosen:
                kept.append(chosen)
        else:
            kept += group
    kept.sort(key=lambda e: e.depth)  # stable: a deeper entry never takes an id from a shallower claimant
    for entry in kept:
        if entry.renamed:
            note("renamed", entry.main_label, entry.renamed)
    return list(zip(kept, unique_ids(kept, lambda name, why: note("duplicate", name, why)), strict=True))


def settle_by_lms_id(entries: list, note: Callable[[str, str, str], None]) -> Any | None:
    """One student's LMS-named work: the submission with the highest submission id, with its tests; with
    none, the entry that says why (only tests, a file too big, a zip that cannot be read)."""
    mains = sorted((e for e in entries if e.main), key=lambda e: e.lms_id or -1)
    tests = sorted((e for e in entries if e.tests and not e.main), key=lambda e: e.lms_id or -1)
    if not mains:
        for e in tests:
            note("not_graded", e.tests_label, f"the tests of {quoted(e.name)}, but no submission of theirs; not graded")
        problems = [e for e in entries if e.problem]
        chosen = problems[-1] if problems else tests[-1] if tests else None
        if chosen and not chosen.problem:
            chosen.problem = f"only {TESTS} was found, no engine to grade"
            chosen.main_label = chosen.tests_label
        return chosen
    chosen = mains[-1]
    for e in mains[:-1]:
        note(
            "superseded",
            e.main_label,
            f"an older submission of {quoted(e.name)} (LMS id {e.lms_id}); graded the newer "
            f"{chosen.main_label} (id {chosen.lms_id})",
        )
    if tests and chosen.tests is None:
        chosen.tests, chosen.tests_label = tests[-1].tests, tests[-1].tests_label
        tests = tests[:-1]
    for e in tests:
        note(
            "superseded",
            e.tests_label,
            f"tests of {quoted(e.name)}, not used (graded with {chosen.tests_label or 'no tests'})",
        )
    return chosen


def unique_ids(entries: list, note: Callable[[str, str], None]) -> list[str]:
    """Each entry's id: its name; when several share a name (ignoring case), those the LMS tells apart are
    name_userid, and the others name-2, name-3..., in the entries' order (so the first claimant keeps the
    name); `note(name, why)` is told of each name shared by work no LMS id tells apart."""
    taken = {e.name.lower() for e in entries}
    by_name: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        by_name.setdefault(e.name.lower(), []).append(i)
    ids = [e.name for e in entries]
    for name, indexes in by_name.items():
        if len(indexes) < 2:
            continue
        known = [i for i in indexes if entries[i].group[0] == "lms"]
        if len(known) > 1:  # students the LMS tells apart: by their ids, never by a suffix
            for i in known:
                ids[i] = f"{entries[i].name}_{safe_id(str(entries[i].group[2]))}"
                taken.add(ids[i].lower())
            indexes = [i for i in indexes if i not in known]
            if len(indexes) < 2:
                continue
        n = 2
        for i in indexes[1:]:
            while f"{name}-{n}" in taken:
                n += 1
            ids[i] = f"{entries[i].name}-{n}"
            taken.add(ids[i].lower())
        note(
            entries[indexes[0]].name,
            f"{len(indexes)} submissions and no LMS submission ids to tell which is the "
            "newest (or several students with one name); graded each: "
            + ", ".join(f"{ids[i]} ({entries[i].main_label})" for i in indexes),
        )
    return ids


def printable(note: str) -> str:
    """A note safe to print on a terminal, on one line: a file name's control characters (newlines too) are
    escaped, not obeyed, as everywhere else (grader/text.py)."""
    return text.printable(note, keep="")


def quoted(name: str) -> str:
    """A name a student or an LMS chose, inside a sentence: in quotes, so that no sentence (a gradebook's
    reason, a note) starts with it, and a spreadsheet never reads one as a formula."""
    return f'"{name}"'


def short_hash(text: str) -> str:
    try:
        data = text.encode("utf-8", "surrogateescape")  # a file name's undecodable bytes, as they were
    except UnicodeEncodeError:  # a lone surrogate an LMS's text can hold
        data = text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:8]
