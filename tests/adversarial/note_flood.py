"""A student's zip that floods the class's notes: 5,000 empty files, each of them left out
for a reason of its own kind (not a .py file, hidden, a system folder's, another candidate
submission, a test file not used), so that a note per file would bury the notes that matter
(a duplicate name, an id made up) under thousands of lines in summary.json and on the class
page. `write(path)` builds it; the zip holds no code worth grading (an empty
micrograd_mine.py)."""

from __future__ import annotations

import zipfile
from pathlib import Path

FILES = 5_000


def members(count: int = FILES) -> list[str]:
    """The zip's member names: micrograd_mine.py, then `count - 1` other empty files of five kinds."""
    kinds = ("junk/notes{:04d}.txt", "junk/.hidden{:04d}.py", "__MACOSX/._f{:04d}.py", "drafts/draft{:04d}.py",
             "drafts/test_extra{:04d}.py")
    return ["micrograd_mine.py"] + [kinds[i % len(kinds)].format(i) for i in range(count - 1)]


def write(path: Path, count: int = FILES) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name in members(count):
            zf.writestr(name, "")
    return path
