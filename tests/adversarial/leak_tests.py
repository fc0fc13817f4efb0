"""Tests that try to carry the engine's code out in their feedback: the source of the module
they run on (the student's code with the engine appended), in an assertion's message, in an
exception's message, and in a collection-time error."""

import inspect

import micrograd_mine
from micrograd_mine import Value


def _source():
    with open(micrograd_mine.__file__) as f:
        return f.read()


def test_assertion_carries_the_source():
    assert False, _source()


def test_exception_carries_the_source():
    raise ValueError(inspect.getsource(Value))


def test_message_is_the_engine_tail():
    text = _source()
    assert len(text) < 0, text[-2000:]
