"""A suite that tries to carry the engines it runs on out of the sandbox, in the feedback.

It passes on the student's own engine (which marks itself: Value.EXFIL_MINE) and fails on every
other one, each failure carrying a piece of the engine appended to the module, in every
encoding a quote might let through: base64 of zlib in an assertion's message, hex in an
exception's message, data in an exception's class name (a plain exception and an assertion),
base64 in a skip reason and in pytest.fail, and data in test ids. With BREAK set, it instead
fails to collect on other engines, with a piece of the engine in the error.
"""

import base64
import inspect
import zlib

import pytest

import micrograd_mine
from micrograd_mine import Value

BREAK = False
MINE = bool(getattr(Value, "EXFIL_MINE", False))
N = 24


def _engine_text():
    """The module's text from the marker on (the appended engine), or failing that what the code shows."""
    try:
        with open(micrograd_mine.__file__, encoding="utf-8") as f:
            text = f.read()
    except Exception:  # noqa: BLE001
        try:
            text = inspect.getsource(Value)
        except Exception:  # noqa: BLE001
            text = repr([(n, m.__code__.co_names, m.__code__.co_consts) for n, m in vars(Value).items()
                         if hasattr(m, "__code__")])
    end = "# -- exfil " + "end --"  # the last line of the student's own code
    cut = text.rfind(end)
    return text[cut + len(end):] if cut >= 0 else text


ENGINE = "" if MINE else _engine_text()


def piece(i, size=90):
    return ENGINE[i * size:(i + 1) * size].encode()


def packed(i):
    return base64.b64encode(zlib.compress(piece(i))).decode()


if BREAK and not MINE:
    raise ImportError(packed(0) + " " + piece(1).hex())


@pytest.mark.parametrize("i", range(N))
def test_b64_zlib_in_assertion(i):
    assert MINE, packed(i)


@pytest.mark.parametrize("i", range(N))
def test_hex_in_exception(i):
    if not MINE:
        raise ValueError(piece(i, 70).hex())


@pytest.mark.parametrize("i", range(N))
def test_in_exception_class_name(i):
    if not MINE:
        raise type("X" + piece(i, 30).hex(), (Exception,), {})()


@pytest.mark.parametrize("i", range(N))
def test_in_assertion_class_name(i):
    if not MINE:
        raise type("A" + base64.b32encode(piece(i, 30)).decode().rstrip("="), (AssertionError,), {})("")


@pytest.mark.parametrize("i", range(N))
def test_in_skip_reason(i):
    if not MINE:
        pytest.skip(packed(i))


@pytest.mark.parametrize("i", range(N))
def test_in_pytest_fail(i):
    if not MINE:
        pytest.fail(packed(i), pytrace=False)


@pytest.mark.parametrize("chunk", [piece(i, 20).hex() or f"empty{i}" for i in range(N)])
def test_in_parametrize_ids(chunk):
    assert MINE, chunk


def test_split_across_one_long_message():
    assert MINE, "\n".join(packed(i) for i in range(N))
