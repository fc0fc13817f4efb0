"""One frame whose body is not JSON, written on the reply socket at the first probe."""

import os
import socket
import stat
import struct


class Value:
    def __init__(self, data, _children=(), _op="", label=""):
        self.data, self.grad = data, 0.0

    def __add__(self, other):
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    body = b"this is not JSON {"
                    os.write(fd, struct.pack(">I", len(body)) + body)
            except OSError:
                continue
        return Value(self.data + getattr(other, "data", other))

    def backward(self):
        self.grad = 1.0
