"""Student ids from the names an LMS or a student gave: Canvas's file names, plain names, and
ids made safe and unique (letters, digits and `_.-`, never starting with '.' or '-')."""

from __future__ import annotations

import hashlib
import re

CANVAS = re.compile(r"^(?P<name>[a-z][a-z0-9-]*?)(?P<late>_late)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$")
SUFFIXES_TO_DROP = ("_micrograd_mine", "-micrograd_mine", "_micrograd", "-micrograd")
SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")
MAX_ID = 100


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
    student = SAFE_ID.sub("_", stem).strip("._-")
    if len(student) > MAX_ID:
        student = f"{student[:MAX_ID - 9]}-{short_hash(filename)}"
    if not student:
        student = f"student-{short_hash(filename)}"
        return student, f"no usable student id in its name; graded as {student}"
    return student, None


def unique_ids(entries: list, notes: list[str]) -> list[str]:
    """Each entry's id: its name, or name-2, name-3... when several share a name (ignoring case)."""
    taken = {e.name.lower() for e in entries}
    by_name: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        by_name.setdefault(e.name.lower(), []).append(i)
    ids = [e.name for e in entries]
    for name, indexes in by_name.items():
        if len(indexes) < 2:
            continue
        n = 2
        for i in indexes[1:]:
            while f"{name}-{n}" in taken:
                n += 1
            ids[i] = f"{entries[i].name}-{n}"
            taken.add(ids[i].lower())
        notes.append(f"{entries[indexes[0]].name}: {len(indexes)} submissions and no LMS submission ids to tell "
                     "which is the newest (or several students with one name); graded each: "
                     + ", ".join(f"{ids[i]} ({entries[i].main_label})" for i in indexes))
    return ids


def printable(note: str) -> str:
    """A note safe to print on a terminal: a file name's control characters are escaped, not obeyed."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in note)


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:8]
