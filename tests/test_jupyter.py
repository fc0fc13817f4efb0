"""`%load_ext grader` and `%grade` in a real Jupyter kernel (nbclient): the notebook graded is the file as saved,
by `grader check` in a process of its own (the kernel never imports the grader's checks or the reference), the
score and a card for each failing check shown inline with its smallest case as code that runs when pasted, a
note when the kernel ran cells the saved file does not hold, and what changed since the last %grade. When the
grader grades a notebook, its %grade lines do nothing."""

from __future__ import annotations

import html
import re

import nbformat
from conftest import ZOO, quick_assignment
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from grader import notebooks
from grader.files import NOTEBOOK_FILE, template_files

CHECKS = ("forward", "add", "tanh", "accumulate", "gradcheck")
BUGGY = (ZOO / "buggy" / "tanh_grad_from_input.py").read_text()
FIXED = BUGGY.replace("1 - self.data ** 2", "1 - out.data ** 2")


def outputs(cell) -> dict[str, str]:
    """The cell's display: its text and HTML forms (a stream or an error shown as text)."""
    found = {"text/plain": "", "text/html": ""}
    for output in cell.outputs:
        if output.output_type in ("display_data", "execute_result"):
            for kind in found:
                found[kind] += output.data.get(kind, "")
        else:
            found["text/plain"] += output.get("text", "") + "".join(output.get("traceback", []))
    return found


def test_grade_in_a_kernel_grades_the_saved_notebook_and_shows_a_case_to_paste(tmp_path, monkeypatch):
    """The student runs the buggy engine, saves, fixes tanh in the same cell and runs it again, then %grade: the
    grade is the saved file's (tanh fails there) with a note that a cell ran since the save, the tanh card
    leads with its case, which runs when pasted into a cell; saved again, %grade says what changed."""
    assert FIXED != BUGGY
    task = quick_assignment(tmp_path / "quick", CHECKS)
    path = tmp_path / "work" / "mine.ipynb"
    path.parent.mkdir()
    notebook = new_notebook(
        cells=[new_code_cell(BUGGY), new_code_cell(f"%load_ext grader\n%grade --assignment {task}")]
    )
    monkeypatch.setenv("JPY_SESSION_NAME", path.name)  # as Jupyter Server names it, relative to its root
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    with client.setup_kernel():
        client.execute_cell(notebook.cells[0], 0)
        nbformat.write(notebook, path)  # saved as Jupyter saves: the buggy engine, with its execution count
        notebook.cells[0].source = FIXED  # edited in place and run again, not saved
        client.execute_cell(notebook.cells[0], 0)
        client.execute_cell(notebook.cells[1], 1)
        shown = outputs(notebook.cells[1])
        assert "Score: 19 / 30" in shown["text/plain"], shown["text/plain"]  # the saved file's: tanh fails there
        page = shown["text/html"]
        assert "mine.ipynb: 19 / 30 points" in page, page
        assert "and you have run 1 cell since: %grade grades the file as saved" in page, page
        assert page.index('id="grader-tanh"') < page.index('class="grader-table"'), page  # the card leads
        code = re.search(r'id="grader-tanh".*?<pre class="grader-code"[^>]*><code>(.*?)</code>', page, re.S)[1]
        code = html.unescape(code)
        assert "tanh()" in code and "backward()" in code, code

        probe = (
            "import sys\n"
            "print('GRAD', a.grad, 'GRADER', sorted(m for m in sys.modules if m.startswith(('grader', 'reference'))))"
        )
        notebook.cells.append(new_code_cell(f"{code}\n{probe}"))  # pasted into a new cell, and run
        client.execute_cell(notebook.cells[2], 2)
        said = outputs(notebook.cells[2])["text/plain"]
        assert said.startswith("GRAD 0.07065082485316443"), said  # the case runs under the kernel's (fixed) Value
        loaded = set(eval(said.split("GRADER", 1)[1]))
        grading = ("grader.grading", "grader.checks", "grader.sabotage", "grader.lanes", "grader.sandbox.supervisor")
        assert "grader.jupyter" in loaded and not [m for m in loaded if m.startswith((*grading, "reference"))], loaded

        nbformat.write(notebook, path)  # saved: the fixed engine, the pasted case
        notebook.cells.append(new_code_cell(f"%grade --assignment {task}"))
        client.execute_cell(notebook.cells[3], 3)
        shown = outputs(notebook.cells[3])
        assert "Since your last check (19 -> 30 / 30): tanh, gradcheck now pass." in shown["text/plain"], shown
        assert "Since your last check (19 -&gt; 30 / 30): tanh, gradcheck now pass." in shown["text/html"], shown
        assert "Note:" not in shown["text/plain"], shown["text/plain"]  # saved since: nothing stale
    assert (path.parent / "reports" / ".history" / "mine.ipynb.json").is_file()


def test_a_graded_notebook_runs_no_grading():
    """The kit's notebook ends with the %grade cell; when a notebook is graded, its %load_ext grader and %grade
    lines are `pass` (the sandbox has no grader, and a grading never starts another)."""
    kit = nbformat.reads(template_files()[NOTEBOOK_FILE], as_version=4)
    assert kit.cells[-1].source == "%load_ext grader\n%grade --public-only"
    cells = notebooks.code_cells(
        new_notebook(
            cells=[
                new_code_cell("%load_ext grader\n%grade --public-only"),
                new_code_cell("x = 1\nif x:\n    %grade\n%gradeless = 2\n%timeit x"),
            ]
        )
    )
    assert [text for _, text in cells] == ["pass\npass", "x = 1\nif x:\n    pass\n%gradeless = 2\n%timeit x"]


ADD = (
    "        other = other if isinstance(other, Value) else Value(other)\n"
    "        out = Value(self.data + other.data, (self, other), '+')\n\n"
    "        def _backward():\n            self.grad += out.grad\n            other.grad += out.grad\n\n"
    "        out._backward = _backward\n        return out"
)


def test_grade_in_a_kernel_names_every_method_to_write_and_the_line_to_change(tmp_path, monkeypatch):
    """The kit's notebook with only __add__ written, saved, then %grade in a real kernel: the start-here box names
    every method still to write (backward and __rsub__, which no check reached, Neuron's __call__ and parameters),
    the next step is the one the checks need (Value.backward, which add needs, not __mul__), and no check waiting
    for a method shows as an ERROR. Then the engine cell holds an engine whose tanh takes its derivative from its
    input, after two markdown cells: the verified repair names the cell as Jupyter numbers it (code cell 1, not
    cell 3) and quotes the line to change in code style."""
    kit = nbformat.reads(template_files()[NOTEBOOK_FILE], as_version=4)
    stub = '        raise NotImplementedError("Value.__add__ is not written yet")'
    assert [c.cell_type for c in kit.cells[:3]] == ["markdown", "markdown", "code"] and stub in kit.cells[2].source
    kit.cells[2].source = kit.cells[2].source.replace(stub, ADD)
    path = tmp_path / "work" / NOTEBOOK_FILE
    path.parent.mkdir()
    nbformat.write(kit, path)
    monkeypatch.setenv("JPY_SESSION_NAME", path.name)
    client = NotebookClient(kit, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        client.execute_cell(kit.cells[-1], len(kit.cells) - 1)  # the kit's own last cell: %grade --public-only
        page = " ".join(outputs(kit.cells[-1])["text/html"].split())
        assert "14 methods of the starter kit are not written yet" in page, page
        for method in ("backward", "__rsub__", "__radd__", "__call__", "parameters"):
            assert f"<code>{method}</code>" in page, (method, page)
        assert "<strong>Next:</strong> write <code>Value.backward</code>, which add needs" in page, page
        assert "⚠ ERROR" not in page and "✎ not written yet" in page, page

        kit.cells[2].source = BUGGY
        task = quick_assignment(tmp_path / "quick", ("tanh", "hand_examples"), repair="where")
        kit.cells[-1].source = f"%grade --assignment {task}"
        nbformat.write(kit, path)
        client.execute_cell(kit.cells[-1], len(kit.cells) - 1)
        page = " ".join(html.unescape(outputs(kit.cells[-1])["text/html"]).split())
        said = r"Verified fix: line (\d+) of code cell 1 \(<code>([^<]+)</code>\), in tanh's _backward"
        found = re.search(said, page)
        assert found, page
        line, quoted = int(found[1]), found[2]
        assert BUGGY.splitlines()[line - 1].strip() == quoted and "self.data" in quoted, (line, quoted)


class _Kernel:
    """What %grade reads of the IPython running it, before any grading: its namespace and history (none here)."""

    user_ns: dict = {}
    history_manager = None


def test_a_grade_line_that_names_no_path_is_a_usage_message_never_a_traceback(tmp_path, capsys):
    """%grade lines whose options cannot be read (an unclosed quote), or that name a path no file can have (a NUL
    character, a lone surrogate), in the option or the notebook: is each a one-line `%grade:` message in the
    kernel, with no grading started, rather than a traceback?"""
    from grader import jupyter

    for line in ('"unclosed', "--tests '", "a\x00b.ipynb", f"{tmp_path}/\ud800.ipynb", "--assignment x\x00y"):
        jupyter.run_magic(_Kernel(), line)
        said = capsys.readouterr()
        assert said.err.startswith("%grade: ") and said.err.count("\n") == 1, (line, said)
        assert "Traceback" not in said.err + said.out and "grading" not in said.out, (line, said)


def test_a_grade_line_naming_a_pipe_returns_at_once(tmp_path):
    """`%grade pipe.ipynb`, a named pipe where the notebook should be: is the step before grading done at once
    (the file read through no link, regular files only), rather than the kernel waiting on the pipe forever?"""
    import os
    import threading

    from grader import jupyter

    pipe = tmp_path / "pipe.ipynb"
    os.mkfifo(pipe)
    done: list = []
    step = threading.Thread(target=lambda: done.append(jupyter.prepared(_Kernel(), str(pipe))), daemon=True)
    step.start()
    step.join(20)
    waited = step.is_alive()
    if waited:  # let the reader stuck on the pipe go: a writer opens it and closes it
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        step.join(5)
    assert not waited, "the step before grading waited on the pipe"
    assert done and done[0][1] == pipe and done[0][2] == "", done


def test_the_step_before_grading_a_notebook_saved_in_another_encoding_is_no_traceback(tmp_path):
    """`%grade` of a notebook saved as UTF-16 (no UTF-8 text): is the step before grading done, with no note on
    staleness to make of it, rather than UnicodeDecodeError in the kernel? (The grading then says the file cannot
    be read.)"""
    from grader import jupyter

    path = tmp_path / "mine.ipynb"
    path.write_bytes(nbformat.writes(new_notebook(cells=[new_code_cell("x = 1")])).encode("utf-16"))
    request, found, stale = jupyter.prepared(_Kernel(), str(path))
    assert found == path and stale == "", (found, stale)
