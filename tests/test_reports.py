"""Do the reports lead with what to fix? A real batch over a class with one bug each (and one student whose
tests catch little), then every output read as a person reads it: the terminal's table and cards, each
student's HTML report, result.json's feedback, Gradescope's output, the class page, the feedback zip and the
reteach notebook.

- every check below full points has a card, failures first (a partial student_tests says why, with the
  number of sabotaged engines it was judged on); an advisory check (no points) comes last;
- no cause sentence is cut ('...'), and no line of a card ends cut;
- no number a person reads has more than six significant digits (code to paste keeps its exact numbers, and
  so does the student's own code);
- no raw backtick in HTML, no unescaped `__name__` (or * and _) in the reteach notebook's markdown;
- the feedback zip links only within each page;
- a one-bug report prints on 4 pages or fewer (Chromium's print to PDF, Letter and A4).
"""

from __future__ import annotations

import html as entities
import json
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile

import nbformat
import pytest
from conftest import HERE, ZOO, quick_assignment

from grader import catalog
from grader.causes import CAUSES, Cause, several
from grader.feedback import to_fix
from grader.render.terminal import render
from grader.result import Result

STUDENTS = {
    "tanh": ("tanh_grad_from_input.py", "good.py"),
    "half": ("add_half.py", "weak.py"),
    "assign": ("assign_not_accumulate.py", "good.py"),
    "seed": ("missing_seed.py", "good.py"),
    "numgrad": ("numgrad_forward_difference.py", None),
}
"""Each student: the engine with one bug, and the tests handed in with it (half's catch little)."""


def grader(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def one_bug(tmp_path_factory):
    root = tmp_path_factory.mktemp("onebug")
    for student, (engine, tests) in STUDENTS.items():
        folder = root / "in" / student
        folder.mkdir(parents=True)
        shutil.copy(ZOO / "buggy" / engine, folder / "micrograd_mine.py")
        if tests:
            shutil.copy(HERE / "fixtures" / "suites" / tests, folder / "test_micrograd.py")
    task = quick_assignment(root / "quick")
    out = root / "out"
    run = grader("batch", str(root / "in"), "--out", str(out), "--assignment", str(task), "--jobs", "2")
    assert run.returncode == 0, run.stderr
    for target, name in (("feedback", "feedback.zip"), ("reteach", "reteach.ipynb")):
        done = grader("export", target, "--from", str(out), "--out", str(root / name), "--assignment", str(task))
        assert done.returncode == 0, done.stderr
    return root, catalog.load(task)


def significant(text: str) -> list[str]:
    """Decimal numbers written with more than six significant digits."""
    found = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[+-]?\d+)?", text)
    return [n for n in found if len(n.lstrip("-").split("e")[0].replace(".", "").lstrip("0")) > 6]


def cut(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.rstrip().endswith(("...", "…"))]


def page_text(page: str) -> str:
    """A report's words as read: tags gone, entities read, the code to paste and the student's own code left
    out (they keep their numbers)."""
    page = re.sub(r'<pre id="code-.*?</pre>', "", page, flags=re.S)
    page = re.sub(r'<div class="source">.*?</div>\s*(?=</section>)', "", page, flags=re.S)
    page = re.sub(r'<div class="case">.*?</div>', "", page, flags=re.S)
    page = re.sub(r"<(script|style)>.*?</\1>", "", page, flags=re.S)
    return entities.unescape(re.sub(r"<[^>]+>", " ", page))


def named(check) -> Cause | None:
    """The cause as a check names it: one method's misconception, or, when the check found it in several
    methods (its artifacts' causes), the misconception named once with every method (causes.several)."""
    cause = CAUSES.get(check.cause) if check.cause else None
    found = check.artifacts.get("causes")
    if cause is not None and isinstance(found, list) and len(found) > 1 and found[0] == check.cause:
        return several(tuple(found))
    return cause


def words(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def test_every_report_and_card_leads_with_what_to_fix(one_bug):
    root, task = one_bug
    out = root / "out"
    seen_partial = False
    for student in STUDENTS:
        folder = out / "students" / student
        result = Result.from_dict(json.loads((folder / "result.json").read_text()))
        codes = [c.counterexample.code for c in result.checks if c.counterexample]
        cards = to_fix(result)
        below = {c.id for c in result.checks if c.score < c.max_score or c.status in ("failed", "error")}
        assert {c.id for c in cards} == below, student  # every check below full points, none else
        failing = [c.status in ("failed", "error") and c.max_score > 0 for c in cards]  # an advisory one: last
        assert failing == sorted(failing, reverse=True), (student, [c.id for c in cards])
        assert [c.max_score == 0 for c in cards] == sorted(c.max_score == 0 for c in cards), student

        terminal = render(result, task)
        headings = [line.split(":")[0][4:] for line in terminal.splitlines() if line.startswith("--- ")]
        assert headings == [c.id for c in cards], (student, headings)
        page = (folder / "report.html").read_text()
        sections = re.findall(r'<section class="card [^"]*" id="check-([a-z_]+)"', page)
        assert sections == [c.id for c in cards], (student, sections)
        assert page.index('id="check-') < page.index('id="rubric"'), student  # the cards lead, the table follows

        gradescope = "\n".join(t["output"] for t in json.loads((folder / "gradescope.json").read_text())["tests"])
        outputs = {
            "terminal": terminal,
            "html": page_text(page),
            "json": "\n".join(c.feedback for c in result.checks),
            "gradescope": gradescope,
        }
        for code in codes:
            outputs["terminal"] = outputs["terminal"].replace(textwrap.indent(code, "    "), "")
            outputs["gradescope"] = outputs["gradescope"].replace(code, "")
        for where, text in outputs.items():
            assert not significant(text), (student, where, significant(text))
            assert not cut(text), (student, where, cut(text))
            read = words if where == "html" else str  # HTML shows a `code` span as a code element
            for c in result.checks:  # each cause said whole, where the card says it
                cause = named(c)
                if cause is not None and "Likely cause" in c.feedback:
                    said = f"Likely cause: {cause.sentence}."
                elif cause is not None:
                    said = f"Same cause as {c.feedback.split('Same cause as ')[1].split(':')[0]}: {cause.words}."
                else:
                    continue
                assert read(said) in read(text), (student, where, c.id, said)
        assert "`" not in outputs["html"], (student, [line for line in outputs["html"].splitlines() if "`" in line])

        if student == "assign":  # `=` in every rule's backward: the misconception named once, with each method
            named_all = [c.feedback for c in result.checks if "the backward of __add__, __mul__" in c.feedback]
            assert named_all, [c.feedback for c in result.checks]

        tests = next(c for c in result.checks if c.id == "student_tests")
        if tests.status == "passed" and tests.score < tests.max_score:
            seen_partial = True
            drawn = next(c for c in result.checks if c.id == "sabotage").artifacts
            total = len(drawn["missed"]) + len(drawn["caught"])
            assert f"of the {total} sabotaged engines, so they earn" in tests.feedback, tests
            assert 'id="check-student_tests"' in page and "--- student_tests" in terminal
    assert seen_partial, "the weak suite's student_tests should be below full points"

    index = page_text((out / "index.html").read_text())
    assert not significant(index) and not cut(index) and "`" not in index, (significant(index), cut(index))
    assert "<code>=</code>" in (out / "index.html").read_text()  # the cause's `=`: a code element, no backticks


def test_the_feedback_zip_links_only_within_each_page(one_bug):
    """A student given their report alone cannot follow a link to the class page (nor may see it)."""
    root, _ = one_bug
    with zipfile.ZipFile(root / "feedback.zip") as zf:
        pages = {name: zf.read(name).decode() for name in zf.namelist()}
    assert len(pages) == len(STUDENTS)
    for name, page in pages.items():
        ids = set(re.findall(r'\bid="([^"]+)"', page))
        links = re.findall(r'\bhref="([^"]*)"', page)
        assert links and all(link.startswith("#") and link[1:] in ids for link in links), (name, links)
        assert "index.html" not in page and "Class summary" not in page, name


def test_the_reteach_notebook_shows_names_as_written(one_bug):
    """`__add__` in a cause's words, `x**k` and `0.5 * out.grad`: markdown would make them bold or italic
    ('add'); each is a code span or escaped, outside the notebook's own bold."""
    root, _ = one_bug
    notebook = nbformat.read(root / "reteach.ipynb", as_version=4)
    said = [
        line
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith(("## ", "The rule, as"))
    ]
    assert any("`__add__`" in line for line in said), said
    for line in said:
        prose = "".join(line.split("`")[::2])  # outside code spans
        assert not re.search(r"(?<!\\)[*_]", prose), line


def test_a_one_bug_report_prints_on_four_pages(one_bug):
    """Chromium's print to PDF of the tanh student's report (four failing checks, one cause, its training curve):
    4 pages or fewer, on Letter and on A4, with the print dialog's margins."""
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed")
    root, _ = one_bug
    report = root / "out" / "students" / "tanh" / "report.html"
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        margins = dict.fromkeys(("top", "bottom", "left", "right"), "0.4in")  # the print dialog's default
        pages = {
            size: len(re.findall(rb"/Type\s*/Page[^s]", page.pdf(format=size, margin=margins)))
            for size in ("Letter", "A4")
        }
        browser.close()
    assert all(1 <= n <= 4 for n in pages.values()), pages
