"""What a student reads says one truth, and only what they can act on (issue 40, the student's side).

Each test reads the real artefacts: `grader check` run through a pseudo-terminal of 80 or 120 columns (what a
student's terminal shows) or into a pipe, the result JSON it writes, the HTML report opened in headless Chromium,
and a batch's Gradescope results, gradebook and class page. `%grade` through a real kernel is in test_jupyter.py.

- an advisory check (deep_graph, no points) is advice on every page, never a failure, and comes last (item 3);
- a notebook's cells are named as Jupyter numbers them, and the line to change is quoted as code (item 4);
- every line is wrapped to the terminal's width, or not at all into a pipe (item 5);
- nothing internal reaches the student (item 6), and the next step follows what the checks need (item 7);
- a training loop that reproduces nothing is folded away, its cause said once (item 8);
- a hang, a --tests file, a missing file are said as they are, and the untouched kit's first check fits 80x24
  (item 10).
"""

from __future__ import annotations

import csv
import fcntl
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from conftest import BASE_ENGINE, CHROMIUM, WHEATS, ZOO, quick_assignment

from grader.files import MODULE_FILE, TESTS_FILE, template_files

needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
KIT_TESTS = template_files()[TESTS_FILE]
ONE_BUG = BASE_ENGINE.read_text()
RECURSIVE = (WHEATS / "wheat_recursive_set.py").read_text()
"""A correct engine with the lesson's recursive build_topo: deep_graph, advisory, fails on it."""


def mul_assigns(source: str) -> str:
    """The engine with `=` for `+=` in __mul__'s backward only."""
    start = source.index("def __mul__")
    end = source.index("out._backward", start)
    return source[:start] + source[start:end].replace("+=", "=") + source[end:]


def grader(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command line into a pipe (stdout is no terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def tty(*args: str, cwd: Path, columns: int, rows: int = 24) -> str:
    """What `grader ARGS` prints on a terminal of `columns` x `rows` (a pseudo-terminal: stdout is a tty of that
    size, as a student's is); its progress, on stderr, goes elsewhere."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    with open(cwd / ".stderr", "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "grader.cli", *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave, stderr=err
        )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal's other end closed: the process has ended
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert process.wait(timeout=600) in (0, 1), (cwd / ".stderr").read_text()
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def folder_with(tmp_path: Path, name: str, engine: str, tests: str | None = None) -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True)
    (folder / MODULE_FILE).write_text(engine)
    if tests is not None:
        (folder / TESTS_FILE).write_text(tests)
    return folder


def card_of(text: str, check_id: str) -> str:
    """A check's card in the terminal's text: from its heading to the next blank line before a heading."""
    start = text.index(f"--- {check_id}:")
    end = text.find("\n\n", start)
    return text[start : end if end != -1 else len(text)]


# Item 3: an advisory check is advice on every page, never a failure, after everything that costs points.


@needs_browser
def test_an_advisory_check_is_advice_on_every_page(tmp_path, browser):
    task = quick_assignment(tmp_path / "quick", ("add", "mul", "accumulate", "deep_graph"))
    mine = folder_with(tmp_path, "mine", mul_assigns(RECURSIVE))
    shown = tty("check", "--assignment", str(task), "--json", "r.json", "--html", "r.html", cwd=mine, columns=80)
    checks = json.loads((mine / "r.json").read_text())["checks"]
    deep = next(c for c in checks if c["id"] == "deep_graph")
    assert deep["max_score"] == 0 and deep["status"] == "failed", deep  # the JSON says what was observed
    rows = [line for line in shown.splitlines() if line[:5].strip() in ("PASS", "FAIL", "ERROR", "SKIP", "NOTE")]
    assert rows[-1].startswith("NOTE  deep_graph") and "Advisory, no points" in rows[-1], shown
    assert not [line for line in shown.splitlines() if "FAIL" in line and "deep_graph" in line], shown
    headings = [line for line in shown.splitlines() if line.startswith("--- ")]
    assert headings[-1].startswith("--- deep_graph"), headings
    assert "(advisory, no points)" in " ".join(card_of(shown, "deep_graph").split()[:16]), shown
    assert headings[0].startswith("--- accumulate"), headings  # what costs points comes first

    page = browser.new_page()
    page.goto((mine / "r.html").as_uri())
    row = page.locator("#rubric tbody tr").last
    assert row.get_attribute("id") == "row-deep_graph", row.inner_text()
    status = row.locator(".status")
    assert "advisory, no points" in status.inner_text() and "FAIL" not in row.inner_text()
    failed = page.locator("#row-accumulate .status")
    colour = "e => getComputedStyle(e).color"
    assert status.evaluate(colour) != failed.evaluate(colour), "advice is not in a failure's colour"
    assert page.locator("section.card").last.get_attribute("id") == "check-deep_graph"
    page.close()

    # a class: Gradescope's results, the gradebook and the class page
    (tmp_path / "class" / "ada").mkdir(parents=True)
    shutil.copy(mine / MODULE_FILE, tmp_path / "class" / "ada" / MODULE_FILE)
    run = grader("batch", "class", "--assignment", str(task), "--out", "out", cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    tests = json.loads((tmp_path / "out" / "students" / "ada" / "gradescope.json").read_text())["tests"]
    assert tests[-1]["name"].startswith("deep_graph") and "advisory, no points" in tests[-1]["name"], tests[-1]
    assert "status" not in tests[-1] and tests[-1]["output"].startswith("Advisory, no points"), tests[-1]
    with open(tmp_path / "out" / "grades.csv", newline="") as f:
        (row_data,) = list(csv.DictReader(f))
    assert row_data["deep_graph"] == "" and float(row_data["accumulate"]) == 0, row_data
    page = browser.new_page()
    page.goto((tmp_path / "out" / "index.html").as_uri())
    ranked = page.locator("#checks tbody th").all_inner_texts()
    assert "deep_graph" not in ranked and ranked[0] == "accumulate", ranked  # the class's most common bug
    assert "deep_graph" in page.locator("#advisory").inner_text()
    page.close()


# Item 4: a notebook's cells are named as Jupyter numbers them; the line to change is quoted as code.


@needs_browser
def test_a_notebooks_cells_are_named_as_jupyter_numbers_them(tmp_path, browser):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    engine = (ZOO / "buggy" / "tanh_grad_from_input.py").read_text()
    cells = [
        new_markdown_cell("# micrograd"),
        new_markdown_cell("## The engine"),
        new_code_cell(engine),  # In [1]
        new_markdown_cell("## Try it"),
        new_code_cell("print(undefined_name)"),  # In [2]
    ]
    work = tmp_path / "work"
    work.mkdir()
    nbformat.write(new_notebook(cells=cells), work / "lesson.ipynb")
    task = quick_assignment(tmp_path / "quick", ("tanh", "hand_examples"), repair="where")
    run = grader("check", "lesson.ipynb", "--assignment", str(task), "--json", "r.json", "--html", "r.html", cwd=work)
    assert run.returncode == 1, run.stderr
    result = json.loads((work / "r.json").read_text())
    assert result["notebook"]["cells"] == [
        {"number": 2, "status": "error", "error": "NameError: name 'undefined_name' is not defined"}
    ]
    assert result["notebook"]["problems"][0].startswith("code cell 2: NameError"), result["notebook"]
    repair = next(c["artifacts"]["repair"] for c in result["checks"] if "repair" in c["artifacts"])
    quoted = repair["before"].strip()
    assert repair["cell"] == 1, repair
    said = f"line {repair['line']} of code cell 1 (`{quoted}`)"
    assert said in " ".join(run.stdout.split()) and "code cell 2: NameError" in run.stdout, run.stdout

    page = browser.new_page()
    page.goto((work / "r.html").as_uri())
    assert page.locator("#notebook").inner_text().count("code cell 2: NameError") == 1
    sentence = page.locator("p.repair")
    assert quoted in sentence.locator("code").all_inner_texts(), sentence.inner_html()  # in code style
    assert page.locator("p.repair-cell").inner_text().startswith("Code cell 1 of your notebook")
    page.close()


# Items 5 and 6: every line wrapped to the terminal's width (none into a pipe); nothing internal said.


def test_every_line_is_wrapped_to_the_terminal_or_not_at_all(tmp_path):
    task = quick_assignment(
        tmp_path / "quick", ("accumulate", "training", "student_tests", "wheat", "sabotage"), repair="where"
    )
    said = {}
    for where in (80, 120, "pipe"):
        folder = folder_with(tmp_path, f"at-{where}", mul_assigns(ONE_BUG), KIT_TESTS)
        args = ("check", "--assignment", str(task), "--json", "r.json")
        said[where] = grader(*args, cwd=folder).stdout if where == "pipe" else tty(*args, cwd=folder, columns=where)
    checks = json.loads((tmp_path / "at-80" / "r.json").read_text())["checks"]
    code = {line for c in checks if c["counterexample"] for line in c["counterexample"]["code"].splitlines()}
    for width in (80, 120):
        wide = [line for line in said[width].splitlines() if len(line) > width and line.strip() not in code]
        assert not wide, (width, wide)  # only code to paste keeps its lines whole
    words = {where: re.sub(r"\(\d+\.\d s\)", "", text).split() for where, text in said.items()}  # the time aside
    assert words[80] == words[120] == words["pipe"]  # the same words: none cut in two
    fix = next(line for line in said["pipe"].splitlines() if "Verified fix:" in line)
    assert fix.rstrip().endswith("then pass."), fix  # into a pipe, a sentence stays on its line
    assert len(said[80].splitlines()) > len(said[120].splitlines()) > len(said["pipe"].splitlines())
    assert "drawn for your engine" not in said["pipe"] and "sabotaged engines" in said["pipe"], said["pipe"]


@needs_browser
def test_the_student_is_told_a_syntax_error_not_a_missing_symbol(tmp_path, browser):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    broken = ONE_BUG.replace("    def __mul__(self, other):", "    def __mul__(self, other)", 1)
    cells = [new_markdown_cell("# micrograd"), new_code_cell("import math"), new_code_cell(broken)]
    nbformat.write(new_notebook(cells=cells), tmp_path / "lesson.ipynb")
    task = quick_assignment(tmp_path / "quick", ("add",))
    shown = tty("check", "lesson.ipynb", "--assignment", str(task), "--html", "r.html", cwd=tmp_path, columns=80)
    assert "a syntax error in code cell 2" in " ".join(shown.split()), shown
    assert "missing" not in shown.replace("missing_radd", ""), shown
    page = browser.new_page()
    page.goto((tmp_path / "r.html").as_uri())
    said = page.locator("#submission-error").inner_text()
    assert "syntax error in code cell 2" in said and "missing" not in said, said
    page.close()


# Items 7 and 10: the untouched kit fits 80 x 24; every method still to write is named; the next step is true.


@needs_browser
def test_the_kit_fits_a_screen_names_every_method_to_write_and_a_true_next_step(tmp_path, browser):
    assert grader("template", "kit", cwd=tmp_path).returncode == 0
    kit = tmp_path / "kit"
    first = tty("check", "--public-only", cwd=kit, columns=80, rows=24)  # the default assignment: repair "where"
    lines = first.rstrip("\n").splitlines()
    assert len(lines) < 24 and max(map(len, lines)) <= 80, first  # the prompt's line too
    said = " ".join(first.split())
    assert "15 methods of the starter kit are not written yet" in said, first
    assert "Next: write Value.__add__ and Value.backward, which add needs" in said, first
    assert "ERROR" not in first and "None of your tests can count" not in first, first
    assert "No tests of your own yet" in first, first
    notebook = tty("check", "micrograd.ipynb", "--public-only", cwd=kit, columns=80, rows=24).rstrip("\n")
    assert len(notebook.splitlines()) < 24 and "15 methods of the starter kit" in notebook, notebook

    source = (kit / MODULE_FILE).read_text()
    added = source.replace(
        '        raise NotImplementedError("Value.__add__ is not written yet")',
        "        other = other if isinstance(other, Value) else Value(other)\n"
        "        out = Value(self.data + other.data, (self, other), '+')\n\n"
        "        def _backward():\n            self.grad += out.grad\n            other.grad += out.grad\n\n"
        "        out._backward = _backward\n        return out",
    )
    assert added != source
    (kit / MODULE_FILE).write_text(added)
    second = tty("check", "--public-only", cwd=kit, columns=80, rows=24)
    said = " ".join(second.split())
    assert "Value: __mul__, __pow__, tanh, relu, __neg__, __sub__, __radd__, __rmul__, __rsub__, backward" in said
    assert "Neuron: __init__, __call__, parameters" in said and "numerical_grad" in said, second
    assert "Next: write Value.backward, which add needs" in said and "start with Value.__mul__" not in said, second

    page = browser.new_page()
    page.goto((kit / "reports" / "micrograd_mine.html").as_uri())
    add = page.locator("#row-add .status")
    assert add.inner_text() == "✎ not written yet", add.inner_text()
    assert add.evaluate("e => getComputedStyle(e).color") != "rgb(106, 27, 154)", "not an error's purple"
    assert page.locator("#rubric .status.error").count() == 0
    methods = page.locator("#not-written-methods").inner_text()
    assert "backward" in methods and "__rsub__" in methods and "parameters" in methods, methods
    assert "Value.backward" in page.locator("#next-step").inner_text()
    page.close()


# Item 8: a loop whose losses change from run to run is folded away; its cause is said once.


@needs_browser
def test_a_loop_that_reproduces_nothing_is_folded_and_its_cause_said_once(tmp_path, browser):
    bug = RECURSIVE.replace(
        "            self.grad += out.grad\n            other.grad += out.grad",
        "            self.grad = out.grad\n            other.grad = out.grad",
        1,
    )
    assert bug != RECURSIVE
    mine = folder_with(tmp_path, "mine", bug)
    task = quick_assignment(tmp_path / "quick", ("accumulate", "training"))
    run = grader("check", "--assignment", str(task), "--json", "r.json", "--html", "r.html", cwd=mine)
    training = next(c for c in json.loads((mine / "r.json").read_text())["checks"] if c["id"] == "training")
    assert training["artifacts"].get("unstable") is True, training
    card = card_of(run.stdout, "training")
    assert "Same cause as accumulate:" in card and "Paste under your Value class" not in card, card
    assert "different losses" not in card and "for step in range" not in card, card
    page = browser.new_page()
    page.goto((mine / "r.html").as_uri())
    loop = page.locator("#loop-training")
    assert loop.count() == 1 and not loop.locator("pre").is_visible(), "folded"
    assert page.locator("#check-training button.copy").count() == 0
    page.close()


# Item 10: a --tests file by its own name, and a missing file's neighbour named.


def test_a_tests_file_is_named_by_its_name_and_a_missing_file_by_the_one_there(tmp_path):
    mine = folder_with(tmp_path, "mine", ONE_BUG)
    (mine / "test_bad.py").write_text("from micrograd_mine import Value\n\ndef test_x(:\n    pass\n")
    task = quick_assignment(tmp_path / "quick", ("student_tests",))
    run = grader("check", "--assignment", str(task), "--tests", "test_bad.py", cwd=mine)
    card = card_of(run.stdout, "student_tests")
    assert "test_bad.py, line 3: SyntaxError" in card and TESTS_FILE not in card, card

    only = tmp_path / "only"
    only.mkdir()
    shutil.copy(BASE_ENGINE, only / "micrograd.py")
    missing = grader("check", cwd=only)
    assert missing.returncode == 2, missing.stderr
    assert "grader check micrograd.py" in missing.stderr and f"{MODULE_FILE} does not exist" in missing.stderr
