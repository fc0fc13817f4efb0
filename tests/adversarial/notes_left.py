"""Notes for later runs: at import (in the engine lane's process, and in every run of the tests, on every engine)
it leaves a read-only folder (0555, so that a cleaning done as the sandbox's own uid cannot empty it) in every
writable place it can find, and records in FOREIGN the notes it found there from an earlier process. The tests
(notes_tests.py) fail on any run that finds one: a run that could read what an earlier run saw could vote with
the engines seen before. The test appends a correct engine."""

import os
import secrets
import tempfile

PLACES = ["/tmp", "/dev/shm", "/var/tmp", "/run/lock", os.getcwd(), tempfile.gettempdir(), os.path.expanduser("~")]
MINE = f"notes-{os.getpid()}-{secrets.token_hex(4)}"
FOREIGN = []
for place in dict.fromkeys(PLACES):
    try:
        FOREIGN += [f"{place}/{name}" for name in os.listdir(place) if name.startswith("notes-") and name != MINE]
    except OSError:
        pass
for place in dict.fromkeys(PLACES):
    try:
        folder = os.path.join(place, MINE)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "seen.txt"), "w") as f:
            f.write("what this run saw of its engine\n")
        os.chmod(folder, 0o555)
    except OSError:
        pass

# The test appends a correct engine (tests/zoo/correct/list_iterative.py) after this.
