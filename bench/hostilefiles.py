"""The files beside a hostile class, and the passes of the grader's own process that read them (issue 41).

Besides the submissions, a batch, an export and a student's own `grader check` or `%grade` read what an LMS, the
instructor and the student's own folder hold: a Gradescope export's metadata, a groups file, overrides.csv, a
`reports/.history/` record, a `%grade` line, and the student's code again, for the repairs. Each is drawn here,
hostile, for a class of bench/hostilegen.py (`Beside.draw`), and `Beside.read` puts each through the pass that
reads it: an instructor's file may be refused (a UsageError, naming its line), a student's never stops anything;
no pass raises anything else, and each is bounded.

- Gradescope metadata: `metadata_head` puts before the export's entries what makes the whole file one the grader
  does not read (aliases that write out a billion values, nesting past the bound), or what it reads without
  building (a `!!python` tag under a key no submission has); `entry_kind` says which entries cannot be read
  (a tag, a time that is none, an int of 5,000 digits, a crowd of submitters), each costing its own student
  their metadata only.
- a groups file and an overrides.csv: headers, cells and bytes as a spreadsheet or a hand can get them wrong.
- history records: the record `grader check` writes, each value in turn made hostile (Infinity, NaN, ints of
  400 digits, lists nested 100,000 deep, statuses flipped, a thousand checks).
- `%grade` lines: paths no file can have, a pipe, a link, a folder, unclosed quotes, unknown options.
- the repairs' reading (grader/repair/inverse.py's finders, a notebook's cells as one text) of every student's
  code, and of `repair_bait`: engines with a bug a repair finds, written to make its reading slow or deep.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

ENGINE = (Path(__file__).resolve().parent.parent / "tests" / "zoo" / "correct" / "list_iterative.py").read_text()
TANH_RIGHT = "(1 - t ** 2) * out.grad"
TANH_WRONG = "(1 - self.data ** 2) * out.grad"
CELLS = (
    '=HYPERLINK("http://x";"y")',
    "+cmd|' /C calc'!A0",
    "\x1b]52;c;aGk=\x07\x1b[2J\r\nScore: 100 / 100",
    "\u202egnp.py",
    "x" * 1_001,
    "y" * 200_000,
    "",
    " ",
    "nan",
    "inf",
    "1e400",
    "-1",
    "9" * 50,
    "3,5",
    "4",
    '"unclosed',
    "a\x00b",
    "total",
    "forward",
)
"""What a cell of an instructor's CSV can hold."""


def metadata_head(rng: random.Random) -> tuple[str, bool]:
    """YAML to put before a Gradescope export's entries, and whether it makes the whole file unreadable."""
    kind = rng.choice(("none", "none", "laughs", "deep", "tag", "anchors", "recursive"))
    if kind == "laughs":  # 10 ** 7 values once written out, in a few hundred bytes
        lines = ["l0: &l0 [a, a, a, a, a, a, a, a, a, a]"]
        lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 8)]
        return "\n".join(lines) + "\n", True
    if kind == "deep":
        return "deep: " + "[" * 60 + "]" * 60 + "\n", True
    if kind == "tag":  # under a key no submission has: never built
        return 'hook: !!python/object/apply:os.system ["touch /tmp/pwned-by-metadata"]\n', False
    if kind == "anchors":
        return "a: &a shared\nb: *a\nc: &c {x: *a}\nd: [*c, *c]\n", False
    if kind == "recursive":
        return "r: &r [*r, 1]\n", False
    return "", False


def entry_kind(rng: random.Random) -> str:
    """How one submission's entry is hostile: `plain` (readable) or one that costs its own student their metadata
    (`tag`, `time`, `digits`, `crowd`)."""
    return rng.choice(("plain", "plain", "plain", "tag", "time", "digits", "crowd"))


def entry(key: str, kind: str, people: list[tuple[str, str, str]], created: str) -> str:
    """One entry of the metadata, of a kind entry_kind drew."""
    if kind == "tag":
        return f'{key}: !!python/object/apply:os.system ["touch /tmp/pwned-by-metadata"]\n'
    if kind == "time":
        created = "2026-13-45 19:09:09"
    elif kind == "digits":
        people = [(people[0][0], "7" * 5_000, people[0][2])]
    elif kind == "crowd":
        people = [(f"Crowd {i}", f"'{i}'", f"c{i}@example.edu") for i in range(150)]
    return (
        f"{key}:\n  :submitters:\n"
        + "".join(f"  - :name: {json.dumps(n)}\n    :sid: {s}\n    :email: {e}\n" for n, s, e in people)
        + f"  :created_at: {created}\n"
    )


def repair_bait(rng: random.Random) -> str:
    """An engine whose tanh backward takes the input's data (a bug a repair finds), written to make finding it
    slow or deep: thousands of classes named Value, an update thousands of terms long, parentheses nested 90
    deep, functions nested 60 deep."""
    assert TANH_RIGHT in ENGINE
    wrong = ENGINE.replace(TANH_RIGHT, TANH_WRONG)
    kind = rng.choice(("classes", "long", "parens", "nested"))
    if kind == "classes":
        return "".join(f"class Value:\n    x = {i}\n" for i in range(2_000)) + wrong
    if kind == "long":
        return wrong.replace(TANH_WRONG, TANH_WRONG + " + 0 * out.grad" * 3_000)
    if kind == "parens":
        return wrong.replace(TANH_WRONG, "(" * 90 + "1 - self.data ** 2" + ")" * 90 + " * out.grad")
    body = "".join("    " * i + f"def f{i}():\n" for i in range(60)) + "    " * 60 + "pass\n"
    return wrong + "\n" + body


def _csv(rng: random.Random, header: list[str], rows: int, known: list[str]) -> bytes:
    """A CSV of `header` with hostile rows (cells drawn from CELLS and `known`), ragged at times, as bytes: now
    and then with a NUL, invalid UTF-8 or a BOM."""
    lines = [",".join(header)]
    for _ in range(rows):
        cells = [rng.choice(CELLS + tuple(known)) for _ in range(rng.randint(0, len(header) + 1))]
        lines.append(",".join(f'"{c}"' if rng.random() < 0.3 else c for c in cells))
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    mangle = rng.random()
    if mangle < 0.1:
        data = data.replace(b",", b"\x00,", 1)
    elif mangle < 0.2:
        data += b"\xff\xfe broken"
    elif mangle < 0.3:
        data = b"\xef\xbb\xbf" + data
    return data


def groups_file(rng: random.Random, canvas_ids: list[str]) -> bytes:
    header = rng.choice(
        (
            ["name", "canvas_user_id", "user_id", "login_id", "sections", "group_name", "canvas_group_id", "group_id"],
            ["Identifier", "Full name", "Group"],
            ["group_name", "canvas_user_id"],
            ["member", "team"],
        )
    )
    return _csv(rng, header, rng.randint(1, 30), canvas_ids + [f"Participant {i}" for i in canvas_ids[:3]])


def overrides_file(rng: random.Random, students: list[str]) -> bytes:
    header = rng.choice(
        (
            ["student", "check", "points", "reason"],
            ["student", "check", "points", "reason", "by", "date", "grader_points", "sha256"],
            ["student", "check", "points"],
            ["Student", "CHECK", "Points", "Reason", "extra"],
        )
    )
    return _csv(rng, header, rng.randint(1, 20), students)


HOSTILE_VALUES = (
    float("inf"),
    float("-inf"),
    float("nan"),
    1e308,
    10**400,
    -1,
    True,
    None,
    "x" * 100_000,
    [],
    {},
    [[]],
    "passed",
    "\x1b[2J",
)


def history_texts(rng: random.Random, path: str, count: int = 12) -> list[str]:
    """Records as `grader check` writes them for the file at `path`, each with values made hostile."""
    checks = [{"id": i, "status": "passed", "score": 5.0, "max_score": 5.0} for i in ("add", "mul", "tanh")]
    good = {
        "schema": 1,
        "path": path,
        "assignment": "hostile",
        "sha256": "0" * 64,
        "status": "graded",
        "score": 15.0,
        "max_score": 15.0,
        "checks": checks,
    }
    texts = [json.dumps(good)]
    for _ in range(count):
        record = json.loads(json.dumps(good))
        for _ in range(rng.randint(1, 3)):
            where = rng.choice(("top", "check", "checks"))
            if where == "top":
                record[rng.choice(list(good))] = rng.choice(HOSTILE_VALUES)
            elif where == "check":
                listed = record.get("checks")
                check = rng.choice(listed) if isinstance(listed, list) and listed else None
                if isinstance(check, dict):
                    check[rng.choice(("id", "status", "score", "max_score"))] = rng.choice(HOSTILE_VALUES)
                    check["status"] = rng.choice(("passed", "failed", "error", "skipped", check.get("status")))
            else:
                record["checks"] = [dict(checks[0], id=f"c{i}\u202e") for i in range(rng.choice((0, 1_000)))]
        text = json.dumps(record)
        if rng.random() < 0.15:
            text = '{"schema": 1, "checks": ' + "[" * 100_000 + "]" * 100_000 + "}"
        texts.append(text)
    return texts


def grade_lines(rng: random.Random, folder: Path, count: int = 12) -> list[str]:
    """%grade lines naming files in `folder` (made here: a notebook, a pipe, a link, a folder) and worse."""
    folder.mkdir(parents=True, exist_ok=True)
    notebook = folder / "lesson.ipynb"
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}))
    if not (folder / "pipe.ipynb").exists():
        os.mkfifo(folder / "pipe.ipynb")
        (folder / "link.ipynb").symlink_to("/etc/passwd")
        (folder / "folder.ipynb").mkdir()
        (folder / "huge.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    names = ("lesson.ipynb", "pipe.ipynb", "link.ipynb", "folder.ipynb", "huge.ipynb", "none.ipynb")
    paths = [str(folder / n) for n in names] + [
        str(folder / ("x" * 300 + ".ipynb")),
        str(folder / ("x" * 5_000)),
        "a\x00b.ipynb",
        f"{folder}/\ud800.ipynb",
        "\x1b]0;owned\x07.ipynb",
        '"unclosed',
    ]
    options = (
        "",
        "--public-only",
        "--tests",
        "--tests /etc/passwd",
        "--assignment /nonexistent",
        "--watch",
        "--html /dev/null",
        "--json x",
        "-" * 50,
        "'",
    )
    return [f"{rng.choice(paths)} {rng.choice(options)}".strip() for _ in range(count)]


@dataclass
class Beside:
    """What lies beside one hostile class: drawn by `draw`, read by `read`."""

    groups: bytes | None = None
    overrides: bytes | None = None
    history: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    scratch: Path | None = None

    @classmethod
    def draw(cls, rng: random.Random, root: Path, canvas_ids: list[str], students: list[str]) -> Beside:
        scratch = root / "beside"
        scratch.mkdir(parents=True, exist_ok=True)
        engine = scratch / "micrograd_mine.py"
        engine.write_text(ENGINE)
        return cls(
            groups_file(rng, canvas_ids) if rng.random() < 0.7 else None,
            overrides_file(rng, students) if rng.random() < 0.7 else None,
            history_texts(rng, str(engine.resolve())),
            grade_lines(rng, scratch / "notebooks"),
            scratch,
        )

    def read(self, found, students, out: Path, assignment, rng: random.Random) -> None:
        """Each file through the pass that reads it (found: discovery's; students: run._students'); each student's
        code read for the repairs of a few causes, as a grading reads it for the causes of its failed checks."""
        from grader.repair.inverse import INVERSES

        _groups(self, found)
        _overrides(self, out, assignment)
        _history(self)
        _grade_lines(self)
        for student in students:
            causes = ["tanh_grad_from_input", *rng.sample(sorted(INVERSES), 3)]
            _repairs(student.submission.path.name, student.source, student.submission.path, causes, assignment)


def _groups(beside: Beside, found) -> None:
    from grader.errors import UsageError
    from grader.lms import groups

    if beside.groups is None or beside.scratch is None:
        return
    path = beside.scratch / "groups.csv"
    path.write_bytes(beside.groups)
    try:
        teams = groups.read(path)
    except UsageError:
        return
    placed, _ = groups.apply(teams, found.submissions)
    assert len(placed) == len(found.submissions), "every submission is still one"


def _overrides(beside: Beside, out: Path, assignment) -> None:
    """overrides.csv in the graded folder, read as a batch and an export read it; taken out after."""
    from grader.batch import applied, export
    from grader.errors import UsageError
    from grader.files import OVERRIDES_FILE

    if beside.overrides is None:
        return
    (out / OVERRIDES_FILE).write_bytes(beside.overrides)
    try:
        applied.for_batch(out, assignment, {row.student for row in export.gradebook(out).values()})
        applied.on_gradebook(out, export.gradebook(out))
    except UsageError:
        pass
    finally:
        (out / OVERRIDES_FILE).unlink()


def _history(beside: Beside) -> None:
    from grader import __version__, history
    from grader.result import CheckResult, Result

    assert beside.scratch is not None
    engine = beside.scratch / "micrograd_mine.py"
    checks = tuple(
        CheckResult(i, i, s, p, 5.0, "visible", "", None, {}, 0.1)
        for i, s, p in (("add", "failed", 0.0), ("mul", "passed", 5.0), ("tanh", "error", 0.0))
    )
    now = history.Record.of(
        Result(engine.name, None, "hostile", __version__, "graded", None, 5.0, 15.0, 1.0, checks), engine
    )
    for text in beside.history:
        history.place(engine, beside.scratch).parent.mkdir(parents=True, exist_ok=True)
        history.place(engine, beside.scratch).write_text(text)
        before = history.recall(engine, None, beside.scratch)
        if before is not None:
            change = history.compare(before, now)
            assert change.sentence() and isinstance(change.parts(), list)


class _Kernel:
    user_ns: dict = {}
    history_manager = None


def _grade_lines(beside: Beside) -> None:
    """Each line through what %grade does before it grades: its options, the notebook, its staleness, the record
    of its last check, the options given to the grading."""
    from grader import history, jupyter
    from grader.errors import GraderError

    for line in beside.lines:
        try:
            request, path, _ = jupyter.prepared(_Kernel(), line)
        except (GraderError, SystemExit):
            continue
        history.recall(path, None, path.parent)
        jupyter._options(request)


def _repairs(name: str, source: bytes, path: Path, causes: list[str], assignment) -> None:
    """The repairs' reading of one student's code, as a grading with repairs on reads it (grader/repair/repairs.py:
    a .py file's text, or a notebook's plain-Python cells as one text, read once), for checks failing from
    `causes`."""
    from grader import notebooks
    from grader.errors import NotebookError
    from grader.files import MODULE_FILE
    from grader.protocol import Code
    from grader.repair.repairs import Candidates, readable
    from grader.result import CheckResult

    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return  # graded as `unreadable`: never read for repairs
    if name.endswith(".ipynb"):
        try:
            cells = notebooks.code_cells(notebooks.read(path, source))
        except NotebookError:
            return
        if notebooks.too_long_to_read(cells):
            return  # graded as a `syntax_error` naming the cell
        code = Code("notebook", {}, cells)
    else:
        code = Code("py", {MODULE_FILE: source})
    found = readable(code, source, name, assignment)
    if found is None:
        return
    failing = [
        CheckResult(f"c{i}", "", "failed", 0.0, 1.0, "visible", "", None, {}, 0.1, cause=cause)
        for i, cause in enumerate(causes)
    ]
    Candidates(found).of(failing)
