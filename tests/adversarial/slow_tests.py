"""A suite that runs just under its time limit on every engine: each run alone is within
tests_s, but one run per engine of the plan, one after another, would hold the grader for
the plan's length times tests_s, far past the submission's limit."""

import time

from micrograd_mine import Value


def test_add_slowly():
    time.sleep(2.5)
    a, b = Value(2.0), Value(3.0)
    c = a + b
    c.backward()
    assert c.data == 5.0 and a.grad == 1.0 and b.grad == 1.0


def test_mul():
    a, b = Value(2.0), Value(3.0)
    c = a * b
    c.backward()
    assert c.data == 6.0 and a.grad == 3.0 and b.grad == 2.0
