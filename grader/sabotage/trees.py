"""The syntax-tree walks the mutation, the disguise and the rewrite share, made cheap: every grading
mutates, disguises and rewrites the student's engine a dozen times in the grader's own process, and
ast.walk's generators were most of that CPU (issue 20, the grader's CPU per grading).

Each walk gives the nodes in ast.walk's order (or a depth-first one's), less what no pass looks for: the
leaf nodes of contexts and operators (a pass reads `node.op` or `node.ctx`, never walks to them), and,
for the walks of statements, every expression (no expression holds a statement). Leaving out
subtrees keeps the order of the rest, in a breadth-first walk as in a depth-first one.
"""

from __future__ import annotations

import ast
from typing import TypeVar

_NOT_NODES = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "id",
        "attr",
        "arg",
        "name",
        "module",
        "level",
        "type_comment",
        "kind",
        "conversion",
        "simple",
        "is_async",
        "asname",
        "tag",
    }
)
"""Fields that never hold a node a pass walks to: strings, numbers, and the leaf nodes of contexts and
operators."""
_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}
STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)
"""What holds statements, and is held in lists only (an except clause and a case hold a body)."""
_BLOCKS: dict[type[ast.AST], tuple[str, ...]] = {}
_Named = TypeVar("_Named", ast.ClassDef, ast.FunctionDef)


def _fields(kind: type[ast.AST]) -> tuple[str, ...]:
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _NOT_NODES)
    return found


def nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of tree, tree first, in ast.walk's (breadth-first) order, less contexts and operators."""
    found = [tree]
    append, extend = found.append, found.extend
    for node in found:
        for field in _fields(node.__class__):
            value = getattr(node, field, None)
            if value.__class__ is list:
                extend([item for item in value if isinstance(item, ast.AST)])
            elif isinstance(value, ast.AST):
                append(value)
    return found


def _blocks(kind: type[ast.AST]) -> tuple[str, ...]:
    found = _BLOCKS.get(kind)
    if found is None:
        found = _BLOCKS[kind] = tuple(
            f for f in ("body", "handlers", "orelse", "finalbody", "cases") if f in kind._fields
        )
    return found


def _statements_in(node: ast.AST) -> list[ast.AST]:
    """node's statements, except clauses and cases, in the order of its fields."""
    found: list[ast.AST] = []
    for field in _blocks(node.__class__):
        value = getattr(node, field, None)
        if value.__class__ is list:
            found += [item for item in value if isinstance(item, STATEMENTS)]
    return found


def statements(tree: ast.AST) -> list[ast.AST]:
    """Every statement of tree (with its except clauses and cases), tree first, in ast.walk's order."""
    found = [tree]
    for node in found:
        found += _statements_in(node)
    return found


def own_statements(fn: ast.AST, scopes: tuple[type, ...] = (ast.FunctionDef, ast.AsyncFunctionDef)) -> list[ast.AST]:
    """The statements of a function, those of the functions nested in it left out (a nested def itself is
    in), depth first, the last child first: the order the rewrite's random choices follow. With scopes
    (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef), the statements of slicing.scope_nodes, in its
    order."""
    found, stack = [], _statements_in(fn)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, scopes):
            stack += _statements_in(node)
    return found


def written_order(fn: ast.AST, scopes: tuple[type, ...]) -> dict[int, int]:
    """Each of own_statements(fn, scopes)'s place (by id) in the order the statements are written, each before those
    it holds: the order of their lines in ast.unparse's code, which writes every statement on a line of its own. A
    tree changed since it was parsed (a mutant, a copy) has no line for what was added: its order is still this."""
    found: dict[int, int] = {}
    stack = _statements_in(fn)[::-1]
    while stack:
        node = stack.pop()
        found[id(node)] = len(found)
        if not isinstance(node, scopes):
            stack += _statements_in(node)[::-1]
    return found


def last_class(tree: ast.Module, name: str = "Value") -> ast.ClassDef | None:
    """The class a module ends up with under a name: the last top-level one defined, as Python keeps it (a notebook
    that redefines Value as it goes is graded on its last). The mutations, the disguise and the repairs all read the
    class through this."""
    return _last(tree.body, name, ast.ClassDef)


def last_method(cls: ast.ClassDef | None, name: str) -> ast.FunctionDef | None:
    """The method a class ends up with under a name (the last `def` of it in the class's body), or None."""
    return _last(cls.body, name, ast.FunctionDef) if cls is not None else None


def _last(body: list[ast.stmt], name: str, kind: type[_Named]) -> _Named | None:
    found = None
    for node in body:
        if isinstance(node, kind) and node.name == name:
            found = node
    return found


_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def clone(node):
    """A copy of a tree (or of a list of trees), as ast.parse(ast.unparse(node)) makes one: every node new, so a
    pass may change the copy in place and leave node as it was (positions are copied too; the leaves of contexts
    and operators are shared, as a parse shares them). Iterative, and linear in the tree's size: the plan copies
    the wheats' trees and the student's engine's rather than parsing their code again (issue 44)."""
    if isinstance(node, list):
        return [clone(item) for item in node]
    if not isinstance(node, ast.AST) or isinstance(node, _LEAVES):
        return node
    root = node.__class__.__new__(node.__class__)
    root.__dict__.update(node.__dict__)
    stack = [root]
    pop, push = stack.pop, stack.append
    while stack:  # each node's copy made here, not in a function: this runs for every node of every engine of a plan
        copied = pop()
        held = copied.__dict__
        held.pop("_places", None)  # an index replace() kept on the original: it indexes the original's tree
        for field in _fields(copied.__class__):
            value = held.get(field)
            if value.__class__ is list:
                items = []
                for item in value:
                    if isinstance(item, ast.AST):
                        new = item.__class__.__new__(item.__class__)
                        new.__dict__.update(item.__dict__)
                        push(new)
                        item = new
                    items.append(item)
                held[field] = items
            elif isinstance(value, ast.AST):
                new = value.__class__.__new__(value.__class__)
                new.__dict__.update(value.__dict__)
                push(new)
                held[field] = new
        if copied.__class__ is ast.Compare:
            held["ops"] = list(held["ops"])
    return root


def unparse(tree: ast.Module) -> str:
    """ast.unparse(ast.fix_missing_locations(tree)) + "\\n", without a walk of every node: unparse reads a
    statement's line only to look it up among the module's `# type: ignore` comments, of which a parsed
    or built module here has none."""
    for node in statements(tree):
        if isinstance(node, ast.stmt) and "lineno" not in node.__dict__:
            node.lineno = 1
    return ast.unparse(tree) + "\n"
