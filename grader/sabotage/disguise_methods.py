"""The disguise of what is not a chain-rule update (see disguise.py): backward()'s seed and
reversal, `__radd__`, `__sub__`, and the Neuron.

- backward() seeds with `setattr(x, 'grad', x.data ** 0)` or `x.__setattr__('grad', ...)`:
  no constant 1 and no store of `.grad` in its code, as when a mutant forgot the seed;
- it reverses its order by hand (`list(order)` then `.reverse()`, or an index running down
  with `range`): no reversed() and no [::-1], as when a mutant forgot to reverse;
- `__radd__` is assigned (`__radd__ = __add__`, or the same function under another name), so
  no `def __radd__` anywhere, as when a mutant has none;
- in `__sub__`, `a + (-b)` is `a + b.__neg__()`, with no negation instruction and no -1, as
  when a mutant adds; a mutant's `a + b` is `a + b.__neg__().__neg__()`;
- a Neuron reads its bias through parameters() and parameters() through getattr, so that
  neither names `b`, as when a mutant dropped the bias.

Each form computes exactly what the code it replaces computes, for floats and Values.
"""

from __future__ import annotations

import ast
import random

from grader.sabotage.mutate import method
from grader.sabotage.rewrite import FreshNames
from grader.sabotage.trees import clone


def load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def store(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign([ast.Name(name, ast.Store())], value)


def attr(node: ast.expr, name: str) -> ast.Attribute:
    return ast.Attribute(copy(node), name, ast.Load())


def copy(node: ast.expr) -> ast.expr:
    return clone(node)


def call(fn: ast.expr, *args: ast.expr) -> ast.Call:
    return ast.Call(fn, list(args), [])


def grad_target(statement: ast.stmt, assign_too: bool) -> ast.Attribute | None:
    """The target of `x.grad += e` (or, with assign_too, of `x.grad = e`)."""
    target: ast.expr
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add):
        target = statement.target
    elif assign_too and isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    else:
        return None
    return target if isinstance(target, ast.Attribute) and target.attr == "grad" else None


def backward_statement(statement: ast.stmt, rng: random.Random, names: FreshNames, has_data: bool) -> list[ast.stmt]:
    """One of backward()'s own statements, with its seed or its reversal in disguise."""
    target = grad_target(statement, assign_too=True)
    if (
        target is not None
        and isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Constant)
        and type(statement.value.value) in (int, float)
        and statement.value.value == 1
        and has_data
    ):
        one = ast.BinOp(attr(target.value, "data"), ast.Pow(), ast.Constant(0))  # 1.0 for every float, nan too
        setter = (
            call(load("setattr"), copy(target.value), ast.Constant("grad"), one)
            if rng.random() < 0.5
            else call(attr(target.value, "__setattr__"), ast.Constant("grad"), one)
        )
        return [ast.Expr(setter)]
    if isinstance(statement, (ast.For, ast.AsyncFor)) and (order := _reversed(statement.iter)) is not None:
        name = names.fresh()
        found: list[ast.stmt] = [store(name, call(load("list"), order))]
        if rng.random() < 0.5:
            found.append(ast.Expr(call(ast.Attribute(load(name), "reverse", ast.Load()))))
            statement.iter = load(name)
        else:
            index = names.fresh()
            last = ast.BinOp(call(load("len"), load(name)), ast.Sub(), ast.Constant(1))
            statement.iter = call(load("range"), last, _minus_one(), _minus_one())
            statement.body.insert(0, ast.Assign([statement.target], ast.Subscript(load(name), load(index), ast.Load())))
            statement.target = ast.Name(index, ast.Store())
        return found + [statement]
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and (order := _reversed(statement.value)) is not None
    ):
        name = statement.targets[0].id
        return [
            store(name, call(load("list"), order)),
            ast.Expr(call(ast.Attribute(load(name), "reverse", ast.Load()))),
        ]
    return [statement]


def _reversed(node: ast.expr) -> ast.expr | None:
    """X for `reversed(X)`, `X[::-1]` or `list(reversed(X))`; None for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords and len(node.args) == 1:
        if node.func.id == "reversed":
            return node.args[0]
        if node.func.id == "list" and isinstance(node.args[0], ast.Call):
            return _reversed(node.args[0])
        return None
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.upper is None
    ):
        step = node.slice.step
        minus_one = (
            isinstance(step, ast.UnaryOp)
            and isinstance(step.op, ast.USub)
            and isinstance(step.operand, ast.Constant)
            and step.operand.value == 1
        )
        if minus_one or isinstance(step, ast.Constant) and step.value == -1:
            return node.value
    return None


def radd(cls: ast.ClassDef, rng: random.Random, names: FreshNames) -> None:
    """`def __radd__` as an assignment at the end of the class: `__radd__ = __add__` where that is what it
    computes, else the same function under another name."""
    defined = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__radd__"]
    if not defined:
        return
    fn = defined[-1]
    if _self_plus_other(fn) and method(cls, "__add__") is not None and rng.random() < 0.5:
        cls.body = [n for n in cls.body if n is not fn]
        cls.body.append(ast.Assign([ast.Name("__radd__", ast.Store())], load("__add__")))
        return
    fn.name = names.fresh()
    cls.body.append(ast.Assign([ast.Name("__radd__", ast.Store())], load(fn.name)))


def _self_plus_other(fn: ast.FunctionDef) -> bool:
    """Whether fn is `def __radd__(self, other): return self + other` (or `self.__add__(other)`)."""
    args = fn.args
    if len(args.args) != 2 or args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        return False
    body = [n for n in fn.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    me, other, value = args.args[0].arg, args.args[1].arg, body[0].value

    def named(node: ast.expr, name: str) -> bool:
        return isinstance(node, ast.Name) and node.id == name

    plus = (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Add)
        and named(value.left, me)
        and named(value.right, other)
    )
    dunder = (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "__add__"
        and named(value.func.value, me)
        and not value.keywords
        and len(value.args) == 1
        and named(value.args[0], other)
    )
    return plus or dunder


def subtraction(sub: ast.FunctionDef) -> None:
    """In __sub__, `a + (-b)` as `a + b.__neg__()` (no negation instruction, no -1), and an addition with no
    negation in it (a mutant's `a + b`) as `a + b.__neg__().__neg__()`."""

    def neg(node: ast.expr) -> ast.Call:
        return call(ast.Attribute(node, "__neg__", ast.Load()))

    class Negations(ast.NodeTransformer):
        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            self.generic_visit(node)
            if not isinstance(node.op, ast.Add) or any(
                isinstance(n, ast.JoinedStr) or isinstance(n, ast.Constant) and isinstance(n.value, str)
                for n in ast.walk(node)
            ):
                return node
            if isinstance(node.right, ast.UnaryOp) and isinstance(node.right.op, ast.USub):
                node.right = neg(node.right.operand)
            elif not any(
                isinstance(n, ast.UnaryOp)
                and isinstance(n.op, ast.USub)
                or isinstance(n, ast.Attribute)
                and n.attr == "__neg__"
                for n in ast.walk(node)
            ):
                node.right = neg(neg(node.right))
            return node

    sub.body = [Negations().visit(statement) for statement in sub.body]


def neuron(cls: ast.ClassDef) -> None:
    """A Neuron's bias read through parameters() in __call__ (where parameters() lists it last), and named
    through getattr in parameters()."""
    parameters, called = method(cls, "parameters"), method(cls, "__call__")
    if parameters is None:
        return

    def bias(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "b"
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and isinstance(node.ctx, ast.Load)
        )

    class Bias(ast.NodeTransformer):
        def __init__(self, form):
            self.form = form

        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            return self.form() if bias(node) else self.generic_visit(node)

    last = parameters.body[-1] if parameters.body else None
    listed = (
        isinstance(last, ast.Return)
        and isinstance(last.value, ast.BinOp)
        and isinstance(last.value.op, ast.Add)
        and isinstance(last.value.right, ast.List)
        and bool(last.value.right.elts)
        and bias(last.value.right.elts[-1])
    )
    if listed and called is not None:
        through = Bias(
            lambda: ast.Subscript(
                call(attr(load("self"), "parameters")), ast.UnaryOp(ast.USub(), ast.Constant(1)), ast.Load()
            )
        )
        called.body = [through.visit(statement) for statement in called.body]
    named = Bias(lambda: call(load("getattr"), load("self"), ast.Constant("b")))
    parameters.body = [named.visit(statement) for statement in parameters.body]


def _minus_one() -> ast.UnaryOp:
    """-1 as a parse of `-1` makes it (a negation of 1), so that the passes after the disguise see what they saw when
    they read its code."""
    return ast.UnaryOp(ast.USub(), ast.Constant(1))
