"""Correct engine, style 6: no closures, backward dispatches on the op name.

Every node records the name of the operation that produced it (`op`), its
inputs (`args`) and, for powers, the constant exponent (`k`).  backward()
computes an iterative topological order and then, for each node in reverse
order, applies the local derivative rule selected by `op`.
"""
import math
import random


class Value:

    def __init__(self, data, args=(), op=None, k=None, label=''):
        self.data = float(data)
        self.label = label
        self.grad = 0.0
        self.args = tuple(args)
        self.op = op
        self.k = k

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad}, op={self.op!r})"

    @staticmethod
    def _v(x):
        return x if isinstance(x, Value) else Value(x)

    # forward ---------------------------------------------------------------

    def __add__(self, other):
        other = Value._v(other)
        return Value(self.data + other.data, (self, other), '+')

    def __mul__(self, other):
        other = Value._v(other)
        return Value(self.data * other.data, (self, other), '*')

    def __pow__(self, k):
        assert isinstance(k, (int, float)) and not isinstance(k, bool)
        return Value(self.data ** k, (self,), '**', k)

    def tanh(self):
        return Value(math.tanh(self.data), (self,), 'tanh')

    def relu(self):
        return Value(self.data if self.data > 0 else 0.0, (self,), 'relu')

    def exp(self):
        return Value(math.exp(self.data), (self,), 'exp')

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-Value._v(other))

    def __truediv__(self, other):
        return self * Value._v(other) ** -1

    def __radd__(self, other):
        return Value._v(other) + self

    def __rsub__(self, other):
        return Value._v(other) + (-self)

    def __rmul__(self, other):
        return Value._v(other) * self

    def __rtruediv__(self, other):
        return Value._v(other) * self ** -1

    # backward --------------------------------------------------------------

    def _topo(self):
        order = []
        state = {}  # type: ignore[var-annotated]  # a student's code, unannotated; node -> 1 (on stack) / 2 (finished)
        stack = [(self, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0:
                if state.get(node) == 2:
                    continue
                state[node] = 1
            if i < len(node.args):
                stack.append((node, i + 1))
                child = node.args[i]
                if child not in state:
                    stack.append((child, 0))
            else:
                state[node] = 2
                order.append(node)
        return order

    def backward(self):
        order = self._topo()
        self.grad = 1.0
        for node in reversed(order):
            op = node.op
            g = node.grad
            if op is None:
                continue
            elif op == '+':
                a, b = node.args
                a.grad += g
                b.grad += g
            elif op == '*':
                a, b = node.args
                a.grad += b.data * g
                b.grad += a.data * g
            elif op == '**':
                (a,) = node.args
                k = node.k
                a.grad += k * a.data ** (k - 1) * g
            elif op == 'tanh':
                (a,) = node.args
                a.grad += (1 - node.data ** 2) * g
            elif op == 'relu':
                (a,) = node.args
                a.grad += (a.data > 0) * g
            elif op == 'exp':
                (a,) = node.args
                a.grad += node.data * g
            else:
                raise ValueError(f"unknown op {op!r}")


class Neuron:

    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), Value(0.0)) + self.b
        return act.tanh()

    def parameters(self):
        return self.w + [self.b]


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)
