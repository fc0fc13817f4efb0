"""One search for all (issue 30, item 3): gradcheck's own search reaches the edges of each operation (0, a
negative base under **), and judges the cases the rule checks before it found failing, so it never passes an
engine whose gradient raises where the pow check found it does."""

from __future__ import annotations

import functools

import pytest
from conftest import BASE_ENGINE, WHEATS

from grader import catalog
from grader.checks.gradcheck import boundary_sweep, found_cases, gradcheck_judged
from grader.checks.reads import Found, Ran, Reads
from grader.checks.suite import SUITE_CHECKS
from grader.result import Outcome

# pow's backward written as k * x**k / x: right wherever x is not 0, a ZeroDivisionError at a base of 0
POW_BY_BASE = {
    "closures": (BASE_ENGINE, "k * self.data ** (k - 1) * out.grad", "k * out.data / self.data * out.grad"),
    "set_recursive": (
        WHEATS / "wheat_recursive_set.py",
        "other * self.data ** (other - 1) * out.grad",
        "other * out.data / self.data * out.grad",
    ),
    "op_table": (WHEATS / "wheat_op_table.py", "k * a.data ** (k - 1) * g", "k * node.data / a.data * g"),
}


@functools.cache
def _checks():
    keep = ("pow", "gradcheck")
    return catalog.load("micrograd").without(
        SUITE_CHECKS + tuple(c.id for c in catalog.load("micrograd").checks if c.id not in keep)
    )


@pytest.mark.parametrize("style", list(POW_BY_BASE))
def test_gradcheck_does_not_pass_a_pow_whose_gradient_raises_at_zero(style, grade_source):
    """pow's rule check finds the ZeroDivisionError at a base of 0; gradcheck, judging the whole engine, finds
    it too instead of passing."""
    path, old, new = POW_BY_BASE[style]
    source = path.read_text()
    assert old in source
    found = {c.id: c for c in grade_source(source.replace(old, new), _checks()).checks}
    assert found["pow"].status in ("failed", "error"), found["pow"].feedback
    gradcheck = found["gradcheck"]
    assert gradcheck.status in ("failed", "error"), gradcheck.feedback
    assert "ZeroDivisionError" in gradcheck.feedback, gradcheck.feedback
    assert "0.0" in gradcheck.counterexample.code or "-1.5" in gradcheck.counterexample.code


def test_the_boundary_sweep_reaches_each_operations_edges_and_only_judges_what_any_engine_can():
    """0 and a negative input for every operation, a base computed to 0 under **; a fractional power of a
    base within a nudge of 0 is not judged (its central difference is complex on any engine)."""
    sweep = boundary_sweep(("add", "mul", "pow", "tanh", "relu"))
    assert (("leaf", 0.0), ("pow", 0, 2)) in sweep and (("leaf", -1.5), ("pow", 0, 3)) in sweep
    assert (("leaf", 1.5), ("leaf", -1.5), ("add", 0, 1), ("pow", 2, 2)) in sweep
    assert (("leaf", -1.5), ("relu", 0)) in sweep and (("leaf", 0.0), ("tanh", 0)) in sweep
    assert gradcheck_judged((("leaf", 0.0), ("pow", 0, 2)))
    assert not gradcheck_judged((("leaf", 0.0), ("pow", 0, 1.5)))
    assert not gradcheck_judged((("leaf", 0.0), ("relu", 0)))


def test_gradcheck_judges_the_cases_the_checks_it_reads_found_failing_that_it_can_build():
    """The cases found failing by the checks gradcheck reads, of the operations it probes (those that work), are
    its too, in the order it declares those checks."""
    zero_pow = (("leaf", 0.5), ("leaf", 0.5), ("add", 0, 1), ("leaf", -1.0), ("add", 2, 3), ("pow", 4, 2))
    with_tanh = (("leaf", 0.5), ("tanh", 0))
    failed = Outcome("failed", "wrong")
    found = {
        "tanh": Ran("tanh", failed, Found(cases=(with_tanh,))),
        "pow": Ran("pow", failed, Found(cases=(zero_pow,))),
    }
    reads = Reads("gradcheck", ("pow", "tanh"), found)
    assert found_cases(reads, ("add", "mul", "pow")) == [zero_pow]
    assert found_cases(reads, ("add", "pow", "tanh")) == [zero_pow, with_tanh]
    assert found_cases(Reads("gradcheck", ("pow",), {}), ("add",)) == []
