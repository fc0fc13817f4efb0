"""Corpus engine: handed in at the point the lecture has added tanh, before `**` and exp.

Style: the lecture notebook's first cell kept at the top (`import math`,
`import numpy as np`, `import matplotlib.pyplot as plt`, neither used), the first
Value class with `label`, children in a set, tanh from the exp formula returning
`Value(t, (self, ), 'tanh')`, recursive topological sort.

Quirks: unused numpy/matplotlib imports; only +, * and tanh; no wrapping of plain
numbers, no reflected operators, no `**`, no relu, no negation or subtraction; no
numerical_grad and no Neuron yet.
Bug: none in what it has.
"""
import math
import numpy as np
import matplotlib.pyplot as plt


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

  def tanh(self):
    n = self.data
    t = (math.exp(2 * n) - 1) / (math.exp(2 * n) + 1)
    out = Value(t, (self, ), 'tanh')

    def _backward():
      self.grad += (1 - t ** 2) * out.grad
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
