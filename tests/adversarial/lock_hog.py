"""Writes 8 x 15 MB into every folder any user may write in that a sandbox's uid can find outside
its own (/run/lock, /var/lock, /var/tmp...), as lockhog-<pid>-<i>.bin, keeps them a second; the
test appends a correct engine."""

import os
import time

for folder in ("/run/lock", "/var/lock", "/var/tmp", "/var/crash", "/var/mail"):
    for i in range(8):
        try:
            with open(os.path.join(folder, f"lockhog-{os.getpid()}-{i}.bin"), "wb") as f:
                for _ in range(15):
                    f.write(b"\1" * (1 << 20))
        except OSError:
            break
time.sleep(1)  # and keeps them a while

# The test appends a correct engine (tests/zoo/correct/list_iterative.py) after this.
