"""Memory across processes: each of its processes holds well under the per-process limit, together several
times what a sandbox may hold (the test sets the numbers: MB in each of PROCESSES processes), taken 16 MB at a
time, as a leak would. It says what it held, as an import error, if it is still running once all of it is held."""

import os
import time

PROCESSES, MB = __PROCESSES__, __MB__


def hold():
    held = []
    for _ in range(MB // 16):
        held.append(b"\1" * (16 << 20))  # written, so resident
        time.sleep(0.01)
    return held


for _ in range(PROCESSES - 1):
    if os.fork() == 0:
        kept = hold()
        time.sleep(10)
        os._exit(0)
kept = hold()
time.sleep(2)  # held for a while, with every child's
raise RuntimeError(f"HELD {PROCESSES * MB} MB IN {PROCESSES} PROCESSES")
