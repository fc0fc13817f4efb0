"""A graded student's key.txt: what tells a rerun it may skip them.

Its first line is the content key (grader/batch/run.py's Student.key: what the result depends on); each other
line the SHA-256 of one output written for them and its name, so an output changed since is regraded rather
than trusted. It is written last, so a student with a key is always in the gradebook. An output the batch
itself rewrites afterwards (a report saying what an instructor adjusted) is resealed: its line takes the new
digest, when the old one was the one recorded.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from grader.fileio import atomic_write
from grader.files import KEY_FILE
from grader.files import STUDENT_OUTPUTS as OUTPUTS


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def seal(folder: Path, key: str) -> None:
    """Write the key that lets a rerun skip this student: the last thing written for them."""
    atomic_write(
        folder / KEY_FILE,
        "\n".join([key, *(f"{sha256((folder / n).read_bytes())} {n}" for n in OUTPUTS)]) + "\n",
    )


def unchanged(folder: Path, key: str) -> bool:
    """Was this student graded with this content key, and is every file written then still as written?"""
    try:
        lines = (folder / KEY_FILE).read_text().splitlines()
        recorded = {name: digest for digest, name in (line.split(" ", 1) for line in lines[1:])}
        return (
            lines[0] == key
            and set(recorded) == set(OUTPUTS)
            and all(sha256((folder / name).read_bytes()) == digest for name, digest in recorded.items())
        )
    except (OSError, IndexError, ValueError, UnicodeDecodeError):
        return False


def rewrite(folder: Path, name: str, text: str) -> None:
    """Write an output of a graded student again, and reseal their key if it held the old output's digest (a key
    that did not stays as it is: the student is regraded on the next run, as before)."""
    path = folder / name
    try:
        before = sha256(path.read_bytes())
    except OSError:
        before = None
    atomic_write(path, text)
    try:
        lines = (folder / KEY_FILE).read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return
    old = f"{before} {name}"
    if before is None or old not in lines[1:]:
        return
    new = f"{sha256(path.read_bytes())} {name}"
    atomic_write(folder / KEY_FILE, "\n".join(new if line == old else line for line in lines) + "\n")
