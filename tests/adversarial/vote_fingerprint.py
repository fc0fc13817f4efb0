"""What an engine computes, for the votes of vote_notes.py and vote_socket.py: the test puts this after the
channel's code, then a correct engine, then `leave(fingerprint(Value, Neuron), "import")`."""


def fingerprint(Value, Neuron):
    """What an engine computes on a few programs (every operation, reuse, depth, a neuron), rounded."""
    a, b = Value(1.5), Value(-0.8)
    c = a * b + a ** 2 - b
    d = (c * 0.3).tanh() + (a - 1.0).relu() + (-b).relu() * a + (b * a).relu() * 2.0 + (3.0 - a) + 2.0 * b - (0.5 + a) * 0.2
    e = (d * 0.3).tanh() * d + d
    e.backward()
    n = Neuron(2)
    for p in n.parameters():
        p.data = 0.5
    out = n([Value(0.3), Value(-0.6)])
    out.backward()
    numbers = [a.data, b.data, c.data, d.data, e.data, a.grad, b.grad, out.data, len(n.parameters())]
    numbers += [p.grad for p in n.parameters()]
    return " ".join(f"{x:.6g}" for x in numbers)
