"""The reference engine: the oracle every student engine is compared with."""

from reference.engine import Value, numerical_grad
from reference.nn import MLP, Layer, Neuron

__all__ = ["Value", "Neuron", "Layer", "MLP", "numerical_grad"]
