"""Does `grader selftest` show each operator's mutants caught by the check named for it, and can it fail?"""

from __future__ import annotations

from pathlib import Path

from conftest import ZOO

from grader import catalog
from grader.checks.suite import SUITE_CHECKS
from grader.commands.selftest import Engine, engines, grade_engine, problems, render
from grader.sabotage import all_operators, wheats
from grader.sabotage.operators import NOT_DRAWN


def test_selftest_passes_and_prints_the_matrices(grader_once):
    """Does selftest exit 0 with the operator x engine matrix and a row per mutant, each marked failing in the
    column of the check named for its operator?"""
    returncode, stdout, stderr = grader_once("selftest")
    assert returncode == 0, stdout + stderr
    assert "Operators each engine admits" in stdout
    bases, mutants = engines(tuple(all_operators()))
    rows = {line.split()[0]: line for line in stdout.splitlines() if line.strip()}
    for op_id in all_operators():
        assert op_id in rows and "+" in rows[op_id]  # every operator applies to some engine
    for engine in mutants:
        assert "[X]" in rows[engine.id] or "[E]" in rows[engine.id], rows[engine.id]
    assert {w.id for w in wheats()} <= set(rows) and "reference" in rows
    assert "OK: every correct engine passes every check worth points" in stdout
    for engine in bases:  # the OK line is never under a correct engine's X (issue 40, item 10)
        assert "X" not in rows[engine.id] and "E" not in rows[engine.id], rows[engine.id]
    assert "OK: every catch hint's test passes on every correct engine and catches every mutant" in stdout
    # issue 31: every mutant's own bug undone by the repair the grader verified, and full marks after it
    assert f"OK: each of the {len(mutants)} mutants is restored to full marks by the repair" in stdout, stdout


def test_selftest_says_what_it_proves_and_shows_its_progress(grader_once):
    """Does selftest say first, in plain words, what it proves, end saying it proved it, and show each engine
    graded on stderr as it goes (it takes a minute or two)?"""
    returncode, stdout, stderr = grader_once("selftest")
    bases, mutants = engines(tuple(catalog.load("micrograd").sabotages) + NOT_DRAWN)  # those too: proven here
    assert stdout.startswith("grader selftest: does this grader tell right from wrong on assignment micrograd?")
    assert f"{len(bases) - 1} correct engines written in other styles, and {len(mutants)} engines" in stdout
    assert stdout.rstrip().endswith("and each hint it gives students catches the bug it names."), stdout[-500:]
    steps = [line for line in stderr.splitlines() if line.startswith("[")]
    assert len(steps) == len(bases) + len(mutants) and steps[-1].startswith(f"[{len(steps)}/{len(steps)}] graded ")
    assert "running each catch hint as a test on" in stderr


def test_selftest_flags_a_mutant_that_is_really_correct(tmp_path: Path):
    """Would selftest notice a 'mutant' that is in fact a correct engine, or one its named check misses?"""
    task = catalog.load("micrograd").without(SUITE_CHECKS)
    wheat = wheats()[0]
    fake = Engine("fake@recursive_set", wheat.source, check="add")
    results = [grade_engine(Engine(wheat.id, wheat.source), tmp_path, task), grade_engine(fake, tmp_path, task)]
    found = problems([Engine(wheat.id, wheat.source), fake], results)
    assert any("not caught by add" in p for p in found)
    assert any("equivalent to a correct engine" in p for p in found)


LOSS_FALLS = """import random
random.seed(0)
model = Neuron(2)
xs = [[1.0, -1.0], [2.0, 0.5], [-1.0, 0.5], [0.0, 1.5]]
ys = [1.0, 1.0, -1.0, -1.0]
losses = []
for _ in range(50):
    loss = sum((model(x) - y) ** 2 for x, y in zip(xs, ys))
    for p in model.parameters():
        p.grad = 0.0
    loss.backward()
    for p in model.parameters():
        p.data -= 0.1 * p.grad
    losses.append(loss.data)
assert losses[-1] < losses[0]"""


def test_every_catch_hint_is_run_and_an_unproven_one_is_flagged(monkeypatch):
    """Is each hint's test run on the correct engines and the mutants, and would selftest flag the old
    neuron_no_bias hint, "train a neuron and assert the loss falls", which a neuron without a bias passes?"""
    from dataclasses import replace

    from grader import hints
    from grader.sabotage.mutate import REGISTRY

    task = catalog.load("micrograd").without(SUITE_CHECKS)
    bases, mutants = engines(task.sabotages)
    ours = [m for m in mutants if m.id.startswith("neuron_no_bias@")]
    assert ours
    proven = hints.prove(bases, ours, ("neuron_no_bias",))
    assert hints.problems(bases, ours, proven, ("neuron_no_bias",)) == []
    monkeypatch.setitem(
        REGISTRY,
        "neuron_no_bias",
        replace(REGISTRY["neuron_no_bias"], proof=LOSS_FALLS, catch="train a neuron and assert the loss falls"),
    )
    unproven = hints.problems(bases, ours, hints.prove(bases, ours, ("neuron_no_bias",)), ("neuron_no_bias",))
    assert len(unproven) == len(ours) and all("does not catch neuron_no_bias@" in p for p in unproven), unproven


def test_an_advisory_check_a_correct_engine_does_not_pass_is_no_x_under_an_ok(tmp_path: Path):
    """Issue 40, item 10: a correct engine with the lesson's recursive build_topo does not pass deep_graph, which is
    advisory (no points). Its row in selftest's table shows `~` there, which the legend explains, never the X of a
    failure, and the OK line below it says what it proves: every check worth points passes."""
    task = catalog.load("micrograd").without(SUITE_CHECKS)
    recursive = Engine("recursive", (ZOO / "correct" / "labels_float_order.py").read_text())
    result = grade_engine(recursive, tmp_path, task)
    assert next(c for c in result.checks if c.id == "deep_graph").status != "passed"
    table = render([recursive], [result], [c.id for c in task.checks])
    row = next(line for line in table.splitlines() if line.startswith("recursive"))
    column = [c.id for c in task.checks].index("deep_graph")
    assert row.split()[1:][column] == "~" and "X" not in row, row
    assert "~ an advisory check, worth no points, not passed" in table
    assert "OK: every correct engine passes every check worth points" in table
