"""A student's zip holding a correct engine and a few short files nested up to 1,600 folders deep:
`write(path)` builds it (`hidden=True` puts the deep files under a hidden folder). Each member is 400
folders deeper than the one before, so extracting it makes the whole tree one level of folders at a
time, however a zip is read. Python 3.11's shutil.rmtree and os.walk recurse once per folder: the
staging folder's removal (tempfile.TemporaryDirectory) raised RecursionError, and so did discovery
counting the files of a hidden folder, before anyone was graded."""

from __future__ import annotations

import zipfile
from pathlib import Path

ENGINE = Path(__file__).parent.parent / "zoo" / "correct" / "list_iterative.py"
DEPTHS = (400, 800, 1200, 1600)


def write(path: Path, hidden: bool = False) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("micrograd_mine.py", ENGINE.read_text())
        for depth in DEPTHS:
            zf.writestr((".h/" if hidden else "") + "d/" * depth + "x.py", "x = 1\n")
    return path
