"""`grader template DIR`: copy the student starter kit into DIR."""

from __future__ import annotations

import os
from pathlib import Path

from grader.errors import ExitCode, UsageError
from grader.fileio import atomic_write
from grader.files import KIT as FILES
from grader.files import template_files


def main(*, folder: Path) -> int:
    existing = [name for name in FILES if os.path.lexists(folder / name)]  # a link too, even a broken one
    if existing:
        raise UsageError(f"{folder} already holds {', '.join(existing)}; not overwriting a student's work")
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in template_files().items():
        atomic_write(folder / name, text, mode=0o666)
    print(f"Starter kit copied to {folder}: {', '.join(FILES)}. Next: cd {folder} && grader check --public-only")
    return ExitCode.OK
