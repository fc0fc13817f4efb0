"""Find the submissions in folders and zips, and tell which student each belongs to.

Accepted: `.py` files and `.ipynb` notebooks, one folder per student (holding
micrograd_mine.py or a notebook, and maybe test_micrograd.py), and zips of any of these,
nested to any depth. Student ids come from file and folder names, including LMS export
names (Canvas: `lastfirst_12345_67890_micrograd_mine.py`, with `_late_`). When one student
has two submissions, the newest is kept and the other is reported.
"""

from __future__ import annotations

import os
import re
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

CANVAS = re.compile(r"^(?P<name>[a-z][a-z0-9-]*?)(?P<late>_late)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$")
SKIP_DIRS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git"}
MODULE = "micrograd_mine.py"
TESTS = "test_micrograd.py"
SUFFIXES_TO_DROP = ("_micrograd_mine", "-micrograd_mine", "_micrograd", "-micrograd")


@dataclass(frozen=True)
class Submission:
    student: str
    path: Path
    """The .py file or notebook to grade."""
    tests: Path | None
    late: bool = False
    mtime: float = 0.0


@dataclass(frozen=True)
class Found:
    submissions: tuple[Submission, ...]
    notes: tuple[str, ...]
    """What the instructor should know: duplicates dropped, files skipped."""


def discover(inputs: list[Path], staging: Path) -> Found:
    """Every submission under the inputs, one per student (the newest), sorted by student id."""
    notes: list[str] = []
    candidates: list[Submission] = []
    for item in inputs:
        if not item.exists():
            raise FileNotFoundError(f"{item} does not exist")
        root = _unpack(item, staging) if zipfile.is_zipfile(item) else item
        candidates += _walk(root, staging)
    chosen: dict[str, Submission] = {}
    for sub in sorted(candidates, key=lambda s: (s.student, s.mtime, str(s.path))):
        if sub.student in chosen:
            old = chosen[sub.student]
            notes.append(f"{sub.student}: two submissions; kept the newest, {sub.path.name} "
                         f"({_when(sub.mtime)}), not {old.path.name} ({_when(old.mtime)})")
        chosen[sub.student] = sub
    return Found(tuple(chosen[k] for k in sorted(chosen)), tuple(notes))


def _when(mtime: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))


def _unpack(archive: Path, staging: Path) -> Path:
    """Extract a zip (keeping each file's date) into its own staging folder."""
    target = staging / f"{archive.stem}-{len(list(staging.iterdir())) if staging.exists() else 0}"
    target.mkdir(parents=True)
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = Path(info.filename)
            if info.is_dir() or name.is_absolute() or ".." in name.parts:
                continue
            out = target / name
            out.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(out, "wb") as dst:
                dst.write(src.read())
            stamp = time.mktime(info.date_time + (0, 0, -1))
            os.utime(out, (stamp, stamp))
    return target


def _walk(root: Path, staging: Path) -> list[Submission]:
    if root.is_file():
        return [_submission(root, None)] if root.suffix in (".py", ".ipynb") else []
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        folder = Path(folder)
        files = sorted(f for f in files if not f.startswith("."))
        notebooks = [f for f in files if f.endswith(".ipynb")]
        if folder != root and (MODULE in files or (len(notebooks) == 1 and not _loose(files))):
            # one student's folder: their engine (or notebook) and maybe their tests
            main = folder / (MODULE if MODULE in files else notebooks[0])
            tests = folder / TESTS if TESTS in files else None
            found.append(_submission(main, tests, student=_student_from(folder.name)[0]))
            dirs[:] = []
            continue
        for name in files:
            path = folder / name
            if zipfile.is_zipfile(path) and path.suffix == ".zip":
                found += _walk(_unpack(path, staging), staging)
            elif path.suffix == ".ipynb" or (path.suffix == ".py" and not name.startswith("test_")):
                found.append(_submission(path, None))
    return found


def _loose(files: list[str]) -> bool:
    """Does the folder hold several students' loose .py files rather than one student's work?"""
    return sum(f.endswith(".py") and not f.startswith("test_") for f in files) > 0


def _submission(path: Path, tests: Path | None, student: str | None = None) -> Submission:
    name, late = _student_from(path.name)
    return Submission(student or name, path, tests, late, path.stat().st_mtime)


def _student_from(filename: str) -> tuple[str, bool]:
    """A student id from an LMS export name or a plain file or folder name, and whether it was late."""
    match = CANVAS.match(filename.lower())
    if match:
        return match["name"], bool(match["late"])
    stem = filename.rsplit(".", 1)[0] if filename.endswith((".py", ".ipynb")) else filename
    for suffix in SUFFIXES_TO_DROP:
        if stem.lower().endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._") or "student", False
