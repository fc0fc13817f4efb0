"""A daemon at import: a process of its own that outlives the unit (a grandchild that tries a session of its
own, sleeping with a mark the test fills in), then the unit dies on its own, so that no request fails and asks
for the sandbox to be cleaned. The next unit must not start beside it."""

import os

if os.fork() == 0:
    os.setsid()  # the seccomp filter makes this do nothing
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "__MARK__"])
    os._exit(0)
os.wait()
os._exit(3)
