"""A suite that tries to carry the engines it runs on out of the sandbox, in the feedback.

It passes on the student's own engine (which marks itself: Value.EXFIL_MINE) and fails on every
other one, each failure carrying a piece of that engine (its text when it is appended to the
student's file, else its compiled code), behind a marker, in every encoding a quote might let
through: raw text, base64 of zlib in an assertion's message, hex in an
exception's message, data in an exception's class name (a plain exception and an assertion),
base64 in a skip reason and in pytest.fail, and data in test ids. With BREAK set, it instead
fails to collect on other engines, with a piece of the engine in the error.
"""

import base64
import marshal
import zlib

import pytest

import micrograd_mine
from micrograd_mine import Value

BREAK = False
MINE = bool(getattr(Value, "EXFIL_MINE", False))
MAGIC = ("EXF" + "IL:").encode()  # starts every piece sent, so that the grader's test can spot any that got out
N = 24


def _engine_bytes():
    """The engine this run sees: the module's text after the student's own code (when an engine is
    appended to the file), or else the compiled code of Value's methods."""
    try:
        with open(micrograd_mine.__file__, encoding="utf-8") as f:
            text = f.read()
        end = "# -- exfil " + "end --"  # the last line of the student's own code
        cut = text.rfind(end)
        if cut >= 0 and text[cut + len(end):].strip():
            return text[cut + len(end):].encode()
    except Exception:  # noqa: BLE001
        pass
    return b"".join(marshal.dumps(m.__code__) for m in vars(Value).values() if hasattr(m, "__code__"))


ENGINE = b"" if MINE else _engine_bytes()


def piece(i, size=90):
    return MAGIC + ENGINE[i * size:(i + 1) * size]


def packed(i):
    return base64.b64encode(zlib.compress(piece(i))).decode()


if BREAK and not MINE:
    raise ImportError(packed(0) + " " + piece(1).hex())


@pytest.mark.parametrize("i", range(N))
def test_b64_zlib_in_assertion(i):
    assert MINE, packed(i)


@pytest.mark.parametrize("i", range(N))
def test_raw_text_in_assertion(i):
    assert MINE, piece(i).decode("latin-1")


@pytest.mark.parametrize("i", range(N))
def test_hex_in_exception(i):
    if not MINE:
        raise ValueError(piece(i, 64).hex())


@pytest.mark.parametrize("i", range(N))
def test_in_exception_class_name(i):
    if not MINE:
        raise type("X" + piece(i, 24).hex(), (Exception,), {})()


@pytest.mark.parametrize("i", range(N))
def test_in_assertion_class_name(i):
    if not MINE:
        raise type("A" + base64.b32encode(piece(i, 24)).decode().rstrip("="), (AssertionError,), {})("")


@pytest.mark.parametrize("i", range(N))
def test_in_skip_reason(i):
    if not MINE:
        pytest.skip(packed(i))


@pytest.mark.parametrize("i", range(N))
def test_in_pytest_fail(i):
    if not MINE:
        pytest.fail(packed(i), pytrace=False)


@pytest.mark.parametrize("chunk", [f"own{i}" if MINE else piece(i, 14).hex() for i in range(N)])
def test_in_parametrize_ids(chunk):
    assert MINE, chunk


def test_split_across_one_long_message():
    assert MINE, "\n".join(packed(i) for i in range(N))
