"""Ground truth for the corpus engines, decided without any grader code.

For every engine in `engines/` and every engine check id, this decides whether the
grader SHOULD say pass or fail, by building expressions with the engine and the same
expressions with torch (float64) and comparing values and gradients (rel tol 1e-6).
It imports only the engine file, torch and the standard library.

    python tests/corpus/truth.py            # rewrite truth.json if a verdict changed
    python tests/corpus/truth.py --force    # rewrite it anyway (the notes too)
    python tests/corpus/truth.py --check    # exit 1 if a verdict in truth.json is out of date

How each check is charged (the point of the corpus: one bug, the check named for it):

forward         + - * ** neg tanh relu give torch's values on leaves, with plain numbers
                on either side (2 + a, a * 3, 1 - a, a - 1) and nested. Anything
                raising fails it, but an operation the engine does not have at all (no
                method on Value, a method still raising NotImplementedError, or one that
                raises only what such a missing one raises): that is its own rule
                check's charge, once, as long as something else was probed.
add mul pow     The operation's own backward RULE. The engine's `_backward` closures are
tanh relu       run by a correct driver of our own (one reverse topological pass over
neg_sub         the engine's children, output seeded with 1), on expressions where the
                operation appears, nested and with an incoming gradient other than 1,
                each value used once. So a broken backward() (no seed, wrong order,
                shadowed) or a reuse bug (= instead of +=) is not charged here. A
                missing or raising operation fails its own check.
accumulate      Every operation the engine has, probed with a leaf used twice (a + a,
                a * a, a**2 + a, a.tanh() * a, a.relu() + a, -a + a, a - a ...): the
                reused leaf's gradient must equal the sum of the gradients the same
                engine gives two separate leaves with the same value (same driver as
                above). A rule that is wrong everywhere is consistent here; a gradient
                that is wrong only when a value is reused is not.
topo_order      The student's backward() (output pre-seeded, so a missing seed is not
                charged here), instrumented: on diamonds, fan-out, deep chains and
                commuted products built from + and *, every operation node's
                `_backward` must run exactly once, after every node that consumes it.
hand_examples   The lesson's three examples with the student's plain backward(); an
                example whose forward cannot be built (a missing piece) is not judged.
gradcheck       Student's plain backward() against central differences of the engine's
                own forward pass, on nested expressions with reuse and shared nodes built
                from the operations that work (build and backward() without raising).
numerical_grad  The file's numerical_grad(f, x, h=1e-6) is the central difference.
neuron          Neuron(3): parameters() gives 3 weights then the bias, and the neuron
                computes tanh(w . x + b).
training        The lesson's loop (random.seed(0), Neuron(2), 50 steps of lr 0.1, grads
                zeroed each step) matches torch replaying it from the same initial
                weights at every step, and the loss falls below 0.1.
deep_graph      advisory: not judged here.

The engines must keep one `_backward` callable per node and their children in one of
the attributes of CHILD_ATTRS (every corpus engine does); the driver and the
instrumentation rely on it.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from truth_harness import (
    RTOL,
    Failure,
    close,
    describe,
    drive,
    engine_run,
    load,
    number,
    torch_run,
)
from truth_probes import (
    ACCUMULATE_PROBES,
    GRADCHECK_ATOL,
    GRADCHECK_EXPRESSIONS,
    GRADCHECK_H,
    GRADCHECK_RTOL,
    HAND_EXAMPLES,
    NEURON_BIAS,
    NEURON_WEIGHTS,
    NEURON_X,
    OP_FORMS,
    TRAIN_LR,
    TRAIN_SEED,
    TRAIN_STEPS,
    TRAIN_THRESHOLD,
    TRAIN_XS,
    TRAIN_YS,
    forward_needs,
    forward_probes,
    rule_probes,
)

HERE = Path(__file__).resolve().parent
ENGINES = HERE / "engines"
TRUTH_JSON = HERE / "truth.json"

CHECKS = (
    "forward",
    "add",
    "mul",
    "pow",
    "tanh",
    "relu",
    "neg_sub",
    "accumulate",
    "topo_order",
    "hand_examples",
    "gradcheck",
    "numerical_grad",
    "neuron",
    "training",
)

warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")


def engine_paths() -> list[Path]:
    return sorted(ENGINES.glob("*.py"))


# ---------------------------------------------------------------------------- the checks


METHODS = {"add": "__add__", "mul": "__mul__", "pow": "__pow__", "neg": "__neg__", "sub": "__sub__"}


def _missing(mod) -> set[str]:
    """The operations the engine does not have: no method, NotImplementedError, or the very error a missing one
    raises (a - b written a + (-b) with no __neg__)."""
    errors = {}
    for op, fn in OP_FORMS.items():
        try:
            engine_run(mod, fn, (0.7, -1.3), "forward")
        except Exception as exc:
            errors[op] = exc
    gone = {
        op
        for op, exc in errors.items()
        if isinstance(exc, NotImplementedError) or not hasattr(mod.Value, METHODS.get(op, op))
    }
    said = {describe(errors[op]) for op in gone}
    return {op for op, exc in errors.items() if op in gone or describe(exc) in said}


def check_forward(mod, ctx):
    missing = _missing(mod)
    probes = [p for p in forward_probes() if not forward_needs(p[0]) & missing]
    if missing and not probes:
        raise Failure(f"no operation can be built: {', '.join(sorted(missing))}")
    for what, fn, values in probes:
        want, _ = torch_run(fn, values, backward=False)
        try:
            got, _ = engine_run(mod, fn, values, "forward")
        except Exception as exc:
            raise Failure(f"{what} with {values} raised {describe(exc)}") from None
        if not close(got, want):
            raise Failure(f"{what} with {values} gives {got!r}, torch {want!r}")


def _compare_grads(mod, what, fn, values, mode):
    _, want = torch_run(fn, values)
    try:
        _, got = engine_run(mod, fn, values, mode)
    except Exception as exc:
        raise Failure(f"{what} with {values} raised {describe(exc)}") from None
    for i, (g, w) in enumerate(zip(got, want)):
        if not close(g, w):
            raise Failure(f"{what} with {values}: grad of input {i} is {g!r}, torch {w!r}")


def _rule_check(op):
    def run(mod, ctx):
        core, scaled = rule_probes(op)
        probes = core + (scaled if ctx["mul_rule"] else [])
        for what, fn, values in probes:
            _compare_grads(mod, what, fn, values, "driver")

    return run


def check_accumulate(mod, ctx):
    judged = 0
    for ops, what, fn, values, group in ACCUMULATE_PROBES:
        if not all(ctx["available"][op] for op in ops):
            continue
        try:
            _, split = engine_run(mod, fn, values, "driver")
        except Exception:
            continue
        Value = mod.Value
        distinct = {}
        leaves = []
        for i, v in enumerate(values):
            key = group[0] if i in group else i
            if key not in distinct:
                distinct[key] = Value(float(v))
            leaves.append(distinct[key])
        try:
            out = fn(*leaves)
            drive(out, Value)
        except Exception as exc:
            raise Failure(f"{what}: raised {describe(exc)} only when the value is reused") from None
        judged += 1
        expected = sum(number(split[i]) or 0.0 for i in group)
        reused = distinct[group[0]].grad
        if not close(reused, expected):
            raise Failure(
                f"{what} with a = {values[group[0]]}: a.grad is {reused!r}, but the same engine gives "
                f"{expected!r} summed over separate leaves"
            )
    if not judged:
        raise Failure("no operation could be probed with a reused value")


def _track(Value):
    """Builders that record every operation node and its inputs (the true graph)."""
    ops = []

    def add(x, y):
        out = x + y
        ops.append((out, (x, y)))
        return out

    def mul(x, y):
        out = x * y
        ops.append((out, (x, y)))
        return out

    return ops, add, mul


TOPO_GRAPHS = (
    ("diamond (e = a*b; e + e*c)", lambda V, add, mul: (lambda e: add(e, mul(e, V(1.9))))(mul(V(0.7), V(-1.3)))),
    ("chain of 6 diamonds", lambda V, add, mul: _diamonds(V, add, mul, 6)),
    (
        "fan-out (e used by three nodes)",
        lambda V, add, mul: (lambda e, c: add(add(mul(e, c), add(e, c)), mul(e, e)))(add(V(0.45), V(1.15)), V(-0.4)),
    ),
    ("deep chain of 60 nodes", lambda V, add, mul: _chain(V, add, mul, 30)),
    (
        "commuted products (a*b) + (b*a)",
        lambda V, add, mul: (lambda a, b, c: mul(add(mul(a, b), mul(b, a)), c))(V(0.7), V(-1.3), V(1.9)),
    ),
    ("the lesson's L = (a*b + c)*f", lambda V, add, mul: mul(add(mul(V(2.0), V(-3.0)), V(10.0)), V(-2.0))),
)


def _diamonds(V, add, mul, n):
    x, b, c = V(0.7), V(1.15), V(-0.4)
    for _ in range(n):
        y = mul(x, b)
        x = add(y, mul(y, c))
    return x


def _chain(V, add, mul, n):
    x, a, b = V(0.45), V(1.01), V(0.3)
    for _ in range(n):
        x = add(mul(x, a), b)
    return x


def _consumers(ops) -> dict[int, set[int]]:
    """For each node an op made (by id), the ids of the op-made nodes that use it."""
    inner = {id(out) for out, _ in ops}
    consumers: dict[int, set[int]] = {id(out): set() for out, _ in ops}
    for out, ins in ops:
        for x in ins:
            if id(x) in inner:
                consumers[id(x)].add(id(out))
    return consumers


def _recording(original, key: int, calls: list[int]):
    """original, which first notes key in calls."""

    def record():
        calls.append(key)
        return original()

    return record


def _record_backward_calls(ops) -> list[int]:
    """Wrap each op-made node's _backward so that it notes its node's id; the list the ids go to, in call order."""
    calls: list[int] = []
    for out, _ in ops:
        out._backward = _recording(out._backward, id(out), calls)
    return calls


def _check_each_backward_once_in_order(what: str, inner: set[int], consumers: dict[int, set[int]], calls: list[int]):
    counts = {key: calls.count(key) for key in inner}
    wrong = [key for key, n in counts.items() if n != 1]
    if wrong:
        n = counts[wrong[0]]
        raise Failure(f"{what}: a node's _backward ran {n} times instead of once ({len(wrong)} of {len(inner)} nodes)")
    position = {key: calls.index(key) for key in inner}
    for key, users in consumers.items():
        if any(position[user] > position[key] for user in users):
            raise Failure(f"{what}: a node's _backward ran before a node that uses it")


def check_topo_order(mod, ctx):
    Value = mod.Value
    for what, build in TOPO_GRAPHS:
        ops, add, mul = _track(Value)
        try:
            root = build(Value, add, mul)
        except Exception as exc:
            raise Failure(f"{what}: building it raised {describe(exc)}") from None
        inner = {id(out) for out, _ in ops}
        consumers = _consumers(ops)
        calls = _record_backward_calls(ops)
        root.grad = 1.0
        try:
            root.backward()
        except Exception as exc:
            raise Failure(f"{what}: backward() raised {describe(exc)}") from None
        _check_each_backward_once_in_order(what, inner, consumers, calls)


def check_hand_examples(mod, ctx):
    judged = []
    for title, fn, values, expected, names in HAND_EXAMPLES:
        Value = mod.Value
        leaves = [Value(float(v)) for v in values]
        try:
            out = fn(*leaves)
        except Exception:
            continue
        judged.append(title)
        try:
            out.backward()
        except Exception as exc:
            raise Failure(f"{title}: backward() raised {describe(exc)}") from None
        for i, want in expected.items():
            if not close(leaves[i].grad, want):
                raise Failure(f"{title}: {names[i]}.grad is {leaves[i].grad!r}, the lesson says {want:g}")
    if not judged:
        raise Failure("none of the lesson's examples can be built")
    ctx["notes"].append(f"hand_examples judged: {', '.join(judged)}")


def _works(mod, op) -> bool:
    try:
        engine_run(mod, OP_FORMS[op], (0.7, -1.3), "student")
        return True
    except Exception:
        return False


def check_gradcheck(mod, ctx):
    works = {op: _works(mod, op) for op in OP_FORMS}
    judged = 0
    for ops, what, fn, values in GRADCHECK_EXPRESSIONS:
        if not all(works[op] for op in ops):
            continue
        judged += 1
        try:
            _, analytic = engine_run(mod, fn, values, "student")
        except Exception as exc:
            raise Failure(f"{what}: raised {describe(exc)}") from None
        for i in range(len(values)):
            up = list(values)
            down = list(values)
            up[i] += GRADCHECK_H
            down[i] -= GRADCHECK_H
            hi, _ = engine_run(mod, fn, up, "forward")
            lo, _ = engine_run(mod, fn, down, "forward")
            numeric = (float(hi) - float(lo)) / (2 * GRADCHECK_H)
            if not close(analytic[i], numeric, GRADCHECK_RTOL, GRADCHECK_ATOL):
                raise Failure(
                    f"{what} with {values}: analytic grad of input {i} is {analytic[i]!r}, central "
                    f"difference {numeric!r}"
                )
    skipped = [op for op, ok in works.items() if not ok]
    if skipped:
        ctx["notes"].append(f"gradcheck left out {', '.join(skipped)} (missing or raising)")
    if not judged:
        raise Failure("no expression could be built")


def check_numerical_grad(mod, ctx):
    ng = getattr(mod, "numerical_grad", None)
    if not callable(ng):
        raise Failure("no numerical_grad")
    cases = (
        ("x**3", lambda x: x**3, 2.0, 0.1),
        ("sin", math.sin, 1.0, 0.01),
        ("3x**2 - 4x + 5", lambda x: 3 * x**2 - 4 * x + 5, 3.0, None),
    )
    for what, f, x, h in cases:
        step = 1e-6 if h is None else h
        want = (f(x + step) - f(x - step)) / (2 * step)
        try:
            got = ng(f, x) if h is None else ng(f, x, h)
        except Exception as exc:
            raise Failure(f"numerical_grad({what}, {x}) raised {describe(exc)}") from None
        tol = 1e-6 if h is None else 1e-9
        if not close(got, want, tol, tol):
            raise Failure(f"numerical_grad({what}, {x}, h={h}) is {got!r}, the central difference is {want!r}")


def _single(out):
    return out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out


def check_neuron(mod, ctx):
    import torch

    Neuron = getattr(mod, "Neuron", None)
    if Neuron is None:
        raise Failure("no Neuron")
    try:
        random.seed(0)
        n = Neuron(3)
        params = list(n.parameters())
        if len(params) != 4 or not all(isinstance(p, mod.Value) for p in params):
            raise Failure(f"Neuron(3).parameters() gives {len(params)} items, not 3 weights and a bias")
        for p, v in zip(params, NEURON_WEIGHTS + (NEURON_BIAS,)):
            p.data = v
        out = _single(n(list(NEURON_X)))
    except Failure:
        raise
    except Exception as exc:
        raise Failure(f"Neuron(3) raised {describe(exc)}") from None
    if not isinstance(out, mod.Value):
        raise Failure(f"calling the neuron returned a {type(out).__name__}, not a Value")
    w = torch.tensor(NEURON_WEIGHTS, dtype=torch.float64)
    want = torch.tanh(w @ torch.tensor(NEURON_X, dtype=torch.float64) + NEURON_BIAS).item()
    if not close(out.data, want):
        raise Failure(f"neuron output {out.data!r}, tanh(w . x + b) is {want!r}")


def torch_training(initial):
    import torch

    w = torch.tensor(initial[:2], dtype=torch.float64, requires_grad=True)
    b = torch.tensor(initial[2], dtype=torch.float64, requires_grad=True)
    xs = torch.tensor(TRAIN_XS, dtype=torch.float64)
    losses = []
    for _ in range(TRAIN_STEPS):
        loss = sum((torch.tanh(w @ x + b) - y) ** 2 for x, y in zip(xs, TRAIN_YS))
        w.grad = None
        b.grad = None
        loss.backward()
        with torch.no_grad():
            w += -TRAIN_LR * w.grad
            b += -TRAIN_LR * b.grad
        losses.append(loss.item())
    return losses


def _train_neuron(Neuron, losses: list) -> list:
    """Train Neuron(2) from TRAIN_SEED as the lesson does, appending each step's loss to losses; its initial
    parameters."""
    random.seed(TRAIN_SEED)
    model = Neuron(2)
    initial = [number(p.data) for p in model.parameters()]
    if len(initial) != 3 or None in initial:
        raise Failure(f"Neuron(2) has {len(initial)} parameters, not 2 weights and a bias")
    for _ in range(TRAIN_STEPS):
        ypred = [_single(model(list(x))) for x in TRAIN_XS]
        loss = sum((yout - ygt) ** 2 for ygt, yout in zip(TRAIN_YS, ypred))
        for p in model.parameters():
            p.grad = 0.0
        loss.backward()
        for p in model.parameters():
            p.data += -TRAIN_LR * p.grad
        losses.append(loss.data)
    return initial


def check_training(mod, ctx):
    Neuron = getattr(mod, "Neuron", None)
    if Neuron is None:
        raise Failure("no Neuron")
    losses = []
    try:
        initial = _train_neuron(Neuron, losses)
    except Failure:
        raise
    except Exception as exc:
        raise Failure(f"the training loop raised {describe(exc)} at step {len(losses)}") from None
    want = torch_training(initial)
    for step, (got, expected) in enumerate(zip(losses, want)):
        if not close(got, expected, RTOL, 1e-12):
            raise Failure(f"loss at step {step} is {got!r}, torch from the same weights gives {expected!r}")
    if min(want) >= TRAIN_THRESHOLD:
        raise Failure(f"the loss never falls below {TRAIN_THRESHOLD}")


CHECK_FUNCTIONS = {
    "forward": check_forward,
    "add": _rule_check("add"),
    "mul": _rule_check("mul"),
    "pow": _rule_check("pow"),
    "tanh": _rule_check("tanh"),
    "relu": _rule_check("relu"),
    "neg_sub": _rule_check("neg_sub"),
    "accumulate": check_accumulate,
    "topo_order": check_topo_order,
    "hand_examples": check_hand_examples,
    "gradcheck": check_gradcheck,
    "numerical_grad": check_numerical_grad,
    "neuron": check_neuron,
    "training": check_training,
}


def _available(mod, op) -> bool:
    try:
        engine_run(mod, OP_FORMS[op], (0.7, -1.3), "forward")
        return True
    except Exception:
        return False


def compute(path: Path) -> dict[str, str]:
    """{check id: "pass" | "fail", ..., "notes": why each fail failed} for one engine."""
    mod = load(path)
    ctx = {"notes": [], "available": {op: _available(mod, op) for op in OP_FORMS}}
    ctx["mul_rule"] = True
    try:
        _rule_check("mul")(mod, ctx)
    except Failure:
        ctx["mul_rule"] = False
    verdicts: dict[str, str] = {}
    reasons = []
    with contextlib.redirect_stdout(io.StringIO()):
        for check_id in CHECKS:
            try:
                CHECK_FUNCTIONS[check_id](mod, ctx)
                verdicts[check_id] = "pass"
            except Failure as failure:
                verdicts[check_id] = "fail"
                reasons.append(f"{check_id}: {failure}")
    verdicts["notes"] = "; ".join(reasons + ctx["notes"])
    return verdicts


def compute_all() -> dict[str, dict[str, str]]:
    return {path.stem: compute(path) for path in engine_paths()}


def verdicts_only(truth: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The pass/fail verdicts without the notes (notes may quote numbers that depend on the
    order a set yields, so they can change from run to run; verdicts never do)."""
    return {engine: {c: v for c, v in checks.items() if c != "notes"} for engine, checks in truth.items()}


def read_truth() -> dict[str, dict[str, str]]:
    return json.loads(TRUTH_JSON.read_text())


def main(argv: list[str]) -> int:
    truth = compute_all()
    current = read_truth() if TRUTH_JSON.exists() else {}
    up_to_date = verdicts_only(current) == verdicts_only(truth)
    if "--check" in argv:
        print(
            "truth.json is up to date"
            if up_to_date
            else f"{TRUTH_JSON} is out of date: run python tests/corpus/truth.py"
        )
        return 0 if up_to_date else 1
    if up_to_date and "--force" not in argv:
        print("truth.json is up to date (--force rewrites the notes too)")
    else:
        TRUTH_JSON.write_text(json.dumps(truth, indent=2, sort_keys=True) + "\n")
    for engine, verdicts in truth.items():
        fails = [c for c in CHECKS if verdicts[c] == "fail"]
        print(f"{engine:28} fails: {', '.join(fails) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
