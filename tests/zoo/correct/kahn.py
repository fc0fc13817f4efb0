"""Correct engine, style 3: Kahn's algorithm for the backward pass.

backward() first walks the graph (iteratively) and counts, for every node,
how many times it is used as an input by another node ("consumers").
It then processes nodes starting from the output; a node's local rule runs
only once all of its consumers have been processed, i.e. once its gradient
is complete.
"""
import math
import random
from collections import deque


class Value:

    def __init__(self, data, children=(), op=''):
        self.data = float(data)
        self.grad = 0.0
        self.inputs = list(children)
        self.op = op
        self.local_backward = None

    def __repr__(self):
        return f"Value({self.data!r}, grad={self.grad!r})"

    @staticmethod
    def lift(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value.lift(other)
        out = Value(self.data + other.data, [self, other], '+')

        def rule():
            self.grad += out.grad
            other.grad += out.grad
        out.local_backward = rule
        return out

    def __radd__(self, other):
        return Value.lift(other) + self

    def __mul__(self, other):
        other = Value.lift(other)
        out = Value(self.data * other.data, [self, other], '*')

        def rule():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out.local_backward = rule
        return out

    def __rmul__(self, other):
        return Value.lift(other) * self

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-Value.lift(other))

    def __rsub__(self, other):
        return Value.lift(other) + (-self)

    def __pow__(self, k):
        if isinstance(k, Value):
            raise TypeError("exponent must be a plain number")
        out = Value(self.data ** k, [self], f'**{k}')

        def rule():
            self.grad += k * self.data ** (k - 1) * out.grad
        out.local_backward = rule
        return out

    def __truediv__(self, other):
        return self * Value.lift(other) ** -1

    def __rtruediv__(self, other):
        return Value.lift(other) * self ** -1

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, [self], 'tanh')

        def rule():
            self.grad += (1 - t * t) * out.grad
        out.local_backward = rule
        return out

    def relu(self):
        out = Value(max(0.0, self.data), [self], 'relu')

        def rule():
            if self.data > 0:
                self.grad += out.grad
        out.local_backward = rule
        return out

    def exp(self):
        e = math.exp(self.data)
        out = Value(e, [self], 'exp')

        def rule():
            self.grad += e * out.grad
        out.local_backward = rule
        return out

    def backward(self):
        # 1. discover every node reachable from the output and count how many
        #    times each one is consumed (an input used twice counts twice).
        consumers = {self: 0}
        stack = [self]
        while stack:
            node = stack.pop()
            for child in node.inputs:
                if child in consumers:
                    consumers[child] += 1
                else:
                    consumers[child] = 1
                    stack.append(child)

        # 2. Kahn: a node is ready when all its consumers have pushed grad in.
        self.grad = 1.0
        ready = deque([self])
        while ready:
            node = ready.popleft()
            if node.local_backward is not None:
                node.local_backward()
            for child in node.inputs:
                consumers[child] -= 1
                if consumers[child] == 0:
                    ready.append(child)


class Neuron:

    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x):
        total = sum(w * xi for w, xi in zip(self.w, x))
        return (total + self.b).tanh()

    def parameters(self):
        return list(self.w) + [self.b]


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)
