"""A notebook's code for the inverse edits, and the way back: the edited cell written into a copy of the notebook.

The inverses (inverse.py) read one Python text; a notebook's code is its code cells, run in order, and the class
graded is the last `class Value` they define. So the text the inverses read is the code cells in order, each after
a line of its own that marks where it starts (a comment, which no syntax tree holds and no edit touches): the last
`class Value` of the text is the notebook's, and a line of the text is a line of one cell. A cell that is not plain
Python (a magic, a `!` line: IPython rewrites it before it runs) is left out of the text, so no edit lands in it; when
such a cell defines Value or Neuron itself, the text would not hold the class graded, and the notebook gets no repair.

An edit is kept only when every line it changes is in one cell (an added method may go at the very end of its cell).
Verifying it grades a copy of the notebook with that cell's source changed, like any notebook; what the student sees
names the cell (its place among the code cells, as the grader's other notebook messages do: notebooks.cell_name) and
the line in it.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

from grader import slicing
from grader.protocol import Code
from grader.repair.edits import Edit
from grader.result import Change

LESSON_CLASSES = frozenset({"Value", "Neuron"})
"""The classes whose code the inverses read: a cell left out of the text must define neither."""


@dataclass(frozen=True)
class Cell:
    index: int
    """The cell's index among all cells (from 0)."""
    place: int
    """Its place among the notebook's code cells (from 1): how every message names it (notebooks.cell_name)."""
    source: str
    """Its code as the grading runs it (grader/notebooks.py's code_cells)."""
    first: int
    """The line of the text its first line is."""

    @property
    def lines(self) -> int:
        return self.source.count("\n") + 1


@dataclass(frozen=True)
class NotebookCode:
    """A notebook's plain-Python code cells as the one text the inverses read, and the notebook itself."""

    text: str
    cells: tuple[Cell, ...]
    mark: str
    """The start of each line marking a cell's start (a comment no cell holds)."""
    notebook: bytes
    """The notebook file's bytes, as submitted."""
    name: str
    """The notebook's file name (a copy is graded under the same name)."""

    @classmethod
    def of(cls, code: Code, notebook: bytes, name: str) -> NotebookCode | None:
        """The notebook's code as one text; None when a cell left out of it defines Value or Neuron."""
        plain = []
        for place, (index, source) in enumerate(code.cells, 1):
            if _parses(source):
                plain.append((index, place, source))
            elif slicing.read_cell(source).binds & LESSON_CLASSES:
                return None
        digest = hashlib.sha256("\0".join(source for _, source in code.cells).encode()).hexdigest()[:16]
        mark = f"# grader {digest}: cell"
        if any(line.startswith(mark) for _, _, source in plain for line in source.split("\n")):
            return None
        parts, cells, line = [], [], 1
        for index, place, source in plain:
            parts.append(f"{mark} {index + 1}\n{source}")
            cells.append(Cell(index, place, source, line + 1))
            line += 1 + source.count("\n") + 1
        return cls("\n".join(parts), tuple(cells), mark, notebook, name)

    def cell_of(self, change: Change) -> Cell | None:
        """The cell holding every line the change touches (for an insertion, the line it goes before may be the
        one after the cell's last), or None."""
        last = change.line + max(change.before.count("\n") + 1, 1) - 1 if change.before else change.line
        for cell in self.cells:
            end = cell.first + cell.lines - 1 + (0 if change.before else 1)
            if cell.first <= change.line and last <= end:
                return cell
        return None

    def local(self, edit: Edit) -> Edit | None:
        """The edit in the notebook's terms: each change's line the line in its cell, with the cell's place among the
        code cells (`cell`); None when the edit's changes are not all in one cell."""
        cells = [self.cell_of(change) for change in edit.changes]
        if not cells or any(cell is None for cell in cells) or len({c.index for c in cells if c}) != 1:
            return None
        return Edit(
            edit.cause,
            tuple(
                dataclasses.replace(change, line=change.line - cell.first + 1, cell=cell.place)
                for change, cell in zip(edit.changes, cells, strict=True)
                if cell is not None
            ),
        )

    def sources(self, text: str) -> dict[int, str]:
        """The cells an edited copy of the text changes, by index, each with its edited source."""
        found: dict[int, list[str]] = {}
        at = None
        numbers = {cell.index + 1: cell.index for cell in self.cells}
        for line in text.split("\n"):
            head, _, number = line.rpartition(" ")
            if head == self.mark and number.isdigit() and int(number) in numbers:
                at = numbers[int(number)]
                found[at] = []
            elif at is not None:
                found[at].append(line)
        given = {cell.index: cell.source for cell in self.cells}
        return {index: "\n".join(lines) for index, lines in found.items() if "\n".join(lines) != given[index]}

    def written(self, text: str, folder: Path) -> Path:
        """A copy of the notebook in folder, each cell the edited text changes with its edited source."""
        import nbformat

        # the whole notebook (outputs, metadata), as the grading read its cells (notebooks.read): upgraded to 4
        nb = nbformat.convert(nbformat.reader.reads(self.notebook.decode("utf-8")), 4)
        for index, source in self.sources(text).items():
            nb.cells[index].source = source
        path = folder / self.name
        path.write_text(nbformat.writes(nb), encoding="utf-8")
        return path


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
