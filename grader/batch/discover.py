"""Find the submissions in folders and zips, and tell which student each belongs to.

A class folder may hold anything a student chose to upload, so nothing in it is trusted
beyond the names the LMS gave (the rules in full: docs/batch.md):

- Folders and zips named on the command line are the class's containers. In a container, a
  `.py` file or notebook is one student's, named by its file name; a zip is one student's
  own; a folder is one student's when an LMS named it (grader/lms/identity.py reads Canvas,
  Moodle and Gradescope names) or it holds micrograd_mine.py, test_micrograd.py or a single
  notebook, and then every folder beside it is one student's, whole (a student cannot make
  their folder a section holding "classmates"). Otherwise a folder is a container too.
- Everything inside a student's own zip or folder is theirs: their submission is
  micrograd_mine.py, else the only notebook, else the only other .py file (the shallowest
  first, with a note), and their tests the test_micrograd.py beside it.
- Of one LMS user's submissions the highest LMS id is the newest (file dates are never
  used); namesakes the LMS tells apart are `name_userid`; work nothing tells apart is
  graded as `alice`, `alice-2`..., the shallowest claimant keeping the name.
- Every student something was found for is in Found: graded, or `missing` with the reason
  (only tests, a file over the size limit, a zip that cannot be read), never only a note.
- Links are never followed; zips are extracted with bounded sizes (grader.batch.archives);
  every file left out gets a note, of a kind and about a student (grader.batch.notes).
- Every walk is bounded before it starts: folders MAX_DEPTH deep at most, LISTED entries of one
  folder and MAX_ENTRIES under one student's; a hidden folder's files are counted within those
  bounds (grader/folders.py), never by a recursive walk. Each input, each thing in a container
  and each student's staging runs in a guard: whatever it raises costs that student a row with
  the reason (or the input a note), never the batch.

Each submission chosen is copied into the staging folder, alone with its tests, so grading
reads only that student's own bytes.
"""

from __future__ import annotations

import itertools
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.batch import archives
from grader.batch.found import Found, Submission, Ungradable
from grader.batch.notes import Note, listed
from grader.errors import BadMetadata
from grader.files import MODULE_FILE, TESTS_FILE
from grader.folders import MAX_DEPTH, MAX_ENTRIES, count_files
from grader.lms import identity as lms
from grader.lms.identity import Identity
from grader.lms.names import one_per_student, plain_name, printable, quoted, safe_id
from grader.text import failure

SKIP_DIRS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git"}
MODULE = MODULE_FILE
TESTS = TESTS_FILE
GRADED = (".py", ".ipynb")
LISTED = 100_000
"""The most entries read from one folder (a class's folder of a few thousand students' files included)."""


def discover(
    inputs: list[Path], staging: Path, limits: archives.ArchiveLimits | None = None, exclude: Path | None = None
) -> Found:
    """Every submission under the inputs, sorted by student id, and the notes; `exclude` (the batch's --out,
    which may be inside an input) is never read as a submission."""
    walk = _Discovery(Path(staging), limits or archives.ArchiveLimits())
    if exclude is not None:
        try:
            info = os.stat(exclude, follow_symlinks=False)
            walk.exclude = (info.st_dev, info.st_ino)
        except OSError:
            pass  # not made yet: nothing of it to read
    for item in inputs:
        try:
            walk.input(Path(item))
        except FileNotFoundError:
            raise
        except Exception as exc:
            walk.note("input", str(item), f"could not be read ({failure(exc)}); skipped")
    return walk.finish()


@dataclass
class _Entry:
    """One student's work as found: a submission, its tests, or both."""

    name: str
    """The student's name before it is made a safe, unique id."""
    group: tuple
    """Entries of one group are one student: ("lms", lms, userid) or ("name", lowercased id)."""
    identity: Identity
    late: bool = False
    lms_id: int | None = None
    main: Path | None = None
    main_label: str = ""
    tests: Path | None = None
    tests_label: str = ""
    renamed: str | None = None
    """A note when the name gave no usable id."""
    depth: int = 0
    """How deep below the input the claimant (the file, zip or folder naming the student) was found."""
    problem: str | None = None
    """Why this student's work cannot be graded (then there is no `main`)."""


@dataclass
class _Discovery:
    staging: Path
    limits: archives.ArchiveLimits
    notes: list[Note] = field(default_factory=list)
    entries: list[_Entry] = field(default_factory=list)
    unpacked: int = 0
    budget: archives.Budget = field(init=False)
    seen: set[Path] = field(default_factory=set)
    """The inputs walked already (an input named twice is walked once)."""
    exclude: tuple[int, int] | None = None
    """The batch's own --out folder (device, inode): skipped wherever it is met."""
    entries_left: int = MAX_ENTRIES
    """Entries still to be read under the student's folder being collected."""

    def __post_init__(self):
        self.budget = archives.Budget(self.limits)

    def note(self, kind: str, item: str, why: str, student: str | None = None) -> None:
        """A note of a kind (grader.batch.notes.KINDS) about a file, counted under `student` (else the file)."""
        self.notes.append(Note(kind, printable(student or item), printable(item), printable(why)))

    # -- walking ------------------------------------------------------------------------

    def input(self, item: Path) -> None:
        label = os.path.basename(os.path.abspath(item)) or str(item)
        if item.is_symlink():
            self.note("input", str(item), "a symbolic link; not followed (name its target instead)")
            return
        if not item.exists():
            raise FileNotFoundError(f"{item} does not exist")
        if item.resolve() in self.seen:
            self.note("input", str(item), "named twice on the command line; read once")
            return
        self.seen.add(item.resolve())
        if item.is_dir():
            self.container(item, label, 0, label)
        elif item.suffix.lower() == ".zip" or (item.suffix not in GRADED and _is_zip(item)):
            root = self.unpack(item, label, self.class_member, label)
            if root:
                self.container(root, label, 0, label)
        elif item.is_file() and item.suffix in GRADED:
            if item.stat().st_size > self.limits.member_bytes:
                self.note("left_out", label, f"larger than {archives.size_text(self.limits.member_bytes)}; skipped")
            else:
                self.loose(item, label, 0)
        else:
            self.note("input", label, "not a folder, zip, .py file or notebook; skipped")

    def container(self, folder: Path, label: str, depth: int, owner: str) -> None:
        """A folder of the class (or of a section): each thing in it is a student's, or another container.
        Where any folder in it is a student's, every folder in it is one student's, whole: a student's
        folder holding folders named for classmates is still that one student's. `owner` is the input
        named on the command line, under which notes about files no student owns are counted."""
        try:
            gradescope = lms.gradescope(folder)
        except Exception as exc:  # BadMetadata, or anything else reading it raised: it costs its students' metadata
            why = str(exc) if isinstance(exc, BadMetadata) else f"cannot be read ({failure(exc)})"
            self.note("input", f"{label}/{lms.GRADESCOPE_METADATA}", f"{why}; its folders are read as plain folders")
            gradescope = None
        entries = list(self.visible(folder, label, depth, owner))
        per_student = gradescope is not None or any(
            e.is_dir(follow_symlinks=False) and self.student_folder(Path(e.path), e.name) for e, _ in entries
        )
        for entry, where in entries:
            self.guarded(entry, where, depth, owner, per_student, gradescope)

    def guarded(
        self, entry: os.DirEntry, where: str, depth: int, owner: str, per_student: bool, gradescope: lms.Metadata | None
    ) -> None:
        """contained(), in a guard: whatever reading one student's work raises is that student's row with the
        reason (a container's, a note about it), never the end of the batch."""
        before = len(self.entries)
        try:
            self.contained(entry, where, depth, owner, per_student, gradescope)
        except Exception as exc:
            del self.entries[before:]
            if entry.is_dir(follow_symlinks=False) and not per_student:
                self.note("left_out", where, f"could not be read ({failure(exc)}); skipped", owner)
            else:
                self.unreadable(
                    entry.name, where, depth + 1, f"{_own_name(entry.name)} could not be read ({failure(exc)})"
                )

    def contained(
        self, entry: os.DirEntry, where: str, depth: int, owner: str, per_student: bool, gradescope: lms.Metadata | None
    ) -> None:
        """One thing in a container: a student's folder, zip or file, another container, or a file left out."""
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if per_student:
                self.student(path, where, entry.name, depth + 1, self.submitters(gradescope, entry.name, where))
            else:
                self.container(path, where, depth + 1, owner)
        elif path.suffix.lower() == ".zip":
            root = self.unpack(path, where, self.student_member, where)
            if root:
                self.student(root, where, entry.name, depth + 1)
            else:
                self.unreadable(entry.name, where, depth + 1, f"the file {quoted(entry.name)} is not a readable zip")
        elif path.suffix in GRADED and entry.stat(follow_symlinks=False).st_size > self.limits.member_bytes:
            self.unreadable(
                entry.name,
                where,
                depth + 1,
                f"the file {quoted(entry.name)} is larger than {archives.size_text(self.limits.member_bytes)}",
            )
        elif path.suffix in GRADED:
            self.loose(path, where, depth + 1)
        elif gradescope is not None and entry.name == lms.GRADESCOPE_METADATA:
            return
        else:
            self.note("left_out", where, "not a .py file, notebook or zip; skipped", owner)

    def submitters(self, gradescope: lms.Metadata | None, name: str, where: str) -> Identity | None:
        """Who a Gradescope export's submission folder is, as its own entry in the metadata says; None, with a note,
        when that entry cannot be read (the folder is then graded as the plain folder it is)."""
        if gradescope is None:
            return None
        try:
            return gradescope.who(name)
        except Exception as exc:  # BadMetadata, or anything else building the entry raised
            why = str(exc) if isinstance(exc, BadMetadata) else f"cannot be read ({failure(exc)})"
            self.note("renamed", where, f"its entry in {lms.GRADESCOPE_METADATA} {why}; graded as a plain folder")
            return None

    def loose(self, path: Path, where: str, depth: int) -> None:
        """A file in a container: one student's submission (or, from Canvas, their tests)."""
        named = lms.from_file_name(path.name)
        if named and named[1].startswith("test_") and path.suffix == ".py":
            entry = self.claim(named[0], "", None, "", depth)
            entry.tests, entry.tests_label = path, where
        elif named:
            self.claim(named[0], "", path, where, depth)
        elif path.name.startswith("test_") and path.suffix == ".py":
            self.note("left_out", where, "a test file outside any student's folder; not used")
        else:
            self.add_named(plain_name(path.name), path, where, depth)

    def student(self, root: Path, where: str, name: str, depth: int, who: Identity | None = None) -> None:
        """A student's own folder or extracted zip: everything in it is theirs, whatever it is called."""
        files: list[tuple[Path, str, int]] = []
        too_big: list[str] = []
        self.entries_left = MAX_ENTRIES
        self.collect(root, where, depth, files, where, too_big)
        mains = [f for f in files if f[0].suffix == ".ipynb" or not f[0].name.startswith("test_")]
        mains.sort(key=lambda f: (0 if f[0].name == MODULE else 1 if f[0].suffix == ".ipynb" else 2, f[2], f[1]))
        who = who or lms.from_folder_name(_own_name(name))
        if not mains:
            self.note("not_graded", where, "no .py file or notebook in it; nothing to grade")
            for _path, label, _ in files:
                self.note("left_out", label, "not used (no submission beside it)", where)
            why = (
                f"the file{'s' if len(too_big) > 1 else ''} {listed([quoted(n) for n in too_big])} "
                f"{'is' if len(too_big) == 1 else 'are'} larger than {archives.size_text(self.limits.member_bytes)}"
                if too_big
                else f"only {TESTS} was found, no engine to grade"
                if files
                else "no .py file or notebook was found"
            )
            self.unreadable(name, where, depth, why, who)
            return
        main, main_label, _ = mains[0]
        if len(mains) > 1:
            self.note(
                "choice",
                where,
                f"several files could be the submission; graded {main_label}, not "
                + listed([label for _, label, _ in mains[1:]]),
            )
        tests = None
        for path, label, _ in files:
            if path.name == TESTS and path.parent == main.parent:
                tests = (path, label)
            elif path.suffix == ".py" and path.name.startswith("test_"):
                self.note("left_out", label, f"not used (the tests run are {TESTS} beside the submission)", where)
        entry = self.claim(who, name, main, main_label, depth)
        if tests:
            entry.tests, entry.tests_label = tests

    def claim(self, who: Identity | None, name: str, main: Path | None, label: str, depth: int) -> _Entry:
        """The entry of the student an LMS's name says (`who`), else of the plain `name`, added to the entries."""
        if who is None:
            return self.add_named(plain_name(name), main, label, depth)
        student = safe_id(who.name) or (f"{who.lms}-{safe_id(who.user_id)}" if who.user_id else plain_name(name)[0])
        entry = _Entry(
            student,
            # an LMS's id tells its students apart; work it gives none (metadata naming no SID nor email) is told
            # apart as plain work is, never taken for one student's
            ("lms", who.lms, who.user_id) if who.user_id else ("name", student.lower()),
            who,
            who.late,
            who.sort_key if who.sort_key >= 0 else None,
            main,
            label,
            depth=depth,
        )
        self.entries.append(entry)
        return entry

    def unreadable(self, name: str, where: str, depth: int, why: str, who: Identity | None = None) -> None:
        """A student whose work cannot be graded: a row with the reason, never only a note."""
        who = who or lms.from_folder_name(_own_name(name)) or (lms.from_file_name(name) or (None,))[0]
        self.claim(who, name, None, where, depth).problem = why

    def collect(self, folder: Path, label: str, depth: int, files: list, owner: str, too_big: list) -> None:
        """A student's files, at any depth: (path, label, depth). `owner` names the student's zip or folder;
        `too_big` gets the names of the files to grade that are over the size limit."""
        for entry, where in self.visible(folder, label, depth, owner):
            self.entries_left -= 1
            if self.entries_left < 0:
                if self.entries_left == -1:
                    self.note(
                        "left_out", owner, f"holds more than {MAX_ENTRIES:,} files and folders; the rest not read"
                    )
                return
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                self.collect(path, where, depth + 1, files, owner, too_big)
            elif path.suffix in GRADED and entry.stat(follow_symlinks=False).st_size > self.limits.member_bytes:
                self.note(
                    "left_out", where, f"larger than {archives.size_text(self.limits.member_bytes)}; skipped", owner
                )
                too_big.append(entry.name)
            elif path.suffix in GRADED:
                files.append((path, where, depth))
            elif path.suffix.lower() == ".zip":
                self.note("left_out", where, "a zip inside a student's submission; not opened", owner)
            else:
                self.note("left_out", where, "not a .py file or notebook; skipped", owner)

    def visible(self, folder: Path, label: str, depth: int, owner: str):
        """The entries of a folder worth looking at, sorted; a note (counted under `owner`) for each one left out."""
        for entry in self._listing(folder, label, depth, owner):
            where = f"{label}/{entry.name}"
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                self.note("left_out", where, f"cannot be read ({exc.strerror}); skipped", owner)
                continue
            left_out = self._left_out(entry, info)
            if left_out is None:  # a folder, or a file (one to grade over the size limit too: the caller says whose)
                yield entry, where
            else:
                kind, why = left_out
                self.note(kind, where, why, owner)

    def _listing(self, folder: Path, label: str, depth: int, owner: str) -> list[os.DirEntry]:
        """A folder's first LISTED entries, sorted by name; none if it is too deep or cannot be read (a note says)."""
        if depth > MAX_DEPTH:
            self.note("left_out", label, f"folders nested more than {MAX_DEPTH} deep; skipped", owner)
            return []
        try:
            with os.scandir(folder) as it:
                entries = sorted(itertools.islice(it, LISTED + 1), key=lambda e: e.name)
        except OSError as exc:
            self.note("left_out", label, f"cannot be read ({exc.strerror}); skipped", owner)
            return []
        if len(entries) > LISTED:
            entries = entries[:LISTED]
            self.note("left_out", label, f"holds more than {LISTED:,} entries; only {LISTED:,} were read", owner)
        return entries

    def _left_out(self, entry: os.DirEntry, info: os.stat_result) -> tuple[str, str] | None:
        """Why an entry is not looked at, as (the note's kind, why), or None to look at it."""
        if stat.S_ISLNK(info.st_mode):
            return "left_out", "a symbolic link; not followed"
        if (info.st_dev, info.st_ino) == self.exclude:
            return "input", "the batch's own --out folder; not read as submissions"
        if stat.S_ISDIR(info.st_mode) and (entry.name in SKIP_DIRS or entry.name.startswith(".")):
            kind = "a hidden folder" if entry.name.startswith(".") else "a system folder"
            return "left_out", f"{kind}; skipped ({count_files(Path(entry.path))} files in it)"
        if entry.name.startswith("."):
            return "left_out", "a hidden file; skipped"
        if stat.S_ISDIR(info.st_mode):
            return None
        if not stat.S_ISREG(info.st_mode):
            return "left_out", "not a regular file; skipped"
        return None

    def unpack(self, archive: Path, label: str, skip, owner: str) -> Path | None:
        """Extract a zip into the staging folder; its notes are counted under `owner`."""
        self.unpacked += 1
        try:
            return archives.extract(
                archive,
                self.staging / "x" / str(self.unpacked),
                label,
                lambda item, why: self.note("left_out", item, why, owner),
                skip,
                self.budget,
            )
        except archives.NotAnArchive as exc:
            self.note("not_graded", label, str(exc))
            return None

    @staticmethod
    def class_member(parts: tuple[str, ...]) -> str | None:
        """A class zip keeps what is graded, students' zips, and a Gradescope export's submission_metadata.yml
        (at most one folder down: `assignment_<id>_export/`), which names every submission's students."""
        suffix = Path(parts[-1]).suffix
        if parts[-1] == lms.GRADESCOPE_METADATA and len(parts) <= 2:
            return None
        return None if suffix in GRADED or suffix.lower() == ".zip" else "not a .py file, notebook or zip; skipped"

    @staticmethod
    def student_member(parts: tuple[str, ...]) -> str | None:
        suffix = Path(parts[-1]).suffix
        if suffix.lower() == ".zip":
            return "a zip inside a student's zip; not opened"
        return None if suffix in GRADED else "not a .py file or notebook; skipped"

    def student_folder(self, folder: Path, name: str) -> bool:
        """Is this folder plainly one student's: named by an LMS, or holding a submission at its top?"""
        if lms.from_folder_name(name):
            return True
        try:
            with os.scandir(folder) as it:
                names = [e.name for e in itertools.islice(it, LISTED) if not e.name.startswith(".")]
        except OSError:
            return False
        notebooks = [n for n in names if n.endswith(".ipynb")]
        loose = [n for n in names if n.endswith(".py") and not n.startswith("test_")]
        return MODULE in names or TESTS in names or (len(notebooks) == 1 and not loose)

    def add_named(self, name: tuple[str, str | None], path: Path | None, where: str, depth: int) -> _Entry:
        student, renamed = name
        entry = _Entry(
            student,
            ("name", student.lower()),
            lms.plain(student),
            main=path,
            main_label=where,
            renamed=renamed,
            depth=depth,
        )
        self.entries.append(entry)
        return entry

    # -- one submission per student -----------------------------------------------------

    def finish(self) -> Found:
        submissions, missing = [], []
        for entry, student in one_per_student(self.entries, self.note):
            if entry.main is None:
                missing.append(
                    Ungradable(student, entry.identity, entry.problem or "nothing to grade", entry.main_label)
                )
                continue
            try:
                sub = self.stage(entry, student)
            except Exception as exc:
                sub = f"{entry.main.name}: could not be copied for grading ({failure(exc)})"
            if isinstance(sub, Submission):
                submissions.append(sub)
            else:
                missing.append(Ungradable(student, entry.identity, sub, entry.main_label))
        return Found(
            tuple(sorted(submissions, key=lambda s: s.student)),
            tuple(self.notes),
            tuple(sorted(missing, key=lambda m: m.student)),
        )

    def stage(self, entry: _Entry, student: str) -> Submission | str:
        """Copy the submission and its tests, alone, into the student's staging folder."""
        found = entry.main
        assert found is not None, "finish() stages only the entries that have a submission"
        folder = self.staging / "s" / student
        folder.mkdir(parents=True)
        main = folder / found.name
        why = archives.copy_file(found, main, self.limits.member_bytes)
        if why:
            self.note("not_graded", entry.main_label, f"{why}; {student} not graded")
            return f"the file {quoted(found.name)}: {why}"
        tests = None
        if entry.tests:
            tests = folder / TESTS
            why = archives.copy_file(entry.tests, tests, self.limits.member_bytes)
            if why:
                self.note("left_out", entry.tests_label, f"{why}; {student} graded without these tests")
                tests = None
        return Submission(student, main, tests, entry.late, entry.main_label, entry.lms_id, entry.identity)


def _own_name(name: str) -> str:
    """A zip's or file's name without its extension (a student's zip is named like their folder)."""
    return name[:-4] if name.lower().endswith(".zip") else name


def _is_zip(path: Path) -> bool:
    try:
        return zipfile.is_zipfile(path)
    except OSError:
        return False
