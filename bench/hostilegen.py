"""Classes of hostile submissions, seeded, and what a batch owes each of them (issue 28, part A).

Every student's files here are made to stop or stall the grader's own process: trees a thousand
folders deep (in zips and on disk, some hidden), names as long as a file system takes and longer
(in zips, in Moodle folders, in Gradescope's metadata), control characters in names and code, int
literals too long to write as text, megabytes of blank lines or slashes, odd zips (truncated,
bombs, duplicate, absolute and climbing names, thousands of entries, a zip in a zip), notebooks of
thousands of cells or nested JSON, Gradescope metadata and a Canvas roster with odd values, engines
that bait the repairs' reading. Each student still has exactly one row to get, and the generator counts
them. Beside the class, bench/hostilefiles.py draws what else the grader's own process reads: the
metadata's hostile head and entries (aliases, nesting, tags), a groups file, overrides.csv,
`reports/.history/` records and `%grade` lines.

- `make_class(root, seed, students, scale)` writes a class (its inputs, and a roster) and says how
  many rows its gradebook must have; `scale` grows every size (1 for a test, more for the bench).
- `drive(cls, out, assignment)` puts it through every pass a batch makes in its own process, with
  real files and no sandbox: discovery and extraction into a staging folder (removed after),
  reading each student's files, then, for each student, a result carrying hostile text (as a
  student's code can make a message say) cleaned as a grading process cleans it and rendered
  with the student's own source, then every row, the class files, and the exports (canvas,
  gradescope-csv, feedback, reteach); then the files beside the class, each through the pass that
  reads it, and each student's code through the repairs' reading (hostilefiles.Beside.read).
- `problems(cls, out)` lists what the class files owe and do not give: every class file, exactly one
  row per student in grades.csv and summary.json, each student's own files.

tests/test_hostile_class.py runs a few seeds (and one class through the real `grader batch`);
bench/bench_hostile.py runs seed after seed, larger, for as long as it is given.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import sys
import time
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADVERSARIAL = ROOT / "tests" / "adversarial"
sys.path.insert(0, str(ADVERSARIAL))
sys.path.insert(0, str(ROOT / "bench"))

import blank_lines  # noqa: E402  (hostile fixtures, not a package)
import deep_zip  # noqa: E402
import hostilefiles  # noqa: E402  (beside this file)

ENGINE = (ROOT / "tests" / "zoo" / "correct" / "list_iterative.py").read_text()
HUGE_LITERAL = (ADVERSARIAL / "huge_literal.py").read_text()
CLASS_FILES = ("grades.csv", "summary.json", "index.html", "work.json")
EXPORTS = ("grades-plain.csv", "feedback.zip", "reteach.ipynb")

NAMES = (
    "alice",
    "Bob Smith",
    "Zoë Ñúñez",
    '=HYPERLINK("http://x";"y")',
    "+cmd|' /C calc'!A0",
    "eve\x1b]52;c;aGk=\x07\x1b[2J\r\nScore: 100 / 100",
    "\u202egnp.py",
    "___",
    "ﬄ㎯ⅫⅧ⑳" * 5,
    "a" * 200,
    "tab\tand\vform\ffeed",
    "student",
)
"""Names as students (and LMSs) write them: formulas, control characters, escapes, NFKD expanders, long."""


@dataclass
class HostileClass:
    root: Path
    seed: int
    inputs: list[Path]
    rows: int
    """Rows the gradebook must have: every student found, and every roster student nothing was found for."""
    roster: Path | None = None
    kinds: list[str] = field(default_factory=list)
    """The kind of each student's hostility, in the order written."""
    beside: hostilefiles.Beside = field(default_factory=hostilefiles.Beside)
    """The files beside the class: groups, overrides, history records, %grade lines (bench/hostilefiles.py)."""


class _Writer:
    """One class being written: a folder of per-student work, a Gradescope export, a Canvas roster."""

    def __init__(self, root: Path, seed: int, scale: float):
        self.rng = random.Random(seed)
        self.scale = scale
        self.folder = root / "class"
        self.folder.mkdir(parents=True)
        (self.folder / "alice").mkdir()  # a student's folder: every folder here is one student's, whole
        (self.folder / "alice" / "micrograd_mine.py").write_text(ENGINE)
        self.export = root / "gradescope"
        self.metadata: list[str] = []
        self.group_members = 0
        self.canvas: list[tuple[str, str]] = []
        self.rows = 1
        self.taken: set[str] = {"alice"}
        self.number = 0

    def size(self, base: int) -> int:
        return max(1, int(base * self.scale))

    def name(self, suffix: str = "") -> str:
        """A file or folder name no other student's has (ignoring case), at most 255 bytes."""
        self.number += 1
        base = self.rng.choice(NAMES).replace("/", "\u2215")
        while True:
            name = f"{base}{self.number}"[: 250 - len(suffix.encode())] + suffix
            while len(name.encode()) > 255:
                name = name[: -len(suffix) - 1] + suffix
            if name.lower() not in self.taken and not name.startswith("."):
                self.taken.add(name.lower())
                return name
            self.number += 1

    def uid(self) -> str:
        self.number += 1
        return str(10_000 + self.number)

    # -- each kind writes one student's work (and counts its rows) ------------------------------------

    def deep_zip(self) -> None:
        deep_zip.write(self.folder / self.name(".zip"), hidden=self.rng.random() < 0.5)

    def deep_folder(self) -> None:
        """A folder on disk with a tree deeper than discovery reads, part of it hidden."""
        folder = self.folder / self.name()
        folder.mkdir()
        (folder / "micrograd_mine.py").write_text(ENGINE)
        for top in ("deep", ".hidden", "__MACOSX"):
            (folder / top).mkdir()
            fd = os.open(folder / top, os.O_RDONLY | os.O_DIRECTORY)
            try:
                for level in range(self.size(120)):  # by descriptor: deeper than a path may be long
                    os.mkdir("d", dir_fd=fd)
                    inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                    os.close(fd)
                    fd = inner
                    if level % 25 == 0:
                        os.close(os.open("x.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
            finally:
                os.close(fd)

    def long_names(self) -> None:
        """A Moodle folder named with NFKD expanders up to the file system's limit, holding a file whose
        name is 255 bytes; or a Canvas file whose user and attachment ids fill its name."""
        if self.rng.random() < 0.5:
            full = ("㎯Ⅻ ﬄ" * 40)[: self.rng.randint(10, 60)].replace("_", "")
            folder = self.folder / f"{full}_{self.uid()}_assignsubmission_file_"
            folder.mkdir()
            (folder / "micrograd_mine.py").write_text(ENGINE)
            (folder / ("é" * 125 + ".py")).write_text("y = 2\n")
        else:
            uid, attachment = "9" * 55 + self.uid(), "8" * 60
            self.canvas.append(("z" * 40 + self.uid(), uid))
            name = f"{self.canvas[-1][0]}_late_{uid}_{attachment}_micrograd_mine.py"
            (self.folder / name).write_text(ENGINE)

    def control_chars(self) -> None:
        name = f"eve{self.uid()}\x1b]0;owned\x07\r\n\x9b2J" + self.rng.choice(("", "\u202e", "\x7f"))
        (self.folder / (name.replace("/", "_") + ".py")).write_text(
            "# \x1b[2J\r Score: 100 / 100\n" + ENGINE + "\nNAME = '\x1b]52;c;x\x07'\n"
        )

    def huge_literal(self) -> None:
        extra = self.rng.choice(("", f"\nB = 0b{'1' * self.size(20_000)}\n", "\nF = 1e308 * 10\nC = 3j ** 2\n"))
        (self.folder / self.name(".py")).write_text(HUGE_LITERAL + extra)

    def blank_lines(self) -> None:
        blank_lines.write(self.folder / self.name(".py"), megabytes=0.25 * self.scale)

    def slashes(self) -> None:
        run = self.size(200_000)
        (self.folder / self.name(".py")).write_text(
            "#" + "/" * run + "\nPATH = '" + "/a" * (run // 2) + "'\n" + ENGINE + "\nimport" + " " * run + "torch\n"
        )

    def odd_zip(self) -> None:
        path = self.folder / self.name(".zip")
        kind = self.rng.choice(("truncated", "garbage", "names", "bomb", "many", "nested", "empty"))
        if kind == "garbage":
            path.write_bytes(b"PK\x03\x04" + bytes(self.rng.randrange(256) for _ in range(500)))
            return
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            if kind != "empty":
                zf.writestr("micrograd_mine.py", ENGINE)
            if kind == "names":
                with warnings.catch_warnings():  # a duplicate name is the point
                    warnings.simplefilter("ignore")
                    for name in ("../../escape.py", "/abs.py", "C:/win.py", "dup.py", "dup.py", "x" * 60_000 + ".py"):
                        zf.writestr(name, "x = 1\n")
                link = zipfile.ZipInfo("link.py")
                link.external_attr = (0o120777 << 16) | 0x20
                zf.writestr(link, "/etc/passwd")
            elif kind == "bomb":
                zf.writestr("bomb.py", "#" * self.size(3 * 2**20))
            elif kind == "many":
                for i in range(self.size(1_500)):
                    zf.writestr(f"junk/{i}.txt", "")
            elif kind == "nested":
                inner = io.BytesIO()
                with zipfile.ZipFile(inner, "w") as z2:
                    z2.writestr("micrograd_mine.py", ENGINE)
                zf.writestr("inner.zip", inner.getvalue())
        if kind == "truncated":
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2])

    def notebook(self) -> None:
        path = self.folder / self.name(".ipynb")
        kind = self.rng.choice(("cells", "nested", "v3", "odd", "slashes"))
        if kind == "nested":
            path.write_text("[" * self.size(100_000) + "]" * self.size(100_000))
            return
        if kind == "v3":
            cells = [{"cell_type": "code", "input": ENGINE, "outputs": [], "language": "python"}]
            nb = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": cells}]}
        else:
            cells = [{"cell_type": "code", "source": ENGINE, "metadata": {}, "outputs": [], "execution_count": None}]
            if kind == "cells":
                cells += [
                    {
                        "cell_type": "code",
                        "source": f"x{i} = {i}",
                        "metadata": {},
                        "outputs": [],
                        "execution_count": None,
                    }
                    for i in range(self.size(3_000))
                ]
            elif kind == "odd":
                cells += [{"cell_type": "code", "source": [1, None, {"a": "b"}]}, 7, None, {"cell_type": None}]
            else:
                cells.append({"cell_type": "code", "source": "/" * self.size(300_000), "metadata": {}, "outputs": []})
            nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
        path.write_text(json.dumps(nb))

    def gradescope(self) -> None:
        """A submission in the Gradescope export, its metadata with odd values (a group now and then)."""
        self.export.mkdir(exist_ok=True)
        self.number += 1
        key = f"submission_{self.number}"
        (self.export / key).mkdir()
        (self.export / key / "micrograd_mine.py").write_text(ENGINE)
        odd = self.rng.choice(("long", "control", "values", "group", "time", "missing", "entry"))
        name = {"long": "Maximiliana " * self.size(800), "control": NAMES[5]}.get(odd, f"Grace Hopper {self.number}")
        sid: str = f"'{70_000 + self.number}'"
        email = f"g{self.number}@example.edu"
        created = "2026-03-01 20:00:00.000000000 +00:00"
        people = [(name, sid, email)]
        kind = "plain"  # an entry that cannot be read (hostilefiles.entry_kind) costs its own student theirs only
        if odd == "values":
            sid, email = self.rng.choice(((f"{'7' * 5_000}", "[a, b]"), ("{x: 1}", "null"), ("''", "''")))
            people = [(name, sid, email)]
        elif odd == "group":
            people.append((f"Ada Partner {self.number}", f"'{80_000 + self.number}'", f"p{self.number}@example.edu"))
        elif odd == "time":
            created = self.rng.choice(
                ("2026-13-45 19:09:09", "2026-03-01 20:00:00", "yesterday", "9999-12-31 23:59:59 +14:00")
            )
        elif odd == "entry":
            kind = hostilefiles.entry_kind(self.rng)
            if self.rng.random() < 0.5:
                people.append((f"Bo Partner {self.number}", f"'{90_000 + self.number}'", f"b{self.number}@example.edu"))
        if odd == "missing":
            self.metadata.append(f"submission_{self.number}999:\n  :submitters:\n  - :name: Nobody\n    :sid: '0'\n")
        self.metadata.append(hostilefiles.entry(key, kind, people, created))
        if kind == "plain":  # each member gets the group's grade, when the file and the entry can be read
            self.group_members += len(people) - 1

    def repair_bait(self) -> None:
        """An engine with a bug a repair finds, written to make the repairs' reading slow or deep."""
        (self.folder / self.name(".py")).write_text(hostilefiles.repair_bait(self.rng))

    def canvas_file(self) -> None:
        short = (
            "x" + "".join(c for c in self.rng.choice(NAMES).lower() if c in "abcdefghijklmnopqrstuvwxyz0123456789")[:40]
        )
        uid = self.uid()
        self.canvas.append((short, uid))
        late = self.rng.choice(("", "_late"))
        (self.folder / f"{short}{late}_{uid}_{self.uid()}_micrograd_mine.py").write_text(ENGINE)

    def noise(self) -> None:
        """Things no student is: a link, a loose test file, text, a hidden file, a pipe."""
        (self.folder / f"link{self.number}.py").symlink_to("/etc/passwd")
        (self.folder / f"test_loose{self.number}.py").write_text("def test_x(): pass\n")
        (self.folder / f"notes{self.number}.txt").write_text("\x1b[2J" * 100)
        (self.folder / f".hidden{self.number}.py").write_text(ENGINE)
        os.mkfifo(self.folder / f"pipe{self.number}.py")

    KINDS = (
        "deep_zip",
        "deep_folder",
        "long_names",
        "control_chars",
        "huge_literal",
        "blank_lines",
        "slashes",
        "odd_zip",
        "notebook",
        "gradescope",
        "canvas_file",
        "repair_bait",
    )

    def roster(self, root: Path) -> Path:
        """A Canvas gradebook export naming every Canvas student planted, and a few nothing was found for."""
        path = root / "gradebook.csv"
        absent = [(self.rng.choice(NAMES) + f" {i}", str(90_000 + i)) for i in range(self.rng.randint(1, 3))]
        absent.append(("x" * self.size(5_000), "99999"))
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Micrograd engine (4401)"])
        writer.writerow(["    Points Possible", "", "", "", "", "10.00"])
        for name, uid in self.canvas + absent:
            writer.writerow([name, uid, f"S{uid}", f"login{uid}", "Section 01", ""])
        path.write_text(buffer.getvalue())
        self.rows += len(absent)
        return path


def make_class(root: Path, seed: int, students: int = 8, scale: float = 1.0) -> HostileClass:
    """A class of `students` hostile students (and alice, and things no student is), seeded."""
    writer = _Writer(root, seed, scale)
    kinds = [writer.rng.choice(_Writer.KINDS) for _ in range(students)]
    for kind in kinds:
        getattr(writer, kind)()
        writer.rows += 1
    writer.noise()
    inputs = [writer.folder]
    if writer.metadata:
        head, broken = hostilefiles.metadata_head(writer.rng)  # broken: the file is not read, its folders plain
        (writer.export / "submission_metadata.yml").write_text(head + "".join(writer.metadata))
        inputs.append(writer.export)
        writer.rows += 0 if broken else writer.group_members
    roster = writer.roster(root) if writer.canvas and writer.rng.random() < 0.7 else None
    canvas_ids = [uid for _, uid in writer.canvas]
    beside = hostilefiles.Beside.draw(writer.rng, root, canvas_ids, sorted(writer.taken))
    return HostileClass(root, seed, inputs, writer.rows, roster, kinds, beside)


# -- the passes a batch makes in its own process, with real files and no sandbox -------------------------------

HOSTILE_TEXTS = (
    lambda n: "the lesson's data is not under " + "/a" * n,
    lambda n: "/" * (40 * n) + "site-packages",
    lambda n: "\n" * (40 * n) + "import torch",
    lambda n: "\x1b]52;c;aGVsbG8=\x07\x1b[2J\rScore: 100 / 100\u202e" * n,
    lambda n: ("/tmp/grader-sandbox-x1/" + "a/" * n) * 20 + "micrograd_mine.py",
    lambda n: "/usr/lib/python3.11/" * n + "x.py:3: in f",
    lambda n: 'File "' + "/x" * n + '", line 1\n' * n,
    lambda n: '=HYPERLINK("http://evil";"grade")' + " " * n,
    lambda n: "\t" * n + "é" * n,
)
"""What a student's code can make a message, a test's name or a notebook's output say, at a size n."""


def hostile_result(student: str, name: str, source: bytes, assignment, rng: random.Random, n: int):
    """A result as a grading process could return it for this student, every text in it hostile."""
    from grader import __version__
    from grader.result import CheckResult, Counterexample, NotWritten, Result, SubmissionError

    def text() -> str:
        return rng.choice(HOSTILE_TEXTS)(n)

    sha = __import__("hashlib").sha256(source).hexdigest()
    if rng.random() < 0.3:
        kind = rng.choice(("import_error", "syntax_error", "timeout", "crash"))
        return Result(name, sha, assignment.id, __version__, "error", SubmissionError(kind, text()), 0.0, 10.0, 1.0, ())
    checks = []
    for spec in assignment.checks:
        status = rng.choice(("passed", "failed", "error", "skipped"))
        example = Counterexample(text(), {"a.grad": 1.0, text()[:50]: 2.0}, {"a.grad": text(), "b": 1e308})
        feedback = text()
        artifacts = {"tests": [text()[:200]]} if status == "error" else {}
        written = text()[:100] if status == "error" else None
        checks.append(
            CheckResult(
                spec.id,
                spec.id,
                status,
                spec.points if status == "passed" else 0.0,
                spec.points,
                spec.visibility,
                feedback,
                example if status == "failed" else None,
                artifacts,
                0.1,
                rng.choice((None, "assign_in_add", "missing_seed")) if status == "failed" else None,
                NotWritten(written, written) if written is not None else None,
            )
        )
    notebook = (
        {"problems": [text() for _ in range(20)], "cells": [], "died": text()} if name.endswith(".ipynb") else None
    )
    score = sum(c.score for c in checks)
    total = sum(c.max_score for c in checks)
    return Result(
        name,
        sha,
        assignment.id,
        __version__,
        "graded",
        None,
        score,
        total,
        1.0,
        tuple(checks),
        notebook=notebook,
        notes=(text(),),
    )


def drive(cls: HostileClass, out: Path, assignment, exports: Path) -> float:
    """Every pass `grader batch` makes in its own process over the class, and the exports; the seconds taken."""
    from grader import feedback
    from grader.batch import export, resume, run, tasks
    from grader.batch.discover import discover
    from grader.batch.everyone import everyone
    from grader.batch.notes import grouped
    from grader.batch.outputs import write_class_outputs
    from grader.commands import reteach
    from grader.folders import temporary_folder
    from grader.lms import roster as rosters

    started = time.monotonic()
    rng = random.Random(cls.seed)
    with temporary_folder("grader-batch-") as staging:
        found = discover(cls.inputs, staging)
        noted = grouped(found.notes)
        students, found = run._students(found, out, assignment)
    if staging.exists():
        raise AssertionError(f"the staging folder {staging} was not removed")
    rows = []
    for student in students:
        result = hostile_result(
            student.submission.student, student.submission.path.name, student.source, assignment, rng, 64
        )
        task = student.task(assignment, b"k" * 32, False, ())
        result = feedback.cleaned(result)  # as a grading process cleans every result
        outcome = tasks.TaskOutcome(task.student, result, tasks.render(task, result))
        resume.save(student, outcome)
        rows.append(resume.row_of(student, result, skipped=False))
    roster = rosters.read(cls.roster) if cls.roster else None
    rows = everyone(rows, found.missing, roster, out / resume.STUDENTS, assignment)
    write_class_outputs(out, assignment, sorted(rows, key=lambda r: r.student), noted)
    exports.mkdir(parents=True, exist_ok=True)
    export.main(target="gradescope-csv", out=exports / "grades-plain.csv", assignment=assignment.id, graded=out)
    export.main(target="feedback", out=exports / "feedback.zip", assignment=assignment.id, graded=out)
    if roster is not None:
        export.main(
            target="canvas",
            out=exports / "canvas.csv",
            assignment=assignment.id,
            graded=out,
            roster=cls.roster,
            allow_unmatched=True,  # a hostile class holds students no roster names: exported without them
        )
    reteach.main(out=exports / "reteach.ipynb", graded=out)
    cls.beside.read(found, students, out, assignment, rng)  # groups, overrides, history, %grade, repairs
    return time.monotonic() - started


def problems(cls: HostileClass, out: Path, exports: Path | None = None) -> list[str]:
    """What a batch owes this class and its files do not give (nothing, when all is well)."""
    found = [f"no {name}" for name in CLASS_FILES if not (out / name).is_file()]
    if found:
        return found
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    students = [r["student"] for r in rows]
    if len(rows) != cls.rows:
        found.append(f"grades.csv has {len(rows)} rows for {cls.rows} students ({cls.kinds})")
    if len({s.lower() for s in students}) != len(students):
        found.append(f"grades.csv names a student twice: {sorted(students)}")
    summary = json.loads((out / "summary.json").read_text())
    if len(summary["students"]) != len(rows):
        found.append(f"summary.json has {len(summary['students'])} students, grades.csv {len(rows)}")
    for student in summary["students"]:
        folder = student["folder"]
        if folder and not (out / folder / "result.json").is_file():
            found.append(f"{student['student']} has no result.json in {folder}")
        if len(student["student"]) > 255 or "/" in student["student"]:
            found.append(f"{student['student'][:80]!r} is not an id a folder can have")
    if summary.get("failed_passes"):
        found.append(f"class-wide passes failed: {summary['failed_passes']}")
    if exports is not None:
        found += [f"no export {name}" for name in EXPORTS if not (exports / name).is_file()]
    return found
