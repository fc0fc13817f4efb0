"""Frames on a socket: a 4-byte big-endian length, then that many bytes of UTF-8 JSON.

This is the sandbox's side of the channel; it trusts nothing about the other end
beyond the format. The grader reads frames with its own reader (a deadline that holds
while data flows, a size cap), in grader/sandbox/channel.py.
"""

from __future__ import annotations

import json
import struct

HEADER = struct.Struct(">I")


def encode(message) -> bytes:
    data = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return HEADER.pack(len(data)) + data


def send(sock, message) -> None:
    sock.sendall(encode(message))


def _exactly(sock, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive(sock, limit: int = 64 << 20):
    """The next frame's message, or None when the other end closed the socket."""
    head = _exactly(sock, HEADER.size)
    if head is None:
        return None
    (length,) = HEADER.unpack(head)
    if length > limit:
        raise ValueError(f"a frame of {length} bytes is over the limit of {limit}")
    body = _exactly(sock, length)
    if body is None:
        return None
    return json.loads(body)
