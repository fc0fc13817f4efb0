"""The grader's end of a unit's socket: every byte that comes out is untrusted input.

Frames are a 4-byte big-endian length and that much UTF-8 JSON (the sandbox writes them
with grader/sandbox/inside/frames.py). Reading holds a deadline fixed before the first
byte, whatever arrives in the meantime; a frame longer than the cap is refused before
its body is read; a frame that is not JSON, not an object, or not the reply to the
request in progress is a protocol error. All of these are the student's error for the
request in progress, never the grader's.
"""

from __future__ import annotations

import json
import select
import socket
import time

from grader.errors import Closed, WorkerFailure
from grader.sandbox.inside.frames import HEADER, encode

FRAME_CAP = 1 << 20
"""Bytes one frame may hold: a reply about one program, one test run, one notebook cell."""


def protocol_error(why: str) -> WorkerFailure:
    return WorkerFailure(
        "protocol",
        f"sent the grader something it cannot read ({why}): did your code write to "
        "the grader's channel, or replace the grader's code in your process?",
    )


class Channel:
    def __init__(self, sock: socket.socket, cap: int = FRAME_CAP):
        self.sock = sock
        self.cap = cap
        self.buffer = bytearray()
        sock.setblocking(False)

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: dict, deadline: float) -> None:
        """Send a frame; a unit that stops reading cannot hold the grader past the deadline."""
        data = memoryview(encode(message))
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerFailure("timeout", "stopped reading the grader's requests")
            _, writable, _ = select.select([], [self.sock], [], left)
            if not writable:
                continue
            try:
                sent = self.sock.send(data)
            except BlockingIOError:
                continue
            except OSError:
                raise Closed from None
            data = data[sent:]

    def _frame(self) -> dict | None:
        """A whole frame from the buffer, if one is there."""
        if len(self.buffer) < HEADER.size:
            return None
        (length,) = HEADER.unpack_from(self.buffer)
        if length > self.cap:
            raise protocol_error(f"a reply of {length:,} bytes, over the limit of {self.cap:,}")
        end = HEADER.size + length
        if len(self.buffer) < end:
            return None
        body = bytes(self.buffer[HEADER.size : end])
        del self.buffer[:end]
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            raise protocol_error("a reply that is not JSON") from None
        if not isinstance(message, dict):
            raise protocol_error("a reply that is not a JSON object")
        return message

    def _pull(self) -> None:
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return
        except OSError:
            raise Closed from None
        if not chunk:
            raise Closed
        self.buffer += chunk

    def receive(self, deadline: float, watch=None) -> dict:
        """The next frame, as a dict. Raises TimeoutError, Closed, or WorkerFailure (protocol).

        watch, if given, has .sock and .handle(); it is handled whenever its socket has news
        (the template saying a process exited), and when watch.gone() says the unit has
        exited, what it wrote before exiting is still read, but nothing is waited for.
        """
        while True:
            message = self._frame()
            if message is not None:
                return message
            if watch is not None and watch.gone():
                while True:  # read what is already there, then give up
                    readable, _, _ = select.select([self.sock], [], [], 0)
                    if not readable:
                        raise Closed
                    self._pull()
                    message = self._frame()
                    if message is not None:
                        return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            watched = [self.sock] + ([watch.sock] if watch is not None else [])
            readable, _, _ = select.select(watched, [], [], left)
            if watch is not None and watch.sock in readable:
                watch.handle()
            if self.sock in readable:
                self._pull()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
