"""My micrograd: a scalar autograd engine, written during the backpropagation lesson.

Fill in every method that raises NotImplementedError. Check your work with:

    grader check --public-only
"""

import math
import random


class Value:
    """A scalar, the operation that made it, and the gradient of the final output with respect to it."""

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None  # each operation sets this to its local chain rule
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def __add__(self, other):
        """self + other. Local derivative: 1 for both inputs, so each gets `+= out.grad`.
        `other` may be a plain number: wrap it in a Value first."""
        raise NotImplementedError("Value.__add__ is not written yet")

    def __mul__(self, other):
        """self * other. Each input gets the OTHER input's data times out.grad."""
        raise NotImplementedError("Value.__mul__ is not written yet")

    def __pow__(self, k):
        """self ** k for a constant int or float k. Local derivative: k * self.data ** (k - 1)."""
        raise NotImplementedError("Value.__pow__ is not written yet")

    def tanh(self):
        """tanh(self). Local derivative: 1 - t**2, where t is the OUTPUT."""
        raise NotImplementedError("Value.tanh is not written yet")

    def relu(self):
        """max(0, self). Passes the gradient where the input is positive, 0 where negative."""
        raise NotImplementedError("Value.relu is not written yet")

    def __neg__(self):
        """-self, e.g. self * -1."""
        raise NotImplementedError("Value.__neg__ is not written yet")

    def __sub__(self, other):
        """self - other, e.g. self + (-other)."""
        raise NotImplementedError("Value.__sub__ is not written yet")

    def __radd__(self, other):
        """other + self, when other is a plain number (2 + a)."""
        raise NotImplementedError("Value.__radd__ is not written yet")

    def __rmul__(self, other):
        """other * self, when other is a plain number (2 * a)."""
        raise NotImplementedError("Value.__rmul__ is not written yet")

    def __rsub__(self, other):
        """other - self, when other is a plain number (1 - a)."""
        raise NotImplementedError("Value.__rsub__ is not written yet")

    def backward(self):
        """Set self.grad to 1, then call every node's _backward once, in reverse topological
        order: each node only after every node that uses it."""
        raise NotImplementedError("Value.backward is not written yet")


class Neuron:
    """tanh(w . x + b) with nin weights and a bias, each drawn from random.uniform(-1, 1),
    the weights first, then the bias."""

    def __init__(self, nin):
        raise NotImplementedError("Neuron.__init__ is not written yet")

    def __call__(self, x):
        """The neuron's output for inputs x (plain numbers or Values), as a Value."""
        raise NotImplementedError("Neuron.__call__ is not written yet")

    def parameters(self):
        """The nin weights, then the bias, as a list of Values."""
        raise NotImplementedError("Neuron.parameters is not written yet")


def numerical_grad(f, x, h=1e-6):
    """The slope of f (a function of one plain number) at x, by the central difference
    (f(x + h) - f(x - h)) / (2 * h)."""
    raise NotImplementedError("numerical_grad is not written yet")
