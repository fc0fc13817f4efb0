"""Corpus engine: every node keeps a `_forward` closure beside its `_backward` one.

Style: each operation stores how to recompute its own data from its inputs
(`out._forward`), and `forward()` re-runs the whole graph in topological order after
leaves change, so a training loop can reuse one graph; `zero_grad()` walks the graph.
Children in a set, `math.tanh`, Neuron/Layer/MLP, numerical_grad.

Quirks: `_forward` closures, a shared `_topo()` helper used by forward, backward and
zero_grad.
Bug: none.
"""
import math
import random


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._prev = set(_children)
        self._op = _op
        self._forward = lambda: None
        self._backward = lambda: None

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def _make(self, others, op, compute, backward):
        out = Value(compute(), (self, *others), op)

        def _forward():
            out.data = compute()
        out._forward = _forward
        out._backward = lambda: backward(out)
        return out

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)

        def back(out):
            self.grad += out.grad
            other.grad += out.grad
        return self._make((other,), '+', lambda: self.data + other.data, back)

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)

        def back(out):
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        return self._make((other,), '*', lambda: self.data * other.data, back)

    def __pow__(self, k):
        assert isinstance(k, (int, float))

        def back(out):
            self.grad += k * self.data ** (k - 1) * out.grad
        return self._make((), f'**{k}', lambda: self.data ** k, back)

    def tanh(self):
        def back(out):
            self.grad += (1 - out.data ** 2) * out.grad
        return self._make((), 'tanh', lambda: math.tanh(self.data), back)

    def relu(self):
        def back(out):
            self.grad += (out.data > 0) * out.grad
        return self._make((), 'relu', lambda: max(self.data, 0.0), back)

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other + (-self)

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other ** -1

    def _topo(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        return topo

    def forward(self):
        for v in self._topo():
            v._forward()
        return self.data

    def zero_grad(self):
        for v in self._topo():
            v.grad = 0.0

    def backward(self):
        topo = self._topo()
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class Neuron:
    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.tanh()

    def parameters(self):
        return self.w + [self.b]


class Layer:
    def __init__(self, nin, nout):
        self.neurons = [Neuron(nin) for _ in range(nout)]

    def __call__(self, x):
        outs = [n(x) for n in self.neurons]
        return outs[0] if len(outs) == 1 else outs

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]


class MLP:
    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i + 1]) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)
