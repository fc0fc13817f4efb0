r"""A correct engine (tests/zoo/correct/list_iterative.py) after megabytes of blank lines: `write(path)`
builds it. A batch flags imports of the reference, micrograd or torch for the instructor; the flag was
a regular expression over the whole file, `^\s*(?:from|import)\s+...` with MULTILINE, whose `\s*` runs
over every blank line below the one it starts on, and fails, at each of them: quadratic, an hour of the
instructor's own process for a file of two megabytes, and a batch that never ends."""

from __future__ import annotations

from pathlib import Path

ENGINE = Path(__file__).parent.parent / "zoo" / "correct" / "list_iterative.py"


def write(path: Path, megabytes: float = 2) -> Path:
    path.write_text("\n" * int(megabytes * 2**20) + ENGINE.read_text())
    return path
