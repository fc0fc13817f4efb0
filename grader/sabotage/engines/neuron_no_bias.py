"""Sabotaged Neuron: no bias; it computes tanh(w . x) and parameters() holds the weights only.

Runs beside a correct Value (the namespace it is loaded into provides `Value`).
"""

import random


class Neuron:
    def __init__(self, nin):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]  # noqa: F821 - provided by the loader

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), Value(0.0))  # noqa: F821
        return act.tanh()

    def parameters(self):
        return list(self.w)
