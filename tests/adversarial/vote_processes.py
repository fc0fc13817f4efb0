"""A vote through the process table (issue 41): a process's command line is readable by every user in /proc. Every
process that imports this module starts a child that only sleeps, its command line carrying what the engine of its
own module computes (the test appends a correct engine); vote_tests.py's test reads the command lines of every
other process on the machine and rejects an engine that computes otherwise than most of them, with no expected value
of its own. Without a process namespace, a sandbox sees the processes of every other sandbox running beside it."""

import os
import subprocess
import sys

MARK = "micrograd-vote-41"
SLEEPER = None


def leave(text, name):
    """Start a child whose command line says this process's engine's numbers (at import: the student's own)."""
    global SLEEPER
    try:
        SLEEPER = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", MARK, text])
    except OSError:
        pass


def vote(text):
    """What every other process's child says."""
    mine = {os.getpid(), SLEEPER.pid if SLEEPER is not None else -1}
    seen = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in mine]
    except OSError:
        return []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                words = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if MARK in words and words.index(MARK) + 1 < len(words):
            seen.append(words[words.index(MARK) + 1])
    return seen
