"""A neighbour: two sandboxes of one machine (the test fills in ROLE and TOKEN) try to reach each other. The
"host" listens on an abstract unix socket (no file, no permission check), by socket() or, where that is refused, by a
datagram socketpair whose pair it dissolves (connect to AF_UNSPEC) and binds, and leaves notes every user may read
in /tmp and /dev/shm; the "guest" tries to connect and send to it both ways and to read the notes. Each says what it
did as an import error."""

import ctypes
import os
import socket
import time

ROLE, TOKEN = "__ROLE__", "__TOKEN__"
DONE = {}


def datagram(name):
    end, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    other.close()
    ctypes.CDLL(None).connect(end.fileno(), ctypes.create_string_buffer(b"\0\0", 16), 16)
    end.bind(name)
    return end


if ROLE == "host":
    try:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(f"\0{TOKEN}")
        server.listen()
        DONE["listen"] = "yes"
    except OSError as exc:
        DONE["listen"] = type(exc).__name__
    try:
        mailbox = datagram(f"\0{TOKEN}-dgram")
        DONE["dgram"] = "yes"
    except OSError as exc:
        DONE["dgram"] = type(exc).__name__
    for folder in ("/tmp", "/dev/shm"):
        try:
            with open(f"{folder}/{TOKEN}", "w") as f:
                f.write("from the host")
            os.chmod(f"{folder}/{TOKEN}", 0o644)
            DONE[folder] = "written"
        except OSError as exc:
            DONE[folder] = type(exc).__name__
    time.sleep(3)  # while the guest tries
else:
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline and not {"connect", "send"} <= set(DONE):
        if "connect" not in DONE:
            try:
                client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                client.connect(f"\0{TOKEN}")
                DONE["connect"] = "REACHED"
            except OSError as exc:
                DONE["tried"] = type(exc).__name__
        if "send" not in DONE:
            try:
                with datagram(f"\0{TOKEN}-guest") as end:
                    end.sendto(b"hello", f"\0{TOKEN}-dgram")
                DONE["send"] = "REACHED"
            except OSError as exc:
                DONE["tried to send"] = type(exc).__name__
        time.sleep(0.1)
    for folder in ("/tmp", "/dev/shm"):
        try:
            with open(f"{folder}/{TOKEN}") as f:
                DONE[folder] = "REACHED: " + f.read()
        except OSError as exc:
            DONE[folder] = type(exc).__name__
raise RuntimeError(f"{ROLE} {sorted(DONE.items())}")
