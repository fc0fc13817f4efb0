"""A scalar autograd engine in the style of the lesson, written to be trusted.

Each operation builds its output and its local chain rule in one closure, so the
forward and backward code cannot drift apart. A small core (+, *, **, exp, tanh,
relu) and the rest derived from it in one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real


class Value:
    """A scalar, the operation that made it, and the gradient of the output with respect to it."""

    __slots__ = ("data", "grad", "_backward", "_prev", "_op", "label")

    def __init__(self, data: float, _children: tuple[Value, ...] = (), _op: str = "", label: str = ""):
        self.data = float(data)
        self.grad = 0.0
        self._backward: Callable[[], None] = lambda: None
        self._prev = _children
        self._op = _op
        self.label = label

    def __repr__(self) -> str:
        return f"Value(data={self.data!r}, grad={self.grad!r})"

    # -- core operations: forward and local chain rule together -------------------------

    def __add__(self, other: Value | Real) -> Value:
        other = _as_value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other: Value | Real) -> Value:
        other = _as_value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __pow__(self, k: Real) -> Value:
        assert isinstance(k, (int, float)), "only constant int or float exponents are supported"
        out = Value(self.data**k, (self,), f"**{k}")

        def _backward():
            local = 0.0 if k == 0 else k * self.data ** (k - 1)  # x**0 is constant, also at x = 0
            self.grad += local * out.grad

        out._backward = _backward
        return out

    def exp(self) -> Value:
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad

        out._backward = _backward
        return out

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t**2) * out.grad

        out._backward = _backward
        return out

    def relu(self) -> Value:
        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _backward():
            self.grad += (1.0 if out.data > 0 else 0.0) * out.grad

        out._backward = _backward
        return out

    # -- derived operations ---------------------------------------------------------------

    def __neg__(self) -> Value:
        return self * -1  # type: ignore[operator]  # mypy does not count int and float as numbers.Real

    def __sub__(self, other: Value | Real) -> Value:
        return self + (-_as_value(other))

    def __truediv__(self, other: Value | Real) -> Value:
        return self * _as_value(other) ** -1  # type: ignore[operator]  # mypy does not count int and float as numbers.Real

    def __radd__(self, other: Real) -> Value:
        return self + other

    def __rsub__(self, other: Real) -> Value:
        return _as_value(other) - self

    def __rmul__(self, other: Real) -> Value:
        return self * other

    def __rtruediv__(self, other: Real) -> Value:
        return _as_value(other) / self

    # -- backpropagation ------------------------------------------------------------------

    def backward(self) -> None:
        """Run every node's local rule once, in reverse topological order, from this output."""
        self.grad = 1.0
        for node in reversed(topological_order(self)):
            node._backward()


def topological_order(root: Value) -> list[Value]:
    """Every node reachable from root, each after all of its inputs (iterative, so deep graphs work)."""
    order: list[Value] = []
    visited: set[int] = set()
    stack: list[tuple[Value, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in node._prev if id(child) not in visited)
    return order


def _as_value(x: Value | Real) -> Value:
    return x if isinstance(x, Value) else Value(x)  # type: ignore[arg-type]  # mypy does not count int and float as numbers.Real


def numerical_grad(f: Callable[[float], float], x: float, h: float = 1e-6) -> float:
    """Central difference: (f(x + h) - f(x - h)) / (2h)."""
    return (f(x + h) - f(x - h)) / (2 * h)
