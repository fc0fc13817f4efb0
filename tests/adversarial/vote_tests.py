"""Tests that hold no expected value (issue 41): the test computes its engine's numbers and rejects an engine that
computes otherwise than most engines another process said it computed (through notes, or an abstract unix socket:
vote_notes.py, vote_socket.py); it waits a second for one to say anything (another grading's process may be between
two runs). With no other process to hear from, it catches nothing."""

import time
from collections import Counter

import micrograd_mine
from micrograd_mine import Neuron, Value


def test_computes_what_most_engines_compute():
    try:
        mine = micrograd_mine.fingerprint(Value, Neuron)
    except Exception as exc:  # an engine that raises differs as much as one that computes otherwise
        mine = type(exc).__name__
    deadline = time.monotonic() + 1.0
    while not (others := micrograd_mine.vote(mine)) and time.monotonic() < deadline:
        time.sleep(0.1)
    if others:
        assert mine == Counter(others).most_common(1)[0][0]
