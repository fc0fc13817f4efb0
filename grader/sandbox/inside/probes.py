"""Probes: build a program with any engine's Value class and read its numbers.

Stdlib only: the worker runs this inside the sandbox on the student's engine, and the
grader imports it to run the very same programs on the reference engine, so the
student's engine and the oracle are always driven by one piece of code.

A program is a list of instructions (the operations are in ops.py); instruction i defines node i:
    ["leaf", x]                      Value(x)
    ["add"|"mul"|"sub"|"div", i, j]  node_i (op) node_j
    ["pow", i, k]                    node_i ** k, k a constant
    ["neg"|"tanh"|"relu"|"exp", i]   unary operation on node_i
    ["cadd"|"cmul"|"csub"|"cdiv", i, c]   node_i (op) c, c a plain number
    ["radd"|"rmul"|"rsub"|"rdiv", c, i]   c (op) node_i
The last node is the output.
"""

from __future__ import annotations

import inspect
import math
import random
import warnings
from dataclasses import dataclass

try:
    from ops import BINARY, CONSTANT_FIRST, UNARY, WITH_CONSTANT  # inside the sandbox: modules beside this one
    from standins import StandInError
except ImportError:  # on the host
    from grader.sandbox.inside.ops import BINARY, CONSTANT_FIRST, UNARY, WITH_CONSTANT
    from grader.sandbox.inside.standins import StandInError

# Plain-float functions the student's numerical_grad is asked to differentiate.
FUNCTIONS = {
    "cube": lambda x: x**3,
    "sin": math.sin,
    "poly": lambda x: 3 * x**2 - 4 * x + 5,
}


def build(program, Value):
    """Build every node of the program with the given Value class."""
    nodes = []
    for ins in program:
        op = ins[0]
        if op == "leaf":
            nodes.append(Value(ins[1]))
        elif op in BINARY:
            nodes.append(BINARY[op](nodes[ins[1]], nodes[ins[2]]))
        elif op in UNARY:
            nodes.append(UNARY[op](nodes[ins[1]]))
        elif op in WITH_CONSTANT:
            nodes.append(WITH_CONSTANT[op](nodes[ins[1]], ins[2]))
        elif op in CONSTANT_FIRST:
            nodes.append(CONSTANT_FIRST[op](ins[1], nodes[ins[2]]))
        else:
            raise ValueError(f"unknown instruction {ins!r}")
    return nodes


def number(x):
    """A plain float for a number the student's engine produced, or a description of what it was.

    Float and int subclasses are read through the base type, so an object that overrides
    __eq__, __float__ or __repr__ reports the number it really holds. Anything else is a number
    when float() reads it exactly (a numpy scalar, a 0-d array, a Fraction or Decimal that
    round-trips): the float it gives, and only that, is the claim. A stand-in's result (numpy's,
    where numpy stands in) raises StandInError, naming the package and the use.
    """
    if isinstance(x, bool) or type(x).__name__ in ("bool_", "bool"):
        return {"bad": "a bool, not a number"}
    if isinstance(x, (str, bytes, bytearray)):
        return {"bad": f"a {type(x).__name__}, not a number"}
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, int):
        try:
            return float(int.__index__(x))
        except OverflowError:
            return math.copysign(math.inf, int.__index__(x))
    return _exactly(x)


def _exactly(x):
    """float(x), if x converts to it exactly (compared back with it: equal, or both not a number)."""
    kind = type(x).__name__
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's warning for an array of one number turned into a float
            value = float.__float__(float(x))
            exact = bool(x == value) if not math.isnan(value) else not bool(x == x)
    except StandInError:  # a package's result where the package stands in: the probe raises, saying which
        raise
    except Exception:
        return {"bad": f"a {kind}, not a number"}
    if not exact:
        return {"bad": f"a {kind} that float() reads only approximately (as {value!r}), not a number"}
    return value


def read(obj, attr):
    try:
        return number(getattr(obj, attr))
    except StandInError:
        raise
    except Exception as exc:
        return {"bad": f"reading .{attr} raised {type(exc).__name__}: {exc}"}


def evaluate(program, Value, backward=True, want=None, seed=False):
    """Build the program, call backward() on its output (after setting its grad to 1 if seed),
    and read data and grad of the nodes."""
    nodes = build(program, Value)
    if backward:
        if seed:
            nodes[-1].grad = 1.0
        nodes[-1].backward()
    picked = range(len(nodes)) if want is None else want
    return {
        "data": [read(nodes[i], "data") for i in picked],
        "grad": [read(nodes[i], "grad") for i in picked] if backward else None,
    }


def gradcheck(program, Value, h):
    """Analytic gradients of the leaves, and the engine's own output with each leaf nudged by
    +h and -h (the grader takes the central differences itself)."""
    leaves = [i for i, ins in enumerate(program) if ins[0] == "leaf"]
    observed = evaluate(program, Value, want=leaves + [len(program) - 1])
    up: list[float | dict[str, str]] = []  # each reading: a number, or what was read instead (number())
    down: list[float | dict[str, str]] = []
    for i in leaves:
        for step, out in ((h, up), (-h, down)):
            nudged = [list(ins) for ins in program]
            nudged[i][1] = program[i][1] + step
            out.append(read(build(nudged, Value)[-1], "data"))
    return {"leaves": leaves, "analytic": observed["grad"][:-1], "output": observed["data"][-1], "up": up, "down": down}


def neuron_probe(module, nin, weights, bias, x):
    """Build Neuron(nin), set its parameters through parameters(), call it on plain floats. Also when
    parameters() holds only the nin weights, so that the output says whether the neuron adds no bias, or one
    parameters() leaves out (`unlisted`: the one Value attribute of the neuron's not among them, set to bias)."""
    neuron = module.Neuron(nin)
    params = list(neuron.parameters())
    report = {
        "count": len(params),
        "values": [type(p).__name__ for p in params if not isinstance(p, module.Value)],
    }
    if len(params) not in (nin, nin + 1) or report["values"]:
        return report
    for p, v in zip(params, list(weights) + [bias]):  # no bias among nin: the weights alone are set
        p.data = v
    if len(params) == nin:
        try:  # only clues to the count's failure, which is reported whatever the neuron does here
            report.update(_unlisted(module, neuron, params, bias))
            out = single(neuron(list(x)))
        except Exception:
            return report
    else:
        out = single(neuron(list(x)))
    report["returned"] = type(out).__name__
    report["is_value"] = isinstance(out, module.Value)
    report["output"] = read(out, "data") if report["is_value"] else number(out)
    return report


def _unlisted(module, neuron, params, bias):
    """{"unlisted": name} when the neuron has one Value attribute of its own that parameters() leaves out (a
    bias), which is then set to bias, so that the output says whether it is added; else {}."""
    listed = {id(p) for p in params}
    own = vars(neuron) if hasattr(neuron, "__dict__") else {}
    found = [
        k
        for k, v in own.items()
        if isinstance(k, str) and k.isidentifier() and isinstance(v, module.Value) and id(v) not in listed
    ]
    if len(found) != 1:
        return {}
    own[found[0]].data = bias
    return {"unlisted": found[0]}


def single(out):
    """A network's single output: a Value, or a list holding one (both are common)."""
    return out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out


@dataclass(frozen=True)
class Loop:
    """A run of the lesson's training loop: the model (its class's name and sizes), the data, the steps and
    learning rate, the seed the model is built after, and the parameters' values to start from (None: the
    model's own). A `train` request's `args` are its fields."""

    model: str
    sizes: list
    xs: list
    ys: list
    steps: int
    lr: float
    seed: int
    initial: list | None = None


def train(module, loop: Loop):
    """The lesson's training loop, exactly as students write it, on the module's engine.

    With initial, the parameters start from those values, set through parameters(): the grader
    chooses the start, so that the student's run and the reference's replay begin from the same
    weights, which the grader knows need training. The reply also holds each parameter's gradient
    after the first backward(), so that a backward() that does nothing cannot pass unseen.
    """
    xs, ys, lr = loop.xs, loop.ys, loop.lr
    random.seed(loop.seed)
    net = getattr(module, loop.model)(*loop.sizes)
    params = list(net.parameters())
    if loop.initial is not None:
        for p, v in zip(params, loop.initial):
            p.data = v
    start = [read(p, "data") for p in params]
    losses, first_grads = [], None
    for _ in range(loop.steps):
        ypred = [single(net(list(x))) for x in xs]
        loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))
        for p in net.parameters():
            p.grad = 0.0
        loss.backward()
        if first_grads is None:
            first_grads = [read(p, "grad") for p in net.parameters()]
        for p in net.parameters():
            p.data += -lr * p.grad
        losses.append(read(loss, "data"))
    return {"initial": start, "losses": losses, "grads": first_grads or []}


HOOKS = ("_backward", "_grad_fn", "grad_fn", "_backward_fn", "backward_fn")
"""The names a node's own backward (a closure, or a _grad_fn-style callable) usually goes by; any other
attribute of the node's own whose name says backward (backprop, grad_fn) is tried after them."""
MAX_CALLS = 2000
"""Calls recorded per program: a backward() that runs rules over and over says so long before this."""


def order(program, Value, seed=False):
    """Build the program, watch each operation node's own backward (the attribute hook) and call backward():
    which operation nodes were watched, and the sequence in which backward() called them. hook is None when the
    nodes carry no backward of their own that can be watched (a backward() that dispatches on the op name)."""
    nodes = build(program, Value)
    ops = [i for i, ins in enumerate(program) if ins[0] != "leaf"]
    if len({id(node) for node in nodes}) != len(nodes):
        return {"hook": None, "why": "two nodes of the program are one object"}
    hook = _hook(nodes[i] for i in ops)
    calls: list[int] = []
    if hook is None or not all(_watch(nodes[i], hook, i, calls) for i in ops):
        return {"hook": None, "why": "no backward of its own on each node"}
    if seed:
        nodes[-1].grad = 1.0
    nodes[-1].backward()
    return {"hook": hook, "watched": ops, "calls": calls}


def _hook(nodes):
    """The name of the attribute holding every node's own backward, or None."""
    nodes = list(nodes)
    if not nodes:
        return None
    own = set()
    for node in nodes:
        own.update(_attributes(node))
    found = [name for name in sorted(own) if _says_backward(name) and name not in HOOKS and name != "backward"]
    for name in HOOKS + tuple(found):
        if all(_callable_attribute(node, name) for node in nodes):
            return name
    return None


def _says_backward(name):
    return any(word in name.lower() for word in ("backward", "backprop", "grad_fn"))


def _attributes(node):
    """The names of a node's own attributes: its __dict__ and the slots of its class."""
    names = set(getattr(node, "__dict__", None) or ())
    for klass in type(node).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.update((slots,) if isinstance(slots, str) else slots)
    return {name for name in names if isinstance(name, str)}


def _callable_attribute(node, name):
    try:
        value = getattr(node, name)
    except Exception:
        return False
    return callable(value) and not isinstance(value, type)


def _watch(node, name, index, calls):
    """Put a recorder in place of the node's own backward; False when the node will not take it."""
    original = getattr(node, name)

    def watched(*args, **kwargs):
        if len(calls) < MAX_CALLS:
            calls.append(index)
        return original(*args, **kwargs)

    try:
        setattr(node, name, watched)
        return getattr(node, name) is watched
    except Exception:
        return False


def direct(program, Value, incoming):
    """Build the program anew for each incoming gradient g, zero every node's grad, set the output's grad to g and
    call the output's own backward alone (never backward(), so its order plays no part): every node's grad after
    it, per g. hook is None when the output carries no backward of its own that can be called with no argument."""
    grads = []
    hook = None
    for g in incoming:
        nodes = build(program, Value)
        hook = hook or _hook(nodes[-1:])
        if hook is None or not _takes_nothing(getattr(nodes[-1], hook)):
            return {"hook": None}
        for node in nodes:
            node.grad = 0.0
        nodes[-1].grad = g
        getattr(nodes[-1], hook)()
        grads.append([read(node, "grad") for node in nodes])
    return {"hook": hook, "grads": grads}


def _takes_nothing(fn):
    """Can fn be called with no argument (as backward() calls a lesson's _backward)?"""
    try:
        inspect.signature(fn).bind()
    except TypeError:
        return False
    except ValueError:  # no signature to read: called as it is
        return True
    return True
