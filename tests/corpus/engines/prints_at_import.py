"""Corpus engine: a script that demonstrates itself every time it is imported.

Style: a complete engine followed by module-level code (no `if __name__ == "__main__":`
guard) that rebuilds the lesson's tanh neuron, calls backward(), prints every node's
data and grad, checks numerical_grad on f(x) = 3x**2 - 4x + 5 and trains a Neuron for a
few steps, printing the loss. Children in a list, `math.tanh`.

Quirks: prints (and uses the global random generator) at import.
Bug: none.
"""
import math
import random


class Value:
    def __init__(self, data, _children=(), _op='', label=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = list(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"{self.label or '?'}: data={self.data:.4f} grad={self.grad:.4f}"

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
        out = Value(self.data ** other, (self,), f'**{other}')

        def _backward():
            self.grad += other * self.data ** (other - 1) * out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return -self + other

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other ** -1

    def tanh(self):
        out = Value(math.tanh(self.data), (self,), 'tanh')

        def _backward():
            self.grad += (1 - out.data ** 2) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,), 'relu')

        def _backward():
            self.grad += (self.data > 0) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo = []
        visited = set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


class Neuron:
    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x):
        return sum((wi * xi for wi, xi in zip(self.w, x)), self.b).tanh()

    def parameters(self):
        return self.w + [self.b]


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


# ---- try it out -------------------------------------------------------------
x1 = Value(2.0, label='x1')
x2 = Value(0.0, label='x2')
w1 = Value(-3.0, label='w1')
w2 = Value(1.0, label='w2')
b = Value(6.8813735870195432, label='b')
n = x1 * w1 + x2 * w2 + b
n.label = 'n'
o = n.tanh()
o.label = 'o'
o.backward()
for node in (x1, x2, w1, w2, b, n, o):
    print(node)

print("slope of 3x^2 - 4x + 5 at 3:", numerical_grad(lambda x: 3 * x ** 2 - 4 * x + 5, 3.0))

neuron = Neuron(2)
xs = [[1.0, -1.0], [2.0, 0.5], [-1.0, 0.5], [0.0, 1.5]]
ys = [1.0, 1.0, -1.0, -1.0]
for step in range(5):
    loss = sum((neuron(x) - y) ** 2 for x, y in zip(xs, ys))
    for p in neuron.parameters():
        p.grad = 0.0
    loss.backward()
    for p in neuron.parameters():
        p.data -= 0.1 * p.grad
    print("step", step, "loss", loss.data)
