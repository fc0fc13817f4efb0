"""Inverse edits, the registry: for each misconception one local edit explains, the function finding it in the
student's own file and writing the edit that undoes it.

Each sabotage operator (grader/sabotage/operators/) and each mutation diagnose.py replays plants a cause in a
correct engine; the inverse here finds what that cause left in the student's code, through its syntax tree read
once (reading.py: the class Python keeps, a rule's updates in its method of Value, `def _backward` closure or any
nested function, or a branch of a backward() that dispatches on the operation's name), whatever the student's names
and style, and writes the edit that undoes it in the student's own spelling. A cause that needs a rewrite (an
operation whose output has no children, a topological sort without a visited set) has no inverse. An edit found
here is only a candidate: verify.py regrades the edited file before anyone sees it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from grader.causes import CAUSES
from grader.errors import NotApplicable
from grader.repair.edits import Edit, Span
from grader.repair.places import applying, entries, walks
from grader.repair.reading import (
    Source,
    Update,
    accumulations,
    backward_parts,
    computed,
    grad_target,
    is_input,
    locals_read,
    mentions,
    method_of,
    output,
    paren,
    reads_gradient,
    same,
    updates,
    value_class,
    wrapped,
)
from grader.sabotage.trees import last_method, nodes
from grader.sandbox.inside.ops import RULES, UPDATED

Finder = Callable[[Source], list[Span]]
INVERSES: dict[str, Finder] = {}
"""Each cause id with an inverse, and the function finding its spans in a student's source."""


def inverse(*cause_ids: str):
    def register(fn: Finder) -> Finder:
        for cause_id in cause_ids:
            if cause_id not in CAUSES or cause_id in INVERSES:
                raise ValueError(f"inverse for {cause_id!r}: no such cause, or registered twice")
            INVERSES[cause_id] = fn
        return fn

    return register


def edit_for(source: Source | str, cause_id: str) -> Edit | None:
    """The edit undoing the cause in the student's code (a Source read once, or a text read here), or None where
    the cause has no inverse or the code holds nothing it recognises (or is past reading's bounds)."""
    finder = INVERSES.get(cause_id)
    if finder is None:
        return None
    try:
        read = source if isinstance(source, Source) else Source(source)
        spans = finder(read)
    except (SyntaxError, ValueError, RecursionError, MemoryError, NotApplicable):
        return None
    changes = read.changes(spans) if spans else None
    return Edit(cause_id, changes) if changes else None


# -- the inverses --------------------------------------------------------------------------------------


def _assign_in(rule: str) -> Finder:
    def find(source: Source) -> list[Span]:
        """x.grad = ...: +=, in the rule's backward, or in the statement adding what a table's lambda gives."""
        spans = []
        tables = {entry.table for entry in entries(source.tree, RULES[rule][1])}
        for update in [*updates(source, rule), *applying(source.tree, tables)]:
            if isinstance(update, ast.Assign) and not mentions(update.value, update.targets[0]):
                target = update.targets[0]
                gap = source.segment(source.end(target), source.start(update.value))
                spans.append(Span(source.end(target), source.start(update.value), gap.replace("=", "+=", 1)))
        return spans

    return find


for _rule in UPDATED:
    inverse(f"assign_in_{_rule}")(_assign_in(_rule))


def _one_minus(node: ast.AST) -> ast.BinOp | None:
    """`1 - something`."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.left, ast.Constant)
        and node.left.value == 1
    ):
        return node
    return None


def _constant(node: ast.AST, value: float) -> bool:
    return isinstance(node, ast.Constant) and node.value == value and not isinstance(node.value, bool)


def _squared(node: ast.expr) -> list[ast.expr]:
    """The factors of a square (`x ** 2`: [x]; `x * x`: [x, x]), or []."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _constant(node.right, 2):
        return [node.left]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and same(node.left, node.right):
        return [node.left, node.right]
    return []


@inverse("tanh_grad_from_input")
def tanh_grad_from_input(source: Source) -> list[Span]:
    """1 - x**2 on the input x: the output's value instead."""
    spans = []
    for update in updates(source, "tanh"):
        found = output(source, update)
        target = grad_target(update)
        for node in (n for part in computed(source, update) for n in nodes(part)):
            minus = _one_minus(node)
            factors = _squared(minus.right) if minus else []
            if found and target and factors and is_input(source, update, factors[0], target):
                spans += [source.replace(f, found[0]) for f in factors]
    return spans


@inverse("tanh_square_missing")
def tanh_square_missing(source: Source) -> list[Span]:
    """1 - t: 1 - t**2."""
    spans = []
    for update in updates(source, "tanh"):
        found = output(source, update)
        for node in (n for part in computed(source, update) for n in nodes(part)):
            minus = _one_minus(node)
            if minus and found and source.code(minus.right) == found[0] and not _times_one_plus(update, minus.right):
                spans.append(source.replace(minus.right, f"{paren(source, minus.right)}**2"))
    return spans


def _times_one_plus(update: Update, t: ast.expr) -> bool:
    """Is `1 - t` the half of (1 - t) * (1 + t), the square written as a product?"""
    return any(
        isinstance(n, ast.BinOp)
        and isinstance(n.op, ast.Add)
        and {ast.dump(n.left), ast.dump(n.right)} >= {ast.dump(ast.Constant(1)), ast.dump(t)}
        for n in ast.walk(update.value)
    )


def _outgrad_missing(rule: str) -> Finder:
    def find(source: Source) -> list[Span]:
        """x.grad += other.data (or 1.0): times the output's gradient, on each side that lacks it."""
        spans = []
        for update in accumulations(source, rule):
            found = output(source, update)
            if found is None or reads_gradient(source, update, found[1]):
                continue
            one = isinstance(update.value, ast.Constant) and update.value.value == 1  # `+= 1.0`: `+= out.grad`
            spans.append(
                source.replace(update.value, found[1] if one else f"{paren(source, update.value)} * {found[1]}")
            )
        return spans

    return find


for _rule in UPDATED:
    inverse(f"missing_outgrad_{_rule}")(_outgrad_missing(_rule))


FLIPPED = {ast.Lt: ">", ast.LtE: ">=", ast.Gt: "<", ast.GtE: "<="}


def _zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


@inverse("relu_flipped")
def relu_flipped(source: Source) -> list[Span]:
    """x < 0 (or 0 > x) where the gradient passes: the other way round."""
    spans = []
    for part in backward_parts(source, "relu"):
        for node in ast.walk(part):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
                continue
            op, left, right = node.ops[0], node.left, node.comparators[0]
            wrong = (_zero(right) and isinstance(op, (ast.Lt, ast.LtE))) or (
                _zero(left) and isinstance(op, (ast.Gt, ast.GtE))
            )
            if wrong:
                start, end = source.end(left), source.start(right)
                gap = source.segment(start, end)
                symbol = "<=" if isinstance(op, ast.LtE) else ">=" if isinstance(op, ast.GtE) else gap.strip()
                spans.append(Span(start, end, gap.replace(symbol, FLIPPED[type(op)], 1)))
    return spans


@inverse("relu_negative_grad")
def relu_negative_grad(source: Source) -> list[Span]:
    """The gradient passed whatever the input's sign: only where it is positive."""
    parts = backward_parts(source, "relu")
    found = [n for part in parts for n in ast.walk(part)]
    if any(isinstance(n, ast.Compare) for n in found):
        return _at_zero(source)
    spans = []
    for update in updates(source, "relu"):
        target = grad_target(update)
        condition = f"({source.code(target.value)}.data > 0)" if target is not None else ""
        always = [n for n in ast.walk(update.value) if isinstance(n, ast.Constant) and n.value is True]
        if condition and always:  # a condition that is always true (`1.0 if True else 0.0`)
            spans += [source.replace(n, condition) for n in always]
        elif condition and not any(isinstance(n, ast.IfExp) for n in ast.walk(update.value)):
            spans.append(source.replace(update.value, f"{condition} * {paren(source, update.value)}"))
    return spans


def _at_zero(source: Source) -> list[Span]:
    """`out.data >= 0` (true for every negative input, whose output is 0): `> 0`."""
    spans = []
    for part in backward_parts(source, "relu"):
        for node in ast.walk(part):
            if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.GtE) and _zero(node.comparators[-1]):
                start, end = source.end(node.left), source.start(node.comparators[0])
                spans.append(Span(start, end, source.segment(start, end).replace(">=", ">", 1)))
    return spans


@inverse("pow_off_by_one")
def pow_off_by_one(source: Source) -> list[Span]:
    """k * x**k: k * x**(k - 1), in the update or in a local name it reads (`local = k * x**k`)."""
    spans = []
    for update in updates(source, "pow"):
        for node in [n for part in (update.value, *locals_read(source, update)) for n in ast.walk(part)]:
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Pow)
                and isinstance(node.left, ast.Attribute)
                and node.left.attr == "data"
                and isinstance(node.right, (ast.Name, ast.Attribute))
            ):
                spans.append(source.replace(node.right, f"({source.code(node.right)} - 1)"))
    return spans


@inverse("add_half")
def add_half(source: Source) -> list[Span]:
    """0.5 * out.grad: out.grad."""
    spans = []
    for update in updates(source, "add"):
        for node in ast.walk(update.value):
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
                half = ast.Constant(0.5) if isinstance(node.op, ast.Mult) else ast.Constant(2)
                kept = node.right if same(node.left, half) else node.left if same(node.right, half) else None
                if kept is not None:
                    spans.append(source.replace(node, source.code(kept)))
    return spans


@inverse("mul_own_data")
def mul_own_data(source: Source) -> list[Span]:
    """x.grad += x.data * out.grad: the other input's data."""
    found = updates(source, "mul")
    inputs = list({ast.dump(t.value): t.value for u in found if (t := grad_target(u)) is not None}.values())
    if len(inputs) != 2:
        return []
    spans = []
    for update in found:
        target = grad_target(update)
        if target is None:  # never: updates() keeps only statements with one
            continue
        mine = target.value
        other = inputs[1] if same(mine, inputs[0]) else inputs[0]
        for node in ast.walk(update.value):
            if isinstance(node, ast.Attribute) and node.attr == "data" and same(node.value, mine):
                spans.append(source.replace(node.value, source.code(other)))
    return spans


@inverse("topo_not_reversed")
def topo_not_reversed(source: Source) -> list[Span]:
    """for v in topo: for v in reversed(topo) (or reduce(..., topo, ...): reduce(..., reversed(topo), ...))."""
    backward = method_of(source, "backward")
    spans = []
    for walk in walks(backward) if backward else []:
        walked = walk.order
        is_reversed = (
            isinstance(walked, ast.Call) and isinstance(walked.func, ast.Name) and walked.func.id == "reversed"
        )
        if not is_reversed and not isinstance(walked, (ast.Subscript, ast.List, ast.Tuple)):
            spans.append(source.replace(walked, f"reversed({source.code(walked)})"))
    return spans


@inverse("missing_seed")
def missing_seed(source: Source) -> list[Span]:
    """No `self.grad = 1` before the walk: the line, before the loop (or the statement walking with reduce)."""
    backward = method_of(source, "backward")
    if backward is None or not backward.args.args:
        return []
    loops = [walk.statement for walk in walks(backward)]
    if not loops:
        return []
    me = backward.args.args[0].arg
    for node in ast.walk(backward):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == "grad" and isinstance(t.value, ast.Name) and t.value.id == me
            for t in node.targets
        ):
            return []  # seeded, with something: not this cause's single line
    loop = loops[0]
    at = source.offset(loop.lineno, 0)
    return [Span(at, at, f"{' ' * loop.col_offset}{me}.grad = 1.0\n")]


@inverse("children_not_tuple")
def children_not_tuple(source: Source) -> list[Span]:
    """Value(t, (self), ...): (self,)."""
    cls = value_class(source)
    spans = []
    for fn in cls.body if cls else []:
        if not isinstance(fn, ast.FunctionDef) or not fn.args.args:
            continue
        me = fn.args.args[0].arg
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            for arg in [*call.args[1:], *(k.value for k in call.keywords)]:
                if isinstance(arg, ast.Name) and arg.id == me and wrapped(source, arg):
                    spans.append(Span(source.end(arg), source.end(arg), ","))
    return spans


DELEGATIONS = {
    "__radd__": ("__add__", "return {me} + {other}"),
    "__rmul__": ("__mul__", "return {me} * {other}"),
    "__rsub__": ("__sub__", "return -{me} + {other}"),
    "__rtruediv__": ("__truediv__", "return {me} ** -1 * {other}"),
}
"""Each reflected operator, the method it is written beside, and its one line (a number on the left: the
operation the other way round, through what Value already has)."""


def _reflected(name: str) -> Finder:
    def find(source: Source) -> list[Span]:
        cls = value_class(source)
        beside_name, body = DELEGATIONS[name]
        beside = last_method(cls, beside_name)
        if cls is None or last_method(cls, name) is not None or beside is None or len(beside.args.args) < 2:
            return []
        if beside.end_lineno is None:  # never from ast.parse, which gives every statement its end
            return []
        if name == "__rsub__" and last_method(cls, "__neg__") is None:
            return []
        me, other = beside.args.args[0].arg, beside.args.args[1].arg
        indent = " " * beside.col_offset
        inner = " " * (beside.body[0].col_offset if beside.body[0].lineno > beside.lineno else beside.col_offset + 4)
        at = source.starts[beside.end_lineno] if beside.end_lineno < len(source.starts) else len(source.data)
        text = f"\n{indent}def {name}({me}, {other}):\n{inner}{body.format(me=me, other=other)}\n"
        return [Span(at, at, text, name, f"Value, after {beside_name}")]

    return find


for _name in DELEGATIONS:
    inverse(f"missing_{_name}")(_reflected(_name))


@inverse("sub_as_add")
def sub_as_add(source: Source) -> list[Span]:
    """return self + other in __sub__: self + (-other)."""
    sub = method_of(source, "__sub__")
    if sub is None or len(sub.args.args) < 2 or any(isinstance(n, (ast.USub, ast.Sub)) for n in ast.walk(sub)):
        return []
    other = ast.Name(sub.args.args[1].arg, ast.Load())
    for node in ast.walk(sub):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and mentions(node.right, other):
            return [source.replace(node.right, f"(-{paren(source, node.right)})")]
    return []


@inverse("neuron_no_bias")
def neuron_no_bias(source: Source) -> list[Span]:
    """A bias made in __init__ but left out of __call__ and parameters(): added to both."""
    init, call, params = (method_of(source, n, "Neuron") for n in ("__init__", "__call__", "parameters"))
    bias = _bias(init)
    if bias is None or call is None or params is None:
        return []
    me = call.args.args[0].arg if call.args.args else "self"
    spans = []
    if not _uses(call, bias):
        tanh = next(
            (n.func for n in ast.walk(call) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)), None
        )
        if tanh is None or tanh.attr not in ("tanh", "relu"):
            return []
        receiver = tanh.value
        added = f"{source.code(receiver)} + {me}.{bias}"
        spans.append(source.replace(receiver, added if wrapped(source, receiver) else f"({added})"))
    returned = next((n.value for n in params.body if isinstance(n, ast.Return) and n.value is not None), None)
    if not _uses(params, bias) and returned is not None:
        spans.append(source.replace(returned, f"{source.code(returned)} + [{me}.{bias}]"))
    return spans


def _bias(init: ast.FunctionDef | None) -> str | None:
    """The attribute __init__ sets to one Value (`self.b = Value(...)`)."""
    for node in ast.walk(init) if init else []:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            target = node.targets[0]
            func = node.value.func
            if isinstance(target, ast.Attribute) and isinstance(func, ast.Name) and func.id == "Value":
                return target.attr
    return None


def _uses(fn: ast.FunctionDef, attr: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attr for n in ast.walk(fn))
