"""`grader template DIR`: copy the student starter kit into DIR."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from grader.errors import UsageError

FILES = ("micrograd_mine.py", "test_micrograd.py", "micrograd.ipynb", "README.md")


def template_files() -> dict[str, str]:
    kit = resources.files("student_template")
    return {name: (kit / name).read_text(encoding="utf-8") for name in FILES}


def main(*, folder: Path) -> int:
    existing = [name for name in FILES if (folder / name).exists()]
    if existing:
        raise UsageError(f"{folder} already holds {', '.join(existing)}; not overwriting a student's work")
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in template_files().items():
        (folder / name).write_text(text, encoding="utf-8")
    print(f"Starter kit copied to {folder}: {', '.join(FILES)}. Next: cd {folder} && grader check --public-only")
    return 0
