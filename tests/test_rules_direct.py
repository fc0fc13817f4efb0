"""Is each rule probed under an incoming gradient other than 1 on its own, where the engine's nodes carry a
backward of their own: the output's backward called alone, its grad set to 2.5 and -0.5, so that a backward()
walking the wrong order neither skips a right rule nor hides a wrong one?

Before, a wheat whose only bug is a missing `reversed` in backward() (topo_not_reversed) had add, mul, pow, tanh
and relu skipped (see topo_order): the property was probed only inside nested expressions."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest
from conftest import HERE

from grader import catalog
from grader.grading import grade
from grader.protocol import UNREADABLE, Direct, Observation
from grader.protocol import direct as read
from grader.sabotage.planning import mutant
from grader.sandbox.inside import probes

EVIDENCE = HERE / "fixtures" / "evidence"
RULES = ("add", "mul", "pow", "tanh", "relu")
CHECKS = (*RULES, "neg_sub", "accumulate", "topo_order")


@functools.cache
def graded(path: Path):
    task = catalog.load("micrograd")
    result = grade(path, task.without(tuple(c.id for c in task.checks if c.id not in CHECKS)))
    return {c.id: c for c in result.checks}


def reversal_dropped(wheat: str, folder: Path) -> Path:
    path = folder / f"{wheat}_topo_not_reversed.py"
    source = mutant("topo_not_reversed", wheat)
    assert source is not None
    path.write_text(source)
    return path


@pytest.mark.parametrize("wheat", ["recursive_set", "slots_exp"])
def test_a_wrong_order_leaves_the_rules_passed_on_the_direct_probe(wheat, tmp_path):
    """The wheats with closures, their order not reversed: every rule check passes, the property under an
    incoming gradient other than 1 probed through the output's own _backward; topo_order fails; accumulate, whose
    f(x) combined with x needs the order, stays skipped naming topo_order."""
    found = graded(reversal_dropped(wheat, tmp_path))
    for rule in RULES:
        check = found[rule]
        assert check.status == "passed" and check.score == check.max_score, (rule, check.feedback)
        assert any("probed by calling the output's own _backward alone" in p for p in check.artifacts["probed"])
    assert found["topo_order"].status == "failed" and found["topo_order"].cause == "topo_not_reversed"
    assert found["accumulate"].status == "skipped" and found["accumulate"].artifacts["blocked_by"] == ["topo_order"]


def test_where_nothing_can_be_called_the_rules_fall_back_and_are_skipped(tmp_path):
    """The wheat dispatching on the op name (no backward of each node's own), its order not reversed: each rule
    check is skipped as before, naming topo_order, never passed."""
    found = graded(reversal_dropped("op_table", tmp_path))
    for rule in RULES:
        assert found[rule].status == "skipped" and found[rule].artifacts["blocked_by"] == ["topo_order"]
        assert not any("alone" in p for p in found[rule].artifacts["probed"])


def test_a_rule_forgetting_out_grad_fails_even_with_the_order_broken():
    """* and tanh forget out.grad, backward() walks from the leaves up: mul and tanh fail on the output's own
    _grad_fn called with out.grad = 2.5 (skipped before), as pasteable code, one misconception named once with
    both methods; the right rules pass."""
    found = graded(EVIDENCE / "outgrad_ignored_leaves_first.py")
    mul = found["mul"]
    assert mul.status == "failed" and mul.cause == "missing_outgrad_mul"
    assert mul.counterexample.code == "a = Value(2.0)\nb = Value(-3.0)\nc = a * b\nc.grad = 2.5\nc._grad_fn()"
    assert mul.counterexample.expected == {"a.grad": -7.5, "b.grad": 5.0}
    assert mul.counterexample.got == {"a.grad": -3.0, "b.grad": 2.0}
    assert "c._grad_fn() called on its own, a.grad should be -7.5 but your engine gives -3" in mul.feedback
    assert "does not multiply by out.grad" in mul.feedback
    tanh = found["tanh"]
    assert tanh.status == "failed" and "b.grad = 2.5" in tanh.counterexample.code
    # one misconception in two methods, named once: tanh's card repeats mul's, naming both methods
    assert tanh.cause == mul.cause and tanh.artifacts["causes"] == ["missing_outgrad_mul", "missing_outgrad_tanh"]
    assert "Same cause as mul: in the backward of __mul__ and tanh" in " ".join(tanh.feedback.split())
    for rule in ("add", "pow", "relu"):
        assert found[rule].status == "passed", found[rule].feedback
    assert found["topo_order"].status == "failed"


def value_class(source: str):
    path = Path(probes.__file__).parents[2] / "sabotage" / "engines" / f"wheat_{source}.py"
    spec = importlib.util.spec_from_file_location(f"engine_{source}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Value


def test_the_probe_calls_the_output_alone_and_gives_up_where_it_cannot():
    """In process: on the reference, each input gets g times its local derivative; no hook where the nodes carry
    no backward of their own, or one that needs an argument; a tanh built from exp and / leaves its input 0 (the
    output's backward alone is not the whole rule, so the check does not count it)."""
    import reference

    program = (("leaf", 2.0), ("leaf", -3.0), ("mul", 0, 1))
    assert probes.direct(program, reference.Value, [1.0, 2.5]) == {
        "hook": "_backward",
        "grads": [[-3.0, 2.0, 1.0], [-7.5, 5.0, 2.5]],
    }
    assert probes.direct(program, value_class("op_table"), [2.5]) == {"hook": None}

    class Composite(reference.Value):
        def tanh(self):
            e = (self * 2).exp()
            return (e - 1) / (e + 1)

    seen = probes.direct((("leaf", 0.5), ("tanh", 0)), Composite, [1.0])
    assert seen["hook"] == "_backward" and seen["grads"][0][0] == 0.0

    class Argued(reference.Value):
        def __add__(self, other):
            out = super().__add__(other)
            out._backward = lambda grad: None
            return out

    assert probes.direct((("leaf", 1.0), ("leaf", 2.0), ("add", 0, 1)), Argued, [2.5]) == {"hook": None}


def test_a_direct_claim_is_read_as_a_claim():
    """protocol.direct: one list of the program's grads per incoming gradient, numbers only; no hook is a Direct
    without one; anything else is unreadable."""
    program = (("leaf", 2.0), ("leaf", -3.0), ("mul", 0, 1))
    assert read({"hook": "_backward", "grads": [[1.0, 2.0, 3.0], [1, 2, 3]]}, program, 2) == Direct(
        "_backward", ((1.0, 2.0, 3.0), (1.0, 2.0, 3.0))
    )
    assert read({"hook": None}, program, 2) == Direct("")
    for bad in (
        {"hook": "_backward", "grads": [[1.0, 2.0, 3.0]]},
        {"hook": "_backward", "grads": [[1.0, 2.0], [1.0, 2.0]]},
        {"hook": "_backward", "grads": [[1.0, 2.0, "3"], [1.0, 2.0, 3.0]]},
        {"hook": 3, "grads": [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]},
        "grads",
    ):
        assert read(bad, program, 2) == Observation(error=UNREADABLE), bad
