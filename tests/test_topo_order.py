"""Is topo_order judged on its own evidence: the calls backward() makes to each node's own backward, watched in
the sandbox, where the nodes carry one; gradients where they do not, and a skip when `=` keeps those from
showing the order?

The engines are our own (tests/fixtures/evidence), each in a style of its own. Before topo_order watched the
calls, the three engines of issue 30's first example (no topological sort, `=` in every rule) got 7/7, and
self_assign_other_accumulate (a right order) failed topo_order."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest
from conftest import CORRECT_ENGINES, HERE

from grader import catalog
from grader.checks import order
from grader.checks.cases import diamond
from grader.grading import grade
from grader.protocol import Order
from grader.sandbox.inside import probes

EVIDENCE = HERE / "fixtures" / "evidence"


@functools.cache
def topo(path: Path):
    task = catalog.load("micrograd")
    result = grade(path, task.without(tuple(c.id for c in task.checks if c.id != "topo_order")))
    return next(c for c in result.checks if c.id == "topo_order")


def value_class(path: Path):
    spec = importlib.util.spec_from_file_location(f"engine_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Value


@pytest.mark.parametrize(
    ("engine", "hook"), [("recursion_assign", "_backward"), ("recursion_assign_grad_fn", "_grad_fn")]
)
def test_a_recursion_without_a_topological_sort_fails_whatever_the_rules_write(engine, hook):
    """Does backward() that runs a node's backward and then recurses into its children, with `=` in every rule
    (7/7 before), fail topo_order, saying which node's backward ran how often, on a small diamond?"""
    found = topo(EVIDENCE / f"{engine}.py")
    assert found.status == "failed" and found.score == 0
    assert f"c.{hook} 3 times" in found.feedback and "exactly once" in found.feedback
    assert found.cause == "visited_dropped"
    assert found.counterexample.expected == {f"order of the {hook} calls": "e, d, c"}
    assert found.counterexample.got == {f"order of the {hook} calls": "e, d, c, c, c"}
    assert "e = d + c" in found.counterexample.code


def test_where_nothing_can_be_watched_and_equals_blocks_the_gradients_topo_order_is_skipped():
    """An engine dispatching on the op name (no backward of each node's own) with the same recursion and `=`
    everywhere: not passed (7/7 before), but skipped, naming accumulate."""
    found = topo(EVIDENCE / "recursion_assign_dispatch.py")
    assert found.status == "skipped" and found.score == 0
    assert found.artifacts["blocked_by"] == ["accumulate"] and found.artifacts["probed"] == []
    assert "(see accumulate)" in found.feedback and "could not be probed" in found.feedback


def test_a_right_order_is_not_blamed_for_equals_in_the_rules():
    """`self.grad =` with `other.grad +=` in every rule and a right order: topo_order passes (it failed
    before, blaming the order), judged on the watched calls."""
    found = topo(EVIDENCE / "self_assign_other_accumulate.py")
    assert found.status == "passed", found.feedback
    assert found.artifacts["probed"] == [f"{order.PROPERTY}, watched through each node's _backward"]


@pytest.mark.parametrize("engine", ["relu_assign_leaves_first", "relu_assign_nested_twice"])
def test_a_wrong_order_is_shown_as_the_order_of_the_calls(engine):
    """Leaves first, or a _backward that runs its inputs' again: the smallest case with the order seen."""
    found = topo(EVIDENCE / f"{engine}.py")
    assert found.status == "failed"
    if engine == "relu_assign_leaves_first":
        assert "ran d._backward before e._backward, though e uses d" in found.feedback
        assert found.cause == "topo_not_reversed"
        assert found.counterexample.got == {"order of the _backward calls": "c, d, e"}
    else:
        assert "ran d._backward 2 times" in found.feedback and found.cause == "visited_dropped"


@pytest.mark.parametrize("path", CORRECT_ENGINES, ids=lambda p: p.stem)
def test_correct_engines_pass_on_the_evidence_their_style_gives(path):
    """Every correct engine passes; those whose nodes carry a backward of their own on the watched calls (kahn's
    local_backward too), the one dispatching on the op name on gradients."""
    found = topo(path)
    assert found.status == "passed", found.feedback
    how = "judged from the gradients" if path.stem == "wheat_op_table" else "watched through each node's"
    assert len(found.artifacts["probed"]) == 1 and how in found.artifacts["probed"][0]


def test_the_probe_watches_each_node_and_gives_up_where_it_cannot():
    """In process, on engines of our own: the reference's calls are in a reverse topological order; an engine
    with no backward of each node's own, or whose nodes refuse a new attribute, gives no hook."""
    import reference

    program = diamond("add")
    seen = probes.order(program, reference.Value)
    assert seen == {"hook": "_backward", "watched": [2, 3, 4], "calls": [4, 3, 2]}
    assert order.judge(program, Order("_backward", (2, 3, 4), (4, 3, 2))) is None
    dispatch = value_class(Path(probes.__file__).parents[2] / "sabotage" / "engines" / "wheat_op_table.py")
    assert probes.order(program, dispatch)["hook"] is None

    class Frozen:  # its nodes take no new attribute but grad
        def __init__(self, data, children=()):
            for name, value in (("data", float(data)), ("grad", 0.0), ("_prev", children), ("_backward", int)):
                object.__setattr__(self, name, value)

        def __setattr__(self, name, value):
            if name != "grad":
                raise AttributeError(f"{name} cannot be set")
            object.__setattr__(self, name, value)

        def __add__(self, other):
            return Frozen(self.data + other.data, (self, other))

    assert probes.order(program, Frozen)["hook"] is None


def test_the_judge_names_each_way_an_order_goes_wrong():
    """Never run, run twice, run before a node using it: each said, with the order expected and seen."""
    program = diamond("add")  # c = a + b; d = c + c; e = d + c
    never = order.judge(program, Order("_backward", (2, 3, 4), (4, 3)))
    assert "never ran c._backward" in never.what and never.got == {"order of the _backward calls": "e, d"}
    twice = order.judge(program, Order("_backward", (2, 3, 4), (4, 3, 2, 2)))
    assert "c._backward 2 times" in twice.what and twice.cause.id == "visited_dropped"
    early = order.judge(program, Order("_backward", (2, 3, 4), (4, 2, 3)))
    assert "ran c._backward before d._backward, though d uses c" in early.what and early.cause is None
    reversed_ = order.judge(program, Order("_backward", (2, 3, 4), (2, 3, 4)))
    assert reversed_.cause.id == "topo_not_reversed"


def test_an_order_claim_is_read_as_a_claim():
    """protocol.order: calls of nodes the program has, a watched list that is the program's operations, at most
    MAX_CALLS of them; anything else is unreadable, and no hook is an Order without one."""
    from grader.protocol import UNREADABLE, Observation
    from grader.protocol import order as read

    program = diamond("add")
    assert read({"hook": "_backward", "watched": [2, 3, 4], "calls": [4, 3, 2]}, program) == Order(
        "_backward", (2, 3, 4), (4, 3, 2)
    )
    assert read({"hook": None, "why": "no backward of its own"}, program) == Order("")
    for bad in (
        {"hook": "_backward", "watched": [2, 3, 4], "calls": [4, 3, 9]},
        {"hook": "_backward", "watched": [0, 3, 4], "calls": []},
        {"hook": "_backward", "watched": [2, 3, 4], "calls": [True]},
        {"hook": "_backward", "watched": [2, 3, 4], "calls": [2] * (probes.MAX_CALLS + 1)},
        {"hook": 3, "watched": [2, 3, 4], "calls": []},
        "calls",
    ):
        assert read(bad, program) == Observation(error=UNREADABLE), bad
