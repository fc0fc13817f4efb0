"""Corpus engine: handed in at the point the lecture has built + and * and backward().

Style: the lecture's first Value class (two-space indentation, `label`, children in a
set, `+= 1.0 * out.grad`), recursive topological sort, and the hand-worked example
L = (a*b + c)*f built at the bottom of the file inside a function. The student wrote
numerical_grad as asked.

Quirks: only + and *; no wrapping of plain numbers (`a + 1` raises AttributeError), no
reflected operators, no `**`, no tanh, no relu, no negation or subtraction; no Neuron.
Bug: none in what it has.
"""


class Value:

  def __init__(self, data, _children=(), _op='', label=''):
    self.data = data
    self.grad = 0.0
    self._backward = lambda: None
    self._prev = set(_children)
    self._op = _op
    self.label = label

  def __repr__(self):
    return f"Value(data={self.data})"

  def __add__(self, other):
    out = Value(self.data + other.data, (self, other), '+')
    def _backward():
      self.grad += 1.0 * out.grad
      other.grad += 1.0 * out.grad
    out._backward = _backward
    return out

  def __mul__(self, other):
    out = Value(self.data * other.data, (self, other), '*')
    def _backward():
      self.grad += other.data * out.grad
      other.grad += self.data * out.grad
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
    for node in reversed(topo):
      node._backward()


def numerical_grad(f, x, h=1e-6):
  # nudge x a little both ways and measure the slope
  return (f(x + h) - f(x - h)) / (2 * h)


def lesson_example():
  a = Value(2.0, label='a')
  b = Value(-3.0, label='b')
  c = Value(10.0, label='c')
  e = a * b; e.label = 'e'
  d = e + c; d.label = 'd'
  f = Value(-2.0, label='f')
  L = d * f; L.label = 'L'
  L.backward()
  return a, b, c, f, L
