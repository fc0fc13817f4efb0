"""Benchmark: `grader batch` on a generated class of notebooks, beside its floor.

The floor is what merely executing the same notebooks with nbclient costs, measured in
the same run with the same number of parallel processes. Prints seconds per notebook,
per core, and the ratio of the batch to the floor.

    python bench/bench_batch.py [--count 100] [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
ENGINES = sorted((ROOT / "tests" / "zoo" / "correct").glob("*.py")) + sorted((ROOT / "tests" / "zoo" / "buggy").glob("*.py"))
TESTS = (ROOT / "tests" / "fixtures" / "suites" / "good.py").read_text().replace(
    "from micrograd_mine import Neuron, Value, numerical_grad\n", "")


def make_class(folder: Path, count: int) -> list[Path]:
    paths = []
    for i in range(count):
        engine = ENGINES[i % len(ENGINES)].read_text()
        nb = new_notebook(cells=[new_markdown_cell("# micrograd"), new_code_cell(engine), new_code_cell(TESTS),
                                 new_code_cell("a = Value(2.0)\nb = a * a\nb.backward()\nprint(a.grad)")])
        path = folder / f"student{i:03d}.ipynb"
        nbformat.write(nb, str(path))
        paths.append(path)
    return paths


def execute(path: Path) -> None:
    nb = nbformat.read(str(path), as_version=4)
    NotebookClient(nb, timeout=60, startup_timeout=180, allow_errors=True, kernel_name="python3").execute(cwd=str(path.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        paths = make_class(folder, args.count)
        started = time.perf_counter()
        with ProcessPoolExecutor(args.jobs) as pool:
            list(pool.map(execute, paths))
        floor = time.perf_counter() - started
        started = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "grader.cli", "batch", str(folder), "--out", str(Path(tmp) / "out"),
                              "--jobs", str(args.jobs)], capture_output=True, text=True)
        batch = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(run.stderr)
    print(f"{args.count} notebooks, {args.jobs} parallel processes, {os.cpu_count()} cores")
    print(f"floor (nbclient only): {floor:7.1f} s  {floor / args.count:5.2f} s/notebook  "
          f"{floor * args.jobs / args.count:5.2f} core-s/notebook")
    print(f"grader batch:          {batch:7.1f} s  {batch / args.count:5.2f} s/notebook  "
          f"{batch * args.jobs / args.count:5.2f} core-s/notebook")
    print(f"ratio batch / floor: {batch / floor:.2f}")
    print(run.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
