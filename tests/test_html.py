"""Does the HTML report show a person what they need, in a real headless browser?

Pages are rendered from recorded results of real gradings and opened in Debian's
Chromium through Playwright; each test asserts what is visible, that the page logs no
console error and makes no network request. A screenshot of each page is kept in
reports/test-artifacts/.
"""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest
from conftest import ARTIFACTS, BAD, CHROMIUM, HERE, ROOT, ZOO

from grader.grading import grade
from grader.render import html
from grader.result import Result

pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


@pytest.fixture(scope="module")
def tanh_result(tmp_path_factory, micrograd):
    """A recorded result: an engine with tanh's derivative taken from its input, and a weak test suite."""
    folder = tmp_path_factory.mktemp("tanh")
    shutil.copy(ZOO / "buggy" / "tanh_grad_from_input.py", folder / "micrograd_mine.py")
    shutil.copy(HERE / "fixtures" / "suites" / "weak.py", folder / "test_micrograd.py")
    result = grade(folder / "micrograd_mine.py", micrograd)
    return Result.from_dict(json.loads(result.to_json())), (folder / "micrograd_mine.py").read_text()  # as read back


def test_failed_check_shows_counterexample_graph_and_source(open_page, tanh_result):
    """Does a failing check show its paste-able counterexample, the graph with the wrong gradient marked,
    and the student's own tanh?"""
    result, source = tanh_result
    page = open_page(html.student_report(result, source, "micrograd"), "student-tanh")
    card = page.locator("#check-tanh")
    assert card.is_visible()
    assert "FAIL" in card.locator("h2").inner_text()
    code = page.locator("#code-tanh").inner_text()
    assert "tanh()" in code and "backward()" in code
    graph = page.locator("#graph-tanh svg")
    assert graph.is_visible()
    assert "expected" in graph.locator("g.wrong").first.text_content()
    assert "def tanh" in card.locator(".source").inner_text()
    page.locator("#row-tanh a").click()
    assert page.evaluate("location.hash") == "#check-tanh"


def test_training_curve_is_drawn(open_page, tanh_result):
    """Is the training curve drawn with both lines labelled, and the diverging step named?"""
    result, source = tanh_result
    page = open_page(html.student_report(result, source, "micrograd"), "student-curve")
    curve = page.locator("#training-curve svg")
    assert curve.is_visible()
    assert curve.locator("polyline.student").count() == 1 and curve.locator("polyline.reference").count() == 1
    text = curve.text_content()
    assert "your engine" in text and "reference engine" in text and "first differs at step" in text


def test_sabotages_missed_are_listed(open_page, tanh_result):
    """Does the sabotage check list the sabotages the weak suite missed and the one it caught?"""
    result, source = tanh_result
    page = open_page(html.student_report(result, source, "micrograd"), "student-sabotage")
    missed = page.locator("#check-sabotage ul.missed").inner_text()
    listed = next(c for c in result.checks if c.id == "sabotage").artifacts["missed"]
    assert "add_half" in listed and all(op_id in missed for op_id in listed)
    assert "sub_as_add" in page.locator("#check-sabotage ul.caught").inner_text()


def test_status_is_written_not_only_coloured(open_page, tanh_result):
    """Can a person who does not see colour still read every check's status?"""
    result, source = tanh_result
    page = open_page(html.student_report(result, source, "micrograd"), "student-status")
    rows = page.locator("#rubric tbody tr")
    assert rows.count() == len(result.checks)
    for i in range(rows.count()):
        assert rows.nth(i).locator(".status").inner_text().strip() in ("✓ PASS", "✗ FAIL", "⚠ ERROR", "– SKIP")


CODE_BOXES = "pre.code, .source pre"
"""Code keeps its lines (an indented line wrapped is another program to a reader): on a phone its box scrolls."""


def test_phone_width_has_no_sideways_scroll(open_page, tanh_result):
    """Is the report readable on a phone, without the page scrolling sideways (code's own box may)?"""
    result, source = tanh_result
    page = open_page(html.student_report(result, source, "micrograd"), "student-phone", width=390)
    wide = page.evaluate(
        """[...document.querySelectorAll('body *')].filter(e => !e.closest('figure, .source, .scroll, pre.code')
        && e.getBoundingClientRect().right > 392).map(e => e.tagName + '.' + e.className)"""
    )
    assert wide == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1


def test_submission_error_shows_the_reason(open_page, micrograd):
    """Does a submission that could not be graded show why, with the line of the syntax error?"""
    result = grade(BAD / "syntax_error.py", micrograd)
    page = open_page(html.student_report(result, None, "micrograd"), "student-error")
    text = page.locator("#submission-error").inner_text()
    assert "could not be graded" in text and "line 6" in text


def test_hidden_checks_show_no_details(open_page, tanh_result):
    """Does a hidden check show its status only, never its counterexample's code?"""
    result, source = tanh_result
    result = dataclasses.replace(
        result,
        checks=tuple(dataclasses.replace(c, visibility="hidden") if c.id == "tanh" else c for c in result.checks),
    )
    page = open_page(html.student_report(result, source, "micrograd"), "student-hidden")
    assert page.locator("#check-tanh").count() == 0
    assert "Hidden check" in page.locator("#row-tanh").inner_text()
    tanh_code = next(c for c in result.checks if c.id == "tanh").counterexample.code
    assert tanh_code not in page.content()


def test_student_text_is_escaped(open_page, micrograd, tmp_path):
    """Is text from the student's code (an exception message with HTML in it) shown, not run?"""
    source = (ZOO / "correct" / "list_iterative.py").read_text() + (
        "\n\ndef _boom(self):\n    raise ValueError('<img src=x onerror=alert(1)><script>alert(2)</script>')\n"
        "Value.tanh = _boom\n"
    )
    (tmp_path / "micrograd_mine.py").write_text(source)
    result = grade(tmp_path / "micrograd_mine.py", dataclasses.replace(micrograd))
    page = open_page(html.student_report(result, source, "micrograd"), "student-escaped")
    assert "<script>alert(2)</script>" in page.locator("#check-tanh .feedback").inner_text()
    assert page.locator("#check-tanh img").count() == 0


@pytest.fixture(scope="module")
def class_out(tmp_path_factory):
    """A real batch over five students: correct, buggy (handed in late, as Canvas names it), a syntax error, a
    copy, one importing torch."""
    import subprocess
    import sys

    root = tmp_path_factory.mktemp("classreport")
    inputs = root / "in"
    inputs.mkdir()
    correct = (ZOO / "correct" / "kahn.py").read_text()
    (inputs / "ada.py").write_text(correct)
    (inputs / "ben.py").write_text(correct)  # identical to ada's
    (inputs / "cy_late_1234_5678_micrograd_mine.py").write_text(
        (ZOO / "buggy" / "assign_not_accumulate.py").read_text()
    )
    (inputs / "dee.py").write_text((BAD / "syntax_error.py").read_text())
    (inputs / "eve.py").write_text("import torch  # noqa\n" + (ZOO / "buggy" / "relu_negative_grad.py").read_text())
    quick = root / "quick"
    quick.mkdir()
    quick.joinpath("assignment.toml").write_text(
        (ROOT / "assignments" / "micrograd" / "assignment.toml")
        .read_text()
        .replace("max_examples = 100", "max_examples = 20")
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(inputs),
            "--out",
            str(root / "out"),
            "--assignment",
            str(quick),
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return root / "out"


def test_class_summary_shows_histogram_checks_errors_and_flags(open_page, class_out):
    """Does the class summary show the histogram, the checks most failed first, the errors and the flags?"""
    page = open_page((class_out / "index.html").read_text(), "class-summary")
    assert page.locator("#histogram svg rect.bar").count() == 10
    assert "5 students" in page.locator("#counts").inner_text()
    first_check = page.locator("#checks tbody tr").first.inner_text()
    assert "0 / 4" in first_check or "1 / 4" in first_check
    assert "dee" in page.locator("#errors").inner_text() and "syntax error" in page.locator("#errors").inner_text()
    flags = page.locator("#flags").inner_text()
    assert "Identical submissions: ada, ben" in flags and "eve: imports torch" in flags


def test_class_summary_sorts_and_links_to_reports(browser, class_out):
    """Can the instructor sort students by score and open a student's report from its link?"""
    page = browser.new_page()
    page.goto((class_out / "index.html").as_uri())
    page.locator("#student-table th button", has_text="Score").click()
    scores = [
        float(v)
        for v in page.locator("#student-table tbody td.num").evaluate_all("cells => cells.map(c => c.dataset.value)")
    ]
    assert scores == sorted(scores)
    page.locator("#student-table a", has_text="cy").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/cy/report.html")
    assert page.locator("#check-accumulate").is_visible()
    page.screenshot(path=ARTIFACTS / "class-linked-report.png", full_page=True)
    page.close()


def test_a_value_used_twice_shows_both_edges_and_the_method_at_fault(open_page, micrograd, tmp_path):
    """For `=` in __add__, does gradcheck's picture of a + a draw two edges from a into +, and does the
    code most likely at fault show __add__ (the method the cause names), not backward?"""
    engine = tmp_path / "micrograd_mine.py"
    engine.write_text((ZOO / "buggy" / "assign_not_accumulate.py").read_text())
    result = grade(engine, micrograd)
    source = engine.read_text()
    page = open_page(html.student_report(result, source, "micrograd"), "student-a-plus-a")
    accumulate = page.locator("#check-accumulate")
    assert accumulate.locator(".feedback").inner_text().count("use +=") == 1
    edges = accumulate.locator("svg path.edge[data-to='b'][data-from='a']")
    assert edges.count() == 2
    first, second = edges.nth(0).get_attribute("d"), edges.nth(1).get_attribute("d")
    assert first != second  # bent apart, both visible
    gradcheck = page.locator("#check-gradcheck")
    assert gradcheck.is_visible() and "Same cause as accumulate" in gradcheck.locator(".feedback").inner_text()
    assert gradcheck.locator(".source").count() == 0  # the same code is shown once, on the first card
    gradcheck.locator(".source-see a").click()
    assert page.evaluate("location.hash") == "#check-accumulate"
    shown = accumulate.locator(".source").inner_text()
    assert "def __add__" in shown and "def backward" not in shown


def test_a_stand_in_package_is_noted(open_page, micrograd, tmp_path):
    """Does a file importing a package the sandbox lacks get graded, with a visible note saying so?"""
    engine = tmp_path / "micrograd_mine.py"
    engine.write_text("import graphviz\nfrom graphviz import Digraph\n" + (ZOO / "correct" / "kahn.py").read_text())
    result = grade(engine, micrograd.without(("student_tests", "wheat", "sabotage")))
    assert result.status == "graded" and result.score == result.max_score
    page = open_page(html.student_report(result, engine.read_text(), "micrograd"), "student-stand-in")
    note = page.locator("#note-1")
    assert note.is_visible() and "graphviz" in note.inner_text() and "stand-in" in note.inner_text()


def test_phone_width_cuts_nothing_off(open_page, tanh_result, class_out):
    """At a phone's width (390 px), does every element of the student's report and the class page fit, the
    rubric's summary column, tables and pictures included, with no box needing a sideways scroll but code's:
    a line of code too long for the screen is not wrapped (its indentation would lie) and scrolls sideways in
    its own box, never the page?"""
    result, source = tanh_result
    pages = {
        "student-phone-all": html.student_report(result, source, "micrograd"),
        "class-phone": (class_out / "index.html").read_text(),
    }
    for name, text in pages.items():
        page = open_page(text, name, width=390)
        wide = page.evaluate(
            """(boxes) => [...document.querySelectorAll('body *')].filter(e => {
            const r = e.getBoundingClientRect();
            return r.width > 0 && r.left >= -1 && r.right > 392 && !e.closest(boxes);
        }).map(e => e.tagName + '#' + e.id + '.' + e.className)""",
            CODE_BOXES,
        )
        assert wide == [], (name, wide[:10])
        scrolled = page.evaluate(
            """(boxes) => [...document.querySelectorAll('body *')].filter(e =>
            e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible' && !e.matches(boxes)
        ).map(e => e.tagName + '#' + e.id + '.' + e.className)""",
            CODE_BOXES,
        )
        assert scrolled == [], (name, scrolled[:10])
        code = page.evaluate(
            """(boxes) => [...document.querySelectorAll(boxes)].map(e => [getComputedStyle(e).whiteSpace,
            getComputedStyle(e).overflowX, e.scrollWidth > e.clientWidth + 1])""",
            CODE_BOXES,
        )
        assert all(space == "pre" and overflow == "auto" for space, overflow, _ in code), (name, code)
        if name.startswith("student"):  # the training loop's start line is wider than a phone: it scrolls
            assert any(scrolls for _, _, scrolls in code), (name, code)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1
    summary = page_summaries(open_page(pages["student-phone-all"], "student-summaries"))
    assert summary and not [s for s in summary if s.rstrip().endswith(":")], summary


def page_summaries(page) -> list[str]:
    return page.locator("#rubric tbody td:last-child").evaluate_all("cells => cells.map(c => c.innerText)")


def test_a_batch_report_names_the_student_marks_late_and_links_back(browser, class_out):
    """Is a student's report in a batch titled and headed by the student's id, not the name the LMS gave the
    file, marked late when the LMS says so, and linked back to the class page?"""
    page = browser.new_page()
    page.goto((class_out / "students" / "cy" / "report.html").as_uri())
    assert page.title().startswith("cy:"), page.title()
    assert page.locator("#student").inner_text().startswith("cy")
    assert page.locator("#late-badge").is_visible() and page.locator("#late-badge").inner_text() == "late"
    assert "cy_late_1234_5678_micrograd_mine.py" in page.locator("#submission").inner_text()
    page.locator("#class-link").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/out/index.html") and "5 students" in page.locator("#counts").inner_text()
    page.goto((class_out / "students" / "ada" / "report.html").as_uri())
    assert page.locator("#late-badge").count() == 0 and page.title().startswith("ada:")
    page.close()


def test_a_notebooks_cell_errors_are_in_its_report(open_page, micrograd, tmp_path):
    """A notebook with a cell that raises: does the HTML report say which cell and what it raised, as the
    terminal and result.json do (the first 12 cells that did not run cleanly, then how many more)?"""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell((ZOO / "correct" / "kahn.py").read_text()),
        nbformat.v4.new_code_cell("print(undefined_name)"),
    ]
    notebook.cells += [nbformat.v4.new_code_cell(f"raise ValueError('cell {i}')") for i in range(20)]
    path = tmp_path / "micrograd.ipynb"
    nbformat.write(notebook, path)
    forward_only = dataclasses.replace(micrograd, checks=tuple(c for c in micrograd.checks if c.id == "forward"))
    result = grade(path, forward_only)
    assert any("NameError" in p for p in result.notebook["problems"]), result.notebook
    page = open_page(html.student_report(result, None, "micrograd"), "student-notebook")
    shown = page.locator("#notebook").inner_text()
    assert "cell 2" in shown and "NameError" in shown, shown
    assert len(result.notebook["problems"]) == 13 and "...and 9 more cells" in shown, result.notebook["problems"]


def test_the_unfilled_kit_has_one_card_for_what_is_not_written(open_page, micrograd, tmp_path):
    """The starter kit, unfilled: does the report show one card naming every method still to write (read from the
    code: backward and __rsub__ too, which no check reached), the checks waiting for them and the next step,
    instead of a card per check, and show each waiting check as `not written yet` in a neutral colour, never an
    error's?"""
    from grader.checks.suite import SUITE_CHECKS
    from grader.files import MODULE_FILE, template_files

    source = template_files()[MODULE_FILE]
    (tmp_path / MODULE_FILE).write_text(source)
    result = grade(tmp_path / MODULE_FILE, micrograd.without(SUITE_CHECKS))
    page = open_page(html.student_report(result, source, "micrograd"), "student-kit")
    card = page.locator("#not-written").inner_text()
    assert "15 methods of the starter kit are not written yet" in card, card
    assert "Value: __add__, __mul__" in card and "backward" in card and "__rsub__" in card, card
    assert "Neuron: __init__, __call__, parameters" in card, card
    assert "Next: write Value.__add__ and Value.backward, which add needs" in card, card
    assert page.locator("#check-add").count() == 0 and page.locator("section.card").count() == 1
    assert page.locator("#row-mul .status").inner_text() == "✎ not written yet"
    assert page.locator("#rubric .status.error").count() == 0
    page.locator("#row-mul a").click()
    assert page.evaluate("location.hash") == "#not-written"
