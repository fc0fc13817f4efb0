"""Where a rule's backward lives when it is not a closure in its method nor a branch of a dispatching backward()
(reading.py reads those), and how backward() walks the nodes; read from the syntax tree alone, within bounds.

- a function of the module (or a static method of Value) that the rule's method gives its nodes to, with
  functools.partial (`out._backward = partial(add_backward, self, other, out)`) or a lambda calling it
  (`out._backward = lambda: add_backward(self, other, out)`): its statements are the rule's, and its parameter
  given the output the method returns is the output (Bound);
- a table of lambdas keyed by the operations' labels (`GRADIENTS = {"+": lambda out, a, b: (out.grad, out.grad),
  ...}`), each giving its inputs' gradients in order (or as pairs `(a, g)`), which backward() adds to each child
  (Entry: the lambda, its output's parameter, its inputs' parameters, and its gradients one by one); and the
  statement of backward() that adds them (applying);
- backward()'s walk of the topological order: a for loop calling each node's backward, or a functools.reduce
  doing it (`reduce(lambda _, v: v._backward(), reversed(topo), None)`) (Walk).

Every function and lambda read here, and every method of the classes reading.py reads, is first held to the
bounds written here (METHOD_STATEMENTS, METHOD_NODES, DEPTH: within()); a table holds at most MOST_ENTRIES entries.
Past any, the file is not read (NotApplicable).
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from grader.errors import NotApplicable
from grader.sabotage.trees import last_class, last_method, nodes, statements

METHOD_STATEMENTS = 200
"""Statements of one method of Value or Neuron, or function read here (its nested functions' included), above which
no repair is looked for in the file: dead code of thousands of lines in a `_backward` would otherwise cost the grader
minutes."""
METHOD_NODES = 4_000
"""Syntax-tree nodes of one such method, function or lambda above which no repair is looked for (one statement can
be very wide)."""
DEPTH = 60
"""Levels of nesting in one such method, function or lambda (a `q + q + ... + q` of 900 terms is 900 deep) above
which no repair is looked for: the comparisons of subtrees cost their depth at every level."""
MOST_ENTRIES = 64
"""Entries of a table of lambdas past which it is not read."""


@dataclass(frozen=True)
class Bound:
    """A function a rule's method gives its nodes to (partial, or a lambda calling it), and its parameter bound to
    the output the method returns (None where none is)."""

    fn: ast.FunctionDef
    output: str | None


@dataclass(frozen=True)
class Entry:
    """A rule's lambda in a table: its output's parameter, its inputs' parameters in order, and each gradient it
    gives, with the input it is for."""

    fn: ast.Lambda
    table: str
    """The table's name (the name it is assigned to)."""
    output: str
    inputs: tuple[str, ...]
    gradients: tuple[tuple[str, ast.expr], ...]
    """(the input's parameter, the expression of its gradient), in the order the lambda gives them."""


@dataclass(frozen=True)
class Walk:
    """backward()'s walk of the topological order: the statement walking it (a for loop, or the statement holding
    a functools.reduce), and the expression of the order walked."""

    statement: ast.stmt
    order: ast.expr


def within(fn: ast.AST, what: str) -> None:
    """Raises NotApplicable where a function or lambda is past the bounds (each walked once, without recursion, no
    further than its bounds)."""
    if sum(1 for n in statements(fn) if isinstance(n, ast.stmt)) > METHOD_STATEMENTS:
        raise NotApplicable(f"{what} has over {METHOD_STATEMENTS} statements")
    stack, seen = [(fn, 1)], 0
    while stack:
        node, level = stack.pop()
        seen += 1
        if level > DEPTH or seen > METHOD_NODES:
            raise NotApplicable(f"{what} is over {DEPTH} deep or {METHOD_NODES} nodes")
        stack += [(child, level + 1) for child in ast.iter_child_nodes(node)]


# -- functions given the nodes ---------------------------------------------------------------------------------


def bound_functions(tree: ast.Module, method: str) -> list[Bound]:
    """The functions the method of the last Value gives its nodes to (functools.partial(f, ...) or a lambda calling
    f), each once, within bounds."""
    cls = last_class(tree)
    fn = last_method(cls, method)
    if cls is None or fn is None:
        return []
    returned = _returned(fn)
    found: dict[int, Bound] = {}
    for call in (n for n in nodes(fn) if isinstance(n, (ast.Call, ast.Lambda))):
        given = _given(call)
        if given is None:
            continue
        target, args, keywords = given
        bound = _function(tree, cls, target)
        if bound is None or id(bound) in found:
            continue
        within(bound, bound.name)
        found[id(bound)] = Bound(bound, _output(bound, args, keywords, returned))
    return list(found.values())


def _returned(fn: ast.FunctionDef) -> str | None:
    for node in fn.body:
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            return node.value.id
    return None


def _given(node: ast.Call | ast.Lambda) -> tuple[ast.expr, list[ast.expr], list[ast.keyword]] | None:
    """What a call of partial, or a lambda calling a function, gives: the function, the arguments, the keywords."""
    if isinstance(node, ast.Lambda):
        body = node.body
        return (body.func, body.args, body.keywords) if isinstance(body, ast.Call) else None
    func = node.func
    named = (isinstance(func, ast.Name) and func.id == "partial") or (
        isinstance(func, ast.Attribute) and func.attr == "partial"
    )
    return (node.args[0], node.args[1:], node.keywords) if named and node.args else None


def _function(tree: ast.Module, cls: ast.ClassDef, target: ast.expr) -> ast.FunctionDef | None:
    """The function a name refers to: a function of the module (the last defined), or a static method of Value
    (`Value.f`, `self.f`)."""
    if isinstance(target, ast.Name):
        found = None
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == target.id:
                found = node
        return found
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        method = last_method(cls, target.attr)
        static = method is not None and any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list
        )
        return method if static else None
    return None


def _output(fn: ast.FunctionDef, args: list[ast.expr], keywords: list[ast.keyword], returned: str | None):
    """The parameter of fn given the name the method returns (its output)."""
    if returned is None:
        return None
    params = [a.arg for a in fn.args.args]
    for i, arg in enumerate(args):
        if isinstance(arg, ast.Starred):
            return None
        if isinstance(arg, ast.Name) and arg.id == returned and i < len(params):
            return params[i]
    for keyword in keywords:
        if isinstance(keyword.value, ast.Name) and keyword.value.id == returned and keyword.arg in params:
            return keyword.arg
    return None


# -- tables of lambdas ----------------------------------------------------------------------------------------


def entries(tree: ast.Module, labels: tuple[str, ...]) -> list[Entry]:
    """The lambdas of the tables (a dict of the module, or of Value's body, assigned to a name) keyed by one of the
    rule's labels, within bounds."""
    found = []
    for name, table in _tables(tree):
        lambdas = [v for v in table.values if isinstance(v, ast.Lambda)]
        output = _output_position(lambdas)
        for key, value in zip(table.keys, table.values, strict=True):
            if isinstance(key, ast.Constant) and key.value in labels and isinstance(value, ast.Lambda):
                entry = _entry(name, value, output)
                if entry is not None:
                    found.append(entry)
    return found


def _tables(tree: ast.Module) -> list[tuple[str, ast.Dict]]:
    """The dicts of lambdas assigned to a name at the module's top level or in the last Value's body."""
    cls = last_class(tree)
    found = []
    for node in [*tree.body, *(cls.body if cls is not None else [])]:
        target, value = _assigned(node)
        if target is None or not isinstance(value, ast.Dict):
            continue
        if not any(isinstance(v, ast.Lambda) for v in value.values):
            continue
        if len(value.keys) > MOST_ENTRIES:
            raise NotApplicable(f"a table of over {MOST_ENTRIES} entries")
        for v in value.values:
            within(v, f"the table {target}")
        found.append((target, value))
    return found


def _assigned(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def _output_position(lambdas: list[ast.Lambda]) -> int:
    """Which parameter of a table's lambdas is the output: the one whose gradient most of them read (the first when
    none does)."""
    read: Counter[int] = Counter()
    for fn in lambdas:
        params = [a.arg for a in fn.args.args]
        for node in nodes(fn.body):
            name = node.value if isinstance(node, ast.Attribute) and node.attr == "grad" else None
            if isinstance(name, ast.Name) and name.id in params:
                read[params.index(name.id)] += 1
    return read.most_common(1)[0][0] if read else 0


def _entry(table: str, fn: ast.Lambda, output: int) -> Entry | None:
    params = [a.arg for a in fn.args.args]
    if fn.args.vararg is not None or output >= len(params):
        return None
    inputs = tuple(p for i, p in enumerate(params) if i != output)
    given = list(fn.body.elts) if isinstance(fn.body, (ast.Tuple, ast.List)) else [fn.body]
    pairs = [_pair(g, inputs) for g in given]
    if all(pair is not None for pair in pairs):
        gradients = tuple(pair for pair in pairs if pair is not None)
    elif len(given) == len(inputs):
        gradients = tuple(zip(inputs, given, strict=True))
    else:
        return None
    return Entry(fn, table, params[output], inputs, gradients)


def _pair(node: ast.expr, inputs: tuple[str, ...]) -> tuple[str, ast.expr] | None:
    """`(a, gradient)`: the input and its gradient."""
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        first = node.elts[0]
        if isinstance(first, ast.Name) and first.id in inputs:
            return first.id, node.elts[1]
    return None


def applying(tree: ast.Module, tables: set[str]) -> list[ast.Assign | ast.AugAssign]:
    """The statements of Value's methods that set a gradient in a loop over what a table gives (`for child, g in
    zip(node.children, GRADIENTS[node.op](...)): child.grad += g`)."""
    cls = last_class(tree)
    found: list[ast.Assign | ast.AugAssign] = []
    for method in cls.body if cls is not None and tables else []:
        for loop in (n for n in statements(method) if isinstance(n, ast.For)):
            looked_up = any(
                isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in tables
                for n in nodes(loop.iter)
            )
            if looked_up:
                found += [s for s in loop.body if isinstance(s, (ast.Assign, ast.AugAssign)) and _sets_grad(s)]
    return found


def _sets_grad(node: ast.Assign | ast.AugAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return len(targets) == 1 and isinstance(targets[0], ast.Attribute) and targets[0].attr == "grad"


# -- backward()'s walk ----------------------------------------------------------------------------------------


def walks(fn: ast.FunctionDef) -> list[Walk]:
    """backward()'s walks of the topological order: the for loops that call each node's backward (or set a
    gradient), and the functools.reduce calls whose function does."""
    found = []
    for node in statements(fn):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            name = node.target.id
            if any(_calls_on(n, name) for s in node.body for n in nodes(s)) or any(
                isinstance(n, (ast.Assign, ast.AugAssign)) and _sets_grad(n) for s in node.body for n in statements(s)
            ):
                found.append(Walk(node, node.iter))
        elif isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for call in (n for n in ast.iter_child_nodes(node) if isinstance(n, ast.Call)):
                order = _reduced(call)
                if order is not None:
                    found.append(Walk(node, order))
    return found


def _calls_on(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == name
    )


def _reduced(call: ast.Call) -> ast.expr | None:
    """The order a `reduce(lambda acc, v: v._backward(), order, ...)` walks, calling each node's backward."""
    func = call.func
    named = (isinstance(func, ast.Name) and func.id == "reduce") or (
        isinstance(func, ast.Attribute) and func.attr == "reduce"
    )
    if not named or len(call.args) < 2 or not isinstance(call.args[0], ast.Lambda):
        return None
    fn = call.args[0]
    params = [a.arg for a in fn.args.args]
    if len(params) != 2:
        return None
    return call.args[1] if any(_calls_on(n, params[1]) for n in nodes(fn.body)) else None
