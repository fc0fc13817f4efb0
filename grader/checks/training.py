"""The neuron and training checks: the student's Neuron, and the lesson's training loop
replayed step for step on the reference engine.

The grader sets the starting weights of both runs itself, through parameters(): a model that
chose its own (weights of +-100 saturate tanh, so the loss is 0 from the first step and every
gradient is 0) would otherwise pass with a backward() that does nothing."""

from __future__ import annotations

import math
import types
from dataclasses import dataclass, replace
from typing import Any

import reference
from grader import protocol
from grader.causes import CAUSES, Cause
from grader.checks import diagnose
from grader.checks.cases import NeuronCase
from grader.checks.context import Context
from grader.checks.evidence import Evidence
from grader.checks.features import basic_cause
from grader.checks.judging import causes_found, error_message, not_written, shown
from grader.checks.registry import check
from grader.checks.rules import RULE_CHECKS
from grader.feedback import numbers
from grader.protocol import UNREADABLE, Observation, a_bool, a_name, a_number, an_int, list_of
from grader.result import Counterexample, Outcome
from grader.sandbox.inside import probes
from grader.spec import Training

NEURON_REPLY = {
    "count": an_int,
    "values": list_of(a_name),
    "returned": a_name,
    "is_value": a_bool,
    "output": a_number,
    "unlisted": a_name,
}
# Neuron(3) with known parameters: tanh(0.5*1 - 1*2 + 0.25*-3 + 0.1) = tanh(-2.15)
NEURON_CASE: NeuronCase = {"nin": 3, "weights": [0.5, -1.0, 0.25], "bias": 0.1, "x": [1.0, 2.0, -3.0]}


@check("neuron", "Neuron(nin) computes tanh(w . x + b) from its parameters")
def neuron(ctx: Context) -> Outcome:
    if missing := ctx.missing("Neuron", "a class whose Neuron(nin) holds nin weights and a bias"):
        return missing
    case = NEURON_CASE
    code = (
        "n = Neuron(3)\nparams = n.parameters()\nfor p, v in zip(params, [0.5, -1.0, 0.25, 0.1]):\n"
        "    p.data = v\nout = n([1.0, 2.0, -3.0])\nprint(len(params), out)"
    )
    got = ctx.student.ask(protocol.neuron(**case), NEURON_REPLY)
    if isinstance(got, dict) and not {"count", "values"} <= got.keys():
        got = Observation(error=UNREADABLE)
    if isinstance(got, Observation):
        message = error_message(got, "running Neuron(3), n.parameters() and n([1.0, 2.0, -3.0])")
        return _with_cause(
            Outcome("error", message, Counterexample(code, {}, {}), not_written=not_written(got)),
            diagnose.from_error(got.error),
        )
    nin = case["nin"]
    dot = sum(w * x for w, x in zip(case["weights"], case["x"], strict=False))
    unbiased = not got["values"] and ctx.close(math.tanh(dot), got.get("output"))  # tanh(w . x): no b added
    if got["count"] != nin + 1:
        return _miscounted(got, code, dot, unbiased)
    if got["values"]:
        return Outcome(
            "failed",
            f"parameters() must return Values, so training can update them and read their "
            f"grad; it returned a {got['values'][0]}.",
        )
    if not got.get("is_value", False):
        return Outcome(
            "failed",
            f"calling the neuron returned a {got.get('returned', 'nothing')}; it must return a Value, so "
            "that backward() can run through it.",
            Counterexample(code, {"type(out)": "Value"}, {"type(out)": got.get("returned", "nothing")}),
        )
    act = dot + case["bias"]
    expected = math.tanh(act)
    if not ctx.close(expected, got.get("output")):
        wrong = Outcome(
            "failed",
            "with weights [0.5, -1.0, 0.25], bias 0.1 and x = [1.0, 2.0, -3.0], the neuron "
            "should give tanh(w . x + b) = tanh({}) = {}, but gives {}.".format(
                numbers(act)[0], *numbers(expected, shown(got.get("output")))
            )
            + _diagnose(got.get("output"), act),
            Counterexample(code, {"out.data": expected}, {"out.data": shown(got.get("output"))}),
        )
        return _with_cause(wrong, CAUSES["neuron_no_bias"] if unbiased else None)  # b listed, never added
    return Evidence(("Neuron(3)'s parameters()", "Neuron(3) on known weights")).settle(
        Outcome("passed", "Neuron(nin) computes tanh(w . x + b) with its nin weights and its bias.")
    )


def _miscounted(got: dict, code: str, dot: float, unbiased: bool) -> Outcome:
    """The outcome when parameters() does not hold nin + 1 values. With nin, the neuron was called on the
    case's weights too: tanh(w . x) says it adds no bias; tanh(w . x + b), with the one Value attribute
    parameters() leaves out set to b (`unlisted`), says it has a bias that training never moves. Either is
    the misconception neuron_no_bias; anything else is named no cause."""
    nin = NEURON_CASE["nin"]
    why, cause = "", None
    if not str(got.get("unlisted", "")).isidentifier():  # a name the student's process claims: shown only as one
        got = {k: v for k, v in got.items() if k != "unlisted"}
    weights = "with weights [0.5, -1.0, 0.25] and x = [1.0, 2.0, -3.0]"
    if got["count"] == nin and unbiased:
        made = f" (self.{got['unlisted']} is made, but neither added nor listed)" if "unlisted" in got else ""
        why = (
            f" It looks like your neuron has no bias b{made}: {weights} it gives tanh(w . x) = tanh({{}}) = {{}}, "
            "the lesson's neuron without its + b.".format(*numbers(dot, math.tanh(dot)))
        )
        cause = CAUSES["neuron_no_bias"]
    elif got["count"] == nin and "unlisted" in got and _close(math.tanh(dot + NEURON_CASE["bias"]), got.get("output")):
        why = (
            f" Your neuron adds its bias self.{got['unlisted']} ({weights} and self.{got['unlisted']} = 0.1 it "
            "gives tanh(w . x + b)), but parameters() leaves it out, so training never updates it."
        )
        cause = CAUSES["neuron_no_bias"]
    elif got["count"] == nin:
        why = " It looks like your neuron has no bias b, or parameters() leaves it out."
    counted = Outcome(
        "failed",
        f"Neuron(3).parameters() returned {got['count']} values; expected {nin + 1}: the "
        f"{nin} weights, then the bias.{why}",
        Counterexample(code, {"len(params)": nin + 1}, {"len(params)": got["count"]}),
    )
    return _with_cause(counted, cause)


def _close(expected: float, got) -> bool:
    return isinstance(got, float) and math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)


def _diagnose(output, act: float) -> str:
    guesses = {
        "the bias is missing from the sum": math.tanh(act - NEURON_CASE["bias"]),
        "there is no tanh on the output": act,
        "the activation is relu, not tanh": max(act, 0.0),
        "parameters() does not list the weights first and the bias last": math.tanh(
            -1.0 * 1 + 0.25 * 2 + 0.1 * -3 + 0.5
        ),
    }
    for why, value in guesses.items():
        if isinstance(output, float) and math.isclose(output, value, rel_tol=1e-9, abs_tol=1e-12):
            return f" It looks like {why}."
    return ""


BEFORE_TRAINING = (
    "forward",
    *RULE_CHECKS,
    "accumulate",
    "topo_order",
    "deep_graph",
    "hand_examples",
    "gradcheck",
    "numerical_grad",
    "neuron",
)
"""The checks training reads, in the lesson's order: when its losses leave the reference's, its card names the first
of them that failed (or whose numbers changed from try to try) as the one to fix first, and it tests the causes
they named on the whole loop (diagnose.in_training)."""


@check(
    "training",
    "The lesson's training loop converges, and matches the reference step for step",
    backward=True,
    reads=BEFORE_TRAINING,
)
def training(ctx: Context) -> Outcome:
    spec = ctx.assignment.training
    if spec is None:
        return Outcome("skipped", "This assignment defines no training set ([training] in its spec).")
    if missing := ctx.missing(spec.model, f"the model the training loop trains, {spec.model}(...)"):
        return missing
    start = starting_parameters(spec)
    args: dict[str, Any] = {
        "model": spec.model,
        "sizes": list(spec.sizes),
        "xs": [list(x) for x in spec.xs],
        "ys": list(spec.ys),
        "steps": spec.steps,
        "lr": spec.lr,
        "seed": spec.seed,
    }
    code = _loop_code(spec, start)
    got = ctx.student.ask(
        protocol.train(args, start),
        {"initial": list_of(a_number), "losses": list_of(a_number), "grads": list_of(a_number)},
        timeout=max(ctx.deadline_left(), 1.0),
    )
    if isinstance(got, Observation):
        message = error_message(got, "running the training loop")
        # an operation the engine does not have yet raises here (no tanh for the lesson's Neuron): not the seed's
        found = None if ctx.features.absent else basic_cause(ctx.features)
        return _with_cause(
            Outcome("error", message, Counterexample(code, {}, {}), not_written=not_written(got)),
            diagnose.from_error(got.error) or found,
        )
    initial, losses, grads = got.get("initial", []), got.get("losses", []), got.get("grads", [])
    if len(initial) == len(start) - 1 and spec.model == "Neuron":
        start = start[:-1] + [0.0]  # a neuron without a bias: compare with the lesson's neuron, bias held at 0
        initial = initial + [0.0]
    if wrong := _wrong_start(spec, len(got.get("initial", [])), initial, start):
        return wrong
    replay = probes.train(reference, probes.Loop(**args, initial=start))
    expected = replay["losses"]
    if not expected or expected[0] < spec.threshold or not any(replay["grads"]):
        return Outcome(
            "skipped",
            "Not judged: from the starting weights the grader sets (random.seed"
            f"({spec.seed}) in the lesson's {spec.model}), the reference engine's loss is already below "
            f"{spec.threshold:g} or its gradients are all 0, so this training set cannot tell a working "
            "backward() from one that does nothing. Tell your instructor ([training] in the assignment).",
        )
    return _judged(ctx, _Run(spec, args, start, code, losses, grads), expected)


@dataclass(frozen=True)
class _Run:
    """The student's run of the lesson's loop: what it was asked, and the losses and first gradients it gave."""

    spec: Training
    args: dict[str, Any]
    start: list[float]
    code: str
    losses: list
    grads: list


def _wrong_start(spec: Training, count: int, initial: list, start: list[float]) -> Outcome | None:
    """The outcome when the model's parameters() are not the starting weights the grader set (count of them
    returned, initial as read back); else None."""
    if len(initial) != len(start):
        return Outcome(
            "failed",
            f"{spec.model}{tuple(spec.sizes)}.parameters() returned {count} "
            f"values; the lesson's {spec.model} has {len(start)}.",
        )
    if not all(
        isinstance(v, float) and math.isclose(v, s, rel_tol=1e-12, abs_tol=1e-12)
        for v, s in zip(initial, start, strict=False)
    ):
        return Outcome(
            "failed",
            "The grader sets the starting weights through parameters() (p.data = value for "
            f"each), but reading them back gave [{', '.join(numbers(shown(v))[0] for v in initial[:6])}, ...] "
            f"instead of [{', '.join(numbers(s)[0] for s in start[:6])}, ...]: parameters() must return the "
            "model's own Values.",
        )
    return None


def _first_divergence(losses: list, expected: list, rtol: float) -> int | None:
    """The first step whose loss is not the reference's (or the first missing), else None."""
    diverged = next(
        (
            k
            for k, (a, b) in enumerate(zip(losses, expected, strict=False))
            if not (isinstance(a, float) and math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12))
        ),
        None,
    )
    if diverged is None and len(losses) < len(expected):
        diverged = len(losses)
    return diverged


def _judged(ctx: Context, run: _Run, expected: list) -> Outcome:
    """The student's losses and gradients against the reference's losses from the same start."""
    spec, losses = run.spec, run.losses
    artifacts = {
        "student_loss": [shown(x) for x in losses],
        "reference_loss": expected,
        "threshold": spec.threshold,
        "steps": spec.steps,
    }
    diverged = _first_divergence(losses, expected, spec.rtol)
    converged = next((k for k, x in enumerate(losses) if isinstance(x, float) and x < spec.threshold), None)
    artifacts.update(first_divergence=diverged, converged_at=converged)
    still = not any(isinstance(g, float) and g != 0.0 for g in run.grads)
    no_grads = (
        "\nAfter the first loss.backward(), every parameter's grad is still 0: backward() did not "
        "carry the gradient back to the weights."
        if still
        else ""
    )
    if diverged is not None:
        return _diverged(ctx, run, expected, (diverged, converged, no_grads), artifacts)
    if still:
        return Outcome(
            "failed",
            f"Your losses match the reference's, but your engine reports no gradient.{no_grads}",
            Counterexample(run.code, {}, {}),
            artifacts,
        )
    if converged is None:
        return Outcome(
            "failed",
            f"after {spec.steps} steps the loss is {shown(losses[-1])}; it should fall below {spec.threshold:g}.",
            Counterexample(run.code, {}, {}),
            artifacts,
        )
    probed = (
        f"{spec.steps} steps of the lesson's loop from the grader's weights",
        "the gradients after the first step",
    )
    return Evidence(probed).settle(
        Outcome(
            "passed",
            f"Started from weights the grader chose (loss {expected[0]:.4g}), the loss falls below "
            f"{spec.threshold:g} at step {converged} and matches the reference engine at every one of the "
            f"{spec.steps} steps.",
            artifacts=artifacts,
        )
    )


def _diverged(
    ctx: Context, run: _Run, expected: list, found: tuple[int, int | None, str], artifacts: dict[str, Any]
) -> Outcome:
    """The outcome when the student's loss leaves the reference's; found is the step it does, the step the loss
    falls below the threshold (None if never), and what the card says of gradients that stay 0."""
    diverged, converged, no_grads = found
    spec, args, start, losses = run.spec, run.args, run.start, run.losses
    bad = losses[diverged] if diverged < len(losses) else "nothing"
    nan = " (not a number: the loss blew up)" if not isinstance(bad, float) or not math.isfinite(bad) else ""
    unbiased = _without_bias(spec, args, losses)
    reached = (
        f"\nYour loss does fall below {spec.threshold:g} (at step {converged}), but a falling loss does "
        f"not prove an engine right: {'the model differs' if unbiased else 'the gradients differ'}."
        if converged is not None
        else ""
    )
    if unbiased:
        reached += (
            f"\nYour losses are, at every step, those of the lesson's neuron {unbiased} (replayed on the reference "
            "engine): your engine's gradients are right, your Neuron is not."
        )
    unstable = None if unbiased else _unstable(ctx, protocol.train(args, start), losses, spec.rtol, artifacts)
    return _with_cause(
        Outcome(
            "failed",
            "Started from the same weights (the grader's, set through parameters()), your loss and the reference "
            f"engine's differ from step {diverged} on: {numbers(shown(bad), expected[diverged])[0]}{nan} "
            f"instead of {numbers(expected[diverged], shown(bad))[0]}."
            f"{reached}{no_grads}{unstable or ('' if unbiased else _COMPARE)}",
            Counterexample(
                run.code, {f"loss at step {diverged}": expected[diverged]}, {f"loss at step {diverged}": shown(bad)}
            ),
            artifacts,
        ),
        (CAUSES["neuron_no_bias"] if unbiased else None)
        or basic_cause(ctx.features)
        or _named_alone(ctx, artifacts)
        or diagnose.in_training(
            ctx,
            ctx.reads.named(),
            lambda module: probes.train(module, probes.Loop(**args, initial=start))["losses"],
            losses,
            spec.rtol,
        ),
    )


def _untrained_bias(b: float) -> type:
    """The lesson's neuron on the reference engine with a bias training never moves, fixed at b (0: none at all):
    tanh(w . x + b), parameters() the weights alone."""

    class Untrained(reference.Neuron):
        def __call__(self, x):
            return sum((wi * xi for wi, xi in zip(self.w, x, strict=False)), reference.Value(b)).tanh()

        def parameters(self):
            return list(self.w)

    return Untrained


def _without_bias(spec: Training, args: dict[str, Any], losses: list) -> str:
    """When the model is a Neuron and the student's losses are, at every step, the lesson's loop on a neuron
    whose bias is never trained (the reference engine's, from the same weights): the bias it has, in words (none,
    or the one the lesson's neuron draws, which parameters() leaves out); else ''."""
    if spec.model != "Neuron" or not losses:
        return ""
    nin, start = spec.sizes[0], starting_parameters(spec)  # the lesson's draw, its bias last
    fixed = {"without its bias b": 0.0, "with its bias b left out of parameters(), never trained": start[nin]}
    for said, b in fixed.items():
        model = types.SimpleNamespace(Value=reference.Value, Neuron=_untrained_bias(b))
        replayed = probes.train(model, probes.Loop(**args, initial=start[:nin]))["losses"]
        if len(replayed) == len(losses) and all(
            isinstance(a, float) and math.isclose(a, r, rel_tol=spec.rtol, abs_tol=1e-12)
            for a, r in zip(losses, replayed, strict=False)
        ):
            return said
    return ""


_COMPARE = (
    "\nRun the loop below and compare; the first check above that fails (add, mul, tanh, accumulate...) names the "
    "rule to fix."
)


def _unstable(ctx: Context, request: dict, losses: list, rtol: float, artifacts: dict) -> str:
    """What the card says when the same loop, run again in the student's engine, gives other losses (an order
    that follows memory addresses, as children kept in a set do, with a bug the order changes): the numbers are
    not the ones a pasted loop prints, and the check to fix first; else nothing. artifacts learns unstable."""
    again = ctx.student.ask(request, {"losses": list_of(a_number)}, timeout=max(ctx.deadline_left(), 1.0))
    if isinstance(again, Observation):
        return ""
    other = again.get("losses", [])
    step = next(
        (
            k
            for k, (a, b) in enumerate(zip(losses, other, strict=False))
            if not (isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12))
        ),
        None,
    )
    if step is None:
        return ""
    artifacts["unstable"] = True
    first = ctx.reads.unstable() or next(iter(ctx.reads.failed()), None)
    said = (
        f"\nRun again, the same loop gave another loss at step {step} ({numbers(shown(other[step]))[0]} instead of "
        f"{numbers(shown(losses[step]))[0]}): your engine's numbers change from run to run (the order backward() "
        "visits nodes in follows memory addresses, as children kept in a set do), so no loop reproduces them."
    )
    if len(ctx.reads.named()) == 1:  # the cause an earlier check named, said once ('Same cause as accumulate')
        return said
    fix = f"fix what {first} finds first" if first else "fix the first check above that fails first"
    return f"{said}\nWith right rules the order would not change the numbers: {fix}, and compare then."


def _named_alone(ctx: Context, artifacts: dict[str, Any]) -> Cause | None:
    """Of losses that change from run to run (artifacts' unstable), which no replay of a cause can match: the one
    cause an earlier check of this grading named, if only one was (the card then says 'Same cause as <that
    check>', as gradcheck's and hand_examples' do)."""
    named = ctx.reads.named()
    if not artifacts.get("unstable") or len(named) != 1:
        return None
    return diagnose.as_named(ctx, named[0])


def starting_parameters(spec: Training) -> list[float]:
    """The weights both runs start from, chosen by the grader: the lesson's model on the reference
    engine, built right after random.seed(seed), as the lesson's own loop would build it."""
    return [
        float(v)
        for v in probes.train(reference, probes.Loop(spec.model, list(spec.sizes), [], [], 0, 0.0, spec.seed))[
            "initial"
        ]
    ]


def _with_cause(outcome: Outcome, cause) -> Outcome:
    """The outcome with the recognised cause, which its result says (once: grader/causes.py)."""
    if cause is None:
        return outcome
    return replace(outcome, cause=cause.id, artifacts=outcome.artifacts | causes_found(cause))


def _loop_code(spec: Training, start: list[float]) -> str:
    sizes = ", ".join(repr(s) for s in spec.sizes)
    return (
        f"import random\nrandom.seed({spec.seed})\nmodel = {spec.model}({sizes})\n"
        f"start = {start!r}  # the weights the grader starts from\n"
        "for p, v in zip(model.parameters(), start):\n    p.data = v\n"
        f"xs = {[list(x) for x in spec.xs]}\nys = {list(spec.ys)}\n"
        f"for step in range({spec.steps}):\n"
        "    ypred = [model(x) for x in xs]\n"
        "    loss = sum((yout - ygt)**2 for ygt, yout in zip(ys, ypred))\n"
        "    for p in model.parameters():\n        p.grad = 0.0\n"
        "    loss.backward()\n"
        f"    for p in model.parameters():\n        p.data += -{spec.lr!r} * p.grad\n"
        "    print(step, loss.data)"
    )
