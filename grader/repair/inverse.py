"""Inverse edits: for each misconception one local edit explains, how to find it in the student's own file and
the edit that undoes it.

Each sabotage operator (grader/sabotage/operators/) and each mutation diagnose.py replays plants a cause in a
correct engine; the inverse here finds what that cause left in the student's code, through its syntax tree,
by the rule the cause names (its method of Value, `def _backward` closure or any nested function, or a branch
of a backward() that dispatches on the operation's name: mutate.rule_sites), whatever the student's names and
style, and writes the edit that undoes it in the student's own spelling. A cause that needs a rewrite (an
operation whose output has no children, a topological sort without a visited set) has no inverse. An edit
found here is only a candidate: verify.py regrades the edited file before anyone sees it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from grader.causes import CAUSES
from grader.errors import NotApplicable
from grader.repair.edits import Edit, Located, Source, Span
from grader.sabotage.mutate import rule_sites
from grader.sabotage.trees import statements
from grader.sandbox.inside.ops import RULES, UPDATED

Finder = Callable[[Source], list[Span]]
Update = ast.AugAssign | ast.Assign
"""A statement setting an input's gradient (`x.grad += ...`, `x.grad = ...`)."""
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


def edit_for(text: str, cause_id: str) -> Edit | None:
    """The edit undoing the cause in the student's text, or None where the cause has no inverse or the text
    holds nothing it recognises."""
    finder = INVERSES.get(cause_id)
    if finder is None:
        return None
    try:
        source = Source(text)
        spans = finder(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, NotApplicable):
        return None
    changes = source.changes(spans) if spans else None
    return Edit(cause_id, changes) if changes else None


# -- finding the student's code ----------------------------------------------------------------------


def last_class(tree: ast.Module, name: str = "Value") -> ast.ClassDef | None:
    """The class the module ends up with under that name (the last one defined)."""
    found = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    return found[-1] if found else None


def method_of(cls: ast.ClassDef | None, name: str) -> ast.FunctionDef | None:
    found = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name] if cls else []
    return found[-1] if found else None


def _graded(source: Source) -> ast.Module:
    """The module with only its last Value class, as rule_sites reads a module (its first Value)."""
    cls = last_class(source.tree)
    if cls is None:
        raise NotApplicable("no class Value")
    return ast.Module(body=[cls], type_ignores=[])


def sites(source: Source, rule: str) -> list[list[ast.stmt]]:
    return rule_sites(_graded(source), rule)


def grad_target(node: ast.AST) -> ast.Attribute | None:
    """The `x.grad` a statement sets (`x.grad += ...` or `x.grad = ...`), or None."""
    target: ast.expr
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        target = node.target
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    else:
        return None
    return target if isinstance(target, ast.Attribute) and target.attr == "grad" else None


def updates(source: Source, rule: str) -> list[Update]:
    """Every statement setting an input's gradient in the rule's backward (with += or with =)."""
    return [
        n
        for site in sites(source, rule)
        for statement in site
        for n in statements(statement)
        if isinstance(n, (ast.AugAssign, ast.Assign)) and grad_target(n) is not None and not _is_constant(n.value)
    ]


def _is_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant)


def same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def mentions(node: ast.AST, part: ast.AST) -> bool:
    return any(same(n, part) for n in ast.walk(node))


def _returned(fn: ast.FunctionDef) -> str | None:
    """The name a method returns (`return out`), its output."""
    for node in fn.body:
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            return node.value.id
    return None


def _site_function(source: Source, node: ast.AST) -> ast.FunctionDef | None:
    """The method of Value a statement is in (the outermost function around it)."""
    scopes = [s for s in source.functions(node) if isinstance(s, ast.FunctionDef)]
    return scopes[0] if scopes else None


def output(source: Source, update: Update) -> tuple[str, str] | None:
    """The code of an operation's output, as its backward names it: (its value, its gradient). In a method,
    the name it returns (`out`): ("t", "out.grad") when its data is a local name t, else ("out.data",
    "out.grad"); in a dispatching backward(), the node whose gradient is passed on (`g = node.grad`): ("node.data",
    "g")."""
    fn = _site_function(source, update)
    name = _returned(fn) if fn is not None else None
    if name is not None and fn is not None and fn.name != "backward":
        return _data_of(fn, name) or f"{name}.data", f"{name}.grad"
    if fn is None:
        return None
    for node in ast.walk(fn):  # `g = node.grad`
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and node.value.attr == "grad":
            target = node.targets[0]
            if isinstance(target, ast.Name):
                return f"{source.code(node.value.value)}.data", target.id
    incoming = _incoming_attribute(update)
    return (f"{source.code(incoming.value)}.data", source.code(incoming)) if incoming is not None else None


def _incoming_attribute(update: Update) -> ast.Attribute | None:
    target = grad_target(update)
    for node in ast.walk(update.value):
        if isinstance(node, ast.Attribute) and node.attr == "grad" and target and not same(node.value, target.value):
            return node
    return None


def _data_of(fn: ast.FunctionDef, name: str) -> str | None:
    """The local name an output is built from (`out = Value(t, ...)`: t)."""
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.Call)
            and node.value.args
            and isinstance(node.value.args[0], ast.Name)
        ):
            return node.value.args[0].id
    return None


def paren(source: Source, node: ast.expr) -> str:
    """The node's code, in parentheses where a product would bind it otherwise."""
    code = source.code(node)
    loose = isinstance(node, (ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.UnaryOp)) or (
        isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Mult, ast.Div, ast.Pow))
    )
    return f"({code})" if loose and not _wrapped(source, node) else code


def _wrapped(source: Source, node: Located) -> bool:
    before = source.data[: source.start(node)].rstrip()
    after = source.data[source.end(node) :].lstrip()
    return before.endswith(b"(") and after.startswith(b")")


# -- the inverses --------------------------------------------------------------------------------------


def _assign_in(rule: str) -> Finder:
    def find(source: Source) -> list[Span]:
        spans = []
        for update in updates(source, rule):
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
        for node in ast.walk(update.value):
            minus = _one_minus(node)
            factors = _squared(minus.right) if minus else []
            if found and target and factors and _is_input(source, update, factors[0], target):
                spans += [source.replace(f, found[0]) for f in factors]
    return spans


def _is_input(source: Source, update: Update, node: ast.expr, target: ast.Attribute) -> bool:
    """`self.data` of the input being updated, or a local name bound to it (`x = self.data`)."""
    data = ast.Attribute(target.value, "data", ast.Load())
    if same(node, data):
        return True
    fn = _site_function(source, update)
    return isinstance(node, ast.Name) and any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets)
        and same(n.value, data)
        for n in ast.walk(fn or update)
    )


@inverse("tanh_square_missing")
def tanh_square_missing(source: Source) -> list[Span]:
    """1 - t: 1 - t**2."""
    spans = []
    for update in updates(source, "tanh"):
        found = output(source, update)
        for node in ast.walk(update.value):
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
        for update in _accumulated(source, rule):
            found = output(source, update)
            if found is None or any(_is_gradient(n, found[1]) for n in ast.walk(update.value)):
                continue
            one = isinstance(update.value, ast.Constant) and update.value.value == 1  # `+= 1.0`: `+= out.grad`
            spans.append(
                source.replace(update.value, found[1] if one else f"{paren(source, update.value)} * {found[1]}")
            )
        return spans

    return find


for _rule in UPDATED:
    inverse(f"missing_outgrad_{_rule}")(_outgrad_missing(_rule))


def _accumulated(source: Source, rule: str) -> list[ast.AugAssign]:
    """Every `x.grad += ...` of the rule's backward, a constant one too (`self.grad += 1.0`: + with out.grad
    forgotten), but `+= 0`."""
    return [
        n
        for site in sites(source, rule)
        for statement in site
        for n in statements(statement)
        if isinstance(n, ast.AugAssign) and grad_target(n) is not None and not _zero(n.value)
    ]


def _is_gradient(node: ast.AST, incoming: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "grad") or (
        isinstance(node, ast.Name) and node.id == incoming
    )


FLIPPED = {ast.Lt: ">", ast.LtE: ">=", ast.Gt: "<", ast.GtE: "<="}


def _backward_parts(source: Source, rule: str) -> list[ast.AST]:
    """What a rule's backward computes with: its updates, and the conditions around them inside the backward
    (an `if` in the closure or the dispatch branch), never the forward pass's."""
    found: list[ast.AST] = []
    for update in updates(source, rule):
        found.append(update.value)
        parent = source.parents.get(id(update))
        while isinstance(parent, ast.If) and not _tests_rule(parent, rule):
            found.append(parent.test)
            parent = source.parents.get(id(parent))
    return found


def _tests_rule(node: ast.If, rule: str) -> bool:
    """A dispatch branch's own test (`if op == 'relu'`), not a condition of the rule."""
    return any(isinstance(n, ast.Constant) and n.value in RULES[rule][1] for n in ast.walk(node.test))


def _zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


@inverse("relu_flipped")
def relu_flipped(source: Source) -> list[Span]:
    """x < 0 (or 0 > x) where the gradient passes: the other way round."""
    spans = []
    for part in _backward_parts(source, "relu"):
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
    parts = _backward_parts(source, "relu")
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
    for part in _backward_parts(source, "relu"):
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
        for node in [n for part in (update.value, *_locals_read(source, update)) for n in ast.walk(part)]:
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Pow)
                and isinstance(node.left, ast.Attribute)
                and node.left.attr == "data"
                and isinstance(node.right, (ast.Name, ast.Attribute))
            ):
                spans.append(source.replace(node.right, f"({source.code(node.right)} - 1)"))
    return spans


def _locals_read(source: Source, update: Update) -> list[ast.expr]:
    """The values given, in the function the update is in (its _backward, never the forward pass around it), to
    the plain names the update reads: `local = k * self.data ** (k - 1)` for `self.grad += local * out.grad`."""
    scopes = source.functions(update)
    if not scopes:
        return []
    names = {n.id for n in ast.walk(update.value) if isinstance(n, ast.Name)}
    return [
        n.value
        for n in ast.walk(scopes[-1])
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and n.targets[0].id in names
    ]


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


def _topo_loops(fn: ast.FunctionDef) -> list[ast.For]:
    """The loops of backward() that call each node's backward (`for v in topo: v._backward()`)."""
    loops = []
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            name = node.target.id
            calls = any(
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == name
                for statement in node.body
                for n in ast.walk(statement)
            )
            if calls or any(grad_target(n) is not None for s in node.body for n in ast.walk(s)):
                loops.append(node)
    return loops


@inverse("topo_not_reversed")
def topo_not_reversed(source: Source) -> list[Span]:
    """for v in topo: for v in reversed(topo)."""
    backward = method_of(last_class(source.tree), "backward")
    spans = []
    for loop in _topo_loops(backward) if backward else []:
        walked = loop.iter
        is_reversed = (
            isinstance(walked, ast.Call) and isinstance(walked.func, ast.Name) and walked.func.id == "reversed"
        )
        if not is_reversed and not isinstance(walked, (ast.Subscript, ast.List, ast.Tuple)):
            spans.append(source.replace(walked, f"reversed({source.code(walked)})"))
    return spans


@inverse("missing_seed")
def missing_seed(source: Source) -> list[Span]:
    """No `self.grad = 1` before the walk: the line, before the loop."""
    backward = method_of(last_class(source.tree), "backward")
    if backward is None or not backward.args.args:
        return []
    loops = _topo_loops(backward)
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
    cls = last_class(source.tree)
    spans = []
    for fn in cls.body if cls else []:
        if not isinstance(fn, ast.FunctionDef) or not fn.args.args:
            continue
        me = fn.args.args[0].arg
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            for arg in [*call.args[1:], *(k.value for k in call.keywords)]:
                if isinstance(arg, ast.Name) and arg.id == me and _wrapped(source, arg):
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
        cls = last_class(source.tree)
        beside_name, body = DELEGATIONS[name]
        beside = method_of(cls, beside_name)
        if cls is None or method_of(cls, name) is not None or beside is None or len(beside.args.args) < 2:
            return []
        if beside.end_lineno is None:  # never from ast.parse, which gives every statement its end
            return []
        if name == "__rsub__" and method_of(cls, "__neg__") is None:
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
    sub = method_of(last_class(source.tree), "__sub__")
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
    neuron = last_class(source.tree, "Neuron")
    init, call, params = (method_of(neuron, n) for n in ("__init__", "__call__", "parameters"))
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
        spans.append(source.replace(receiver, added if _wrapped(source, receiver) else f"({added})"))
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
