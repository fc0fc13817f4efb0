"""Class insight (issue 22): on a generated class where students share misconceptions and some copy a
classmate's engine (renamed, reordered, reformatted), does the class page count each misconception
exactly and list every copied pair, and no honest one? Does the reteach notebook run? Does an earlier
term's folder (--previous) find a copy of last year's work?"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys

import nbclient
import nbformat
import playwright.sync_api as playwright
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from similargen import HONEST, copy_of, make_class, styles

from grader.insight.similarity import STRUCTURE, Work, similar

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ENGINE_CHECKS = (
    (ROOT / "assignments" / "micrograd" / "assignment.toml")
    .read_text()
    .replace("max_examples = 100", "max_examples = 15")
)
ENGINE_CHECKS = "\n".join(
    line for line in ENGINE_CHECKS.splitlines() if not line.startswith(("student_tests", "wheat ", "sabotage "))
)


def batch(inputs, out, assignment, *more):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(inputs),
            "--out",
            str(out),
            "--assignment",
            str(assignment),
            "--jobs",
            "2",
            *map(str, more),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The generated class, graded by a real batch on the engine checks."""
    root = tmp_path_factory.mktemp("insight")
    (root / "assignment").mkdir()
    (root / "assignment" / "assignment.toml").write_text(ENGINE_CHECKS)
    planted = make_class(root / "class")
    return planted, batch(root / "class", root / "out", root / "assignment"), root


def test_summary_counts_each_misconception_and_lists_only_the_copies(graded):
    planted, out, _ = graded
    summary = json.loads((out / "summary.json").read_text())
    counted = {m["id"]: m["students"] for m in summary["misconceptions"]}
    expected = {("assign_in" if c.startswith("assign_in_") else c): sorted(s) for c, s in planted.causes.items()}
    assert counted == expected
    assert [m["count"] for m in summary["misconceptions"]] == sorted((len(s) for s in expected.values()), reverse=True)
    assert summary["misconceptions"][0]["headline"].startswith("3 students: `=` for `+=`")
    assert "(3 in __mul__)" in summary["misconceptions"][0]["headline"]
    assert all(m["counterexample"]["code"] for m in summary["misconceptions"])
    assert [a["check"] for a in summary["advisory"]] == ["deep_graph"]  # apart, never in the list
    pairs = {frozenset((p["a"], p["b"])) for p in summary["similarity"]["pairs"]}
    assert pairs == {frozenset(pair) for pair in planted.copies}
    buggy_copies = [p for p in summary["similarity"]["pairs"] if "listiterative" not in (p["a"], p["b"])]
    assert all(p["shared_wrong_count"] > 0 and p["behaviour"] > 0.5 for p in buggy_copies)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_class_page_shows_misconceptions_and_pairs_side_by_side(graded):
    planted, out, _ = graded
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto((out / "index.html").as_uri())
        items = page.locator("#misconceptions li.misconception")
        shown = {
            items.nth(i).get_attribute("data-cause"): int(items.nth(i).get_attribute("data-count"))
            for i in range(items.count())
        }
        assert shown == {("assign_in" if c.startswith("assign_in_") else c): len(s) for c, s in planted.causes.items()}
        assert page.locator("section").first.get_attribute("id") == "misconceptions"
        assert "worth a look" in page.locator("#similar h2").inner_text()
        assert "not a verdict" in page.locator("#similar").inner_text()
        rows = page.locator("#pairs tr.pair")
        assert {
            frozenset((rows.nth(i).get_attribute("data-a"), rows.nth(i).get_attribute("data-b")))
            for i in range(rows.count())
        } == {frozenset(pair) for pair in planted.copies}
        view = page.locator("details.view").first
        view.locator("summary").click()
        assert view.locator(".side-by-side > div").count() == 2
        assert view.locator(".side-by-side > div").nth(0).locator("mark").count() > 10
        assert view.locator(".side-by-side > div").nth(1).locator("mark").count() > 10
        browser.close()


def test_reteach_notebook_runs_and_names_no_student(graded, tmp_path):
    planted, out, _ = graded
    path = tmp_path / "reteach.ipynb"
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", "export", "reteach", "--from", str(out), "--out", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    text = path.read_text()
    assert not [s for students in planted.causes.values() for s in students if s in text]
    nb = nbformat.read(str(path), as_version=4)
    assert sum(c.cell_type == "markdown" and c.source.startswith("## ") for c in nb.cells) == 5
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    sections = [(nb.cells[i - 1].source, c) for i, c in enumerate(nb.cells) if c.cell_type == "code" and i > 1]
    assert len(sections) == 5
    compared = 0
    for said, cell in sections:  # what the table says the lesson's engine gives is what the cell prints
        lessons = "| | the lesson's engine | a student's engine |" in said
        assert lessons or "| | central differences of a student's forward | a student's engine |" in said, said
        claimed = dict(re.findall(r"^\| `([\w.]+)` \| ([^|]+) \|", said, flags=re.M))  # values, not an order
        printed = "".join(o.get("text", "") for o in cell.outputs)
        shown = dict(re.findall(r"^(\S+) = (\S+)$", printed, flags=re.M))
        assert claimed.keys() == shown.keys(), (said, printed)
        compared += len(shown)
        for name, value in shown.items():
            if lessons:
                assert f"{float(value):.6g}" == claimed[name].strip(), (name, said, printed)
            else:  # a gradcheck case: slopes of a student's right forward, the lesson's numbers within its rtol
                assert math.isclose(float(value), float(claimed[name]), rel_tol=1e-4, abs_tol=1e-6), (name, said)
    assert compared >= 5, compared  # every section's case prints its numbers


def test_the_reteach_notebook_opens_on_its_words_not_200_lines_of_engine(tmp_path):
    """Issue 40, item 10: the reteach notebook opens on what the class got wrong. Its first cell is a few lines of
    words (counts in agreement: `1 submission`), and the lesson's engine, 200 lines, is the first code cell,
    folded (Jupyter's `source_hidden`), which the words say; the notebook still runs top to bottom."""
    from grader.classfiles import ClassSummary, SummaryStudent

    out = tmp_path / "batch"
    out.mkdir()
    ada = SummaryStudent("ada", 100.0, "graded")
    summary = ClassSummary("micrograd", "micrograd", 100.0, (ada,), misconceptions=())
    (out / "summary.json").write_text(summary.to_json())
    path = tmp_path / "reteach.ipynb"
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", "export", "reteach", "--from", str(out), "--out", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    nb = nbformat.read(str(path), as_version=4)
    first, engine = nb.cells[0], nb.cells[1]
    assert first.cell_type == "markdown" and len(first.source.splitlines()) <= 5, first.source
    assert "1 submission graded; 0 misconceptions recognised" in first.source
    assert engine.cell_type == "code" and len(engine.source.splitlines()) > 100
    assert engine.metadata["jupyter"]["source_hidden"] is True
    assert f"({len(engine.source.splitlines()) - 1} lines, folded" in first.source
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()


def test_export_reteach_needs_a_graded_folder(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "export",
            "reteach",
            "--from",
            str(tmp_path),
            "--out",
            str(tmp_path / "r.ipynb"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "summary.json" in run.stderr


def test_previous_term_finds_a_copy_of_last_years_work(graded):
    """A copy of last year's work is listed with its original; last year's own pairs are not listed again."""
    _, out, root = graded
    (root / "now").mkdir()
    (root / "now" / "newcomer.py").write_text(copy_of((root / "class" / "kahn.py").read_text(), 7))
    later = batch(root / "now", root / "later", root / "assignment", "--previous", out)
    pairs = json.loads((later / "summary.json").read_text())["similarity"]["pairs"]
    assert [(p["a"], p["b"], p["b_previous"]) for p in pairs] == [("newcomer", "kahn", True)]
    assert "kahn (previous term)" in (later / "index.html").read_text()


def test_structure_ignores_names_order_layout_and_the_base_file():
    """Every copy of every style scores 1; no two independently written styles reach the threshold; code that
    is only the lesson's own (the base file) is never a match."""
    engines = styles()
    works = [Work(name, source) for name, source in engines.items()]
    works += [Work(f"copy-{name}", copy_of(source, i)) for i, (name, source) in enumerate(engines.items())]
    pairs = similar(works)["pairs"]
    assert {(p["a"], p["b"]) for p in pairs} == {(name, f"copy-{name}") for name in engines}
    assert all(p["structure"] == 1.0 for p in pairs)
    lesson = engines[HONEST[0]]
    based = similar([Work("a", lesson), Work("b", copy_of(lesson, 1))], (lesson,))["pairs"]
    assert based == [] and STRUCTURE > 0.5


def test_a_shared_wrong_answer_weighs_more_than_a_shared_right_one():
    source = styles()[HONEST[0]]
    odd = json.dumps({"code": "a = Value(1.5)\nb = a * a\nb.backward()", "got": {"a.grad": 1.5}})
    others = [
        Work(
            f"o{i}",
            "x = 1\n",
            right=frozenset({"add", "mul"}),
            wrong=frozenset({json.dumps({"code": str(i), "got": {}})}),
        )
        for i in range(8)
    ]
    right = similar(
        [
            Work("a", source, right=frozenset({"add", "mul"})),
            Work("b", copy_of(source, 1), right=frozenset({"add", "mul"})),
            *others,
        ]
    )["pairs"]
    wrong = similar(
        [Work("a", source, wrong=frozenset({odd})), Work("b", copy_of(source, 1), wrong=frozenset({odd})), *others]
    )["pairs"]
    assert wrong[0]["behaviour"] > 0.5 > right[0]["behaviour"]


def test_hostile_code_is_not_compared_rather_than_crash_or_stall():
    """A huge file, one nested past the parser's depth, one that does not parse: none stops the pass."""
    found = similar(
        [
            Work("huge", "x = 1\n" * 50_000),
            Work("deep", "y = " + "(" * 5000 + "1" + ")" * 5000 + "\n"),
            Work("broken", "def (:\n"),
            Work("escape", 'z = "\\d"\n'),
        ]
    )
    assert found["pairs"] == [] and found["not_compared"] == ["huge"]


def test_previous_without_a_batchs_work_file_stops_before_grading(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "ada.py").write_text(styles()["kahn"])
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(tmp_path / "in"),
            "--out",
            str(tmp_path / "out"),
            "--previous",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "work.json" in run.stderr and not (tmp_path / "out").exists()
