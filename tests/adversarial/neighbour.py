"""A neighbour: two sandboxes of one machine (the test fills in ROLE and TOKEN) try to reach each other. The
"host" listens on an abstract unix socket (no file, no permission check) and leaves notes every user may read
in /tmp and /dev/shm; the "guest" tries to connect and to read them. Each says what it did as an import error."""

import os
import socket
import time

ROLE, TOKEN = "__ROLE__", "__TOKEN__"
DONE = {}
if ROLE == "host":
    try:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(f"\0{TOKEN}")
        server.listen()
        DONE["listen"] = "yes"
    except OSError as exc:
        DONE["listen"] = type(exc).__name__
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
    while time.monotonic() < deadline and "connect" not in DONE:
        try:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(f"\0{TOKEN}")
            DONE["connect"] = "REACHED"
        except OSError as exc:
            DONE["tried"] = type(exc).__name__
            time.sleep(0.1)
    for folder in ("/tmp", "/dev/shm"):
        try:
            with open(f"{folder}/{TOKEN}") as f:
                DONE[folder] = "REACHED: " + f.read()
        except OSError as exc:
            DONE[folder] = type(exc).__name__
raise RuntimeError(f"{ROLE} {sorted(DONE.items())}")
