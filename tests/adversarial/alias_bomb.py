"""A Gradescope export whose submission_metadata.yml is a "billion laughs" (issue 41, item 5): 840 KB of YAML
in which one person is written once, a list names them 80,000 times by alias, and 14,000 submissions name
that list as their submitters by alias again. Read whole, it is 1.1 billion submitters: the batch's own process
ran out of memory reading it, the whole export was skipped, and nobody in it was graded (`write(folder)` builds
it, beside the export's real submissions)."""

from __future__ import annotations

from pathlib import Path

ENGINE = Path(__file__).parent.parent / "zoo" / "correct" / "list_iterative.py"
REAL = (1, 2, 3)
"""The export's submissions that have a folder (and so work to grade)."""


def write(folder: Path, aliases: int = 80_000, entries: int = 14_000) -> Path:
    """The export: three submissions with a correct engine each, and the metadata of aliases."""
    for number in REAL:
        (folder / f"submission_{number}").mkdir(parents=True)
        (folder / f"submission_{number}" / "micrograd_mine.py").write_text(ENGINE.read_text())
    lines = [
        "person: &p {':name': Mallory Laughs, ':sid': '666', ':email': m@example.edu}",
        "everyone: &all [" + ", ".join(["*p"] * aliases) + "]",
    ]
    lines += [f"submission_{number}: {{':submitters': *all}}" for number in range(1, entries + 1)]
    (folder / "submission_metadata.yml").write_text("\n".join(lines) + "\n")
    return folder
