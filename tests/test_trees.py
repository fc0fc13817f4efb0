"""Do the sabotage's cheap walks (grader/sabotage/trees.py) give what ast.walk, slicing.scope_nodes and
ast.parse(ast.unparse(...)) gave before them, in the same order (issue 20: the plan's output must not change)?"""

from __future__ import annotations

import ast

from conftest import ZOO

from grader.sabotage import wheats
from grader.sabotage.trees import STATEMENTS, clone, nodes, own_statements, statements, unparse, written_order
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


def test_a_clone_of_a_module_is_a_new_tree_the_same():
    """Is a module's clone the same tree, positions too, with not one node of the original in it (but the leaves of
    contexts and operators, which a parse shares too), so that changing it leaves the original as it was?"""
    for source in _sources():
        tree = ast.parse(source)
        tree.body[0]._places = {}  # an index mutate.replace keeps on the tree it changes
        before = ast.dump(tree, include_attributes=True)
        copied = clone(tree)
        assert ast.dump(copied, include_attributes=True) == before
        assert not hasattr(copied.body[0], "_places")
        mine = {id(n) for n in ast.walk(tree) if not isinstance(n, LEAVES)}
        assert not mine & {id(n) for n in ast.walk(copied)}
        for node in ast.walk(copied):
            if isinstance(node, ast.Name):
                node.id += "_x"
            elif isinstance(node, ast.Compare):
                node.ops.append(ast.Eq())
            elif isinstance(node, ast.FunctionDef):
                node.body.append(ast.Pass())
        assert ast.dump(tree, include_attributes=True) == before


def test_a_clone_unshares_a_node_a_pass_put_in_two_places():
    """Is a node held in two places copied twice (as a parse of the tree's code would make it)?"""
    tree = ast.parse("y = x.data * 2")
    data = tree.body[0].value.left
    tree.body[0].value.right = data
    copied = clone(tree)
    assert copied.body[0].value.left is not copied.body[0].value.right
    assert ast.dump(copied) == ast.dump(ast.parse(ast.unparse(tree)))


def test_the_written_order_is_the_order_of_the_lines():
    """Does written_order order a function's own statements as their lines in ast.unparse's code (one statement a
    line), which is what the disguise read before it worked on trees (issue 44)?"""
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for source in _sources():
        tree = ast.parse(ast.unparse(ast.parse(source)))
        for fn in (n for n in ast.walk(tree) if isinstance(n, functions)):
            for scopes in (functions, (*functions, ast.ClassDef)):
                order, own = written_order(fn, scopes), own_statements(fn, scopes)
                assert sorted(order) == sorted(id(n) for n in own)
                lined = [n for n in own if isinstance(n, ast.stmt)]  # a case has no line of its own
                assert sorted(lined, key=lambda n: order[id(n)]) == sorted(lined, key=lambda n: n.lineno)


def test_unparse_needs_no_locations_walk():
    """Is trees.unparse ast.unparse after fix_missing_locations, for a tree with new statements in it?"""
    for source in _sources():
        tree, again = ast.parse(source), ast.parse(source)
        for t in (tree, again):
            for node in ast.walk(t):
                if isinstance(node, (ast.FunctionDef, ast.For, ast.With)):
                    node.body.insert(0, ast.Assign([ast.Name("z", ast.Store())], ast.Constant(1)))
        assert unparse(tree) == ast.unparse(ast.fix_missing_locations(again)) + "\n"
