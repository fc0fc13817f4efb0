"""Memory no process holds: in a user and mount namespace of its own (which any process may make where the
kernel allows it), a tmpfs of its own, of no size the grader set, filled with files (MB, set by the test, 8 MB at
a time, each file under the per-file limit): no process's resident memory counts them. It says what it did as an
import error."""

import ctypes
import os

MB = __MB__
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()
if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
    raise RuntimeError(f"REFUSED unshare: {os.strerror(ctypes.get_errno())}")
libc.prctl(4, 1, 0, 0, 0)  # dumpable, so that its own /proc/self/*_map are its own
for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
    with open(f"/proc/self/{name}", "w") as f:
        f.write(text)
os.makedirs("/tmp/mine", exist_ok=True)
if libc.mount(b"tmpfs", b"/tmp/mine", b"tmpfs", 0, None) != 0:
    raise RuntimeError(f"REFUSED mount: {os.strerror(ctypes.get_errno())}")
held = 0
for i in range(MB // 8):
    with open(f"/tmp/mine/held-{i}", "wb") as f:
        f.write(b"\1" * (8 << 20))
    held += 8
raise RuntimeError(f"HELD {held} MB IN A TMPFS OF ITS OWN")
