"""One truth on every page (issue 40): a class graded for real, as an instructor meets it, gives a gradebook, a class
page, reports, Gradescope results and LMS exports that agree on every number.

The class: a Canvas download zipped on Linux by Info-ZIP `zip` (UTF-8 names without the UTF-8 flag), with a roster.
José (`garcíamárquezjosé`) hands in a correct engine with the lesson's recursive build_topo (the advisory deep_graph
does not pass); Sam's pow rule is off by one, and his instructor then sets pow to 3 and his total to 70; Kim hands in
the starter kit unchanged; Bob's file does not parse; Ada's engine is correct; Al, on the roster, hands in nothing.
Every artefact is read as a person or an LMS reads it: grades.csv, the Canvas import (by tests/lms_importers.py's
rules), the feedback zip's reports and the class page opened in Chromium, gradescope.json, the batch's own words
on a pseudo-terminal and on stdout.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import zipfile
from pathlib import Path

import pytest
from conftest import BAD, ZOO, csv_rows, quick_assignment
from lms_importers import CanvasCourse, canvas_comments, canvas_import

from grader.cli import main as cli
from grader.files import template_files

ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Micrograd (7701)\n    Points Possible,,,,,100.00\n"
    '"Lee, Ada",10001,,alee,A,\n"Smith, Sam",10002,,ssmith,A,\n"Kim, Kit",10003,,kkim,A,\n'
    '"Bob, Bad",10004,,bbob,A,\n"García Márquez, José",10005,,jgarcia,A,\n"Absent, Al",10009,,aabsent,A,\n'
)
IDS = {
    "leeada": 10001,
    "smithsam": 10002,
    "kitkim": 10003,
    "badbob": 10004,
    "garciamarquezjose": 10005,
    "absental": 10009,
}
COURSE = CanvasCourse(
    dict(zip(IDS.values(), IDS, strict=True)),
    {7701: ("Micrograd", 100.0)},
    {},
    {uid: {uid + 40000} for uid in IDS.values()},
)
FILES = {
    "leeada_10001_50001_micrograd_mine.py": (ZOO / "correct" / "kahn.py").read_text(),
    "smithsam_10002_50002_micrograd_mine.py": (ZOO / "buggy" / "pow_off_by_one.py").read_text(),
    "kitkim_10003_50003_micrograd_mine.py": template_files()["micrograd_mine.py"],
    "badbob_10004_50004_micrograd_mine.py": (BAD / "syntax_error.py").read_text(),
    "garcíamárquezjosé_10005_50005_micrograd_mine.py": (ZOO / "correct" / "labels_float_order.py").read_text(),
}
HANDED_IN = ["badbob", "garciamarquezjose", "kitkim", "leeada", "smithsam"]
GRADED_WORK = ["garciamarquezjose", "leeada", "smithsam"]


def _on_a_terminal(args: list[str]) -> tuple[int, str, str]:
    """A command run with its stderr on a pseudo-terminal (as a person at a terminal sees its progress): its exit
    code, its stdout (piped) and what the terminal showed."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # 120 columns, 24 rows
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 600)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the command ended: the terminal is closed
            break
        if not chunk:
            break
        shown += chunk
    out = proc.stdout.read().decode() if proc.stdout else ""
    os.close(leader)
    return proc.wait(timeout=60), out, shown.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    if shutil.which("zip") is None:
        pytest.skip("needs Info-ZIP's zip (.ci/run installs it)")
    root = tmp_path_factory.mktemp("agrees")
    download = root / "download"
    download.mkdir()
    for name, text in FILES.items():
        (download / name).write_text(text, encoding="utf-8")
    subprocess.run(["zip", "-q", str(root / "submissions.zip"), *sorted(FILES)], cwd=download, check=True)
    (root / "gradebook.csv").write_text(ROSTER, encoding="utf-8")
    assignment = quick_assignment(root / "quick")
    out = root / "graded"
    code, stdout, terminal = _on_a_terminal(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(root / "submissions.zip"),
            "--out",
            str(out),
            "--assignment",
            str(assignment),
            "--roster",
            str(root / "gradebook.csv"),
            "--jobs",
            "2",
        ]
    )
    assert code == 0, terminal[-3000:]
    common = ["--out", str(out)]
    assert cli(["override", *common, "smithsam", "pow", "--points", "3", "--reason", "one sign, not the rule"]) == 0
    assert cli(["override", *common, "smithsam", "--points", "70", "--reason", "oral exam"]) == 0
    exports = root / "exports"
    exports.mkdir()
    where = ["--from", str(out), "--assignment", str(assignment)]
    assert cli(["export", "feedback", *where, "--out", str(exports / "feedback.zip")]) == 0
    roster = ["--roster", str(root / "gradebook.csv")]
    assert cli(["export", "canvas", *where, *roster, "--out", str(exports / "canvas.csv")]) == 0
    return out, exports, stdout, terminal


def test_the_batch_says_what_was_handed_in_in_the_class_page_s_counts(graded_class):
    """Issue 40, items 9 and 10: the batch's summary line counts what was handed in and how much of it was graded
    (not 'graded 5 submissions' beside one that could not be), with nouns that agree with their counts; the
    progress bar on a terminal says how those graded so far stand, in words."""
    _, _, stdout, terminal = graded_class
    first = stdout.splitlines()[0]
    assert first.startswith(
        "5 submissions: 3 graded, 1 the starter kit unchanged, 1 could not be graded (0 unchanged since the last "
        "run); 1 student on the roster handed in nothing (0 points, status no_submission); gradebook: "
    ), first
    assert first.endswith("index.html") and "(6 rows)" in first
    assert "not_full_marks" not in terminal
    assert re.search(r"\d+ at full marks, \d+ below, 1 could not be graded", terminal), terminal[-2000:]


def test_one_person_keeps_one_id_from_an_info_zip_archive(graded_class):
    """Issue 40, item 2: garcíamárquezjosé, zipped by Info-ZIP on Linux, is garciamarquezjose in the gradebook, on
    the class page and in the feedback file's name, never garc_am_irquezjos."""
    out, exports, stdout, _ = graded_class
    assert sorted(r["student"] for r in csv_rows(out / "grades.csv")) == sorted(IDS)
    assert "garc_" not in (out / "index.html").read_text() and "garc_" not in stdout
    with zipfile.ZipFile(exports / "feedback.zip") as zf:
        names = zf.namelist()
    assert "garciamarquezjose_10005_50005_feedback.html" in names
    reached, ignored = canvas_comments((exports / "feedback.zip").read_bytes(), COURSE)
    assert ignored == [] and sorted(reached) == sorted(IDS[s] for s in HANDED_IN)


def _reports(exports: Path) -> dict[str, str]:
    with zipfile.ZipFile(exports / "feedback.zip") as zf:
        by_id = {int(re.findall(r"_(\d+)_\d+_feedback", n)[0]): zf.read(n).decode() for n in zf.namelist()}
    return {student: by_id[uid] for student, uid in IDS.items() if uid in by_id}


def test_every_page_agrees_on_every_number(graded_class, open_page):
    """Issue 40, 'Done when': for each student, the gradebook's score is the class page's, their report's title and
    headline (opened in Chromium), their Gradescope results' and the Canvas import's; Sam's report says the grader
    gave its raw score and shows pow adjusted; José's advisory deep_graph costs nothing; Al, who handed in nothing,
    has a row and no report."""
    out, exports, _, _ = graded_class
    grades = {r["student"]: r for r in csv_rows(out / "grades.csv")}
    assert grades["smithsam"]["score"] == "70.0" and grades["smithsam"]["pow"] == "3.0"
    assert grades["garciamarquezjose"]["score"] == grades["garciamarquezjose"]["raw_score"]
    canvas = canvas_import((exports / "canvas.csv").read_text(), COURSE).changes
    page = open_page((out / "index.html").read_text(), "agrees-class")
    reports = _reports(exports)
    assert sorted(reports) == HANDED_IN
    for student, row in grades.items():
        score = float(row["score"])
        shown = f"{score:g}"
        line = page.locator("#student-table tbody tr", has_text=student).inner_text()
        assert f"{shown} / 100" in line, (student, line)
        if student == "absental":
            assert (10009, 7701) not in canvas and row["status"] == "no_submission"
            continue
        assert canvas[(IDS[student], 7701)] == f"{score:.2f}", student
        report = open_page(reports[student], f"agrees-{student}")
        assert report.title().startswith(f"{student}: {shown} / 100 ("), (student, report.title())
        assert report.locator("#score").inner_text() == f"{shown} / 100 points", student
        assert json.loads((out / "students" / student / "gradescope.json").read_text())["score"] == score, student
    gave = f"{round(float(grades['smithsam']['raw_score']), 2):g}"  # the grader's own score, as every page writes it
    sam = open_page(reports["smithsam"], "agrees-sam")
    assert sam.locator("#score-from").inner_text().startswith(f"The grader gave {gave}; your instructor adjusted pow")
    assert "3 / 5, adjusted by your instructor (the grader gave 0)" in sam.locator("#row-pow").inner_text()
    assert (
        f"adjusted by an override (the grader gave {gave})"
        in page.locator("#student-table tr", has_text="smithsam").inner_text()
    )


def test_the_class_page_counts_graded_work_and_shows_the_kit_once(graded_class, open_page):
    """Issue 40, item 9: the class page links only to reports that exist (Al, with no submission, has none); the
    starter kit handed in unchanged is shown once, flagged, and counted in no misconception, histogram or pass
    rate; the histogram holds the graded work only; no check on the students' own tests is listed as failed
    with no recognised misconception; 'similar work' compares what was handed in."""
    out, _, _, _ = graded_class
    page = open_page((out / "index.html").read_text(), "agrees-counts")
    for href in page.locator("a[href]").evaluate_all("links => links.map(a => a.getAttribute('href'))"):
        assert href.startswith("#") or (out / href).is_file(), href
    assert page.locator("#student-table tr", has_text="absental").locator("a").count() == 0
    kim = page.locator("#student-table tr", has_text="kitkim").inner_text()
    assert "starter kit unchanged" in kim and "graded" not in kim
    assert page.locator("#misconceptions", has_text="kitkim").count() == 0
    counts = page.locator("#counts").inner_text()
    assert counts == (
        "6 students · 3 graded · 1 handed in the starter kit unchanged · 1 could not be graded · 1 handed in nothing"
    )
    bars = [int(t.split(": ")[1]) for t in page.locator("#histogram rect.bar title").all_text_contents()]
    assert sum(bars) == len(GRADED_WORK)
    summary = json.loads((out / "summary.json").read_text())
    assert sum(summary["histogram"]) == len(GRADED_WORK)
    assert all(c["total"] == len(GRADED_WORK) for c in summary["checks"])
    assert not {u["check"] for u in summary["unexplained"]} & {"student_tests", "wheat", "sabotage"}
    assert not [u for u in summary["unexplained"] if "kitkim" in u["students"]]
    assert summary["similarity"]["compared"] == len(HANDED_IN)
    if page.locator("#similar").count():
        assert f"{len(HANDED_IN)} submissions compared" in page.locator("#similar").inner_text()
