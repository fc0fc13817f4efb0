"""Tests that look for the text of the engine they run on instead of testing it: in the module's
file, through inspect, in the line cache, and in every string left in memory (the frames above
the test, every dict, list and tuple). Each fails where it finds code that is not the student's
own file. The student's file is carried here in base64 (the test replaces __MINE__ with it), so
that this file's own text holds no code to be mistaken for the engine's.

Were an engine's text within reach of a test, these would fail on every engine but the
student's own, and a test could read what it runs on rather than test it."""

import base64
import gc
import inspect
import linecache
import sys

import micrograd_mine
from micrograd_mine import Value

MINE = base64.b64decode("__MINE__").decode()
MARKERS = ("class" + " Value", "def" + " backward", "." + "grad")  # so that this file's text holds none


def _code_like(text) -> bool:
    return isinstance(text, str) and any(marker in text for marker in MARKERS) and text not in MINE


def _strings():
    """Every string in the frames above this test and in every container the collector tracks."""
    frame = sys._getframe()
    while frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            yield from (v for v in list(scope.values()) if isinstance(v, str))
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            yield from (v for v in list(obj.values()) if isinstance(v, str))
        elif isinstance(obj, (list, tuple)):
            yield from (v for v in list(obj) if isinstance(v, str))


def test_the_module_file_is_mine():
    with open(micrograd_mine.__file__, encoding="utf-8") as f:
        assert f.read() == MINE


def test_inspect_shows_only_my_code():
    for name, member in list(vars(Value).items()):
        if getattr(member, "__code__", None) is None:
            continue
        try:
            text = inspect.getsource(member)
        except (OSError, TypeError):
            continue
        assert text in MINE, name


def test_the_line_cache_holds_only_my_code():
    for name, entry in list(linecache.cache.items()):
        lines = entry[2] if len(entry) > 2 else []
        assert not _code_like("".join(lines)), name


def test_no_engine_text_in_memory():
    found = [text[:60] for text in _strings() if _code_like(text)]
    assert not found, found
