"""Reading the student's code for the inverse edits: the text with its syntax tree, read once and within bounds,
and what the inverses ask of it (the class graded, a rule's updates, an operation's output, a node's code).

The reading runs in the grader's own process, on a student's file: every walk here is bounded before it starts.
A file is read only when each method of the classes the inverses look in (the last Value, the last Neuron: the
ones Python keeps), and each function or table the rule's backward lives in (places.py), holds at most
METHOD_STATEMENTS statements and METHOD_NODES nodes, none deeper than DEPTH (places.py's bounds); else
no repair is looked for in it (`NotApplicable`), nor in a rule whose backward sets a gradient more than MOST_UPDATES
times. What the inverses ask of one function (its assignments, the name it returns) is found once and kept, so a
rule with many updates costs one walk of its function, not one per update; an edit changes at most MOST_CHANGES
runs of lines, and each is placed among the file's statements, not its every node. A lesson's engine is far inside
every bound (the longest method of the wheats and the zoo has 30 statements and 276 nodes, 15 levels deep).
"""

from __future__ import annotations

import ast

from grader.errors import NotApplicable
from grader.repair.edits import LONGEST_LINE, Change, Located, Scope, Span
from grader.repair.places import Bound, bound_functions, within
from grader.sabotage.mutate import rule_sites
from grader.sabotage.trees import last_class, last_method, nodes, statements
from grader.sandbox.inside.ops import RULES

MOST_CHANGES = 16
"""Runs of lines one edit may change (the same mistake in every operation's backward is a few per method): past
it, the edit is not offered (nobody reads a repair of hundreds of lines, and each is placed and regraded)."""
MOST_UPDATES = 64
"""Statements setting a gradient in one rule's backward (its method's and its dispatch branches', which the lesson
writes two of) past which the rule's code is not read: each is looked at on its own."""
READ = ("Value", "Neuron")
"""The classes whose methods the inverses read."""

Update = ast.AugAssign | ast.Assign
"""A statement setting an input's gradient (`x.grad += ...`, `x.grad = ...`)."""


class Source:
    """The student's text with its syntax tree, positions in bytes as ast gives them; raises SyntaxError (or
    ValueError, RecursionError, MemoryError, as ast.parse does) where it does not parse, and NotApplicable where a
    method of the classes read is past the bounds."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8")
        self.tree = ast.parse(text)
        bounded(self.tree)
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.parents: dict[int, ast.AST] = {}
        for parent in nodes(self.tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
        self.kept: dict[tuple[str, int | str], object] = {}
        """What was found once and is asked again (a function's assignments, a rule's updates), by what and where."""

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def start(self, node: Located) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: Located) -> int:
        """Raises ValueError for a node without an end (never one ast.parse made: it gives every node one)."""
        if node.end_lineno is None or node.end_col_offset is None:
            raise ValueError(f"{type(node).__name__} at line {node.lineno} has no end position")
        return self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def code(self, node: Located) -> str:
        return self.segment(self.start(node), self.end(node))

    def replace(self, node: Located, text: str) -> Span:
        return Span(self.start(node), self.end(node), text)

    def line_of(self, offset: int) -> int:
        """The 1-based line holding a byte offset."""
        low, high = 0, len(self.starts) - 1
        while low < high - 1:
            middle = (low + high) // 2
            if self.starts[middle] <= offset:
                low = middle
            else:
                high = middle
        return low + 1

    def functions(self, node: ast.AST) -> list[Scope]:
        """The functions and classes node is in, the outermost first."""
        found: list[Scope] = []
        parent = self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append(parent)
            parent = self.parents.get(id(parent))
        return found[::-1]

    def changes(self, spans: list[Span]) -> tuple[Change, ...] | None:
        """The spans as Changes, one per run of lines they touch; None when they overlap, a line is too long to
        show, or they are more than MOST_CHANGES runs."""
        spans = sorted(spans, key=lambda s: (s.start, s.end))
        if any(a.end > b.start for a, b in zip(spans, spans[1:], strict=False)):
            return None
        groups: list[list[Span]] = []
        for span in spans:
            if groups and self.line_of(span.start) <= self.line_of(max(groups[-1][-1].end - 1, groups[-1][-1].start)):
                groups[-1].append(span)
            else:
                groups.append([span])
            if len(groups) > MOST_CHANGES:
                return None
        changes = tuple(self._change(group) for group in groups)
        if any(len(line) > LONGEST_LINE for c in changes for line in (c.before + "\n" + c.after).split("\n")):
            return None
        return changes

    def _change(self, group: list[Span]) -> Change:
        first = self.line_of(group[0].start)
        span = group[0]
        if len(group) == 1 and span.start == span.end == self.starts[first - 1] and span.text.endswith("\n"):
            return Change(first, *self._named(group[0]), "", group[0].text[:-1])
        last = self.line_of(max(group[-1].end - 1, group[-1].start))
        begin, finish = self.starts[first - 1], self.starts[last]
        new = self.data[begin:finish]
        for span in reversed(group):
            new = new[: span.start - begin] + span.text.encode("utf-8") + new[span.end - begin :]
        before = self.segment(begin, finish).replace("\r\n", "\n").rstrip("\n")
        after = new.decode("utf-8").replace("\r\n", "\n").rstrip("\n")
        return Change(first, *self._named(group[0]), before, after)

    def _named(self, span: Span) -> tuple[str, str]:
        return (span.method, span.where or span.method) if span.method else self._place(span.start)

    def _place(self, offset: int) -> tuple[str, str]:
        """The method holding an offset (`__mul__`, `Neuron.__call__`), and where in words (`__mul__'s
        _backward`)."""
        node = self._innermost(offset)
        scopes = self.functions(node) + ([node] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [])
        if not scopes:
            return "", "the module"
        names = [s.name for s in scopes]
        cls, rest = (names[0], names[1:]) if isinstance(scopes[0], ast.ClassDef) else ("", names)
        if not rest:
            return cls, cls
        method = rest[0] if cls in ("Value", "") else f"{cls}.{rest[0]}"
        return method, f"{method}'s {rest[-1]}" if len(rest) > 1 else method

    def _innermost(self, offset: int) -> ast.AST:
        """The statement starting last among those holding the offset (the module where none does)."""
        found = self.kept.get(("statements", ""))
        if not isinstance(found, list):
            found = self.kept["statements", ""] = [n for n in statements(self.tree) if isinstance(n, ast.stmt)]
        best: ast.AST = self.tree
        for node in found:
            inside = self.start(node) <= offset < max(self.end(node), self.start(node) + 1)
            if inside and (not isinstance(best, ast.stmt) or self.start(node) >= self.start(best)):
                best = node
        return best


def bounded(tree: ast.Module) -> None:
    """Raises NotApplicable where a method of a class the inverses read is past the bounds (METHOD_STATEMENTS,
    METHOD_NODES, DEPTH: places.py). Each method is walked once, without recursion, and no further than its
    bounds."""
    for name in READ:
        cls = last_class(tree, name)
        for method in cls.body if cls is not None else []:
            within(method, f"{name}.{getattr(method, 'name', '')}")


# -- what the inverses ask -------------------------------------------------------------------------------


def value_class(source: Source) -> ast.ClassDef | None:
    """The Value class graded (the last defined)."""
    return last_class(source.tree)


def method_of(source: Source, name: str, cls: str = "Value") -> ast.FunctionDef | None:
    """The method the class graded ends up with under that name (the last defined)."""
    return last_method(last_class(source.tree, cls), name)


def _graded(source: Source) -> ast.Module:
    """The module with only its last Value class (rule_sites reads a module's last Value and its dispatches)."""
    cls = last_class(source.tree)
    if cls is None:
        raise NotApplicable("no class Value")
    return ast.Module(body=[cls], type_ignores=[])


def sites(source: Source, rule: str) -> list[list[ast.stmt]]:
    """The statement lists where the rule's backward lives: its method, the dispatch branches, and the functions
    its method gives its nodes to (places.bound_functions)."""
    return rule_sites(_graded(source), rule) + [b.fn.body for b in bound(source, rule)]


def bound(source: Source, rule: str) -> list[Bound]:
    """The functions the rule's method gives its nodes to (functools.partial, or a lambda calling one), found once."""
    kept = source.kept.get(("bound", rule))
    if isinstance(kept, list):
        return kept
    found = bound_functions(source.tree, RULES[rule][0])
    source.kept["bound", rule] = found
    return found


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
    """Every statement setting an input's gradient in the rule's backward (with += or with =), found once."""
    kept = source.kept.get(("updates", rule))
    if isinstance(kept, list):
        return kept
    found: list[Update] = [
        n
        for site in sites(source, rule)
        for statement in site
        for n in statements(statement)
        if isinstance(n, (ast.AugAssign, ast.Assign))
        and grad_target(n) is not None
        and not isinstance(n.value, ast.Constant)
    ]
    if len(found) > MOST_UPDATES:
        raise NotApplicable(f"over {MOST_UPDATES} gradient updates in the backward of {rule}")
    source.kept["updates", rule] = found
    return found


def accumulations(source: Source, rule: str) -> list[ast.AugAssign]:
    """Every `x.grad += ...` of the rule's backward, a constant one too (`self.grad += 1.0`: + with out.grad
    forgotten) but `+= 0`, found once, within the same bound as updates()."""
    kept = source.kept.get(("accumulations", rule))
    if isinstance(kept, list):
        return kept
    found = [
        n
        for site in sites(source, rule)
        for statement in site
        for n in statements(statement)
        if isinstance(n, ast.AugAssign)
        and grad_target(n) is not None
        and not (isinstance(n.value, ast.Constant) and n.value.value == 0)
    ]
    if len(found) > MOST_UPDATES:
        raise NotApplicable(f"over {MOST_UPDATES} gradient updates in the backward of {rule}")
    source.kept["accumulations", rule] = found
    return found


def same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def mentions(node: ast.AST, part: ast.AST) -> bool:
    """Does part's code appear in node (as a subtree of node's)? Only the subtrees of part's kind are compared."""
    key = ast.dump(part)
    return any(n.__class__ is part.__class__ and ast.dump(n) == key for n in nodes(node))


def site_function(source: Source, node: ast.AST) -> ast.FunctionDef | None:
    """The method of Value a statement is in (the outermost function around it)."""
    scopes = [s for s in source.functions(node) if isinstance(s, ast.FunctionDef)]
    return scopes[0] if scopes else None


def assignments(source: Source, fn: ast.AST) -> list[ast.Assign]:
    """The assignments of a function, nested functions' included, in ast.walk's order: found once per function."""
    kept = source.kept.get(("assignments", id(fn)))
    if isinstance(kept, list):
        return kept
    found = [n for n in statements(fn) if isinstance(n, ast.Assign)]
    source.kept["assignments", id(fn)] = found
    return found


def _returned(fn: ast.FunctionDef) -> str | None:
    """The name a method returns (`return out`), its output."""
    for node in fn.body:
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            return node.value.id
    return None


def output(source: Source, update: Update) -> tuple[str, str] | None:
    """The code of an operation's output, as its backward names it: (its value, its gradient). In a method,
    the name it returns (`out`): ("t", "out.grad") when its data is a local name t, else ("out.data",
    "out.grad"); in a dispatching backward(), the node whose gradient is passed on (`g = node.grad`): ("node.data",
    "g")."""
    fn = site_function(source, update)
    if fn is None:
        return None
    given = next((b.output for rule in RULES for b in bound(source, rule) if b.fn is fn and b.output), None)
    if given is not None:  # a function given the nodes: its parameter given the output
        return f"{given}.data", f"{given}.grad"
    name = _returned(fn)
    if name is not None and fn.name != "backward":
        return _data_of(source, fn, name) or f"{name}.data", f"{name}.grad"
    for node in assignments(source, fn):  # `g = node.grad`
        if isinstance(node.value, ast.Attribute) and node.value.attr == "grad":
            target = node.targets[0]
            if isinstance(target, ast.Name):
                return f"{source.code(node.value.value)}.data", target.id
    incoming = _incoming_attribute(update)
    return (f"{source.code(incoming.value)}.data", source.code(incoming)) if incoming is not None else None


def _incoming_attribute(update: Update) -> ast.Attribute | None:
    target = grad_target(update)
    for node in nodes(update.value):
        if isinstance(node, ast.Attribute) and node.attr == "grad" and target and not same(node.value, target.value):
            return node
    return None


def _data_of(source: Source, fn: ast.FunctionDef, name: str) -> str | None:
    """The local name an output is built from (`out = Value(t, ...)`: t)."""
    for node in assignments(source, fn):
        if (
            any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.Call)
            and node.value.args
            and isinstance(node.value.args[0], ast.Name)
        ):
            return node.value.args[0].id
    return None


def is_input(source: Source, update: Update, node: ast.expr, target: ast.Attribute) -> bool:
    """`self.data` of the input being updated, or a local name bound to it (`x = self.data`)."""
    data = ast.Attribute(target.value, "data", ast.Load())
    if same(node, data):
        return True
    fn = site_function(source, update)
    return isinstance(node, ast.Name) and any(
        any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets) and same(n.value, data)
        for n in (assignments(source, fn) if fn is not None else [])
    )


def locals_read(source: Source, update: Update) -> list[ast.expr]:
    """The values given, in the function the update is in (its _backward, never the forward pass around it), to
    the plain names the update reads: `local = k * self.data ** (k - 1)` for `self.grad += local * out.grad`."""
    scopes = source.functions(update)
    if not scopes:
        return []
    names = {n.id for n in nodes(update.value) if isinstance(n, ast.Name)}
    return [
        n.value
        for n in assignments(source, scopes[-1])
        if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and n.targets[0].id in names
    ]


def computed(source: Source, update: Update) -> list[ast.expr]:
    """What an update computes with: its value, and the values given the local names it reads (`g = out.grad`,
    `local = 1 - t**2`)."""
    return [update.value, *locals_read(source, update)]


def reads_gradient(source: Source, update: Update, incoming: str) -> bool:
    """Does the update read a gradient (the output's, as its backward names it: incoming), itself or through a
    local name?"""
    return any(
        (isinstance(n, ast.Attribute) and n.attr == "grad") or (isinstance(n, ast.Name) and n.id == incoming)
        for part in computed(source, update)
        for n in nodes(part)
    )


def backward_parts(source: Source, rule: str) -> list[ast.AST]:
    """What a rule's backward computes with: its updates (with the values of the local names they read), and the
    conditions around them inside the backward (an `if` in the closure or the dispatch branch), never the forward
    pass's."""
    found: list[ast.AST] = []
    for update in updates(source, rule):
        found += computed(source, update)
        parent = source.parents.get(id(update))
        while isinstance(parent, ast.If) and not _tests_rule(parent, rule):
            found.append(parent.test)
            parent = source.parents.get(id(parent))
    return found


def _tests_rule(node: ast.If, rule: str) -> bool:
    """A dispatch branch's own test (`if op == 'relu'`), not a condition of the rule."""
    return any(isinstance(n, ast.Constant) and n.value in RULES[rule][1] for n in nodes(node.test))


def paren(source: Source, node: ast.expr) -> str:
    """The node's code, in parentheses where a product would bind it otherwise."""
    code = source.code(node)
    loose = isinstance(node, (ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.UnaryOp)) or (
        isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Mult, ast.Div, ast.Pow))
    )
    return f"({code})" if loose and not wrapped(source, node) else code


def wrapped(source: Source, node: Located) -> bool:
    before = source.data[: source.start(node)].rstrip()
    after = source.data[source.end(node) :].lstrip()
    return before.endswith(b"(") and after.startswith(b")")
