"""Is the student's code really confined: limits, leftovers, network, other students' files?

These tests run real student code in real sandboxes (bubblewrap where it works).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BASE_ENGINE

from grader.errors import WorkerFailure
from grader.sandbox import isolation, uids
from grader.sandbox.supervisor import Sandbox, SandboxLimits

needs_bwrap = pytest.mark.skipif(isolation.detect().bwrap is None, reason="bubblewrap cannot create a sandbox here")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="uids are dropped only when the grader runs as root")
LOAD = {"op": "load", "code": {"kind": "py", "file": "micrograd_mine.py"}}


def sandbox_for(source: str, **limits) -> Sandbox:
    return Sandbox({"micrograd_mine.py": source.encode()}, SandboxLimits(**limits))


def load(source: str, **limits) -> dict:
    """Load a module whose import runs the given code; the unit's reply."""
    with sandbox_for(source, **limits) as box:
        return box.unit("state").exchange(LOAD, limits.get("request_s", 10))


def test_a_dead_unit_costs_only_its_request():
    """Does a unit that dies fail only the request in progress, a fresh one answering the next?"""
    source = BASE_ENGINE.read_text() + "\nimport os\nValue.tanh = lambda self: os._exit(9)\n"
    with sandbox_for(source) as box:
        unit = box.unit("state")
        unit.exchange(LOAD, 10)
        with pytest.raises(WorkerFailure, match="exited with code 9"):
            unit.exchange({"op": "eval_many", "programs": [[["leaf", 1.0], ["tanh", 0]]], "backward": True}, 10)
        fresh = box.unit("state")
        fresh.exchange(LOAD, 10)
        items = []
        reply = fresh.exchange(
            {"op": "eval_many", "programs": [[["leaf", 1.0], ["leaf", 2.0], ["add", 0, 1]]], "backward": True},
            10,
            on_event=items.append,
        )
        assert reply["ok"] and items[0]["value"]["data"] == [1.0, 2.0, 3.0]


def test_hang_is_killed_at_the_timeout():
    """Is a unit stuck in a loop killed when its time is up?"""
    source = BASE_ENGINE.read_text() + "\ndef _spin(self):\n    while True:\n        pass\nValue.backward = _spin\n"
    with sandbox_for(source) as box:
        unit = box.unit("state")
        unit.exchange(LOAD, 10)
        started = time.monotonic()
        with pytest.raises(WorkerFailure) as failure:
            unit.exchange({"op": "eval_many", "programs": [[["leaf", 1.0]]], "backward": True}, 0.5)
        assert failure.value.kind == "timeout" and time.monotonic() - started < 3


def test_output_flood_does_not_block_or_reach_the_grader():
    """Does a flood of printed output neither block the unit nor come back to the grader?"""
    reply = load("import sys\nfor _ in range(2000):\n    print('x' * 10000)\nclass Value: pass\n")
    assert reply["ok"] and "Value" in reply["result"]["symbols"]


def test_children_left_behind_are_killed():
    """Are processes the student's code started, even in a new session, all killed afterwards?"""
    marker = "987654"
    code = (
        "import os, subprocess\n"
        "for _ in range(3):\n"
        f"    subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
        "class Value: pass\n"
    )
    assert load(code)["ok"]
    time.sleep(0.3)
    leftovers = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout
    assert leftovers == ""


@needs_root
def test_fork_bomb_is_contained():
    """Does a fork bomb hit the process cap, and is every process it made gone afterwards?"""
    code = "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(60)\n"
    started = time.monotonic()
    with sandbox_for(code, processes=20, request_s=2) as box:
        uid = box.uid
        with pytest.raises(WorkerFailure, match="did not finish"):
            box.unit("state").exchange(LOAD, 2)
    assert time.monotonic() - started < 15
    time.sleep(0.2)
    assert uids.processes_of(uid) == []


@needs_bwrap
def test_no_network():
    """Can the student's code reach no server, not even one on this machine's loopback?"""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    code = (
        f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    REACHED = True\n"
        "except OSError:\n    REACHED = False\nclass Value: pass\nassert not REACHED\n"
    )
    reply = load(code)
    server.close()
    assert reply["ok"], reply


@needs_bwrap
def test_cannot_write_outside_or_read_other_work(tmp_path):
    """Can the student's code neither write outside its sandbox nor read another student's work?"""
    other = tmp_path / "other_student"
    other.mkdir()
    secret = other / "micrograd_mine.py"
    secret.write_text("SECRET = 42\n")
    target = tmp_path / "written.txt"
    code = (
        "import pathlib\n"
        "results = {}\n"
        f"for name, action in [('write', lambda: pathlib.Path({str(target)!r}).write_text('x')),\n"
        f"                     ('read', lambda: pathlib.Path({str(secret)!r}).read_text()),\n"
        "                     ('grader', lambda: __import__('reference'))]:\n"
        "    try:\n"
        "        action()\n"
        "        results[name] = 'done'\n"
        "    except Exception as exc:\n"
        "        results[name] = type(exc).__name__\n"
        "assert 'done' not in results.values(), results\n"
        "class Value: pass\n"
    )
    reply = load(code)
    assert reply["ok"], reply
    assert not target.exists()


@needs_root
def test_unit_runs_as_an_unprivileged_uid():
    """As root, does the student's code run as a uid of its own, not as root?"""
    reply = load("import os\nUID = os.getuid()\nassert UID != 0, UID\nclass Value: pass\n")
    assert reply["ok"], reply


@needs_bwrap
def test_disk_is_capped_in_total():
    """Is the sandbox's writable space capped in total, not only file by file, with a clear error?"""
    code = (
        "import os\nwritten = 0\ntry:\n    for i in range(1000):\n"
        "        with open(f'/tmp/f{i}', 'wb') as f:\n            f.write(b'x' * (4 << 20))\n"
        "        written += 4\nexcept OSError as exc:\n    ERROR = str(exc)\nclass Value: pass\n"
        "assert 'No space left' in ERROR and written <= 64, (written, ERROR)\n"
    )
    reply = load(code, disk_mb=32)
    assert reply["ok"], reply


MEMORY_SCAN = """
import ctypes, hashlib, re
FOUND = []
with open("/proc/self/maps") as maps:
    for line in maps:
        fields = line.split()
        span, perms = fields[:2]
        start, end = (int(x, 16) for x in span.split("-"))
        if not perms.startswith("r") or end - start > 1 << 28 or (len(fields) > 5 and fields[5].startswith("[v")):
            continue
        chunk = ctypes.string_at(start, end - start)
        FOUND += [m.group() for m in re.finditer(rb"QQQQQQQ[0-9a-f]{32}", chunk)
                  if hashlib.sha256(m.group()).hexdigest() == TARGET]
class Value:
    pass
"""


def test_a_later_unit_finds_no_trace_of_what_an_earlier_one_was_told():
    """Is a unit's request read only by the unit itself, so that no later unit of the same sandbox
    finds it anywhere in its memory (the template never held it)?"""
    import hashlib
    import secrets

    marker = "QQQQQQQ" + secrets.token_hex(16)
    target = hashlib.sha256(marker.encode()).hexdigest()
    source = f"TARGET = {target!r}\n" + MEMORY_SCAN
    with sandbox_for(source) as box:
        told = box.unit("suite")
        reply = told.exchange(
            {
                "op": "suite",
                "code": {"kind": "py", "file": "micrograd_mine.py"},
                "tests": "def test_seen():\n    import micrograd_mine\n    assert micrograd_mine.FOUND\n",
                "engine": f"# {marker}\nFOUND_HERE = True\n",
            },
            30,
        )
        told.close()
        assert reply["ok"] and reply["result"]["tests"]["test_seen"]["outcome"] == "passed"  # the scan works
        later = box.unit("suite")
        reply = later.exchange(
            {
                "op": "suite",
                "code": {"kind": "py", "file": "micrograd_mine.py"},
                "tests": "def test_unseen():\n    import micrograd_mine\n    assert not micrograd_mine.FOUND\n",
                "engine": None,
            },
            30,
        )
        assert reply["ok"] and reply["result"]["tests"]["test_unseen"]["outcome"] == "passed", reply


LEASE_SCRIPT = """
import json, sys, time
from grader.sandbox import uids
leases = [uids.lease() for _ in range(25)]
print(json.dumps([lease.uid for lease in leases]), flush=True)
sys.stdin.read()
"""


@needs_root
def test_uids_are_unique_across_graders():
    """Do graders running at once on one machine never share a sandbox uid?"""
    import json
    import sys

    procs = [
        subprocess.Popen([sys.executable, "-c", LEASE_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    try:
        held = [json.loads(p.stdout.readline()) for p in procs]
    finally:
        for p in procs:
            p.communicate("", timeout=30)
    every = [uid for uids_ in held for uid in uids_]
    assert len(every) == 100 and len(set(every)) == 100


@needs_root
def test_cleanup_kills_only_its_own_processes():
    """When one sandbox is cleaned up and closed, does another, running beside it, keep its processes?"""
    code = (
        BASE_ENGINE.read_text() + "\nimport time\ndef _slow(self):\n    time.sleep(1.5)\n    self.grad = 1.0\n"
        "Value.backward = _slow\n"
    )
    import threading

    with sandbox_for(code) as survivor:
        unit = survivor.unit("state")
        unit.exchange(LOAD, 10)
        items, replies = [], []
        busy = threading.Thread(
            target=lambda: replies.append(
                unit.exchange(
                    {"op": "eval_many", "programs": [[["leaf", 1.0]]], "backward": True}, 10, on_event=items.append
                )
            )
        )
        busy.start()  # the survivor's process is in the middle of a request while the other is torn down
        with sandbox_for(code) as other:
            doomed = other.unit("state")
            doomed.exchange(LOAD, 10)
            doomed.close()
        busy.join()
        assert survivor.uid != other.uid
        assert replies[0]["ok"] and items[0]["value"]["grad"] == [1.0]


@needs_bwrap
def test_a_python_installed_under_tmp_runs_in_the_sandbox(tmp_path, monkeypatch):
    """Does a Python that lives under /tmp (a checkout cloned there, and its venv) run student code, rather
    than being hidden by the sandbox's own /tmp? (Every grading of such an install crashed with
    "bwrap: execvp .../bin/python: No such file or directory".)"""
    import dataclasses
    import sys

    if not str(tmp_path.resolve()).startswith("/tmp/"):
        pytest.skip("pytest's temporary folders are not under /tmp here")
    venv = tmp_path / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    venv.chmod(0o755)
    for parent in venv.parents:  # pytest's folders are 0700: the sandbox's uid must reach the venv
        if parent == Path("/tmp"):
            break
        parent.chmod(parent.stat().st_mode | 0o055)
    monkeypatch.setenv("GRADER_SANDBOX_PYTHON", str(venv / "bin" / "python"))
    isolation.runtime.cache_clear()  # the grader's own, already found, is cached
    try:
        runtime = isolation.runtime()
    finally:
        isolation.runtime.cache_clear()
    assert any(root.startswith(str(tmp_path.resolve())) for root in runtime.roots), runtime.roots
    iso = dataclasses.replace(isolation.detect(), runtime=runtime)
    with Sandbox({"micrograd_mine.py": BASE_ENGINE.read_text().encode()}, SandboxLimits(), iso=iso) as box:
        reply = box.unit("state").exchange(LOAD, 10)
    assert reply["ok"] and "Value" in reply["result"]["symbols"], reply
