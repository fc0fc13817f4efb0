"""Are assignment specs validated, and does every spec name only checks that exist?"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import catalog, spec
from grader.checks import REGISTRY
from grader.errors import SpecError
from grader.spec import tomllib


@pytest.mark.parametrize("name", spec.available())
def test_every_check_id_in_every_spec_is_registered(name):
    """Does every assignment load, and is each of its check ids a registered check?"""
    assignment = catalog.load(name)
    assert assignment.checks
    assert all(c.id in REGISTRY for c in assignment.checks)


def test_registry_holds_the_contracts_engine_checks():
    """Are the engine checks of the contract all registered under their stable ids?"""
    contract = {
        "forward",
        "add",
        "mul",
        "pow",
        "tanh",
        "relu",
        "neg_sub",
        "accumulate",
        "topo_order",
        "deep_graph",
        "hand_examples",
        "gradcheck",
        "numerical_grad",
    }
    assert contract <= set(REGISTRY)


def base() -> dict:
    return tomllib.loads((spec.assignments_root() / "micrograd" / "assignment.toml").read_text())


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda raw: raw["checks"].update(addd={"points": 5}), ["checks.addd", "no such check", "add"]),
        (
            lambda raw: raw["checks"]["add"].update(points="ten"),
            ["checks.add.points", "'ten'", "expected int or float"],
        ),
        (lambda raw: raw["checks"]["add"].update(points=-1), ["checks.add.points", "-1", ">= 0"]),
        (lambda raw: raw["checks"]["add"].update(visibility="secret"), ["checks.add.visibility", "'secret'", "hidden"]),
        (lambda raw: raw["limits"].update(request_s=0), ["limits.request_s", "0", "> 0"]),
        (lambda raw: raw["tolerances"].update(rtol="small"), ["tolerances.rtol", "'small'", "expected int or float"]),
        (lambda raw: raw.update(ops=["add", "sqrt"]), ["ops", "'sqrt'", "expected operations"]),
        (lambda raw: raw.pop("id"), ["id is missing"]),
        (lambda raw: raw.update(colour="blue"), ["colour", "unknown field"]),
    ],
)
def test_invalid_spec_names_field_value_and_expectation(mutate, words):
    """Does a mistake in a spec raise a SpecError naming the field, the value and what was expected?"""
    raw = base()
    mutate(raw)
    with pytest.raises(SpecError) as error:
        catalog.parse(raw, Path("assignment.toml"))
    for word in words:
        assert word in str(error.value)


def test_invalid_toml_is_a_spec_error(tmp_path):
    """Is a spec that is not TOML reported as such, with its path?"""
    (tmp_path / "assignment.toml").write_text("id = \n")
    with pytest.raises(SpecError, match="not valid TOML"):
        catalog.load(tmp_path)
