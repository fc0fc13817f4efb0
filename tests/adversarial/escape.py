"""Tries every way out of the sandbox at import; raises RuntimeError("ESCAPED: ...") if one works.

The test fills in __PORT__ (a listener on this machine's loopback), __TARGETS__ (files it
must not be able to write: a classmate's result, the output folder), __SECRETS__ (files
it must not be able to read) and __SKIP__ (folders not to count: a world-readable
development checkout on the test machine, which is not the grader under test)."""

import os
import signal
import socket

PORT = __PORT__
TARGETS = __TARGETS__
SECRETS = __SECRETS__
SKIP = __SKIP__
ESCAPED = []

for module in ("reference", "grader", "grader.sabotage"):
    try:
        __import__(module)
        ESCAPED.append(f"imported {module}")
    except Exception:
        pass

for path in SECRETS + ["/etc/shadow", "/root/.bash_history"]:
    try:
        with open(path, "rb") as f:
            f.read(1)
        ESCAPED.append(f"read {path}")
    except OSError:
        pass

import sys

for top in [*sys.path, "/opt", "/root", "/home", "/work", "/autograder", "/srv"]:
    if not top or any(top.startswith(s) for s in SKIP):
        continue
    depth = top.count(os.sep)
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not any(os.path.join(folder, d).startswith(s) for s in SKIP)]
        if folder.count(os.sep) - depth >= 4:
            dirs[:] = []
        if os.path.basename(folder) in ("reference", "engines"):
            for name in files:
                try:
                    with open(os.path.join(folder, name)) as f:
                        if "class Value" in f.read():
                            ESCAPED.append(f"read {folder}/{name}")
                except OSError:
                    pass

try:
    socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
    ESCAPED.append(f"connected to 127.0.0.1:{PORT}")
except OSError:
    pass

for path in TARGETS:
    try:
        with open(path, "w") as f:
            f.write('{"score": 100}')
        ESCAPED.append(f"wrote {path}")
    except OSError:
        pass

for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != os.getpid():
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if b"grader" in f.read() and os.stat(f"/proc/{entry}").st_uid == 0:
                    os.kill(int(entry), 0)
                    ESCAPED.append(f"could signal the grader's process {entry}")
        except OSError:
            pass

if ESCAPED:
    raise RuntimeError("ESCAPED: " + "; ".join(ESCAPED))


class Value:
    def __init__(self, data, _children=(), _op="", label=""):
        self.data, self.grad = float(data), 0.0
