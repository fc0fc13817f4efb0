"""A generated class of micrograd notebooks, the same every time (seeded), for benchmarks.

Each notebook is what a student hands in for the lesson, laid out as an nbgrader
assignment: markdown, the engine (a `Value` with + * ** neg sub tanh relu and backward),
a `Neuron` with `Layer` and `MLP`, `numerical_grad(f, x, h=1e-6)`, a 50-step training
demo that prints the loss, a read-only helper cell, and 11 test cells. The engine, Neuron
and numerical_grad cells are nbgrader solution cells; each test cell is an nbgrader
autograder cell worth one point that defines `test_xx` and calls it, so nbgrader grades it
by running it and `grader batch` finds the same `test_*` functions as the student's suite.

The engines are the project's own zoo (tests/zoo): by default 30 correct notebooks in the
zoo's correct styles and 10 with exactly one bug each, drawn from the zoo's buggy engines.

    python bench/classgen.py OUT [--count 40] [--buggy 10] [--seed 0]

writes OUT/<student>.ipynb and OUT/../<OUT name>-manifest.json (which engine each has).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "tests" / "zoo"
CORRECT = sorted((ZOO / "correct").glob("*.py"))
BUGGY = sorted((ZOO / "buggy").glob("*.py"))
TESTS_SOURCE = ROOT / "tests" / "fixtures" / "suites" / "good.py"
LEFT_OUT = {"test_deep_order"}
"""The good suite has 12 tests; the reference class has 11 test cells (this one overlaps the others most)."""
NOTEBOOK = "micrograd.ipynb"
"""The assignment's notebook name (nbgrader needs every student's to match the source's)."""

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

DEMO = """import random

random.seed(0)
model = Neuron(2)
xs = [[1.0, -1.0], [2.0, 0.5], [-1.0, 0.5], [0.0, 1.5]]
ys = [1.0, 1.0, -1.0, -1.0]
for step in range(50):
    loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys))
    for p in model.parameters():
        p.grad = 0.0
    loss.backward()
    for p in model.parameters():
        p.data += -0.1 * p.grad
    if step % 10 == 0 or step == 49:
        print(f"step {step:2d}  loss {loss.data:.6f}")"""

LAYERS = """

class Layer:

    def __init__(self, nin, nout):
        self.neurons = [Neuron(nin) for _ in range(nout)]

    def __call__(self, x):
        outs = [n(x) for n in self.neurons]
        return outs[0] if len(outs) == 1 else outs

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]


class MLP:

    def __init__(self, nin, nouts):
        sizes = [nin] + list(nouts)
        self.layers = [Layer(sizes[i], sizes[i + 1]) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]"""


@dataclass(frozen=True)
class Student:
    student: str
    engine: str
    """The zoo engine's name (its file stem)."""
    buggy: bool


def nbgrader_meta(
    grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False, points: int | None = None
) -> dict:
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def split_engine(source: str) -> tuple[str, str, str]:
    """A zoo engine file as (engine, Neuron, numerical_grad) sources, without its docstring."""
    tree = ast.parse(source)
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant):
        source = "\n".join(source.splitlines()[tree.body[0].end_lineno :])  # the docstring names the bug
    neuron = re.search(r"^(@.*\n)*class Neuron\b", source, re.M)
    numgrad = re.search(r"^def numerical_grad\b", source, re.M)
    if not neuron or not numgrad or not neuron.start() < numgrad.start():
        raise ValueError("a zoo engine must hold Value, then Neuron, then numerical_grad")
    return (
        source[: neuron.start()].strip(),
        source[neuron.start() : numgrad.start()].strip(),
        source[numgrad.start() :].strip(),
    )


def suite_cells() -> tuple[str, list[tuple[str, str]]]:
    """The helper cell and (name, cell source) of each test cell, from the good suite."""
    source = TESTS_SOURCE.read_text()
    tree = ast.parse(source)
    helpers, tests = [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            text = ast.get_source_segment(source, node)
            if node.name in LEFT_OUT:
                continue
            if node.name.startswith("test_"):
                tests.append((node.name, f"{text}\n\n\n{node.name}()"))
            else:
                helpers.append(text)
    return "import math\nimport random\n\n\n" + "\n\n\n".join(helpers), tests


def notebook(engine: Path, solution_markers: bool = False) -> nbformat.NotebookNode:
    """The assignment notebook with this zoo engine as the student's answer.

    solution_markers wraps the answers in nbgrader's BEGIN/END SOLUTION (the instructor's source).
    """
    value, neuron, numgrad = split_engine(engine.read_text())

    def answer(text: str) -> str:
        return f"### BEGIN SOLUTION\n{text}\n### END SOLUTION" if solution_markers else text

    helpers, tests = suite_cells()
    cells = [
        new_markdown_cell(
            "# micrograd: backpropagation from scratch\n\nWrite a scalar autograd engine, a neuron, "
            "and check your gradients numerically. Run every cell top to bottom before handing in."
        ),
        new_markdown_cell("## 1. The engine\n\n`Value` with `+ * ** neg sub tanh relu` and `backward()`."),
        new_code_cell(answer(value), metadata=nbgrader_meta("engine", solution=True)),
        new_markdown_cell("## 2. A neuron\n\n`Neuron(nin)`: `tanh(w . x + b)`; `Layer` and `MLP` build on it."),
        new_code_cell(answer(neuron + LAYERS), metadata=nbgrader_meta("neuron", solution=True)),
        new_markdown_cell("## 3. Numerical gradients\n\n`numerical_grad(f, x, h=1e-6)`: the central difference."),
        new_code_cell(answer(numgrad), metadata=nbgrader_meta("numerical_grad", solution=True)),
        new_markdown_cell("## 4. Training\n\n50 steps of gradient descent on four points; the loss should fall."),
        new_code_cell(DEMO, metadata={}),
        new_markdown_cell("## 5. Tests\n\nThe cells below are graded; do not change them."),
        new_code_cell(helpers, metadata=nbgrader_meta("helpers", locked=True)),
    ]
    cells += [
        new_code_cell(src, metadata=nbgrader_meta(name, grade=True, locked=True, points=1)) for name, src in tests
    ]
    for i, cell in enumerate(cells):  # fixed ids: the same notebook every time
        cell["id"] = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell-{i:02d}"
    return new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}})


def plan(count: int = 40, buggy: int = 10, seed: int = 0) -> list[Student]:
    """Which engine each student has: `buggy` of them one bug each (distinct while the zoo lasts)."""
    if not 0 <= buggy <= count:
        raise ValueError("--buggy must be between 0 and --count")
    rng = random.Random(seed)
    bugs = []
    while len(bugs) < buggy:
        bugs += rng.sample(BUGGY, min(len(BUGGY), buggy - len(bugs)))
    engines = [(e, True) for e in bugs] + [(rng.choice(CORRECT), False) for _ in range(count - buggy)]
    rng.shuffle(engines)
    return [Student(f"student{i + 1:03d}", e.stem, b) for i, (e, b) in enumerate(engines)]


def write_class(folder: Path, count: int = 40, buggy: int = 10, seed: int = 0) -> list[Student]:
    """Write folder/<student>.ipynb for each student of the plan; the plan."""
    folder.mkdir(parents=True, exist_ok=True)
    students = plan(count, buggy, seed)
    paths = {p.stem: p for p in CORRECT + BUGGY}
    for s in students:
        nbformat.write(notebook(paths[s.engine]), str(folder / f"{s.student}.ipynb"))
    return students


def write_py_class(folder: Path, count: int = 1000, buggy: int = 250, seed: int = 0) -> list[Student]:
    """Write folder/<student>/micrograd_mine.py (engine, Neuron with Layer and MLP, numerical_grad, each
    file its own bytes) and the good suite as its test_micrograd.py, for each student of the plan."""
    students = plan(count, buggy, seed)
    paths = {p.stem: p for p in CORRECT + BUGGY}
    tests = TESTS_SOURCE.read_text()
    for s in students:
        value, neuron, numgrad = split_engine(paths[s.engine].read_text())
        folder.joinpath(s.student).mkdir(parents=True, exist_ok=True)
        header = (
            f"# micrograd_mine.py: {s.student}'s engine for the backpropagation lesson\nimport math\nimport random\n"
        )
        source = "\n\n\n".join([header, value, neuron + LAYERS, numgrad]) + "\n"
        (folder / s.student / "micrograd_mine.py").write_text(source)
        (folder / s.student / "test_micrograd.py").write_text(tests)
    return students


def source_notebook() -> nbformat.NotebookNode:
    """The instructor's version (nbgrader's source/): the first correct engine, inside solution markers."""
    return notebook(ZOO / "correct" / "list_iterative.py", solution_markers=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--buggy", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    students = write_class(args.out, args.count, args.buggy, args.seed)
    manifest = args.out.parent / f"{args.out.name}-manifest.json"
    manifest.write_text(json.dumps([asdict(s) for s in students], indent=1) + "\n")
    print(
        f"{len(students)} notebooks in {args.out} ({sum(s.buggy for s in students)} buggy); "
        f"which engine each has: {manifest}"
    )


if __name__ == "__main__":
    main()
