"""Can units of one grading, or sandboxes of one machine, still talk (issue 28 B)? Each hostile submission in
tests/adversarial/ tries one way, in real sandboxes, in each mode the grader runs in: with bubblewrap, and without
it as root (a uid of its own); and each also as on a machine whose kernel gives neither the sandbox nor its units
namespaces of their own (Docker, and so Gradescope), where the grader empties a sandbox's space between units
itself. One run of `grader check` in both modes shows it end to end."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import secrets
import threading
from pathlib import Path

import pytest
from conftest import BASE_ENGINE, SANDBOX_PYTHON
from test_adversarial import HOSTILE, SUITES, check, statuses

from grader.errors import WorkerFailure
from grader.sandbox import cgroups, isolation, watch
from grader.sandbox.inside import landlock
from grader.sandbox.supervisor import Sandbox, SandboxLimits

MODULE = "micrograd_mine.py"
LOAD = {"op": "load", "code": {"kind": "py", "file": MODULE}}
MODES = ["bwrap", "bwrap, no namespaces", "uid", "uid, no namespaces", "uid, no namespaces, no Landlock"]


def _isolation(mode: str, monkeypatch) -> isolation.Isolation:
    if mode.startswith("bwrap"):
        found = isolation.detect()
        if found.bwrap is None:
            pytest.skip("bubblewrap cannot create a sandbox here")
    else:
        if os.geteuid() != 0 or not SANDBOX_PYTHON.exists():
            pytest.skip(f"a uid of its own needs root and a Python every user can run ({SANDBOX_PYTHON})")
        monkeypatch.setenv("GRADER_SANDBOX_PYTHON", str(SANDBOX_PYTHON))
        isolation.runtime.cache_clear()
        try:
            found = isolation.Isolation("uid", None, True, isolation.runtime())
        finally:
            isolation.runtime.cache_clear()
    return dataclasses.replace(
        found,
        namespaces="no namespaces" not in mode,
        landlock=0 if mode.endswith("no Landlock") or found.bwrap else landlock.abi(),
    )


@pytest.fixture(params=MODES)
def iso(request, monkeypatch) -> isolation.Isolation:
    return _isolation(request.param, monkeypatch)


@pytest.fixture(params=["uid", "uid, no namespaces", "uid, no namespaces, no Landlock"])
def uid_iso(request, monkeypatch) -> isolation.Isolation:
    return _isolation(request.param, monkeypatch)


def sandbox(source: str, iso: isolation.Isolation, limits: SandboxLimits | None = None, warm=()) -> Sandbox:
    return Sandbox({MODULE: source.encode()}, limits or SandboxLimits(), warm, iso)


def raised(reply: dict) -> str:
    """What an import that reports by raising said."""
    assert not reply["ok"], reply
    return reply["error"]["message"]


# -- notes an earlier unit left ------------------------------------------------------------------------------

NOTES = (HOSTILE / "notes_left.py").read_text() + BASE_ENGINE.read_text()
NOTES_TESTS = (HOSTILE / "notes_tests.py").read_text()
SUITE = {"op": "suite", "code": {"kind": "py", "file": MODULE}, "tests": NOTES_TESTS, "engine": None}


def test_a_unit_reads_no_notes_an_earlier_unit_left(iso):
    """The engine lane's process, then two runs of the tests, in one sandbox: each leaves a read-only folder of
    notes (0555) wherever it can write; does no run find one?"""
    with sandbox(NOTES, iso, warm=("pytest",)) as box:
        state = box.unit("state")
        assert state.exchange(LOAD, 20)["ok"]
        state.close()
        for _ in range(2):
            run_ = box.unit("suite")
            reply = run_.exchange(SUITE, 30)
            run_.close()
            outcome = reply["result"]["tests"]["test_no_earlier_run_left_notes"]
            assert outcome["outcome"] == "passed", outcome["message"]


def test_no_run_of_the_tests_reads_notes_an_earlier_run_left(run, tmp_path):
    """grader check of a .py file: the engine lane's process and every run of the tests (on the student's engine,
    then on each correct engine and sabotage, in the suite's sandbox and in the engine lane's once it joins them)
    leave notes; does every correct engine pass every test, the one that fails on finding notes included?"""
    tests = (SUITES / "good.py").read_text() + "\n\n" + NOTES_TESTS
    result, _, _, _ = check(run, tmp_path, NOTES, tests)
    assert result["status"] == "graded", result["error"]
    wheat = next(c for c in result["checks"] if c["id"] == "wheat")
    assert wheat["status"] == "passed", wheat["feedback"]
    assert statuses(result)["student_tests"] == "passed"


# -- two sandboxes of one machine ------------------------------------------------------------------------------

NEIGHBOUR = (HOSTILE / "neighbour.py").read_text()


def _neighbours(iso: isolation.Isolation) -> dict[str, dict[str, str]]:
    """What the host and the guest (each in a sandbox of its own, at the same time) did."""
    token, said = f"neighbour-{secrets.token_hex(6)}", {}

    def role(name: str) -> None:
        source = NEIGHBOUR.replace("__ROLE__", name).replace("__TOKEN__", token)
        with sandbox(source, iso) as box:
            said[name] = raised(box.unit("state").exchange(LOAD, 15))

    threads = [threading.Thread(target=role, args=(name,)) for name in ("host", "guest")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not [p for p in ("/tmp", "/dev/shm") if os.path.lexists(f"{p}/{token}")]  # nothing left on the machine
    return {name: dict(ast.literal_eval(text.split(" ", 1)[1])) for name, text in said.items()}


def test_two_sandboxes_cannot_reach_each_other(iso):
    """Can a sandbox reach another running beside it (another student's, or the other lane of one grading)
    through an abstract unix socket (no file, no permission check), made by socket() or from a datagram socketpair,
    or notes every user may read in /tmp and /dev/shm? Without namespaces, sandboxes see the machine's /tmp, where
    Landlock keeps them from writing (issue 41), and may name no unix socket at all."""
    said = _neighbours(iso)
    host, guest = said["host"], said["guest"]
    assert "REACHED" not in (guest.get("connect"), guest.get("send")), guest
    if iso.shares_tmp:
        assert host["listen"] == host["dgram"] == "PermissionError", host
    else:
        assert host["listen"] == host["dgram"] == "yes" and host["/tmp"] == "written", host
    if not iso.shares_tmp or iso.landlock:
        assert not [v for v in guest.values() if v.startswith("REACHED")], guest


def test_a_grading_whose_sandboxes_would_share_tmp_keeps_its_lanes_in_one(uid_iso, micrograd, tmp_path):
    """Without bubblewrap, does a grading give its engine lane and its tests sandboxes of their own only where
    each has its own /tmp, and else one sandbox that they take in turn?"""
    from grader import grading

    submission = tmp_path / MODULE
    submission.write_text(BASE_ENGINE.read_text())
    (tmp_path / "test_micrograd.py").write_text((SUITES / "good.py").read_text())
    graded = grading.Grading(submission, micrograd, grading.Options(isolation=uid_iso, suite_sandboxes=2))
    read = grading.read_submission(graded)
    with grading.open_lanes(graded, read) as (engine, suite):
        shared = suite.sandboxes == [engine.sandbox]
    assert shared == uid_iso.shares_tmp


# -- a unit that dies on its own -------------------------------------------------------------------------------


def _sleeping(mark: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and Path(entry.path, "cmdline").read_bytes() == f"sleep\0{mark}\0".encode():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_unit_that_dies_on_its_own_leaves_no_daemon_for_the_next(iso):
    """A unit starts a daemon at import, then exits on its own: is the daemon gone when the next unit starts?"""
    mark = str(9_000_000 + secrets.randbelow(999_999))
    with sandbox((HOSTILE / "daemon.py").read_text().replace("__MARK__", mark), iso) as box:
        with pytest.raises(WorkerFailure, match="exited with code 3"):
            box.unit("state").exchange(LOAD, 10)
        later = box.unit("state")
        assert _sleeping(mark) == []
        later.close()


# -- a tree 1,500 folders deep ---------------------------------------------------------------------------------


def test_a_tree_1500_deep_neither_breaks_the_close_nor_stays(iso):
    """A unit leaves trees 1,500 folders deep in /tmp, /dev/shm and its working folder: does the next unit of the
    sandbox find none of them, does the sandbox close, and is nothing of them left on the machine?"""
    token = f"deep-{secrets.token_hex(6)}"
    source = (HOSTILE / "deep_tree.py").read_text().replace("__TOKEN__", token)
    source += "\nraise RuntimeError(repr(MADE))\n"
    box = sandbox(source, iso)
    try:
        for _ in range(2):  # the second unit would find the first one's trees where it makes its own
            unit = box.unit("state")
            made = ast.literal_eval(raised(unit.exchange(LOAD, 60)))
            unit.close()
            assert "made" in made.values() and "FileExistsError" not in made.values(), made
    finally:
        box.close()
    assert not box.root.exists()
    assert not [p for p in ("/tmp", "/dev/shm") if os.path.lexists(f"{p}/{token}")]


# -- memory across processes -----------------------------------------------------------------------------------


def test_memory_across_processes_is_bounded_for_the_sandbox_as_a_whole(iso, monkeypatch):
    """Where no cgroup can be made, do six processes of 300 MB each (well within each one's limit, three times
    the sandbox's 600 MB together) stop at the sandbox's limit, as the student's memory error?"""
    monkeypatch.setattr(cgroups, "support", lambda: cgroups.Support(None, "none for this test"))
    source = (HOSTILE / "memory_spread.py").read_text().replace("__PROCESSES__", "6").replace("__MB__", "300")
    peak, done = [0], threading.Event()
    with sandbox(source, iso, SandboxLimits(total_mb=600)) as box:

        def sample() -> None:
            while not done.wait(0.02):
                peak[0] = max(peak[0], watch.resident_bytes(box.processes()))

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            with pytest.raises(WorkerFailure) as failure:
                box.unit("state").exchange(LOAD, 30)
        finally:
            done.set()
            sampler.join()
    assert failure.value.kind == "memory", failure.value
    assert re.search(r"together held more than 600 MB", str(failure.value)), failure.value
    assert peak[0] < 1200 << 20, f"the sandbox held {peak[0] >> 20} MB at once"


def test_a_unit_cannot_make_a_tmpfs_no_limit_counts(iso):
    """Can student code make a user and mount namespace of its own, and in it a tmpfs of no size the grader set,
    whose files no process's memory counts?"""
    source = (HOSTILE / "tmpfs_hog.py").read_text().replace("__MB__", "64")
    with sandbox(source, iso) as box:
        said = raised(box.unit("state").exchange(LOAD, 20))
    assert said.startswith("REFUSED unshare"), said
