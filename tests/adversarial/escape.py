"""Tries every way out of the sandbox at import; raises RuntimeError("ESCAPED: ...") if one works.

The test fills in __PORT__ (a listener on this machine's loopback), __TARGETS__ (files it
must not be able to write: a classmate's result, the output folder), __SECRETS__ (files
it must not be able to read) and __PUBLIC_OK__ (True without bubblewrap, where anything
world-readable is readable by design: a development checkout of this project elsewhere on
the test machine is then not counted, only what an unprivileged user could not read)."""

import os
import signal
import socket

PORT = __PORT__
TARGETS = __TARGETS__
SECRETS = __SECRETS__
PUBLIC_OK = __PUBLIC_OK__
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

import stat
import sys


def public(path):
    """Could any unprivileged user read this file (every folder above it searchable)?"""
    try:
        if not os.stat(path).st_mode & stat.S_IROTH:
            return False
        parent = os.path.dirname(os.path.abspath(path))
        while parent != os.sep:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
            parent = os.path.dirname(parent)
        return True
    except OSError:
        return False


# Breadth first, shallowest folders first, and for at most 1.5 s: the import must end inside the test
# assignment's 3 s limit even where the sandbox's Python holds big packages (torch's tree has thousands of
# folders), and a reference or wheat folder is found near the top of a path (site-packages/reference).
import collections
import time

deadline = time.monotonic() + 1.5
queue = collections.deque((top, 0) for top in [*sys.path, "/opt", "/root", "/home", "/work", "/autograder", "/srv"]
                          if top)
while queue and time.monotonic() < deadline:
    folder, depth = queue.popleft()
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        continue
    files = [e.name for e in entries if e.is_file(follow_symlinks=False)]
    if depth < 4:
        queue.extend((e.path, depth + 1) for e in entries if e.is_dir(follow_symlinks=False))
    if os.path.basename(folder) in ("reference", "engines"):
        for name in files:
            if PUBLIC_OK and public(os.path.join(folder, name)):
                continue
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
