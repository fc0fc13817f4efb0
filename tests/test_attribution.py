"""Cause attribution (grader/checks/attribution.py): the pass after the checks that says each cause once.

It reads the checks' typed results only: the first check, in the assignment's order, to fail from a cause explains
it, the others say "Same cause as <first>", and a visible check never names a hidden one.
"""

from __future__ import annotations

from grader.checks.attribution import alone, attributed, score
from grader.checks.reads import Ran
from grader.result import Outcome, Status
from grader.spec import CheckSpec

CAUSE = "tanh_grad_from_input"


def _ran(check_id: str, status: Status = "failed", cause: str | None = CAUSE) -> Ran:
    return Ran(check_id, Outcome(status, f"{check_id} saw it", cause=cause), duration_s=0.25)


def _results(specs: list[CheckSpec], ran: dict[str, Ran]) -> dict:
    titles = {s.id: s.id.title() for s in specs}
    hidden = {s.id for s in specs if s.visibility == "hidden"}
    return {r.id: r for r in attributed(specs, ran, titles, hidden)}


def test_the_first_check_in_the_assignments_order_explains_the_cause_whatever_order_they_ran_in():
    specs = [CheckSpec("tanh", 6.0), CheckSpec("hand_examples", 5.0), CheckSpec("gradcheck", 5.0)]
    ran = {"gradcheck": _ran("gradcheck"), "hand_examples": _ran("hand_examples"), "tanh": _ran("tanh")}
    results = _results(specs, ran)
    assert list(results) == ["tanh", "hand_examples", "gradcheck"]
    assert "Likely cause: tanh's derivative is taken on its input" in results["tanh"].feedback
    for check_id in ("hand_examples", "gradcheck"):
        assert results[check_id].feedback == f"{check_id} saw it\nSame cause as tanh: " + (
            "tanh's derivative is taken on its input, 1 - x**2."
        )
        assert results[check_id].cause == CAUSE and results[check_id].score == 0.0
    assert results["tanh"].duration_s == 0.25 and results["tanh"].title == "Tanh"


def test_a_visible_check_never_names_a_hidden_one_and_a_pass_names_no_cause():
    specs = [CheckSpec("tanh", 6.0, "hidden"), CheckSpec("gradcheck", 5.0), CheckSpec("training", 8.0)]
    ran = {"tanh": _ran("tanh"), "gradcheck": _ran("gradcheck"), "training": _ran("training", "passed")}
    results = _results(specs, ran)
    assert "Same cause as tanh" not in results["gradcheck"].feedback
    assert "Likely cause:" in results["gradcheck"].feedback and "Likely cause:" in results["tanh"].feedback
    assert results["training"].cause is None and results["training"].score == 8.0


def test_a_check_as_it_ends_says_its_cause_in_full_and_partial_credit_is_a_share_of_the_points():
    spec = CheckSpec("gradcheck", 5.0)
    assert "Likely cause:" in alone(spec, "Gradcheck", _ran("gradcheck")).feedback
    assert score(Outcome("failed", "x", fraction=0.5), 12.0) == 6.0
    assert score(Outcome("passed", "x", fraction=1.5), 12.0) == 12.0
    assert score(Outcome("error", "x"), 12.0) == 0.0
