"""What the student's test file says, read as text (never run here), and what may be said back
about a run of it.

A run on an engine other than the student's own sees that engine's code, so anything the run
writes (a message, an exception's class name, a skip reason, a collection error) could carry
the engine out of the sandbox, in any encoding. Of such a run the feedback says only which of
the student's own tests failed (at most LISTED names, each capped) and the failure's exception
type when it is a built-in one; everything else is in the grader's own words.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import textwrap

from grader.feedback import short_numbers
from grader.files import MODULE, MODULE_FILE, TESTS_FILE, template_files
from grader.sandbox.inside.standins import UNAVAILABLE

QUOTE_CHARS = 160
"""The first line of a test's message on the student's own engine is quoted up to this length."""
LISTED = 10
"""Tests named per check; the rest are counted."""
NAME_CHARS = 80
BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
)


def own_test_names(source: str) -> set[str]:
    """Names of the test functions the student's own code defines (for a notebook, in any cell)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"def\s+(test\w*)\s*\(", source))
    names = {
        n.name
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")
    }
    names |= {
        f"{c.name}::{f.name}"
        for c in ast.walk(tree)
        if isinstance(c, ast.ClassDef)
        for f in c.body
        if isinstance(f, ast.FunctionDef) and f.name.startswith("test")
    }
    return names


def own_quote(message: str) -> str:
    """The first line of a test's message on the student's own engine, capped, its long numbers shortened."""
    return short_numbers((message.strip().splitlines() or [""])[0][:QUOTE_CHARS])


def exception_name(text: str) -> str | None:
    """The built-in exception type a failure's text names first ("ZeroDivisionError: ..."), or None
    (a class the student's code defines could carry anything in its name)."""
    head = text.strip().split(":", 1)[0].strip()
    return head if head in BUILTIN_EXCEPTIONS else None


def elsewhere(test: dict) -> str:
    """What may be said of a test that failed on an engine other than the student's: its exception's
    type if built-in, never its message."""
    name = exception_name(test.get("message", ""))
    if test.get("message", "").strip().startswith("Failed:"):
        return "failed (pytest.fail)"
    if test.get("kind") == "assertion":
        return "an assertion failed" if name in (None, "AssertionError") else f"failed with {name}"
    return f"raised {name}" if name else "raised an exception (of a class that is not built in, so not named)"


def shown_name(name: str) -> str:
    """A test's name as the feedback shows it: capped (parametrize ids can be long)."""
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 3] + "..."


def _added(seen: set[str], name: str) -> bool:
    """Add name to seen; False, so a filter can keep what it first sees."""
    seen.add(name)
    return False


def listed(lines: dict[str, str], what: str = "tests") -> list[str]:
    """The lines of at most LISTED tests (by name), one of each test function before a second
    parametrized case of any, then how many more there are."""
    seen: set[str] = set()
    firsts = [n for n in lines if n.split("[", 1)[0] not in seen and not _added(seen, n.split("[", 1)[0])]
    names = (firsts + [n for n in lines if n not in firsts])[:LISTED]
    more = len(lines) - len(names)
    return [lines[n] for n in names] + ([f"  ...and {more} more {what}."] if more > 0 else [])


@functools.cache
def _template_bodies() -> frozenset[str]:
    return frozenset(_bodies(template_files()[TESTS_FILE]).values())


def _bodies(source: str) -> dict[str, str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    return {
        node.name: ast.dump(ast.Module(body=node.body, type_ignores=[]))
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    }


def given_tests(source: str) -> set[str]:
    """The student's tests that are the starter kit's, unchanged (the worked example, the stubs):
    they count for nothing in wheat and sabotage, where only the student's own tests earn."""
    return {name for name, body in _bodies(source).items() if body in _template_bodies()}


_FRAME = re.compile(r'^(?P<file>\S+?):(?P<line>\d+): in |File "(?P<pyfile>[^"]+)", line (?P<pyline>\d+)')
_ERROR = re.compile(r"^(?:[\w.]+\.)?(?P<type>[A-Z]\w*(?:Error|Exception|Exit|Interrupt))(?::|$)")
_MISSING = re.compile(r"No module named '(?P<name>[\w.]+)'")
WITHOUT_LIBRARIES = (
    "Test your engine without it: against numbers you know (worked out by hand, like the "
    "lesson's examples), and against central differences of your own forward pass, "
    "(f(x + h) - f(x - h)) / (2 * h) with a small h (your numerical_grad)."
)


def collection_message(text: str, packages: tuple[str, ...] = ()) -> str:
    """What stopped the student's test file from loading, in a few lines: their file and line, the error (with
    a syntax error's line and caret), and for a package missing where tests are graded, what to do instead.
    pytest's report of it (its own frames, importlib's, the machine's folders) is not shown."""
    lines = text.splitlines()
    said = [line[4:] if line.startswith("E   ") else line[1:].strip() for line in lines if line.startswith("E")]
    where = None
    for line in lines:
        frame = _FRAME.search(line)
        if frame and frame.group("file" if frame.group("file") else "pyfile").rsplit("/", 1)[-1] in (
            TESTS_FILE,
            MODULE_FILE,
        ):
            name = (frame.group("file") or frame.group("pyfile")).rsplit("/", 1)[-1]
            where = f"{name}, line {frame.group('line') or frame.group('pyline')}"
    errors = [i for i, line in enumerate(said) if _ERROR.match(line.strip())]
    if not errors:
        head = next((line.strip() for line in said if line.strip()), "") or (lines[-1].strip() if lines else "")
        return f"{where}: {head}" if where else head
    error = said[errors[-1]].strip()
    shown = [f"{where}: {error}" if where else error]
    if error.startswith(("SyntaxError", "IndentationError", "TabError")):
        code = [line for line in said[: errors[-1]] if line.strip() and not _FRAME.search(line)][:2]
        shown += textwrap.indent(textwrap.dedent("\n".join(code)), "    ").splitlines()
    missing = _MISSING.search(error)
    root = missing.group("name").split(".")[0] if missing else None
    if root and root != MODULE and root not in packages:
        shown.append(
            f"{root} is not available where your tests are graded"
            + (
                f". {WITHOUT_LIBRARIES}"
                if root in UNAVAILABLE
                else ": use only the standard library, pytest and your own module."
            )
        )
    return "\n".join(shown)


_STOOD_IN = re.compile(r"StandInError: (?P<name>\w+) is not (?:installed|available)|<stand-in for (?P<shown>\w+)\b")


def library_advice(messages: list[str]) -> str | None:
    """When a test failed by using an autograd library (a stand-in where tests are graded), the sentence saying
    it is not there and how to test without it; else None."""
    for message in messages:
        found = _STOOD_IN.search(message)
        name = found and (found.group("name") or found.group("shown"))
        if name in UNAVAILABLE:
            return f"{name} is not available where your tests are graded. {WITHOUT_LIBRARIES}"
    return None


@functools.cache
def interface() -> tuple[str, ...]:
    """What every engine a suite runs on has, as `Class.name` (or a function's name): the public methods and
    attributes common to every wheat (grader/sabotage/engines), which the assignment's students all write."""
    from grader.sabotage import wheats

    common = None
    for wheat in wheats():
        names = set()
        for node in ast.parse(wheat.source).body:
            if isinstance(node, ast.FunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.ClassDef):
                names |= {f"{node.name}.{name}" for name in _defined(node)}
        common = names if common is None else common & names
    return tuple(sorted(n for n in common or () if not n.endswith(("__init__", "__repr__"))))


def _defined(node: ast.ClassDef) -> set[str]:
    """The methods of a class, its __slots__ and the attributes its methods set on self."""
    names = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    for item in ast.walk(node):
        if (
            isinstance(item, ast.Attribute)
            and isinstance(item.ctx, ast.Store)
            and isinstance(item.value, ast.Name)
            and item.value.id == "self"
        ):
            names.add(item.attr)
        if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in item.targets):
            try:
                names |= {str(x) for x in ast.literal_eval(item.value)}
            except ValueError:
                pass
    return names


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def outside_interface(tests_source: str, engine_source: str, names) -> dict[str, list[str]]:
    """For each named test, what it uses of the student's own classes that is not in every engine's interface:
    an attribute (`.copy`, `.log`), or `==` on Values where the student's Value defines __eq__ (a correct engine
    compares Values by identity). Read from the texts, never from a run on another engine."""
    tests, engine = _parse(tests_source), _parse(engine_source)
    if tests is None or engine is None:
        return {}
    own = set().union(*(_defined(n) for n in engine.body if isinstance(n, ast.ClassDef))) if engine.body else set()
    common = {n.rsplit(".", 1)[-1] for n in interface()}
    functions = {n.name: n for n in ast.walk(tests) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = {}
    for name in names:
        node = functions.get(name.split("[", 1)[0].rsplit("::", 1)[-1])
        if node is None:
            continue
        used = sorted(
            {
                f".{a.attr}"
                for a in ast.walk(node)
                if isinstance(a, ast.Attribute)
                and a.attr in own
                and a.attr not in common
                and not a.attr.startswith("__")
            }
        )
        if "__eq__" in own and any(_compares_values(c) for c in ast.walk(node)):
            used.append("== (your Value's __eq__)")
        if used:
            found[name] = used
    return found


def _compares_values(node: ast.AST) -> bool:
    """Is this `x == Value(...)` (or !=): a comparison only an engine with its own __eq__ can pass?"""
    if not isinstance(node, ast.Compare) or not any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
        return False
    return any(
        isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and side.func.id == "Value"
        for side in (node.left, *node.comparators)
    )


def interface_words() -> str:
    """The interface, as a sentence a student can write tests against."""
    names = interface()
    value = [n.split(".", 1)[1] for n in names if n.startswith("Value.")]
    ops = [n for n in value if n.startswith("__")]
    plain = [f".{n}" + ("()" if n not in ("data", "grad", "label") else "") for n in value if not n.startswith("__")]
    neuron = [
        f".{n.split('.', 1)[1]}" + ("()" if n.endswith("parameters") else "")
        for n in names
        if n.startswith("Neuron.") and not n.endswith("__call__")
    ]
    functions = [f"{n}()" for n in names if "." not in n]
    symbols = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__pow__": "**", "__neg__": "-x"}
    shown_ops = " ".join(symbols[o] for o in symbols if o in ops)
    either = " (a plain number on either side)" if any(o.startswith("__r") for o in ops) else ""
    return (
        f"Value(data) with {', '.join(plain)} and the operators {shown_ops}{either}; Neuron(nin), called on a "
        f"list, with {', '.join(neuron)}; {', '.join(functions)}"
    )
