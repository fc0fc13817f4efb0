"""Rewrite an engine for one grading, so that neither its source nor its bytecode matches
anything shipped with the grader: docstrings and comments go, local variables and
private attributes get new names, methods come in another order, and the formatting is
ast.unparse's. Seeded by the submission's hash, so a regrade rewrites identically.

Public names (Value, data, grad, backward, the operators, __init__'s parameters) keep
their names: they are the lesson's interface, which a student's tests may use. The chain
rule's updates are also written differently at random, in ways that change no number a
correct engine computes (`g += e` or `g = g + e`, the factors of a product in either
order), so that even an engine's bytecode, normalised for names, matches nothing shipped.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import random
import string
from typing import TypeGuard

from grader.sabotage.trees import clone, nodes, own_statements, statements, unparse

KEEP = {"self", "cls"} | set(dir(builtins)) | set(keyword.kwlist) | set(keyword.softkwlist)


def rewrite(source: str, seed: str) -> str:
    return unparse(rewrite_tree(ast.parse(source), seed))


def rewrite_tree(tree: ast.Module, seed: str) -> ast.Module:
    """rewrite() on a tree, changed in place (and given back): the plan rewrites an engine's tree as the disguise
    left it, and writes its code once (issue 44)."""
    rng = random.Random(seed)
    everything = nodes(tree)  # walked once: no pass below adds or moves a node another pass looks for
    _drop_docstrings(everything)
    names = FreshNames(rng, all_names(everything))
    _rename_private_attributes(everything, names)
    for fn in _top_level_functions(tree):
        _rename_locals(fn, names)
    for node in everything:
        if isinstance(node, ast.ClassDef):
            _shuffle_methods(node, rng)
    _vary_updates(tree, rng)
    return tree


def _vary_updates(tree: ast.Module, rng: random.Random) -> None:
    """Rewrite the code at random in ways that keep every number: each `x.grad += e` as
    `x.grad = x.grad + e` or not, the factors of its products in either order (float * and + are
    commutative, exactly), a reversed list as `reversed(order)` or `order[::-1]`, a final
    `return e` through a local or not. Each function with chain-rule code gets at least one
    change, so its bytecode differs from the shipped one; any other, one time in two."""
    for fn in [n for n in statements(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        own = own_statements(fn)  # not those of the functions nested in it: they get their own turn
        sites = [
            (parent, field, i)
            for parent in (fn, *own)
            for field in ("body", "orelse", "finalbody")
            if isinstance(getattr(parent, field, None), list)
            for i, node in enumerate(getattr(parent, field))
            if _is_update(node)
        ]
        reversals = [node for node in own if _is_reversal(node)]
        choices = [rng.random() < 0.5 for _ in range(len(sites) + len(reversals))]
        if choices and not any(choices):
            choices[rng.randrange(len(choices))] = True
        for (parent, field, i), rewrite_it in zip(sites, choices):
            node = getattr(parent, field)[i]
            for product in nodes(node.value):
                if isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult) and rng.random() < 0.5:
                    product.left, product.right = product.right, product.left
            if rewrite_it:
                load = ast.Attribute(clone(node.target.value), "grad", ast.Load())
                getattr(parent, field)[i] = ast.Assign([node.target], ast.BinOp(load, ast.Add(), node.value))
        for node, rewrite_it in zip(reversals, choices[len(sites) :]):
            if rewrite_it:
                _flip_reversal(node)
        last = fn.body[-1] if fn.body else None
        if (
            isinstance(last, ast.Return)
            and last.value is not None
            and not isinstance(last.value, ast.Name)
            and rng.random() < 0.5
        ):  # `return e` as `r = e; return r`
            name = ast.Name(f"_r{rng.randrange(10**6)}", ast.Store())
            fn.body[-1:] = [ast.Assign([name], last.value), ast.Return(ast.Name(name.id, ast.Load()))]


def _is_update(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.AugAssign)
        and isinstance(node.target, ast.Attribute)
        and node.target.attr == "grad"
        and isinstance(node.op, ast.Add)
    )


def _is_reversal(node: ast.AST) -> TypeGuard[ast.For]:
    return isinstance(node, ast.For) and (
        (
            isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Name)
            and node.iter.func.id == "reversed"
            and len(node.iter.args) == 1
            and isinstance(node.iter.args[0], ast.Name)
        )
        or (
            isinstance(node.iter, ast.Subscript)
            and isinstance(node.iter.value, ast.Name)
            and isinstance(node.iter.slice, ast.Slice)
            and node.iter.slice.lower is None
            and node.iter.slice.upper is None
            and isinstance(node.iter.slice.step, ast.UnaryOp)
        )
    )


def _flip_reversal(loop: ast.For) -> None:
    """`for v in reversed(order)` <-> `for v in order[::-1]` (order is a list)."""
    if isinstance(loop.iter, ast.Call):
        name = loop.iter.args[0]
        loop.iter = ast.Subscript(name, ast.Slice(None, None, ast.UnaryOp(ast.USub(), ast.Constant(1))), ast.Load())
    else:
        assert isinstance(loop.iter, ast.Subscript), "a reversal's loop is over reversed(order) or order[::-1]"
        loop.iter = ast.Call(ast.Name("reversed", ast.Load()), [loop.iter.value], [])


class FreshNames:
    """Fresh identifiers that collide with nothing in the engine."""

    def __init__(self, rng: random.Random, taken: set[str]):
        self.rng = rng
        self.taken = set(taken)

    def fresh(self, private: bool = False) -> str:
        while True:
            length = self.rng.randint(2, 6)
            name = self.rng.choice(string.ascii_lowercase) + "".join(
                self.rng.choice(string.ascii_lowercase + string.digits) for _ in range(length)
            )
            name = "_" + name if private else name
            if name not in self.taken and name not in KEEP:
                self.taken.add(name)
                return name


def all_names(tree: ast.Module | list[ast.AST]) -> set[str]:
    found = set()
    for node in tree if isinstance(tree, list) else nodes(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
    return found


def _drop_docstrings(everything: list[ast.AST]) -> None:
    for node in everything:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]


def _top_level_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions defined at module level or as methods (their nested functions are renamed with them)."""
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found += [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return found


def _rename_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: FreshNames) -> None:
    inside = nodes(fn)
    mapping = {n: names.fresh() for n in sorted(_own_locals(fn, inside))}
    if not mapping:
        return
    own_params = {id(a) for a in nodes(fn.args)}
    for node in inside:
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not fn and node.name in mapping:
            node.name = mapping[node.name]
        elif isinstance(node, ast.arg) and node.arg in mapping and id(node) not in own_params:
            node.arg = mapping[node.arg]
        elif isinstance(node, ast.Nonlocal):
            node.names = [mapping.get(n, n) for n in node.names]


def _own_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef, inside: list[ast.AST]) -> set[str]:
    """The names a function binds (inside: its nodes) that may be renamed: not its parameters, not a global it
    declares, none of KEEP."""
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    declared_global = {n for node in inside if isinstance(node, ast.Global) for n in node.names}
    bound = set()
    for node in inside[1:]:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound - params - declared_global - KEEP


def _rename_private_attributes(everything: list[ast.AST], names: FreshNames) -> None:
    """Rename `_x` attributes and methods (never dunders) consistently across the engine."""
    mapping = {n: names.fresh(private=True) for n in sorted(_private_names(everything))}
    for node in everything:
        if isinstance(node, ast.Attribute) and node.attr in mapping:
            node.attr = mapping[node.attr]
        elif isinstance(node, ast.ClassDef):
            _rename_in_class(node, mapping)


def _private_names(everything: list[ast.AST]) -> set[str]:
    """The `_x` attributes used and methods defined (never dunders)."""
    private = set()
    for node in everything:
        if isinstance(node, ast.Attribute) and _private(node.attr):
            private.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(item.name):
                    private.add(item.name)
    return private


def _rename_in_class(cls: ast.ClassDef, mapping: dict[str, str]) -> None:
    """Rename a class's methods and the names in its __slots__ as mapping says."""
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in mapping:
            item.name = mapping[item.name]
        if isinstance(item, ast.Assign) and _slots(item) and isinstance(item.value, (ast.Tuple, ast.List)):
            elts = item.value.elts  # every one a string constant (_slots)
            slots = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            item.value = ast.Tuple([ast.Constant(mapping.get(s, s)) for s in slots], ast.Load())


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _slots(node: ast.Assign) -> bool:
    return (
        any(isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets)
        and isinstance(node.value, (ast.Tuple, ast.List))
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts)
    )


def _shuffle_methods(cls: ast.ClassDef, rng: random.Random) -> None:
    """Methods in another order; everything else (and __init__, first) stays where it is."""
    slots = [
        i
        for i, item in enumerate(cls.body)
        if isinstance(item, ast.FunctionDef) and item.name != "__init__" and not item.decorator_list
    ]
    methods = [cls.body[i] for i in slots]
    rng.shuffle(methods)
    for i, item in zip(slots, methods):
        cls.body[i] = item
