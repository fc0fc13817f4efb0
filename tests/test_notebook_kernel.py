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
The grader runs it without stand-ins: a package stood in for is the grader's own addition (grader/sandbox/
inside/standins.py), not a kernel's semantics.
"""

from __future__ import annotations

import dataclasses
import time

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
NAMES = f"print('NAMES', sorted(n for n in dir() if not n.startswith('_') and n not in {HIDDEN!r}))"
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


def kernel_run(sources: list[str]) -> tuple[list[str], set[str]]:
    """Each cell's outcome in a real kernel through nbclient (a cell past CELL_S is interrupted, as the
    grader interrupts it), and the names defined after the last cell the kernel lived through."""
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    exits: list[int] = []

    def executed(cell, cell_index, execute_reply):  # a reply asking the frontend to exit: the kernel shuts down
        payload = (execute_reply or {}).get("content", {}).get("payload", [])
        exits.extend(cell_index for p in payload if p.get("source") == "ask_exit")

    client = NotebookClient(
        nb,
        timeout=CELL_S,
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
            errors = [o for o in cell.outputs if o.output_type == "error"]
            outcomes.append(
                "timeout" if time.monotonic() - started >= CELL_S else f"error:{errors[0].ename}" if errors else "ok"
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
    return set(eval("".join(printed).split("NAMES", 1)[1]))  # noqa: S307 - our own probe's printed list


def grader_run(sources: list[str], micrograd) -> tuple[list[str], set[str]]:
    """Each cell's outcome as the grader reports it, and the names the state it grades defines."""
    task = dataclasses.replace(
        micrograd, required_symbols=(), limits=dataclasses.replace(micrograd.limits, cell_s=CELL_S)
    )
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    code = Code("notebook", {}, notebooks.code_cells(nb), (), stand_in_missing=False)
    limits = SandboxLimits(request_s=task.limits.request_s, memory_mb=task.limits.memory_mb, cpu_s=120)
    with EngineLane(code, limits) as engine:
        symbols, execution, _ = load(engine, code, task, "corpus.ipynb", time.monotonic() + 120)
    outcomes = [f"error:{c.error.split(':')[0]}" if c.status == "error" else c.status for c in execution.cells]
    return outcomes, {s for s in symbols if not s.startswith("_") and s not in HIDDEN}


EXIT = ["before = 1", "exit()", "after_exit = 1"]
"""exit() shuts a kernel down once its cell is done: the cells after it do not run."""


def test_every_cell_of_the_corpus_comes_out_as_in_a_real_kernel(micrograd):
    kernel = kernel_run(CORPUS)
    graded = grader_run(CORPUS, micrograd)
    differ = [(i + 1, CORPUS[i].splitlines()[0], k, g) for i, (k, g) in enumerate(zip(kernel[0], graded[0])) if k != g]
    assert not differ, differ
    assert kernel[0][-2:] == ["killed", "not_run"] and kernel[0].count("timeout") == 1, kernel[0]
    assert graded[1] == kernel[1], (sorted(graded[1] - kernel[1]), sorted(kernel[1] - graded[1]))
    assert {"captured", "last", "res", "ann", "v1", "v2", "time", "after_timeouts"} <= graded[1]


def test_exit_shuts_the_kernel_down_after_its_cell_as_in_a_real_kernel(micrograd):
    kernel = kernel_run(EXIT)
    graded = grader_run(EXIT, micrograd)
    assert kernel == graded == (["ok", "ok", "not_run"], {"before"}), (kernel, graded)
