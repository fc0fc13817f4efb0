"""Benchmark: a class notebook's `grader check` and its `%grade`, each against what it should cost.

In one run on this machine, as pairs run in turn (the order flipping each pair, so the ratio holds on a machine
whose load drifts), with bytecode written as a student's machine writes it (bench/bytecode.py; each command run
once first):

- `grader check micrograd.ipynb` of a class notebook (bench/classgen.py: the engine, a `Neuron` with `Layer` and
  `MLP`, `numerical_grad`, a 50-step training demo, a helper cell and 11 test cells that define and call
  `test_*`), against `grader check micrograd_mine.py` of the same engine and tests as the grader sees them: every
  code cell that is not a test as the module (the demo included), the helper cell and the `test_*` functions (not
  their calls) as `test_micrograd.py`. Target: the notebook within 1.2x the .py. Beside each one's wall time, the CPU
  time of its whole process tree (the sandboxes included; Linux), which the machine's load moves less.
- `%grade` in a real Jupyter kernel (jupyter_client's kernel, as Jupyter runs it), which has run every cell of the
  notebook and saved it, then `%load_ext grader`, as the kit's last cell: the wall time of the `%grade` cell, from
  the request to the kernel's idle, against `grader check` of the same saved notebook run from a terminal. The
  first `%grade` of the kernel is printed apart (it imports what shows the result). Target: at most 1 s more.

The machine's load is printed: on a shared machine, quote the medians and the ratios, not single runs.

    python bench/bench_notebook.py [--repeat 5] [--engine list_iterative]
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bytecode
import classgen

from grader import notebooks

NOTEBOOK = "micrograd.ipynb"
PY_TARGET = 1.2
GRADE_TARGET_S = 1.0


def as_py(nb: nbformat.NotebookNode, folder: Path) -> None:
    """The notebook's engine and tests as a .py submission and its test file, as the grader reads the notebook (its
    code cells, grader/notebooks.py): the cells that define no test_* as the module, in order; the others' test_*
    functions (their calls left out: a test file does not call its tests) and the helper cell as the tests."""
    helpers = classgen.suite_cells()[0]
    engine, tests = [], ["from micrograd_mine import *"]
    for _, source in notebooks.code_cells(nb):
        if "def test_" in source:
            tests.append("\n".join(line for line in source.splitlines() if not line.startswith("test_")).strip())
        elif source == helpers:
            tests.append(source)
        else:
            engine.append(source)
    (folder / "micrograd_mine.py").write_text("\n\n\n".join(engine) + "\n")
    (folder / "test_micrograd.py").write_text("\n\n\n".join(tests) + "\n")


REAPER = r"""
import ctypes, json, os, resource, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: the tree's orphans are reaped here
started = time.perf_counter()
subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - started
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        if os.waitpid(-1, os.WNOHANG)[0] == 0:
            time.sleep(0.02)
    except ChildProcessError:
        break
used = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    json.dump({"wall": wall, "cpu": used.ru_utime + used.ru_stime}, f)
"""
"""Runs a command under a subreaper (Linux): its wall time, and the CPU time of its whole tree (sandboxes included)."""


@dataclass
class Timed:
    """Runs of one command: each one's wall time and CPU time (every process of its tree)."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def check(folder: Path, target: str, env: dict[str, str], into: Timed | None = None) -> float:
    """`grader check target --json` run in folder, as a student types it: its wall time (noted in into, with the CPU
    time of its whole tree, sandboxes included)."""
    report = folder / "usage.json"
    command = [sys.executable, "-m", "grader.cli", "check", target, "--json", "r.json"]
    subprocess.run([sys.executable, "-c", REAPER, str(report), *command], cwd=folder, env=env, check=True)
    used = json.loads(report.read_text())
    if into is not None:
        into.wall.append(used["wall"])
        into.cpu.append(used["cpu"])
    return used["wall"]


def paired(first: Callable[[], float], second: Callable[[], float], repeat: int) -> tuple[list[float], list[float]]:
    """repeat pairs of the two, the order flipping each pair."""
    a, b = [], []
    for i in range(repeat):
        if i % 2 == 0:
            a.append(first())
            b.append(second())
        else:
            b.append(second())
            a.append(first())
    return a, b


class Kernel:
    """A real IPython kernel in the notebook's folder (the environment the benchmark gives), as Jupyter starts one."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(folder), env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, source: str) -> tuple[float, dict, list[dict]]:
        """Run a cell: its wall time from the request to the kernel's idle, its reply, and what it showed."""
        shown: list[dict] = []
        started = time.perf_counter()
        reply = self.client.execute_interactive(
            source, timeout=300, output_hook=lambda msg: shown.append(msg), allow_stdin=False
        )
        return time.perf_counter() - started, reply["content"], shown

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def run_all_and_save(kernel: Kernel, nb: nbformat.NotebookNode, path: Path) -> None:
    """Every code cell run in the kernel, in order, then the notebook saved with each cell's execution count (as a
    student saves it after Restart & Run All)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        _, reply, _ = kernel.run(cell.source)
        if reply.get("status") != "ok":
            raise SystemExit(f"a cell of the notebook failed in the kernel: {reply.get('evalue')}")
        cell.execution_count = reply["execution_count"]
    nbformat.write(nb, str(path))


def grade(kernel: Kernel) -> float:
    wall, reply, shown = kernel.run("%grade")
    if reply.get("status") != "ok" or not any("grader-table" in str(m["content"]) for m in shown):
        raise SystemExit(f"%grade showed no result: {reply} {[m['content'] for m in shown][-3:]}")
    return wall


def spread(values: list[float], unit: str = " s") -> str:
    return f"{statistics.median(values):6.2f}{unit}  (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="pairs of each comparison")
    parser.add_argument("--engine", default="list_iterative", help="the zoo's correct engine the notebook holds")
    args = parser.parse_args()
    busy = bytecode.Busy()
    nb = classgen.notebook(classgen.ZOO / "correct" / f"{args.engine}.py")
    notebook, py = Timed(), Timed()
    with tempfile.TemporaryDirectory() as tmp, bytecode.conditions() as conditions:
        env = conditions[0].env
        nb_dir, py_dir = Path(tmp, "nb"), Path(tmp, "py")
        nb_dir.mkdir()
        py_dir.mkdir()
        as_py(nb, py_dir)
        kernel = Kernel(nb_dir, env)
        try:
            run_all_and_save(kernel, nb, nb_dir / NOTEBOOK)
            check(nb_dir, NOTEBOOK, env)  # each command once first: bytecode written
            check(py_dir, "micrograd_mine.py", env)
            paired(
                lambda: check(nb_dir, NOTEBOOK, env, notebook),
                lambda: check(py_dir, "micrograd_mine.py", env, py),
                args.repeat,
            )
            kernel.run("%load_ext grader")
            first = grade(kernel)
            magic, terminal = paired(lambda: grade(kernel), lambda: check(nb_dir, NOTEBOOK, env), args.repeat)
        finally:
            kernel.close()
    print(f"cores: {os.cpu_count()}  python: {sys.version.split()[0]}  pairs: {args.repeat}  engine: {args.engine}")
    print(f"{busy.words()}: quote the medians and the ratios, not single runs")
    print(f"({conditions[0].words})")
    print("\nthe class notebook against the same engine and tests as a .py (wall; CPU of every process of the check):")
    print(f"  grader check micrograd.ipynb:     {spread(notebook.wall)}   CPU {spread(notebook.cpu)}")
    print(f"  grader check micrograd_mine.py:   {spread(py.wall)}   CPU {spread(py.cpu)}")
    ratios = [n / p for n, p in zip(notebook.wall, py.wall)]
    cpu_ratios = [n / p for n, p in zip(notebook.cpu, py.cpu)]
    print(f"  ratio notebook / .py:             {spread(ratios, '  ')}  pair by pair (target <= {PY_TARGET})")
    print(f"  ratio of their CPU:               {spread(cpu_ratios, '  ')}")
    more = [m - t for m, t in zip(magic, terminal)]
    print("\n%grade in a real kernel against grader check of the same saved notebook:")
    print(f"  %grade (the kernel's first):      {first:6.2f} s")
    print(f"  %grade:                           {spread(magic)}")
    print(f"  grader check micrograd.ipynb:     {spread(terminal)}")
    print(f"  %grade - grader check:            {spread(more)}  pair by pair (target <= {GRADE_TARGET_S:g} s)")


if __name__ == "__main__":
    main()
