"""Corpus engine: written from the micrograd repository's engine and nn modules, not the lecture.

Style: integer gradients (`grad = 0`, seed `grad = 1`), children in a set, relu as the
only nonlinearity, `**` that also accepts a Value exponent, every reflected operator and
division; a Module base class with zero_grad; Neuron(nin, nonlin=True) whose bias starts
at Value(0) and whose activation is relu (linear when nonlin=False); Layer passes keyword
arguments on; MLP makes its last layer linear.

Quirks: NO tanh (so the tanh neuron of the lesson cannot be built), no numerical_grad,
relu neuron instead of tanh.
Bug: none in what it has.
"""
import math
import random


class Value:
    """ a scalar and the gradient of the output with respect to it """

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

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

    def __pow__(self, other):
        if isinstance(other, Value):
            out = Value(self.data ** other.data, (self, other), '**')

            def _backward():
                self.grad += other.data * self.data ** (other.data - 1) * out.grad
                other.grad += out.data * math.log(self.data) * out.grad
        else:
            out = Value(self.data ** other, (self,), f'**{other}')

            def _backward():
                self.grad += other * self.data ** (other - 1) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(0 if self.data < 0 else self.data, (self,), 'ReLU')

        def _backward():
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        order = []
        seen = set()

        def visit(v):
            if v in seen:
                return
            seen.add(v)
            for child in v._prev:
                visit(child)
            order.append(v)
        visit(self)

        self.grad = 1
        for v in reversed(order):
            v._backward()

    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other + (-self)

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other ** -1

    def __rtruediv__(self, other):
        return other * self ** -1

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"


class Module:

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0

    def parameters(self):
        return []


class Neuron(Module):

    def __init__(self, nin, nonlin=True):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin

    def __call__(self, x):
        act = sum([wi * xi for wi, xi in zip(self.w, x)], self.b)
        return act.relu() if self.nonlin else act

    def parameters(self):
        return self.w + [self.b]

    def __repr__(self):
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):

    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]


class MLP(Module):

    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]
