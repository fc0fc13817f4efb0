"""Correct engine, style 4: Value is a @dataclass.

eq=False keeps the default identity-based __eq__/__hash__, so Values can be
put in sets and used as dict keys during the topological sort.
"""
import math
import random
from dataclasses import dataclass, field
from typing import Callable, Tuple


def _noop() -> None:
    return None


@dataclass(eq=False)
class Value:
    data: float
    grad: float = 0.0
    _children: Tuple["Value", ...] = field(default=(), repr=False)
    _backward: Callable[[], None] = field(default=_noop, repr=False)

    def __post_init__(self):
        self.data = float(self.data)
        self.grad = float(self.grad)
        self._children = tuple(self._children)

    @staticmethod
    def _wrap(x) -> "Value":
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other) -> "Value":
        other = Value._wrap(other)
        out = Value(self.data + other.data, _children=(self, other))

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other) -> "Value":
        other = Value._wrap(other)
        out = Value(self.data * other.data, _children=(self, other))

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k: float) -> "Value":
        assert isinstance(k, (int, float))
        out = Value(self.data ** k, _children=(self,))

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self) -> "Value":
        t = math.tanh(self.data)
        out = Value(t, _children=(self,))

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def relu(self) -> "Value":
        out = Value(self.data if self.data > 0 else 0.0, _children=(self,))

        def _backward():
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad
        out._backward = _backward
        return out

    def exp(self) -> "Value":
        out = Value(math.exp(self.data), _children=(self,))

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def __neg__(self) -> "Value":
        return self * -1

    def __sub__(self, other) -> "Value":
        return self + (-Value._wrap(other))

    def __truediv__(self, other) -> "Value":
        return self * Value._wrap(other) ** -1

    def __radd__(self, other) -> "Value":
        return Value._wrap(other) + self

    def __rsub__(self, other) -> "Value":
        return Value._wrap(other) - self

    def __rmul__(self, other) -> "Value":
        return Value._wrap(other) * self

    def __rtruediv__(self, other) -> "Value":
        return Value._wrap(other) / self

    def backward(self) -> None:
        order = []
        seen = set()

        def visit(v: Value) -> None:
            if id(v) in seen:
                return
            seen.add(id(v))
            for c in v._children:
                visit(c)
            order.append(v)

        visit(self)
        self.grad = 1.0
        for v in reversed(order):
            v._backward()


@dataclass(eq=False)
class Neuron:
    nin: int
    w: list = field(init=False)
    b: Value = field(init=False)

    def __post_init__(self):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(self.nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x) -> Value:
        act = sum(wi * xi for wi, xi in zip(self.w, x)) + self.b
        return act.tanh()

    def parameters(self) -> list:
        return [*self.w, self.b]


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)
