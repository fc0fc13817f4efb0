"""Correct engine, style 5: __slots__ Value, tanh computed from exp.

tanh(x) = (e^{2x} - 1) / (e^{2x} + 1), evaluated in an overflow-safe way,
with its own backward rule d tanh / dx = 1 - tanh(x)^2.
Subtraction is self + (-other), division is self * other**-1.
"""
import math
import random


class Value:
    __slots__ = ("data", "grad", "label", "_prev", "_backward")

    def __init__(self, data, _prev=(), label=''):
        self.data = float(data)
        self.label = label
        self.grad = 0.0
        self._prev = tuple(_prev)
        self._backward = None

    def __repr__(self):
        return "Value(data=%r, grad=%r)" % (self.data, self.grad)

    # -- primitives ---------------------------------------------------------

    def __add__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        out = Value(self.data * other.data, (self, other))

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            raise TypeError("exponent must be an int or float constant")
        out = Value(self.data ** k, (self,))

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,))

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        x = self.data
        # (e^{2x} - 1) / (e^{2x} + 1); for x >= 0 rewrite with e^{-2x} so
        # that large inputs do not overflow.
        if x >= 0:
            e = math.exp(-2.0 * x)
            t = (1.0 - e) / (1.0 + e)
        else:
            e = math.exp(2.0 * x)
            t = (e - 1.0) / (e + 1.0)
        out = Value(t, (self,))

        def _backward():
            self.grad += (1.0 - t * t) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,))

        def _backward():
            self.grad += (self.data > 0) * out.grad
        out._backward = _backward
        return out

    # -- derived ------------------------------------------------------------

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other ** -1

    def __rtruediv__(self, other):
        return self ** -1 * other

    # -- backprop -----------------------------------------------------------

    def backward(self):
        topo = []
        done = set()
        # iterative post-order DFS: stack of (node, iterator over its inputs)
        stack = [(self, iter(self._prev))]
        done.add(self)
        while stack:
            node, it = stack[-1]
            for child in it:
                if child not in done:
                    done.add(child)
                    stack.append((child, iter(child._prev)))
                    break
            else:
                stack.pop()
                topo.append(node)

        self.grad = 1.0
        for node in reversed(topo):
            if node._backward is not None:
                node._backward()


class Neuron:
    __slots__ = ("w", "b")

    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x):
        s = sum([wi * xi for wi, xi in zip(self.w, x)])
        return (s + self.b).tanh()

    def parameters(self):
        return self.w + [self.b]


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)
