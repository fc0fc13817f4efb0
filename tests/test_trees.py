"""Do the sabotage's cheap walks (grader/sabotage/trees.py) give what ast.walk, slicing.scope_nodes and
ast.parse(ast.unparse(...)) gave before them, in the same order (issue 20: the plan's output must not change)?"""

from __future__ import annotations

import ast

from conftest import ZOO

from grader.sabotage import wheats
from grader.sabotage.trees import STATEMENTS, clone, nodes, own_statements, statements, unparse
from grader.slicing import scope_nodes

LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
EVERY_BLOCK = '''
def f(x, *args, k=lambda q: q, **kw):
    """doc"""
    global g
    for i in reversed(args):
        x += i
    else:
        pass
    while x:
        x -= 1
    try:
        def in_try():
            return 1
    except (ValueError, TypeError) as err:
        def in_except():
            return [y * y for y in range(3) if y]
    else:
        class InElse:
            def m(self):
                return f"{self!r:>{10}}"
    finally:
        x = {**kw, 'a': 1}
    match x:
        case [first, *rest]:
            def in_case():
                return first
        case {"k": v}:
            pass
    with open(x) as fh:
        async def inner():
            async for a in fh:
                async with a:
                    a.grad += 1
    return x
'''


def _sources() -> list[str]:
    return [EVERY_BLOCK] + [w.source for w in wheats()] + [p.read_text() for p in sorted(ZOO.rglob("*.py"))]


def _reference_own_nodes(fn: ast.AST, opaque: tuple[type, ...]):
    """rewrite._own_nodes (opaque: functions and lambdas) and slicing.scope_nodes (classes too), as they were."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, opaque):
            stack.extend(ast.iter_child_nodes(node))


def test_the_walks_keep_ast_walks_order():
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for source in _sources():
        tree = ast.parse(source)
        assert nodes(tree) == [n for n in ast.walk(tree) if not isinstance(n, LEAVES)]
        assert statements(tree) == [tree] + [n for n in ast.walk(tree) if isinstance(n, STATEMENTS)]
        for fn in (n for n in ast.walk(tree) if isinstance(n, functions)):
            assert own_statements(fn) == [
                n for n in _reference_own_nodes(fn, (*functions, ast.Lambda)) if isinstance(n, STATEMENTS)
            ]
            scope = (*functions, ast.ClassDef)
            assert own_statements(fn, scope) == [n for n in scope_nodes(fn) if isinstance(n, STATEMENTS)]


def test_a_clone_is_what_a_round_trip_through_source_makes():
    """Of what the passes copy: the x of an `x.grad` or `x.data` (a read), and the reads themselves."""
    for source in _sources():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute):
                for read in (node.value, node) if isinstance(node.ctx, ast.Load) else (node.value,):
                    assert ast.dump(clone(read)) == ast.dump(ast.parse(ast.unparse(read), mode="eval").body)


def test_unparse_needs_no_locations_walk():
    """Is trees.unparse ast.unparse after fix_missing_locations, for a tree with new statements in it?"""
    for source in _sources():
        tree, again = ast.parse(source), ast.parse(source)
        for t in (tree, again):
            for node in ast.walk(t):
                if isinstance(node, (ast.FunctionDef, ast.For, ast.With)):
                    node.body.insert(0, ast.Assign([ast.Name("z", ast.Store())], ast.Constant(1)))
        assert unparse(tree) == ast.unparse(ast.fix_missing_locations(again)) + "\n"
