"""Every trace a sabotage leaves in an engine's code, in correct engines too.

A mutation operator changes one rule in one recognisable way: a 0.5 in addition's update, a
`.grad = e` that drops what was there, no reversal in backward(), no `def __radd__`, a
`True` for relu's condition... Were those traces found only in mutants, a test could catch
every mutant by reading the engine's bytecode (its constants, names and instructions) and
test nothing. So every engine of a grading (the wheats, their mutants, the student's own
engine and its mutants) goes through this pass, after any mutation and before the rewrite.
It writes each rule in forms that compute exactly the same numbers and that carry, in
correct code, each trace an operator can leave:

- addition's update `x.grad += e` becomes `s = x.grad + (0.5 * e + e / 2); x.grad = s` (the
  halves of a float are exact): a 0.5, a division by 2, and a `.grad =` whose right side
  does not name the target;
- every other update `x.grad += e` is `p = e; x.grad += p`, with the nodes' `.data` and
  `.grad` read into locals first: the target's own `.data` always (unused where the rule
  needs none; in mul's, read again where the other input is the target itself) and the
  incoming gradient always (`out.grad` in a backward closure, the local holding it in a
  backward() that dispatches; unused where a mutant forgot it);
- pow's `k - 1` is `k + -1` (no 1, no subtraction); relu's condition is `(c and True)`, and a
  relu that passes every gradient reads `(x.data > 0 or True)`; `a + (-b)` in `__sub__` is
  `a + b.__neg__()` (no negation instruction), and a subtraction that adds negates twice;
- backward() seeds with `setattr(x, 'grad', x.data ** 0)` (no constant 1, no store of .grad)
  and reverses its order by hand (no reversed(), no [::-1]);
- `__radd__` is assigned, never defined under its own name;
- a Neuron reads its bias through parameters(), which names it through getattr.

Every form applies to every engine, so each trace is in every correct engine of every
grading, deterministically; which of the equivalent forms is used follows the seed.
"""

from __future__ import annotations

import ast
import random

from grader.sabotage import disguise_methods as methods
from grader.sabotage.disguise_methods import attr, copy, grad_target, load, store
from grader.sabotage.mutate import RULES, NotApplicable, method, value_class
from grader.sabotage.rewrite import FreshNames, all_names
from grader.sabotage.trees import last_class, nodes, own_statements, unparse, written_order
from grader.sandbox.inside.ops import UPDATED

SCOPES = (
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.NamedExpr,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
)
"""Parts of an update whose reads stay where they are: they may read a name bound there."""
SCOPE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def disguise(source: str, seed: str) -> str:
    """The engine with every rule in disguise, in forms chosen by seed (see the module's docstring)."""
    tree = ast.parse(source)
    return source if last_class(tree) is None else unparse(disguise_tree(tree, seed))


def disguise_tree(tree: ast.Module, seed: str) -> ast.Module:
    """disguise() on a tree, changed in place (and given back), as the disguise of its code would parse: the plan
    disguises and rewrites an engine's tree, and writes its code once (issue 44). A tree without a Value is left as
    it is."""
    try:
        cls = value_class(tree)
    except NotApplicable:
        return tree
    everything = nodes(tree)
    rng, names = random.Random(f"disguise:{seed}"), FreshNames(random.Random(f"names:{seed}"), all_names(everything))
    has_data = any(isinstance(node, ast.Attribute) and node.attr == "data" for node in everything)
    updates = _Updates(rng, names, has_data)
    branches = _branches(everything)
    for rule in UPDATED:
        for statements, incoming, closures_only in _sites(cls, rule, branches):
            for block, inside in _lists(statements, nested=True):
                read = incoming if inside or not closures_only else None
                block[:] = [new for statement in block for new in updates.update(statement, rule, read)]
    sub = method(cls, "__sub__")
    if sub is not None:
        methods.subtraction(sub)
    backward = method(cls, "backward")
    if backward is not None:
        for block, _ in _lists(backward.body, nested=False):
            block[:] = [
                new for statement in block for new in methods.backward_statement(statement, rng, names, has_data)
            ]
    methods.radd(cls, rng, names)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Neuron":
            methods.neuron(node)
    return tree


def _sites(cls: ast.ClassDef, rule: str, branches: list):
    """Where a rule's code lives, each as (statements, how its incoming gradient reads, whether only in
    functions nested in them): the rule's method (`out.grad`, in its backward closures, out being what the
    method returns) and each branch of a backward() that dispatches on the rule's label."""
    name, labels = RULES[rule]
    found = method(cls, name)
    if found is not None:
        last = found.body[-1] if found.body else None
        out = last.value.id if isinstance(last, ast.Return) and isinstance(last.value, ast.Name) else None
        yield found.body, (ast.Attribute(load(out), "grad", ast.Load()) if out else None), True
    for label, branch, incoming in branches:
        if label in labels:
            yield branch.body, incoming, False


def _branches(everything: list[ast.AST]) -> list[tuple[object, ast.If, ast.expr | None]]:
    """Each `if x == label:` of every function, with the local that function bound to a `.grad` before it."""
    found: list[tuple[object, ast.If, ast.expr | None]] = []
    for fn in everything:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        bound: list[tuple[ast.stmt, str]] = []  # each local bound to a .grad: its assignment, its name
        ifs = []
        for node in own_statements(fn, SCOPE):  # slicing.scope_nodes(fn)'s statements, in its order
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "grad"
            ):
                bound.append((node, node.targets[0].id))
            elif (
                isinstance(node, ast.If)
                and isinstance(node.test, ast.Compare)
                and len(node.test.ops) == 1
                and isinstance(node.test.ops[0], ast.Eq)
            ):
                ifs += [
                    (side.value, node)
                    for side in (node.test.left, *node.test.comparators)
                    if isinstance(side, ast.Constant) and isinstance(side.value, str)
                ]
        found += _incoming(fn, bound, ifs)
    return found


def _incoming(
    fn: ast.AST, bound: list[tuple[ast.stmt, str]], ifs: list
) -> list[tuple[object, ast.If, ast.expr | None]]:
    """Each branch of ifs with the last local of bound (in its order) assigned on a line before the branch's `if`."""
    order = written_order(fn, SCOPE) if bound and ifs else {}
    found: list[tuple[object, ast.If, ast.expr | None]] = []
    for label, node in ifs:
        before = [name for assign, name in bound if order[id(assign)] < order[id(node)]]
        found.append((label, node, load(before[-1]) if before else None))
    return found


def _lists(statements: list[ast.stmt], nested: bool, inside: bool = False) -> list[tuple[list[ast.stmt], bool]]:
    """Every statement list within statements, the given one first, each with whether it is in a function
    nested in them (nested=False leaves nested functions out)."""
    found = [(statements, inside)]
    for statement in statements:
        is_function = isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        if is_function and not nested or isinstance(statement, ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(statement, field, None), list):
                found += _lists(getattr(statement, field), nested, inside or is_function)
        for item in getattr(statement, "handlers", None) or getattr(statement, "cases", None) or []:
            found += _lists(item.body, nested, inside or is_function)
    return found


class _Updates:
    """Each chain-rule update of a rule, in disguise."""

    def __init__(self, rng: random.Random, names: FreshNames, has_data: bool):
        self.rng, self.names, self.has_data = rng, names, has_data

    def update(self, statement: ast.stmt, rule: str, incoming: ast.expr | None) -> list[ast.stmt]:
        target = grad_target(statement, assign_too=rule == "add")
        if target is None:
            return [statement]
        assert isinstance(statement, (ast.AugAssign, ast.Assign)), "grad_target found the target of one"
        before: list[ast.stmt] = []
        if not isinstance(target.value, ast.Name):  # x evaluated once, as the update did
            name = self.names.fresh()
            before.append(store(name, target.value))
            target = ast.Attribute(load(name), "grad", ast.Store())
        if rule == "add":
            return before + self.halves(statement, target)
        value = statement.value
        if rule == "pow":
            value = _PowMinusOne().visit(value)
        elif rule == "relu":
            value = _Relu(target.value).visit(value)
        x = target.value
        assert isinstance(x, ast.Name), "x is a name, or was made one above"
        reads, value = self.hoist(value, x.id, incoming, twin=rule == "mul")
        name = self.names.fresh()
        return before + reads + [store(name, value), ast.AugAssign(target, ast.Add(), load(name))]

    def halves(self, statement: ast.AugAssign | ast.Assign, target: ast.Attribute) -> list[ast.stmt]:
        """`x.grad += e` as `s = x.grad + (0.5 * e + e / 2); x.grad = s`; `x.grad = e` as `s = 0.5 * e + e / 2`."""
        found: list[ast.stmt] = []
        value = statement.value
        if not isinstance(value, ast.Name):
            name = self.names.fresh()
            found.append(store(name, value))
            value = load(name)
        half = (
            ast.BinOp(ast.Constant(0.5), ast.Mult(), copy(value))
            if self.rng.random() < 0.5
            else ast.BinOp(copy(value), ast.Mult(), ast.Constant(0.5))
        )
        parts = [half, ast.BinOp(copy(value), ast.Div(), ast.Constant(2))]
        self.rng.shuffle(parts)
        total = ast.BinOp(parts[0], ast.Add(), parts[1])
        if isinstance(statement, ast.AugAssign):
            total = ast.BinOp(attr(target.value, "grad"), ast.Add(), total)
        name = self.names.fresh()
        return found + [store(name, total), ast.Assign([target], load(name))]

    def hoist(
        self, value: ast.expr, target: str, incoming: ast.expr | None, twin: bool = False
    ) -> tuple[list[ast.stmt], ast.expr]:
        """Every `n.data` and `n.grad` the update always reads, into a local first; the target's `.data` and
        the incoming gradient read whether used or not. With twin (mul's two inputs), another input's data
        reads `(d if n is not x else x.data)`: the same number, and the target's own data in its update."""
        reads: dict[str, str] = {}

        def local(read: ast.expr) -> ast.Name:
            key = _key(read)
            if key not in reads:
                reads[key] = self.names.fresh()
            return load(reads[key])

        value = _Reads(local, target if twin else None).visit(value)
        if self.has_data:
            local(ast.Attribute(load(target), "data", ast.Load()))
        if incoming is not None:
            local(incoming)
        found: list[ast.stmt] = [store(name, _read(key)) for key, name in reads.items()]
        self.rng.shuffle(found)
        return found, value


def _key(read: ast.expr) -> str:
    """ast.unparse(read), without unparsing the usual read (`n.data`, `n.grad`, a local)."""
    if isinstance(read, ast.Name):
        return read.id
    if isinstance(read, ast.Attribute) and isinstance(read.value, ast.Name):
        return f"{read.value.id}.{read.attr}"
    return ast.unparse(read)


def _read(key: str) -> ast.expr:
    """ast.parse(key, mode="eval").body, without parsing the usual read."""
    name, dot, field = key.partition(".")
    if name.isidentifier() and (not dot or field.isidentifier()):
        return ast.Attribute(load(name), field, ast.Load()) if dot else load(name)
    return ast.parse(key, mode="eval").body


class _Reads(ast.NodeTransformer):
    """`n.data` and `n.grad` where the update always reads them, each as the local local() names (not a
    read that may not happen: a later operand of and/or, a branch of `x if c else y`)."""

    def __init__(self, local, twin: str | None):
        self.local, self.twin = local, twin

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.attr in ("data", "grad") and isinstance(node.ctx, ast.Load):
            name = node.value.id
            if self.twin is None or node.attr != "data" or name == self.twin:
                return self.local(node)
            other = ast.Compare(load(name), [ast.IsNot()], [load(self.twin)])
            return ast.IfExp(other, self.local(node), ast.Attribute(load(self.twin), "data", ast.Load()))
        return self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        node.values[0] = self.visit(node.values[0])
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        node.test = self.visit(node.test)
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return node if isinstance(node, SCOPES) else super().generic_visit(node)


class _PowMinusOne(ast.NodeTransformer):
    """`k - 1` as `k + -1` (exactly the same number, for ints and floats)."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if (
            isinstance(node.op, ast.Sub)
            and isinstance(node.right, ast.Constant)
            and type(node.right.value) in (int, float)
            and node.right.value == 1
        ):
            return ast.BinOp(node.left, ast.Add(), ast.UnaryOp(ast.USub(), node.right))
        return node


class _Relu(ast.NodeTransformer):
    """relu's condition `c` as `(c and True)`; a constant True (every gradient passed) as `(x.data > 0 or True)`."""

    def __init__(self, target: ast.expr):
        self.target = target

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        return ast.BoolOp(ast.And(), [node, ast.Constant(True)])

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if node.value is True:
            positive = ast.Compare(attr(self.target, "data"), [ast.Gt()], [ast.Constant(0)])
            return ast.BoolOp(ast.Or(), [positive, ast.Constant(True)])
        return node
