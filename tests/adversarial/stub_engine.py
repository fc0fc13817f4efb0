"""A stub engine: every operation raises NotImplementedError. Graded with
asserts_nothing_tests.py, it once earned points for its tests (student_tests and wheat)
although those tests check nothing and so catch no sabotaged engine."""


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        raise NotImplementedError("not yet")

    def __mul__(self, other):
        raise NotImplementedError("not yet")

    def __pow__(self, k):
        raise NotImplementedError("not yet")

    def tanh(self):
        raise NotImplementedError("not yet")

    def relu(self):
        raise NotImplementedError("not yet")

    def backward(self):
        raise NotImplementedError("not yet")
