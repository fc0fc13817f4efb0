"""Neurons, layers and multi-layer perceptrons built on the reference Value."""

from __future__ import annotations

import random
from collections.abc import Sequence

from reference.engine import Value


class Neuron:
    """tanh(w . x + b), with nin weights and a bias drawn from uniform(-1, 1) in that order."""

    def __init__(self, nin: int):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))

    def __call__(self, x: Sequence[Value | float]) -> Value:
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)  # type: ignore[operator]  # mypy does not count int and float as numbers.Real
        return act.tanh()

    def parameters(self) -> list[Value]:
        return self.w + [self.b]


class Layer:
    def __init__(self, nin: int, nout: int):
        self.neurons = [Neuron(nin) for _ in range(nout)]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        outs = [n(x) for n in self.neurons]
        return outs[0] if len(outs) == 1 else outs

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]


class MLP:
    def __init__(self, nin: int, nouts: Sequence[int]):
        sizes = [nin, *nouts]
        self.layers = [Layer(sizes[i], sizes[i + 1]) for i in range(len(nouts))]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        for layer in self.layers:  # each layer's output is the next one's input, a Value only from the last
            x = layer(x)  # type: ignore[assignment]  # (a one-neuron layer's output)
        return x  # type: ignore[return-value]  # (a one-neuron layer's output)

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]
