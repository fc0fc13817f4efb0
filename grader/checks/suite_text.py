"""What the student's test file says, read as text (never run here), and what of a run on
another engine may be quoted back to the student.

A test that raises with an engine's code in its message would carry that engine out of the
sandbox, so a quote is the message's first line, capped, and withheld when any window of it
repeats the engine's code.
"""

from __future__ import annotations

import ast
import functools
import re

QUOTE_CHARS = 160
QUOTE_WINDOW = 16


def own_test_names(source: str) -> set[str]:
    """Names of the test functions the student's own code defines (for a notebook, in any cell)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"def\s+(test\w*)\s*\(", source))
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.name.startswith("test")}
    names |= {f"{c.name}::{f.name}" for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
              for f in c.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test")}
    return names


def quote(message: str, engine_code: str) -> str:
    """The first line of a test's message, capped; withheld if it repeats any of the engine's code."""
    line = (message.strip().splitlines() or [""])[0][:QUOTE_CHARS]
    squeezed = " ".join(line.split())
    code = " ".join(engine_code.split())
    for start in range(max(0, len(squeezed) - QUOTE_WINDOW) + 1):
        window = squeezed[start:start + QUOTE_WINDOW]
        if len(window) == QUOTE_WINDOW and window in code:
            return "(message withheld: it repeats the engine's code)"
    return line


@functools.cache
def _template_bodies() -> frozenset[str]:
    from grader.commands.template import template_files

    return frozenset(_bodies(template_files()["test_micrograd.py"]).values())


def _bodies(source: str) -> dict[str, str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    return {node.name: ast.dump(ast.Module(body=node.body, type_ignores=[])) for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test")}


def given_tests(source: str) -> set[str]:
    """The student's tests that are the starter kit's, unchanged (the worked example, the stubs):
    they count for nothing in wheat and sabotage, where only the student's own tests earn."""
    return {name for name, body in _bodies(source).items() if body in _template_bodies()}
