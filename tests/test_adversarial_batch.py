"""Can a hostile student take a classmate's grade row in a batch, or hide that they tried?
Each test builds a class around one hostile submission from tests/adversarial/ and grades it
through the real `grader batch`:

- planted_classmate/: aaron's folder, in a class of plain per-student folders, holds no
  submission at its top, only `aaron/` and `alice/` sub-folders. Every folder of a class of
  per-student folders is one student's, whole; alice's row must stay alice's own work.
- note_flood.py: a student's zip of 5,000 empty files. The notes must stay one line per
  student and kind, with counts, the ones that matter (a duplicate name) first.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORRECT_ENGINES, HERE, csv_rows
from test_batch import QUICK_SPEC

from grader.batch.discover import discover

HOSTILE = HERE / "adversarial"
sys.path.insert(0, str(HOSTILE))
import note_flood  # noqa: E402  (a hostile fixture, not a package)


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("quick")
    (folder / "assignment.toml").write_text(QUICK_SPEC)
    return folder


def _batch(inputs: Path, out: Path, quick: Path) -> subprocess.CompletedProcess:
    run = subprocess.run(
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
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_students_folder_cannot_hold_classmates(tmp_path, quick):
    """aaron's folder holds only `aaron/` and `alice/` sub-folders: is alice's row her own work, aaron's
    row what aaron handed in, with no `alice-2`, and does a note say which of aaron's files was graded?"""
    cls = tmp_path / "class"
    for name, engine in (("alice", CORRECT_ENGINES[0]), ("bob", CORRECT_ENGINES[1])):
        (cls / name).mkdir(parents=True)
        shutil.copy(engine, cls / name / "micrograd_mine.py")
    shutil.copytree(HOSTILE / "planted_classmate", cls / "aaron")
    out = tmp_path / "out"
    run = _batch(cls, out, quick)
    rows = {r["student"]: r for r in csv_rows(out / "grades.csv")}
    assert sorted(rows) == ["aaron", "alice", "bob"], run.stderr[-3000:]
    results = {s: json.loads((out / "students" / s / "result.json").read_text()) for s in rows}
    assert results["alice"]["sha256"] == _sha256(CORRECT_ENGINES[0])
    assert float(rows["alice"]["score"]) > 60, rows["alice"]
    assert results["aaron"]["sha256"] == _sha256(HOSTILE / "planted_classmate" / "aaron" / "micrograd_mine.py")
    summary = json.loads((out / "summary.json").read_text())
    first = summary["note_details"][0]
    assert first["kind"] == "choice" and first["student"] == "class/aaron", summary["notes"]
    assert "graded class/aaron/aaron/micrograd_mine.py, not class/aaron/alice/micrograd_mine.py" in first["text"]


def test_a_deeper_entry_never_takes_a_shallower_claimants_id(tmp_path):
    """Where folders are sections (no student's folder beside them), two files claim `alice`: does the
    shallower one keep the name, whatever the order of the walk?"""
    cls = tmp_path / "class"
    (cls / "aaa-section").mkdir(parents=True)  # walked first
    (cls / "aaa-section" / "alice.py").write_text("# planted deeper\n")
    (cls / "alice.py").write_text("# alice's own\n")
    found = discover([cls], tmp_path / "staging")
    students = {s.student: s.path.read_text() for s in found.submissions}
    assert students == {"alice": "# alice's own\n", "alice-2": "# planted deeper\n"}


def _flood_class(root: Path, with_flood: bool) -> Path:
    """A class of loose files: alice, a bob with a second file in a section (a duplicate name), a name
    with no usable id, and (or not) mallory's flooding zip."""
    cls = root / "class"
    (cls / "section").mkdir(parents=True)
    (cls / "alice.py").write_text("x = 1  # no Value\n")
    (cls / "bob.py").write_text("x = 2  # no Value\n")
    (cls / "section" / "bob.py").write_text("x = 3  # no Value\n")
    (cls / "___.py").write_text("x = 4  # no Value\n")
    if with_flood:
        note_flood.write(cls / "mallory.zip")
    return cls


def test_a_flood_of_files_left_out_stays_a_few_counted_notes(tmp_path, quick):
    """mallory's zip holds 5,000 empty files: do summary.json and stderr keep one note per student and
    kind, with counts, the duplicate name first and the id made up next, and does the class page grow
    by a few KB at most?"""
    outs = {}
    for with_flood in (False, True):
        root = tmp_path / ("flood" if with_flood else "plain")
        cls = _flood_class(root, with_flood)
        outs[with_flood] = (root / "out", _batch(cls, root / "out", quick))
    out, run = outs[True]
    summary = json.loads((out / "summary.json").read_text())
    notes = summary["notes"]
    assert 3 <= len(notes) <= 8, (len(notes), notes[:10])
    details = summary["note_details"]
    assert [d["text"] for d in details] == notes
    assert details[0]["kind"] == "duplicate" and notes[0].startswith("bob: 2 submissions"), notes
    assert details[1]["kind"] == "renamed" and "class/___.py: no usable student id" in notes[1], notes
    assert all(d["important"] for d in details[:2]) and not details[-1]["important"]
    left_out = next(d for d in details if d["kind"] == "left_out" and d["student"] == "class/mallory.zip")
    assert left_out["count"] >= 3_000 and len(left_out["examples"]) <= 12, left_out
    assert len(json.dumps(notes)) < 3_000
    lines = [line for line in run.stderr.splitlines() if line.startswith("note: ")]
    assert [line[len("note: ") :] for line in lines] == notes
    page, plain_page = (outs[f][0] / "index.html" for f in (True, False))
    growth = page.stat().st_size - plain_page.stat().st_size
    assert growth < 4_000, growth
    html = page.read_text()
    assert html.index(notes[0]) < html.index('id="notes"') < html.index("class/mallory.zip: 3,000 files left out")
