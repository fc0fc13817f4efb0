"""Benchmark: a lecture-style notebook graded with the full rubric, against merely executing it.

The notebook is what a student of the micrograd lecture hands in: imports (numpy and matplotlib
beside math and random, `%matplotlib inline`), the engine, `Neuron`/`Layer`/`MLP`,
`numerical_grad`, a small worked example, a 100-step training demo of an MLP, two plots, a
`%timeit` of a backward pass, a `!pip` line, a helper cell and 10 test functions. Printed, all
measured in this one run on this machine (the median of --repeat runs each):

- `grader check lecture.ipynb` (the full rubric of the default assignment: engine checks, and the
  student's tests on their engine, the wheats and the mutants), with every check's status;
- one plain nbclient execution of the same notebook with a real kernel (the floor);
- `grader check` of the same engine and tests as `micrograd_mine.py` and `test_micrograd.py`;
- the ratios (targets: notebook / nbclient <= 2, notebook / .py <= 1.5), and the peak memory of the
  notebook's grading (every process of the job together, and its largest one).

The machine's load average is printed first and last: on a shared machine the figures are noisy.

    python bench/bench_lecture.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

sys.path.insert(0, str(Path(__file__).resolve().parent))
import classgen
from bench_check import TreeMemory

ENGINE = classgen.ZOO / "correct" / "list_iterative.py"
LEFT_OUT = {"test_deep_order", "test_training_loss_falls"}
"""The good suite has 12 tests; the lecture notebook has 10."""

IMPORTS = "import math\nimport random\nimport numpy as np\nimport matplotlib.pyplot as plt\n%matplotlib inline"
EXAMPLE = """a = Value(2.0)
b = Value(-3.0)
c = Value(10.0)
e = a * b
d = e + c
f = Value(-2.0)
L = d * f
L.backward()
print(L.data, a.grad, b.grad)"""
TRAINING = """random.seed(1337)
model = MLP(3, [4, 4, 1])
xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
ys = [1.0, -1.0, -1.0, 1.0]
losses = []
for k in range(100):
    ypred = [model(x) for x in xs]
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))
    for p in model.parameters():
        p.grad = 0.0
    loss.backward()
    for p in model.parameters():
        p.data += -0.05 * p.grad
    losses.append(loss.data)
print(losses[0], losses[-1])"""
PLOT_LOSS = "plt.figure(figsize=(4, 3))\nplt.plot(losses)\nplt.xlabel('step')\nplt.ylabel('loss')\nplt.show()"
PLOT_TANH = (
    "xs_plot = [x / 10 for x in range(-40, 41)]\nplt.plot(xs_plot, [Value(x).tanh().data for x in xs_plot])\n"
    "plt.grid()\nplt.show()"
)
TIMEIT = "%timeit loss.backward()"
PIP = "!pip --version"


def lecture_notebook() -> nbformat.NotebookNode:
    value, neuron, numgrad = classgen.split_engine(ENGINE.read_text())
    helpers, tests = classgen.suite_cells()
    tests = [(name, source) for name, source in tests if name not in LEFT_OUT]
    cells = [
        new_markdown_cell("# micrograd, from the lecture"),
        new_code_cell(IMPORTS),
        new_code_cell(value),
        new_code_cell(neuron + classgen.LAYERS),
        new_code_cell(numgrad),
        new_markdown_cell("## An example"),
        new_code_cell(EXAMPLE),
        new_markdown_cell("## Training"),
        new_code_cell(TRAINING),
        new_code_cell(PLOT_LOSS),
        new_code_cell(PLOT_TANH),
        new_code_cell(TIMEIT),
        new_code_cell(PIP),
        new_markdown_cell("## Tests"),
        new_code_cell(helpers),
    ]
    cells += [new_code_cell(source) for _, source in tests]
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i:02d}"
    return new_notebook(cells=cells, metadata={"kernelspec": classgen.KERNELSPEC})


def as_py(folder: Path) -> None:
    """The same engine and tests as a .py submission and its test file."""
    value, neuron, numgrad = classgen.split_engine(ENGINE.read_text())
    helpers, tests = classgen.suite_cells()
    (folder / "micrograd_mine.py").write_text(
        "import math\nimport random\n\n\n" + "\n\n\n".join([value, neuron + classgen.LAYERS, numgrad]) + "\n"
    )
    bodies = [source.rsplit("\n\n\n", 1)[0] for name, source in tests if name not in LEFT_OUT]
    (folder / "test_micrograd.py").write_text(
        "from micrograd_mine import *\n" + helpers + "\n\n\n" + "\n\n\n".join(bodies) + "\n"
    )


def nbclient_once(path: Path) -> float:
    nb = nbformat.read(str(path), as_version=4)
    started = time.perf_counter()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    return time.perf_counter() - started


def check(folder: Path, target: str) -> tuple[float, float, float, dict]:
    """`grader check target` in folder: wall seconds, the job's peak memory (all, largest) in MB, the result."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "check", target, "--json", "r.json"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    memory = TreeMemory(proc.pid)
    proc.wait()
    wall = time.perf_counter() - started
    memory.stop()
    return wall, memory.peak_total / 2**20, memory.peak_single / 2**20, json.loads((folder / "r.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        nb_dir, py_dir = Path(tmp, "nb"), Path(tmp, "py")
        nb_dir.mkdir()
        py_dir.mkdir()
        nbformat.write(lecture_notebook(), str(nb_dir / "lecture.ipynb"))
        as_py(py_dir)
        floor, graded, py, memory = [], [], [], []
        for _ in range(args.repeat):
            floor.append(nbclient_once(nb_dir / "lecture.ipynb"))
            wall, total, single, result = check(nb_dir, "lecture.ipynb")
            graded.append(wall)
            memory.append((total, single))
            wall_py, _, _, result_py = check(py_dir, "micrograd_mine.py")
            py.append(wall_py)
    nb_s, floor_s, py_s = statistics.median(graded), statistics.median(floor), statistics.median(py)
    print("checks of the notebook: " + " ".join(f"{c['id']}={c['status']}" for c in result["checks"]))
    print(
        f"score: notebook {result['score']:g}/{result['max_score']:g}, .py {result_py['score']:g}/"
        f"{result_py['max_score']:g}; notebook status {result['status']}"
    )
    print(f"grader check lecture.ipynb:      {nb_s:6.2f} s  (runs: {', '.join(f'{x:.2f}' for x in graded)})")
    print(f"plain nbclient execution:        {floor_s:6.2f} s  (runs: {', '.join(f'{x:.2f}' for x in floor)})")
    print(f"grader check of the same as .py: {py_s:6.2f} s  (runs: {', '.join(f'{x:.2f}' for x in py)})")
    print(
        f"ratio notebook / nbclient: {nb_s / floor_s:.2f} (target <= 2)   notebook / .py: {nb_s / py_s:.2f} "
        "(target <= 1.5)"
    )
    print(
        f"peak memory of the notebook's grading: {max(m[0] for m in memory):.0f} MB every process together, "
        f"{max(m[1] for m in memory):.0f} MB the largest"
    )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
