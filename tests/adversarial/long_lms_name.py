"""A Gradescope export (`write(folder)` builds it) in which one student's name, as
submission_metadata.yml gives it, is 300 characters long. A student's id is their name made safe,
and names the folder their work is staged in: a name longer than the file system's 255 bytes made
that folder with OSError, which stopped discovery, so nobody in the export was graded."""

from __future__ import annotations

from pathlib import Path

ENGINE = Path(__file__).parent.parent / "zoo" / "correct" / "list_iterative.py"
LONG_NAME = "Maximiliana " * 25


def write(folder: Path) -> Path:
    """The export: alice's submission and the student with the long name's, each a correct engine."""
    for number in (1, 2):
        (folder / f"submission_{number}").mkdir(parents=True)
        (folder / f"submission_{number}" / "micrograd_mine.py").write_text(ENGINE.read_text())
    people = (("Alice Archer", "1", "alice@example.edu"), (LONG_NAME.strip(), "2", "max@example.edu"))
    (folder / "submission_metadata.yml").write_text(
        "".join(
            f"submission_{number}:\n  :submitters:\n  - :name: {name}\n    :sid: '{sid}'\n    :email: {email}\n"
            f"  :created_at: 2026-03-01 20:00:00.000000000 +00:00\n"
            for number, (name, sid, email) in enumerate(people, 1)
        )
    )
    return folder
