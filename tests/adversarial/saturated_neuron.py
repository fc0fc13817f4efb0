"""A correct forward pass, a backward() that does nothing, and a Neuron whose weights start at
+-100: tanh saturates, so on the lesson's four points the loss is exactly 0 from the first
step and every gradient is exactly 0. A replay from the student's own weights matches it
step for step; only a start the grader chooses exposes the missing backward pass."""

import math


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def _wrap(self, other):
        return other if isinstance(other, Value) else Value(other)

    def __add__(self, other):
        other = self._wrap(other)
        return Value(self.data + other.data, (self, other), "+")

    def __mul__(self, other):
        other = self._wrap(other)
        return Value(self.data * other.data, (self, other), "*")

    def __pow__(self, k):
        return Value(self.data ** k, (self,), f"**{k}")

    def tanh(self):
        return Value(math.tanh(self.data), (self,), "tanh")

    def relu(self):
        return Value(max(0.0, self.data), (self,), "relu")

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-self._wrap(other))

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __rsub__(self, other):
        return self._wrap(other) - self

    def __truediv__(self, other):
        return self * self._wrap(other) ** -1

    def backward(self):
        pass  # nothing: every gradient stays 0


class Neuron:
    def __init__(self, nin):
        self.w = [Value(100.0 if i % 2 == 0 else -100.0) for i in range(nin)]
        self.b = Value(0.0)

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.tanh()

    def parameters(self):
        return self.w + [self.b]
