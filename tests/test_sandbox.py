"""Is the student's code really confined: limits, leftovers, network, other students' files?

These tests run real student code in the real worker process.
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
from grader.sandbox import isolation
from grader.sandbox.runner import Limits, Sandbox

needs_bwrap = pytest.mark.skipif(isolation.bubblewrap() is None, reason="bubblewrap cannot create a sandbox here")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="uids are dropped only when the grader runs as root")


def sandbox_for(tmp_path: Path, source: str, **limits) -> Sandbox:
    path = tmp_path / "submission.py"
    path.write_text(source)
    return Sandbox(path, Limits(**limits))


def run_code(tmp_path, code: str, **limits) -> dict:
    """Load a module whose import runs code; the worker's reply."""
    with sandbox_for(tmp_path, code, **limits) as box:
        return box.load()


def test_a_dead_worker_is_replaced(tmp_path):
    """Does a worker that dies cost only the request in progress?"""
    source = BASE_ENGINE.read_text() + "\nimport os\nValue.tanh = lambda self: os._exit(9)\n"
    with sandbox_for(tmp_path, source) as box:
        with pytest.raises(WorkerFailure, match="exited with code 9"):
            box.request({"op": "eval", "program": [["leaf", 1.0], ["tanh", 0]]})
        reply = box.request({"op": "eval", "program": [["leaf", 1.0], ["leaf", 2.0], ["add", 0, 1]]})
        assert reply["ok"] and reply["result"]["data"] == [1.0, 2.0, 3.0]


def test_hang_is_killed_at_the_timeout(tmp_path):
    """Is a worker stuck in a loop killed when its time is up, with its whole process group?"""
    source = BASE_ENGINE.read_text() + "\ndef _spin(self):\n    while True:\n        pass\nValue.backward = _spin\n"
    with sandbox_for(tmp_path, source, request_s=0.5) as box:
        box.load()
        started = time.monotonic()
        with pytest.raises(WorkerFailure) as failure:
            box.request({"op": "eval", "program": [["leaf", 1.0]]})
        assert failure.value.kind == "timeout" and time.monotonic() - started < 3


def test_output_flood_is_truncated(tmp_path):
    """Is a flood of printed output cut to the cap, counted, and harmless?"""
    with sandbox_for(tmp_path, "import sys\nfor _ in range(2000):\n    print('x' * 10000)\nclass Value: pass\n",
                     output_kb=4) as box:
        assert box.load()["ok"]
        time.sleep(0.2)
        text = box.output.text()
    assert len(text) < 5000 and "output truncated" in text and box.output.total >= 2000 * 10000


def test_children_left_behind_are_killed(tmp_path):
    """Are processes the student's code started, even in a new session, all killed afterwards?"""
    marker = "987654"
    code = (
        "import os, subprocess\n"
        "for _ in range(3):\n"
        f"    subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
        "class Value: pass\n"
    )
    assert run_code(tmp_path, code)["ok"]
    time.sleep(0.3)
    leftovers = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout
    assert leftovers == ""


@needs_root
def test_fork_bomb_is_contained(tmp_path):
    """Does a fork bomb hit the process cap, and is every process it made gone afterwards?"""
    code = "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(60)\n"
    started = time.monotonic()
    with sandbox_for(tmp_path, code, processes=20, request_s=2) as box:
        uid = box.uid
        with pytest.raises(WorkerFailure, match="did not finish"):
            box.load()
    assert time.monotonic() - started < 10
    time.sleep(0.2)
    assert [p for p in os.listdir("/proc") if p.isdigit() and _owner(p) == uid] == []


def _owner(pid: str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except FileNotFoundError:
        return None


@needs_bwrap
def test_no_network(tmp_path):
    """Can the student's code reach no server, not even one on this machine's loopback?"""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    code = f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    REACHED = True\n" \
           "except OSError:\n    REACHED = False\nclass Value: pass\n"
    reply = run_code(tmp_path, code)
    server.close()
    assert "REACHED" in reply["result"]["symbols"]
    code += "assert not REACHED\n"
    assert run_code(tmp_path, code)["ok"]


@needs_bwrap
def test_cannot_write_outside_or_read_other_work(tmp_path):
    """Can the student's code neither write outside its folder nor read another student's work?"""
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
    reply = run_code(tmp_path / "box", code) if (tmp_path / "box").mkdir() is None else None
    assert reply["ok"], reply
    assert not target.exists()


@needs_root
def test_worker_runs_as_an_unprivileged_uid(tmp_path):
    """As root, does the student's code run as a uid of its own, not as root?"""
    reply = run_code(tmp_path, "import os\nUID = os.getuid()\nassert UID != 0, UID\nclass Value: pass\n")
    assert reply["ok"], reply
