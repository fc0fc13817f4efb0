"""Do the neuron and training checks pass correct networks and name where a buggy one diverges?"""

from __future__ import annotations

import pytest
from conftest import BASE_ENGINE, REFERENCE_SOURCE, WHEATS, ZOO, statuses, with_limits

from grader import catalog

BASE = BASE_ENGINE.read_text()

# An MLP written the way the lecture writes it, on top of whatever Neuron the file has.
LECTURE_MLP = """

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
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i + 1]) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]
"""


def check(result, check_id):
    return next(c for c in result.checks if c.id == check_id)


@pytest.fixture(scope="module")
def lecture():
    return catalog.load("micrograd-lecture")


@pytest.mark.parametrize(
    "source",
    [BASE + LECTURE_MLP, REFERENCE_SOURCE, (ZOO / "correct" / "kahn.py").read_text() + LECTURE_MLP],
    ids=["list_iterative+mlp", "reference", "kahn+mlp"],
)
def test_correct_mlps_train_like_the_reference(source, lecture, grade_source):
    """Does an MLP(3, [4, 4, 1]) on a correct engine pass, matching the reference at all 50 steps?"""
    result = grade_source(source, lecture)
    training = check(result, "training")
    assert training.status == "passed", training.feedback
    assert training.artifacts["first_divergence"] is None
    assert len(training.artifacts["student_loss"]) == len(training.artifacts["reference_loss"]) == 50
    assert training.artifacts["student_loss"][-1] < 0.1
    assert statuses(result)["neuron"] == "passed"


def test_neuron_without_bias_fails_even_though_it_converges(micrograd, grade_source):
    """Is a neuron without a bias failed at the step it leaves the reference, although its loss falls?"""
    result = grade_source((ZOO / "buggy" / "neuron_no_bias.py").read_text(), micrograd)
    neuron, training = check(result, "neuron"), check(result, "training")
    assert neuron.status == "failed" and "no bias" in neuron.feedback
    assert training.status == "failed" and "from step 1 on" in training.feedback
    assert training.artifacts["converged_at"] is not None and "does not prove an engine right" in training.feedback
    assert neuron.cause == training.cause == "neuron_no_bias"  # each on its own evidence: tanh(w . x); the losses
    assert "those of the lesson's neuron without its bias b" in training.feedback


def test_relu_instead_of_tanh(micrograd, grade_source):
    """Is a neuron with relu instead of tanh told so, and its training diverging from step 0?"""
    result = grade_source(BASE.replace("        return act.tanh()", "        return act.relu()"), micrograd)
    assert "the activation is relu, not tanh" in check(result, "neuron").feedback
    assert "from step 0 on" in check(result, "training").feedback


@pytest.mark.parametrize(
    "engine",
    [
        "add_half",
        "assign_not_accumulate",
        "mul_own_data",
        "mul_missing_outgrad",
        "pow_off_by_one",
        "tanh_grad_from_input",
        "topo_not_reversed",
        "missing_seed",
        "sub_as_add",
    ],
)
def test_classic_bugs_diverge_at_a_named_step(engine, micrograd, grade_source):
    """Does each classic bug fail the training check with the first diverging step named?"""
    training = check(grade_source((ZOO / "buggy" / f"{engine}.py").read_text(), micrograd), "training")
    assert training.status == "failed"
    step = training.artifacts["first_divergence"]
    assert step is not None and f"from step {step} on" in training.feedback
    assert training.counterexample and "loss.backward()" in training.counterexample.code


@pytest.mark.parametrize(
    "patch, check_id, status, words",
    [
        (
            "Neuron.parameters = lambda self: self.w + [self.b, Value(0.0)]",
            "neuron",
            "failed",
            ["returned 5 values; expected 4"],
        ),
        ("Neuron.__call__ = lambda self, x: 0.5", "neuron", "failed", ["returned a float", "must return a Value"]),
        (
            "def _boom(self, x):\n    raise RuntimeError('not yet')\nNeuron.__call__ = _boom",
            "neuron",
            "error",
            ["RuntimeError: not yet"],
        ),
        (
            "def _boom(self, x):\n    raise RuntimeError('not yet')\nNeuron.__call__ = _boom",
            "training",
            "error",
            ["running the training loop", "RuntimeError: not yet"],
        ),
        (
            "Value.tanh = lambda self: Value(float('nan'), (self,))",
            "training",
            "failed",
            ["not a number", "from step 0 on"],
        ),
        (
            (
                "import time\n_old = Neuron.__call__\n"
                "Neuron.__call__ = lambda self, x: (time.sleep(0.1), _old(self, x))[1]"
            ),
            "training",
            "error",
            ["did not finish"],
        ),
    ],
)
def test_bad_networks_fail_clearly(patch, check_id, status, words, micrograd, grade_source):
    """Does a wrong parameter count, a float output, an exception, a NaN loss or a slow loop give a clear result?"""
    result = grade_source(BASE + "\n\n" + patch + "\n", with_limits(micrograd, check_s=3.0))
    found = check(result, check_id)
    assert found.status == status, found.feedback
    for word in words:
        assert word in found.feedback


SET_ORDERED = (WHEATS / "wheat_recursive_set.py").read_text()


@pytest.mark.parametrize(
    "change",
    [
        (
            "            self.grad += out.grad\n            other.grad += out.grad",
            "            self.grad = out.grad\n            other.grad = out.grad",
        ),
        ("            self.grad += other.data * out.grad", "            self.grad = other.data * out.grad"),
    ],
    ids=["assign_in_add", "assign_in_mul_self"],
)
def test_a_loss_that_follows_the_order_of_a_set_says_so_and_what_to_fix_first(change, micrograd, grade_source):
    """Children in a set, and a bug the order changes (`=` for `+=`, where which path is kept follows the order):
    the loop gives other losses each run, so the card says the numbers change from run to run and no loop
    reproduces them, and, accumulate having named the cause, says it once ('Same cause as accumulate'), as
    gradcheck's and hand_examples' cards do; artifacts say unstable (the reports fold the loop away)."""
    old, new = change
    assert old in SET_ORDERED
    checks = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in ("accumulate", "training")))
    found = {c.id: c for c in grade_source(SET_ORDERED.replace(old, new, 1), checks).checks}
    training = found["training"]
    assert training.status == "failed"
    assert training.artifacts.get("unstable") is True, training.feedback
    assert "change from run to run" in training.feedback and "no loop reproduces them" in training.feedback
    assert "Same cause as accumulate: " in training.feedback, training.feedback
    assert training.cause == found["accumulate"].cause and "different losses" not in training.feedback


def test_a_stable_wrong_loss_says_nothing_of_runs(micrograd, grade_source):
    """An engine whose order follows a list, with the same bug: its losses are the same every run."""
    source = BASE.replace(
        "self.grad += out.grad\n            other.grad += out.grad",
        "self.grad = out.grad\n            other.grad = out.grad",
        1,
    )
    checks = micrograd.without(tuple(c.id for c in micrograd.checks if c.id not in ("accumulate", "training")))
    training = next(c for c in grade_source(source, checks).checks if c.id == "training")
    assert training.status == "failed"
    assert "unstable" not in training.artifacts and "each run" not in training.feedback
