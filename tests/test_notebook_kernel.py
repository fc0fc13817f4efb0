"""nbclient with a real Jupyter kernel is the oracle of notebook semantics: the grader runs a notebook's cells
with IPython's shell inside its sandbox, and must give every cell the outcome a kernel gives it (ran, raised
with the same exception type, timed out, killed the kernel, not run after that) and leave the same names.

One notebook holds the corpus, cell after cell: magics (`%time`, `%%capture`, `%timeit -o`, `%who_ls`, a
`%matplotlib inline` whose package is missing), `!` commands and their captured output, `display`, the output
history (`_`, `Out[n]`, `_i1`), `get_ipython()`, top-level `await`, `from __future__` across cells, `input()`,
cells that raise (an exception, a failed import, two syntax errors), `sys.exit`, `raise SystemExit`, a later
cell defining a class again, a cell past its time limit (its import kept, as a kernel keeps it), and a cell
that kills the process (the kernel's names are then those before it; the grader's, those of the cells before
it run again without it).
A second notebook calls `exit()`, which shuts a kernel down once its cell is done.
The grader runs these without stand-ins: a package stood in for is the grader's own addition (grader/sandbox/
inside/standins.py), not a kernel's semantics.

Then notebooks as their authors ran them, with their packages (numpy, matplotlib, rich, graphviz): the lectures of
tests/fixtures/lectures, and a corpus of what stand-ins are for (magics of matplotlib, `from rich import print` over
an `import math`, a guarded import, unpacking a figure, a progress bar, arithmetic for a plot). Their kernel is
AUTHOR_PYTHON's; the grader's sandbox has none of those packages. Each cell that runs to completion for its author
runs to completion when graded, save those that need a value only the package computes, which fail saying so.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time

import nbformat
import pytest
from conftest import LECTURES
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_code_cell, new_notebook

from grader import notebooks
from grader.lanes import EngineLane
from grader.loading import load
from grader.protocol import Code
from grader.sandbox.supervisor import SandboxLimits

CELL_S = 2.0
HIDDEN = ("In", "Out", "exit", "quit", "get_ipython", "open")
"""Names every IPython namespace has; names starting with _ are left out too."""
NAMES = (
    f"__import__('builtins').print('NAMES', sorted(n for n in dir() if not n.startswith('_') and n not in {HIDDEN!r}))"
)
"""Printed with the builtin print, whatever the notebook's print is (rich's, in a kernel, displays HTML)."""
CORPUS = [
    "%matplotlib inline",
    "%time t = 1 + 1",
    "%%capture out\nprint('hi')\ncaptured = 2",
    "x = 5\nr = %timeit -o -n 1 -r 1 x + 1",
    "%who_ls",
    "!echo hello",
    "files = !echo a b\nn = len(files)",
    "from IPython.display import display, HTML\ndisplay(HTML('<b>x</b>'))\nshown = 1",
    "2 + 3",
    "last = _ * 2\nassert last == 10 and Out[9] == 5 and _i9 == '2 + 3'",
    "ip = get_ipython()\nkind = type(ip).__name__\nassert 'ip' in ip.user_ns",
    "import asyncio\nasync def g():\n    return 7\nres = await g()",
    "from __future__ import annotations\ndef h(x: Undefined) -> Undefined:\n    return x",
    "def k(y: Nope):\n    return y\nann = k.__annotations__['y']",
    "name = input('your name? ')",
    "boom = 1\n1 / 0",
    "import nonexistent_module_xyz",
    "def f(:\n    pass",
    "  indented = 1",
    "import sys\nsys.exit(3)",
    "raise SystemExit",
    "class Value:\n    a = 1",
    "v1 = Value.a",
    "class Value:\n    b = 2",
    "v2 = Value.b\nassert not hasattr(Value, 'a')",
    "import time\nwhile True:\n    time.sleep(0.01)",
    "after_timeouts = 1",
    "import os\nos._exit(1)",
    "after_kill = 1",
]


def kernel_run(sources: list[str], kernels: KernelSpecManager | None = None) -> tuple[list[str], set[str]]:
    """Each cell's outcome in a real kernel through nbclient (a cell past CELL_S is interrupted, as the
    grader interrupts it), and the names defined after the last cell the kernel lived through. kernels: where
    the kernel named "author" is (AUTHOR_PYTHON's), else this Python's own "python3"."""
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    exits: list[int] = []
    replies: dict[int, dict] = {}

    def executed(cell, cell_index, execute_reply):  # a reply asking the frontend to exit: the kernel shuts down
        replies[cell_index] = (execute_reply or {}).get("content", {})
        exits.extend(cell_index for p in replies[cell_index].get("payload", []) if p.get("source") == "ask_exit")

    client = NotebookClient(
        nb,
        km=AsyncKernelManager(kernel_name="author", kernel_spec_manager=kernels) if kernels else None,
        timeout=CELL_S if kernels is None else AUTHOR_CELL_S,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=True,
        on_cell_executed=executed,
    )
    outcomes: list[str] = []
    names: set[str] = set()
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            started = time.monotonic()
            try:
                client.execute_cell(cell, i)
            except DeadKernelError:
                outcomes += ["killed"] + ["not_run"] * (len(sources) - i - 1)
                break
            reply = replies.get(i, {})  # the reply, not the outputs: rich's traceback hook shows errors as HTML
            outcomes.append(
                "timeout"
                if time.monotonic() - started >= client.timeout
                else f"error:{reply.get('ename')}"
                if reply.get("status") == "error"
                else "ok"
            )
            if exits:
                outcomes += ["not_run"] * (len(sources) - i - 1)
                break
            names = _names(client)
    return outcomes, names


def _names(client: NotebookClient) -> set[str]:
    """The kernel's names now, asked without storing history (Out, _ and the execution count stay as they are)."""
    printed: list[str] = []

    def hook(msg):
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])

    run_sync(client.kc.execute_interactive)(NAMES, store_history=False, output_hook=hook, timeout=30)
    return set(eval("".join(printed).split("NAMES", 1)[1]))


def grader_run(sources: list[str], micrograd, stand_ins: bool = False) -> tuple[list[str], set[str], list[str]]:
    """Each cell's outcome as the grader reports it (an error with its message after a `|`), the names the state
    it grades defines, and the notes; with the assignment's stand-ins, or none."""
    task = dataclasses.replace(
        micrograd, required_symbols=(), limits=dataclasses.replace(micrograd.limits, cell_s=CELL_S)
    )
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    packages = micrograd.packages if stand_ins else ()
    code = Code("notebook", {}, notebooks.code_cells(nb), packages, stand_in_missing=stand_ins)
    limits = SandboxLimits(request_s=task.limits.request_s, memory_mb=task.limits.memory_mb, cpu_s=120)
    with EngineLane(code, limits) as engine:
        symbols, execution, notes = load(engine, code, task, "corpus.ipynb", time.monotonic() + 120)
    outcomes = [
        f"error:{c.error.split(':')[0]}|{c.error}" if c.status == "error" else c.status for c in execution.cells
    ]
    return outcomes, {s for s in symbols if not s.startswith("_") and s not in HIDDEN}, list(notes)


EXIT = ["before = 1", "exit()", "after_exit = 1"]
"""exit() shuts a kernel down once its cell is done: the cells after it do not run."""


def test_every_cell_of_the_corpus_comes_out_as_in_a_real_kernel(micrograd):
    kernel = kernel_run(CORPUS)
    graded = grader_run(CORPUS, micrograd)[:2]
    graded = ([g.split("|")[0] for g in graded[0]], graded[1])
    differ = [
        (i + 1, CORPUS[i].splitlines()[0], k, g)
        for i, (k, g) in enumerate(zip(kernel[0], graded[0], strict=True))
        if k != g
    ]
    assert not differ, differ
    assert kernel[0][-2:] == ["killed", "not_run"] and kernel[0].count("timeout") == 1, kernel[0]
    assert graded[1] == kernel[1], (sorted(graded[1] - kernel[1]), sorted(kernel[1] - graded[1]))
    assert {"captured", "last", "res", "ann", "v1", "v2", "time", "after_timeouts"} <= graded[1]


def test_exit_shuts_the_kernel_down_after_its_cell_as_in_a_real_kernel(micrograd):
    kernel = kernel_run(EXIT)
    graded = grader_run(EXIT, micrograd)[:2]
    assert kernel == graded == (["ok", "ok", "not_run"], {"before"}), (kernel, graded)


AUTHOR_CELL_S = 30.0
"""A cell's time in the author's kernel (none of theirs is meant to time out)."""
STAND_INS = [
    "%matplotlib inline\nafter_inline = 1",
    "%matplotlib notebook\nafter_notebook = 1",
    "%config InlineBackend.figure_format = 'retina'\nafter_config = 1",
    "%load_ext rich\nafter_ext = 1",
    "from rich import print\nimport math\nprint('tanh', math.tanh(0.5))\nafter_rich = 1",
    "try:\n    import tomllib_backport_nowhere\nexcept ImportError:\n    fallback = 1",
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(4, 3))\nax.plot([1, 2], [3, 4])\nunpacked = 1",
    (
        "from rich.progress import track\ntotal = 0\nfor k in track(range(4), description='steps'):\n"
        "    total += k\nassert total == 6"
    ),
    (
        "import numpy as np\nxs = np.arange(-5, 5, 0.25)\nys = 3 * xs**2 - 4 * xs + 5\n"
        "plt.plot(xs, ys)\nplt.plot(xs[ys > 0])"
    ),
    "from micrograd.engine import Value",
    "two = float(np.float64(2.0))",
    "for x in np.linspace(0, 1, 3):\n    last = x",
    "def f(:\n    pass",
]
NEEDS_VALUES = {
    "two = float(np.float64(2.0))": ("numpy", {"two"}),
    "for x in np.linspace(0, 1, 3):": ("numpy", {"x", "last"}),
}
"""Cells (by their first line) that need a value only the package computes, and the names they define: graded
without the package, they fail saying which it is."""
STOOD_IN = {
    "stand_ins": ["rich", "matplotlib", "numpy"],
    "exercises_solved.ipynb": ["rich", "matplotlib"],
    "lecture_draw_dot.ipynb": ["numpy", "matplotlib", "graphviz"],
    "rich_numpy_plots.ipynb": ["numpy", "matplotlib", "rich"],
}
"""The packages each notebook's notes name, in the order the notebook first imported them (those only a magic of
which was used, after)."""
LECTURE_NEEDS = {"labels = [1.0 if x * y > 0 else -1.0 for x, y in points]": ("numpy", {"labels"})}


def _code_cells(path) -> list[str]:
    return [c.source for c in nbformat.read(str(path), 4).cells if c.cell_type == "code"]


@pytest.fixture(scope="module")
def author_kernel(author_python, tmp_path_factory) -> KernelSpecManager:
    """A kernel spec named "author", whose kernel is AUTHOR_PYTHON's."""
    folder = tmp_path_factory.mktemp("kernels")
    (folder / "author").mkdir()
    argv = [str(author_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (folder / "author" / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "author"}))
    return KernelSpecManager(kernel_dirs=[str(folder)])


@pytest.mark.parametrize(
    "name", ["stand_ins", *sorted(p.name for p in LECTURES.glob("*.ipynb"))], ids=lambda n: n.split(".")[0]
)
def test_every_cell_that_runs_for_its_author_runs_when_graded(name, micrograd, author_kernel):
    """A notebook run in its author's kernel, with numpy, matplotlib, rich and graphviz, where every cell but the
    import of micrograd and the syntax error completes; graded in a sandbox that has none of them, every cell that
    completed for the author completes, save those needing a value only the package computes, which fail with an
    error naming it; the names left are the author's, but those such cells would have defined; and each package
    stood in for has one note, with the magics that did nothing."""
    sources = STAND_INS if name == "stand_ins" else _code_cells(LECTURES / name)
    kernel, names = kernel_run(sources, author_kernel)
    expected = {
        "from micrograd.engine import Value": "error:ModuleNotFoundError",
        "def f(:\n    pass": "error:SyntaxError",
    }
    assert kernel == [expected.get(s, "ok") for s in sources], list(zip(kernel, sources, strict=True))
    graded, graded_names, notes = grader_run(sources, micrograd, stand_ins=True)
    needs = {**NEEDS_VALUES, **LECTURE_NEEDS}
    unset: set[str] = set()
    for source, mine, theirs in zip(sources, graded, kernel, strict=True):
        package, defines = needs.get(source.splitlines()[0], (None, set()))
        unset |= defines
        if package:
            assert mine.startswith(f"error:StandInError|StandInError: {package} is not installed"), mine
        else:
            assert mine.split("|")[0] == theirs, (source, mine)
    assert graded_names == names - unset, (sorted(graded_names - names), sorted(names - graded_names))
    said = [re.match(r"Your code imports (\w+)|Your notebook's magics for (\w+)", n) for n in notes]
    assert [m.group(1) or m.group(2) for m in said if m] == STOOD_IN[name], notes
    if name == "stand_ins":
        assert notes[1].splitlines()[1:] == [
            "  code cell 1: %matplotlib inline",
            "  code cell 2: %matplotlib notebook",
            "  code cell 3: %config InlineBackend.figure_format = 'retina'",
        ], notes
        assert notes[0].splitlines()[1:] == ["  code cell 4: %load_ext rich"], notes
        assert graded[-1] == "error:SyntaxError|SyntaxError: invalid syntax (line 1 of the cell: def f(:)", graded
