"""Mutation operators: each sabotage is one small, named rewrite of an engine's syntax tree.

An operator finds the code of one rule in an engine, whatever its style, and changes it
the way a student gets it wrong. It registers itself with `@operator(...)`, names the
misconception it plants (a cause of grader/causes.py, whose words a student whose tests
miss the mutant reads), and says when it does not apply to an engine (`NotApplicable`)
instead of failing.

Where a rule lives, in the styles the lesson and its students use:
- a method of Value named for the operation (`__add__`, `tanh`...), holding the backward
  closure (`def _backward(): self.grad += ...`);
- a branch of a backward() that dispatches on the operation's name
  (`if node.op == '+': a.grad += g`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from grader.causes import CAUSES, Cause
from grader.errors import NotApplicable
from grader.sabotage.trees import last_class, last_method, nodes, unparse
from grader.sabotage.trees import statements as statements_of
from grader.sandbox.inside.ops import RULES  # each rule: its method on Value, the names a dispatch uses


@dataclass(frozen=True)
class Operator:
    id: str
    check: str
    """The grader's own check that catches the mutant (grader selftest shows it does)."""
    cause: Cause
    """The misconception the mutant plants (grader/causes.py)."""
    catch: str
    """The kind of test that would catch it, for the student whose tests missed it."""
    rewrite: Callable[[ast.Module], None]
    """Changes the tree in place; raises NotApplicable when there is nothing to change."""
    proof: str
    """The body of the test `catch` describes, using only what every engine has (Value, Neuron, numerical_grad
    and math): `grader selftest` runs it on every correct engine, where it must pass, and on every mutant of the
    operator, where it must fail. A hint is given only once proven."""
    replaces: tuple[str, ...] = ("Value",)
    """The classes the operator changes. One that changes more than Value is never applied to the student's
    own engine (a run of theirs swaps in their Value only); a wheat's run swaps in its Value and Neuron."""

    @property
    def misconception(self) -> str:
        """The bug, in the lesson's words: its cause's."""
        return self.cause.sentence

    def apply(self, source: str) -> str:
        """The mutant's source (raises NotApplicable)."""
        return unparse(self.mutated(source))[:-1]

    def mutated(self, source: str) -> ast.Module:
        """The mutant's tree, not yet unparsed (raises NotApplicable)."""
        tree = ast.parse(source)
        self.rewrite(tree)
        return tree


REGISTRY: dict[str, Operator] = {}


def operator(id: str, *, cause: str, check: str, catch: str, proof: str, replaces: tuple[str, ...] = ("Value",)):
    """Register a rewrite function as an operator planting the misconception `cause` (a grader/causes.py id),
    with the hint `catch` and the test that proves it (`proof`, a test's body)."""

    def register(fn: Callable[[ast.Module], None]) -> Callable[[ast.Module], None]:
        if id in REGISTRY:
            raise ValueError(f"operator {id!r} is registered twice")
        REGISTRY[id] = Operator(id, check, CAUSES[cause], catch, fn, proof, replaces)
        return fn

    return register


# -- finding code ------------------------------------------------------------------------------


def value_class(tree: ast.Module, name: str = "Value") -> ast.ClassDef:
    """The class the module ends up with under that name (the last defined: trees.last_class); raises
    NotApplicable where there is none."""
    found = last_class(tree, name)
    if found is None:
        raise NotApplicable(f"no class {name}")
    return found


def method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The method the class ends up with under that name (the last defined: trees.last_method)."""
    return last_method(cls, name)


def rule_sites(tree: ast.Module, rule: str) -> list[list[ast.stmt]]:
    """The statement lists where a rule's backward may live: its method, and dispatch branches (none in a class
    a later one of its name replaces)."""
    name, labels = RULES[rule]
    cls = value_class(tree)
    sites = []
    found = method(cls, name)
    if found is not None:
        sites.append(found.body)
    replaced = {id(n) for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.name and n is not cls}
    live = ast.Module(body=[n for n in tree.body if id(n) not in replaced], type_ignores=[]) if replaced else tree
    for node in statements_of(live):  # an If is a statement: ast.walk's order, less expressions
        if isinstance(node, ast.If) and _tests_label(node.test, labels):
            sites.append(node.body)
    return sites


def _tests_label(test: ast.expr, labels: tuple[str, ...]) -> bool:
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and any(isinstance(side, ast.Constant) and side.value in labels for side in (test.left, *test.comparators))
    )


def grad_updates(statements: list[ast.stmt]) -> list[ast.AugAssign]:
    """`x.grad += ...` statements: the chain rule's accumulations."""
    return [
        n
        for statement in statements
        for n in statements_of(statement)
        if isinstance(n, ast.AugAssign)
        and isinstance(n.op, ast.Add)
        and isinstance(n.target, ast.Attribute)
        and n.target.attr == "grad"
    ]


def rule_updates(tree: ast.Module, rule: str) -> list[ast.AugAssign]:
    updates = [u for site in rule_sites(tree, rule) for u in grad_updates(site)]
    if not updates:
        raise NotApplicable(f"no `x.grad += ...` in the backward of {rule}")
    return updates


def replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    """Put new where old is, wherever old sits in tree.

    Where each node sits is looked up in an index of tree built once (kept on tree, and mended as
    nodes are replaced), so an operator that replaces each of n sites does O(n) work, not a walk of
    the whole tree per site: an engine with 40,000 updates must not cost the grader minutes."""
    index = getattr(tree, "_places", None)
    if index is None or not _holds(index.get(id(old)), old):
        # kept on the tree it indexes (a node takes any attribute; mypy knows only its fields)
        index = tree._places = {}  # type: ignore[attr-defined]
        for parent in nodes(tree):  # contexts and operators left out: they hold no node
            _index_children(index, parent)
    place = index.get(id(old))
    if place is None or not _holds(place, old):
        raise ValueError("node not found")
    parent, field, position = place
    if position is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[position] = new
    index[id(new)] = place
    _index_children(index, new)


def _index_children(index: dict, parent: ast.AST) -> None:
    for field, value in ast.iter_fields(parent):
        if isinstance(value, ast.AST):
            index[id(value)] = (parent, field, None)
        elif isinstance(value, list):
            for position, item in enumerate(value):
                if isinstance(item, ast.AST):
                    index[id(item)] = (parent, field, position)


def _holds(place: tuple | None, node: ast.AST) -> bool:
    """Whether node is where the index says (an entry left by a node since gone is not)."""
    if place is None:
        return False
    parent, field, position = place
    value = getattr(parent, field, None)
    if position is None:
        return value is node
    return isinstance(value, list) and position < len(value) and value[position] is node


def incoming_dropped(tree: ast.Module, rule: str, which: int | None = None) -> int:
    """The rule's backward made to forget the incoming gradient: `* out.grad` dropped from each update (an update
    that is out.grad alone becomes 1.0), or (which) only from one input's, self's (0) or other's (1), of a rule
    with two. How many updates changed."""
    updates = rule_updates(tree, rule)
    if which is not None:
        if len(updates) != 2:
            raise NotApplicable(f"no two updates in the backward of {rule}")
        updates = [updates[which]]
    incoming = {"grad"} | _names_bound_to_grad(tree)
    count = 0
    for update in updates:
        value = _without_incoming(update.value, incoming)
        if value is not None:
            update.value = value
            count += 1
    return count


def _without_incoming(value: ast.expr, incoming: set[str]) -> ast.expr | None:
    """value with its factor of the incoming gradient dropped, or None when it has no such factor."""
    if _is_incoming(value, incoming):
        return ast.Constant(1.0)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        for keep, drop in ((value.left, value.right), (value.right, value.left)):
            if _is_incoming(drop, incoming):
                return keep
    if isinstance(value, ast.IfExp):
        body, orelse = _without_incoming(value.body, incoming), _without_incoming(value.orelse, incoming)
        if body is not None or orelse is not None:
            return ast.IfExp(value.test, body or value.body, orelse or value.orelse)
    return None


def _is_incoming(node: ast.expr, incoming: set[str]) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "grad") or (
        isinstance(node, ast.Name) and node.id in incoming
    )


def _names_bound_to_grad(tree: ast.Module) -> set[str]:
    """Names a dispatching backward() binds to the incoming gradient (`g = node.grad`)."""
    return {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and node.value.attr == "grad"
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def changed(count: int, what: str) -> None:
    if count == 0:
        raise NotApplicable(what)
