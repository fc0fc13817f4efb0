"""Can a hostile class folder subvert `grader batch`? Each test builds one attack seen in a
review (a zip naming classmates, symlinks to root-only files, a zip bomb, ids that collide
with class files, names that are all dots, host paths in error messages) and checks the
property it broke: classmates keep their own work, nothing is read through a link, memory
and disk stay bounded, every class file is written, and every file left out is named in a note."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import BAD, csv_rows
from test_batch import QUICK_SPEC

from grader.batch.archives import ArchiveLimits
from grader.batch.discover import discover

FUTURE = (2099, 1, 1, 0, 0, 0)


def _zip(path: Path, members: dict[str, str], date=FUTURE) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(zipfile.ZipInfo(name, date), text)
    return path


def _by_student(found) -> dict[str, str]:
    return {s.student: s.path.read_text() for s in found.submissions}


def _notes(found) -> str:
    return "\n".join(n.text for n in found.notes)


@pytest.mark.parametrize("as_class_zip", [False, True], ids=["class-folder", "class-zip"])
def test_a_students_zip_cannot_replace_classmates(tmp_path, as_class_zip):
    """A student's own Canvas zip holding files named for two classmates, dated 2099: do the
    classmates keep their own submissions, and the files stay the zip author's?"""
    cls = tmp_path / "class"
    cls.mkdir()
    (cls / "alice_1_10_micrograd_mine.py").write_text("# alice's own\n")
    (cls / "bob_2_20_micrograd_mine.py").write_text("# bob's own\n")
    _zip(
        cls / "mallory_3_30_micrograd.zip",
        {
            "alice_1_11_micrograd_mine.py": "# forged alice\n",
            "bob_2_21_micrograd_mine.py": "# forged bob\n",
            "submission/alice/micrograd_mine.py": "# forged alice 2\n",
        },
    )
    os.utime(cls / "mallory_3_30_micrograd.zip", (4102444800, 4102444800))
    # a Canvas-named folder (an unzipped student archive) is the student's too, whatever is inside
    (cls / "trudy_4_40_micrograd").mkdir()
    (cls / "trudy_4_40_micrograd" / "bob_2_99_micrograd_mine.py").write_text("# forged bob 3\n")
    inputs = [cls]
    if as_class_zip:
        with zipfile.ZipFile(tmp_path / "class.zip", "w") as zf:
            for path in sorted(cls.rglob("*")):
                zf.write(path, f"export/{path.relative_to(cls)}")
        inputs = [tmp_path / "class.zip"]
    found = discover(inputs, tmp_path / "staging")
    students = _by_student(found)
    assert students["alice"] == "# alice's own\n" and students["bob"] == "# bob's own\n"
    assert set(students) == {"alice", "bob", "mallory", "trudy"}
    assert students["mallory"] == "# forged alice 2\n"  # micrograd_mine.py first: it is hers to pick
    assert students["trudy"] == "# forged bob 3\n"
    assert "several files could be the submission" in _notes(found)


def test_lms_ids_decide_duplicates_never_dates(tmp_path):
    """Is the higher Canvas submission id kept whatever the dates, and are submissions no LMS id
    tells apart (or two students with one name) all graded, each under its own id, with a note?"""
    cls = tmp_path / "class"
    cls.mkdir()
    old, new = cls / "alice_1_11_micrograd_mine.py", cls / "alice_1_12_micrograd_mine.py"
    old.write_text("# old\n")
    new.write_text("# new\n")
    os.utime(old, (4102444800, 4102444800))
    os.utime(new, (0, 0))
    (cls / "alice_1_13_test_micrograd.py").write_text("# alice's tests\n")
    (cls / "alice_7_70_micrograd_mine.py").write_text("# another alice (another user id)\n")
    (cls / "carl.py").write_text("# carl 1\n")
    (cls / "section").mkdir()  # a section: the class folder holds no student's folder beside it
    (cls / "section" / "Carl.py").write_text("# carl 2\n")
    (cls / "section" / "carl").mkdir()
    (cls / "section" / "carl" / "micrograd_mine.py").write_text("# carl 3\n")
    found = discover([cls], tmp_path / "staging")
    students = _by_student(found)
    # two students the LMS tells apart: each keyed by their user id, never by a suffix
    assert students["alice_1"] == "# new\n" and students["alice_7"] == "# another alice (another user id)\n"
    alice = next(s for s in found.submissions if s.student == "alice_1")
    assert (alice.identity.lms, alice.identity.user_id, alice.identity.submission_id) == ("canvas", "1", "12")
    assert alice.tests.read_text() == "# alice's tests\n" and alice.lms_id == 12
    assert sorted(v for k, v in students.items() if k.lower().startswith("carl")) == [
        "# carl 1\n",
        "# carl 2\n",
        "# carl 3\n",
    ]
    assert len({k.lower() for k in students}) == len(students)  # distinct even on a case-blind disk
    notes = _notes(found)
    assert 'alice_1_11_micrograd_mine.py: an older submission of "alice" (LMS id 11)' in notes
    assert "carl: 3 submissions and no LMS submission ids" in notes


def test_symlinks_are_never_followed(tmp_path):
    """Links to a root-only file, as a student file, a test file, a folder, a zip member or an
    input: is nothing read through them, and each named in a note?"""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-42\n")
    secret.chmod(0o600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "micrograd_mine.py").write_text("TOP-SECRET-42\n")
    cls = tmp_path / "class"
    cls.mkdir()
    (cls / "eve.py").symlink_to(secret)
    (cls / "frank").mkdir()
    (cls / "frank" / "micrograd_mine.py").write_text("# frank\n")
    (cls / "frank" / "test_micrograd.py").symlink_to(secret)
    (cls / "gina").symlink_to(elsewhere, target_is_directory=True)
    (cls / "hank").mkdir()
    (cls / "hank" / "micrograd_mine.py").symlink_to(secret)
    link = zipfile.ZipInfo("micrograd_mine.py")
    link.external_attr = 0o120777 << 16  # a symlink member, as zip -y stores one
    with zipfile.ZipFile(cls / "ivan_5_50_micrograd.zip", "w") as zf:
        zf.writestr(link, str(secret))
        zf.writestr("engine.py", "# ivan\n")
        zf.writestr("../../escaped.py", "# out of the staging folder\n")
        zf.writestr("/abs.py", "# absolute\n")
    (tmp_path / "link-input").symlink_to(cls, target_is_directory=True)
    staging = tmp_path / "staging"
    found = discover([cls, tmp_path / "link-input"], staging)
    students = _by_student(found)
    assert students == {"frank": "# frank\n", "ivan": "# ivan\n"}
    frank = next(s for s in found.submissions if s.student == "frank")
    assert frank.tests is None
    for path in staging.rglob("*"):
        assert not path.is_symlink()
        assert not path.is_file() or "TOP-SECRET" not in path.read_text(errors="replace")
    assert not list(tmp_path.rglob("escaped.py")) and not Path("/abs.py").exists()
    notes = _notes(found)
    for name in (
        "class/eve.py",
        "class/frank/test_micrograd.py",
        "class/gina",
        "class/hank/micrograd_mine.py",
        "ivan_5_50_micrograd.zip/micrograd_mine.py",
        "link-input",
    ):
        assert f"{name}: a symbolic link; not followed" in notes, name
    assert "escaped.py: a path climbing out with '..'" in notes and "abs.py: an absolute path" in notes


BOMB = """
import resource, sys
from pathlib import Path
from grader.batch.discover import discover
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
found = discover([Path(sys.argv[1])], Path(sys.argv[2]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
print("\\n".join(n.text for n in found.notes))
"""


def test_a_zip_bomb_is_stopped_while_streaming(tmp_path):
    """A small zip that expands to hundreds of MB, and a member under the size limit that expands
    1000:1: are both stopped (the second while streaming), with memory and disk small and a note each?"""
    cls = tmp_path / "class"
    cls.mkdir()
    bomb = cls / "zed_9_90_micrograd.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("micrograd_mine.py", "# zed\n")
        chunk = bytes(2**20)
        with zf.open("data/zeros.py", "w", force_zip64=True) as member:
            for _ in range(400):
                member.write(chunk)
        with zf.open("data/dense.py", "w") as member:  # 15 MB, under the size limit
            for _ in range(15):
                member.write(chunk)
    assert bomb.stat().st_size < 2 * 2**20
    staging = tmp_path / "staging"
    run = subprocess.run(
        [sys.executable, "-c", BOMB, str(cls), str(staging)], capture_output=True, text=True, timeout=60, check=True
    )
    growth_kb, notes = run.stdout.split("\n", 1)
    assert int(growth_kb) < 50 * 1024, growth_kb  # never 400 MB, nor a member read whole
    assert sum(p.stat().st_size for p in staging.rglob("*") if p.is_file()) < 3 * 2**20
    assert "zed_9_90_micrograd.zip/data/zeros.py: larger than 20 MB (400 MB uncompressed)" in notes
    assert "zed_9_90_micrograd.zip/data/dense.py: expands more than 100 times" in notes


LAUGHS = """
import resource, sys, time
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))  # a shared machine: never more than 2 GB
from grader.batch.discover import discover
started = time.monotonic()
found = discover([Path(sys.argv[1]), Path(sys.argv[2])], Path(sys.argv[3]))
print(round(time.monotonic() - started, 1))
print(sorted(s.student for s in found.submissions))
print("\\n".join(n.text for n in found.notes))
"""


def test_a_metadata_file_of_aliases_costs_its_students_their_metadata_only(tmp_path):
    """A Gradescope export whose 840 KB submission_metadata.yml expands by alias to a billion submitters
    (tests/adversarial/alias_bomb.py), beside a plain class folder: are the export's three students found,
    graded as the plain folders they are, with a note saying why their metadata was not read, and the other
    input's student too, quickly and in bounded memory, rather than the whole export skipped (and with it the
    only input, "no submissions found")?"""
    sys.path.insert(0, str(Path(__file__).parent / "adversarial"))
    import alias_bomb

    export = alias_bomb.write(tmp_path / "export")
    assert (export / "submission_metadata.yml").stat().st_size < 900_000
    plain = tmp_path / "class"
    plain.mkdir()
    (plain / "bob.py").write_text(alias_bomb.ENGINE.read_text())
    run = subprocess.run(
        [sys.executable, "-c", LAUGHS, str(export), str(plain), str(tmp_path / "staging")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    took, students, notes = run.stdout.split("\n", 2)
    assert students == str(["bob", "submission_1", "submission_2", "submission_3"]), (students, notes)
    assert "export/submission_metadata.yml: " in notes and "its folders are read as plain folders" in notes, notes
    assert "alias" in notes, notes
    assert float(took) < 30, took


def test_one_submissions_bad_metadata_costs_that_student_theirs_only(tmp_path):
    """An export's metadata whose entry for one submission cannot be read (a time that is none, 2026-13-45; or
    ten thousand submitters): are the others named by it as usual, and that one student graded as their plain
    folder, with a note naming the submission?"""
    export = tmp_path / "export"
    for number in (1, 2, 3):
        (export / f"submission_{number}").mkdir(parents=True)
        (export / f"submission_{number}" / "micrograd_mine.py").write_text("x = 1\n")
    entries = [
        "submission_1:\n  :submitters:\n  - :name: Ada Lovelace\n    :sid: '1'\n"
        "  :created_at: 2026-03-01 20:00:00.000000000 +00:00\n",
        "submission_2:\n  :submitters:\n  - :name: Bad Time\n    :sid: '2'\n  :created_at: 2026-13-45 19:09:09\n",
        "submission_3:\n  :submitters:\n" + "  - :name: Crowd\n    :sid: '3'\n" * 10_000,
    ]
    (export / "submission_metadata.yml").write_text("".join(entries))
    found = discover([export], tmp_path / "staging")
    who = {s.student: s.identity for s in found.submissions}
    assert sorted(who) == ["Ada_Lovelace", "submission_2", "submission_3"], who
    assert who["Ada_Lovelace"].user_id == "1" and who["Ada_Lovelace"].submitted_at == "2026-03-01T20:00:00+00:00"
    notes = _notes(found)
    assert "submission_2: its entry in submission_metadata.yml cannot be read" in notes, notes
    assert "submission_3: its entry in submission_metadata.yml names 10,000 submitters" in notes, notes


def test_archive_caps_each_member_the_total_and_the_count(tmp_path):
    """With small limits: is a member too big, the archive's total and its count each enforced, with a note each?"""
    limits = ArchiveLimits(member_bytes=2**20, archive_bytes=3 * 2**20, members=20)
    members = {f"tiny{i:02d}.py": "#\n" for i in range(14)}
    members["big.py"] = os.urandom(2**20).hex()  # 2 MB of text, compressed about 2:1
    members.update({f"part{i}.py": os.urandom(450_000).hex() for i in range(5)})  # 900 kB each
    members.update({f"tiny{i:02d}.py": "#\n" for i in range(14, 20)})
    with zipfile.ZipFile(tmp_path / "class.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    staging = tmp_path / "staging"
    found = discover([tmp_path / "class.zip"], staging, limits)
    notes = _notes(found)
    assert "class.zip/big.py: larger than 1 MB (2 MB uncompressed)" in notes
    assert "class.zip/part3.py: skipped: the archive" in notes and "class.zip/part4.py: skipped" in notes
    assert "holds 26 entries; only the first 20 were read, the other 6 skipped" in notes
    assert {s.student for s in found.submissions} == {"part0", "part1", "part2", *(f"tiny{i:02d}" for i in range(14))}
    assert sum(p.stat().st_size for p in staging.rglob("*") if p.is_file()) <= 2 * 3 * 2**20

    # the archives of one batch share a budget too: a class of student zips cannot fill the disk
    cls = tmp_path / "class"
    cls.mkdir()
    for name in ("amy", "bea", "cal"):
        _zip(cls / f"{name}.zip", {"micrograd_mine.py": os.urandom(300_000).hex()})  # 600 kB each
    found = discover([cls], tmp_path / "staging2", ArchiveLimits(batch_bytes=1_500_000))
    assert {s.student for s in found.submissions} == {"amy", "bea"}
    assert "class/cal.zip/micrograd_mine.py: skipped: the batch's archives" in _notes(found)


def test_every_file_left_out_gets_a_note(tmp_path):
    """Hidden files, `....py`, other suffixes, system folders, special files, stray tests, extra files
    in a student's folder, a name with no usable id: is each named in a note?"""
    cls = tmp_path / "class"
    (cls / "__MACOSX").mkdir(parents=True)
    (cls / "__MACOSX" / "._ann.py").write_text("x")
    (cls / "....py").write_text("x = 1\n")
    (cls / ".hidden.py").write_text("x = 1\n")
    (cls / "notes.txt").write_text("hello")
    (cls / "\x1b]0;owned\x07.txt").write_text("a terminal escape in a name")
    (cls / "test_extra.py").write_text("def test(): pass\n")
    (cls / "___.py").write_text("x = 1\n")
    os.mkfifo(cls / "pipe.py")
    (cls / "ann").mkdir()
    (cls / "ann" / "micrograd_mine.py").write_text("# ann\n")
    (cls / "ann" / "helper.py").write_text("# helper\n")
    (cls / "ann" / "README.md").write_text("readme")
    (cls / "ann" / "inner.zip").write_bytes(b"PK")
    found = discover([cls], tmp_path / "staging")
    students = _by_student(found)
    unnamed = next(s for s in students if s.startswith("student-"))
    assert set(students) == {"ann", unnamed} and students["ann"] == "# ann\n"
    notes = _notes(found)
    for expected in (
        "class/__MACOSX: a system folder; skipped (1 files in it)",
        "class/....py: a hidden file",
        "class/.hidden.py: a hidden file",
        "class/notes.txt: not a .py file, notebook or zip",
        "class/test_extra.py: a test file outside any student's folder",
        f"class/___.py: no usable student id in its name; graded as {unnamed}",
        "class/pipe.py: not a regular file",
        "graded class/ann/micrograd_mine.py, not class/ann/helper.py",
        "class/ann/README.md: not a .py file or notebook",
        "class/ann/inner.zip: a zip inside",
        "class/\\x1b]0;owned\\x07.txt: not a .py file",
    ):
        assert expected in notes, expected
    assert "\x1b" not in notes


def test_folders_nested_in_a_class_zip_are_still_students(tmp_path):
    """Sections and groups in a class zip are walked; the folder holding micrograd_mine.py is the student."""
    with zipfile.ZipFile(tmp_path / "late_batch.zip", "w") as zf:
        for i in range(2):
            zf.writestr(f"section-a/group{i}/zipped{i}/micrograd_mine.py", f"# {i}\n")
            zf.writestr(f"section-a/group{i}/zipped{i}/test_micrograd.py", f"# tests {i}\n")
    found = discover([tmp_path / "late_batch.zip"], tmp_path / "staging")
    assert _by_student(found) == {"zipped0": "# 0\n", "zipped1": "# 1\n"}
    assert all(s.tests and s.tests.read_text().startswith("# tests") for s in found.submissions)


def _batch(inputs: Path, out: Path, quick: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(inputs),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--assignment",
            str(quick),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ids_like_class_files_and_no_host_paths(tmp_path):
    """Students whose ids are grades.csv, index.html, summary.json: are every class file and every
    student's outputs written, linked, free of the host's paths, and is a tampered result regraded?"""
    inputs = tmp_path / "class"
    inputs.mkdir()
    (inputs / "grades.csv.py").write_bytes(b"\xff\xfe not UTF-8\n")
    (inputs / "index.html.py").write_text((BAD / "syntax_error.py").read_text())
    (inputs / "summary.json.py").write_text("x = 1  # no Value\n")
    (inputs / "students.py").write_bytes(b"\xff")
    nb = tmp_path / "nb.ipynb"
    nb.write_text('{"cells": [')  # truncated notebook
    with zipfile.ZipFile(inputs / "ned_8_80_micrograd.zip", "w") as zf:
        zf.write(nb, "work/micrograd.ipynb")
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "assignment.toml").write_text(QUICK_SPEC)
    out = tmp_path / "out"
    run = _batch(inputs, out, tmp_path / "quick")
    assert run.returncode == 0, run.stderr[-3000:]
    ids = ["grades.csv", "index.html", "ned", "students", "summary.json"]
    rows = csv_rows(out / "grades.csv")
    assert [r["student"] for r in rows] == ids and all(r["status"] == "error" for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert [s["folder"] for s in summary["students"]] == [f"students/{i}" for i in ids]
    page = (out / "index.html").read_text()
    for i in ids:
        assert f'href="students/{i}/report.html"' in page
        assert all(
            (out / "students" / i / name).is_file() for name in ("result.json", "gradescope.json", "report.html")
        )
    host = {str(tmp_path), str(tmp_path.resolve()), "grader-batch-"}
    for path in (out / "students").rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert not any(h in text for h in host), (path, text[:2000])
    errors = {i: json.loads((out / "students" / i / "result.json").read_text())["error"]["message"] for i in ids}
    assert errors["grades.csv"].startswith("grades.csv.py is not UTF-8 text")
    assert "micrograd.ipynb is not a notebook" in errors["ned"]

    # resume: unchanged students are kept, a result edited by hand is regraded
    result = out / "students" / "index.html" / "result.json"
    forged = json.loads(result.read_text()) | {"score": 100.0, "status": "graded"}
    result.write_text(json.dumps(forged))
    rerun = _batch(inputs, out, tmp_path / "quick")
    assert rerun.returncode == 0 and "(4 unchanged since the last run" in rerun.stdout, rerun.stdout
    assert json.loads(result.read_text())["status"] == "error"


def test_error_messages_name_the_file_not_its_path(tmp_path, micrograd):
    """Does a submission that cannot be read get a message naming the file, never the host's path to it?"""
    from grader.grading import grade

    deep = tmp_path / "instructor" / "private"
    deep.mkdir(parents=True)
    (deep / "latin1.py").write_bytes(b"x = '\xe9'\n")
    (deep / "folder.py").mkdir()
    messages = {name: grade(deep / name, micrograd).error.message for name in ("latin1.py", "folder.py", "gone.py")}
    assert messages["latin1.py"].startswith("latin1.py is not UTF-8 text")
    assert messages["folder.py"].startswith("folder.py is a folder")
    assert messages["gone.py"] == "gone.py does not exist"
    assert not any(str(tmp_path) in m for m in messages.values())
