"""Issue 41: what a sandbox without bubblewrap (uid mode: GRADER_NO_BWRAP=1 as root, each sandbox a uid of its own,
the mode of Gradescope and of most Docker hosts) still lets a student do, graded for real through the command line.
Each test runs in uid mode as this machine gives it (root may make namespaces here) and as in a default Docker
container, where no process may make one (tests/as_in_docker.py)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from conftest import BASE_ENGINE, HERE
from test_adversarial import HOSTILE, SUITES, check, tight

from grader import catalog

VOTE_TESTS = (HOSTILE / "vote_tests.py").read_text()
LINGER_TESTS = (HOSTILE / "linger_tests.py").read_text()
FEW = ("add_half", "mul_own_data", "tanh_grad_from_input", "topo_not_reversed")
"""The sabotages drawn in the tests of two gradings at once (fewer runs, the same claim)."""


@pytest.fixture(params=["uid", "uid, as in Docker"])
def uid_run(request, run):
    """The grader's command line in uid mode, as this machine gives it or as in a default Docker container."""
    if request.param.endswith("Docker"):
        run.command = [sys.executable, str(HERE / "as_in_docker.py")]
        run.own_tmp = False
    return run


def vote_engine(channel: str) -> str:
    """A correct engine that carries a vote: the channel's code, the fingerprint, the engine, and its own numbers
    said at import (in every process)."""
    return (
        (HOSTILE / channel).read_text()
        + (HOSTILE / "vote_fingerprint.py").read_text()
        + BASE_ENGINE.read_text()
        + '\n\nleave(fingerprint(Value, Neuron), "import")\n'
    )


def _two_at_once(uid_run, tmp_path, channel: str) -> tuple[dict, str]:
    """A student whose tests vote, graded while an accomplice (the same engine, with tests that take their time) is:
    the voter's sabotage check, and what its grader said on stderr."""
    grader, _ = tight(uid_run, tmp_path, FEW)
    engine, found = vote_engine(channel), {}

    def grade(who: str, tests: str) -> None:
        found[who] = check(grader, tmp_path / who, engine, tests)

    accomplice = threading.Thread(target=grade, args=("accomplice", LINGER_TESTS))
    accomplice.start()
    try:
        grade("voter", VOTE_TESTS)
    finally:
        accomplice.join()
    assert "accomplice" in found, "the accomplice's grading failed"
    result, _, done, _ = found["voter"]
    checks = {c["id"]: c for c in result["checks"]}
    assert checks["wheat"]["status"] == "passed", checks["wheat"]["feedback"]
    return checks["sabotage"], done.stderr


@pytest.mark.parametrize("run", ["no-bwrap"], indirect=True)
def test_notes_reach_no_later_unit_and_no_other_sandbox(uid_run, tmp_path):
    """Issue 41, item 1. Every process of two gradings at once (each engine lane's, every run of the tests) leaves its
    own engine's numbers in a read-only folder (0555) wherever it can write (/tmp, /dev/shm, $HOME, its working
    folder), and the voter's test rejects an engine that computes otherwise than most notes it finds, holding no
    expected value of its own: does it catch no sabotaged engine (no note of an earlier unit, or of a sandbox of the
    other grading, reached it)?"""
    sabotage, said = _two_at_once(uid_run, tmp_path, "vote_notes.py")
    assert not sabotage["artifacts"]["caught"], (sabotage["artifacts"]["caught"], said)


@pytest.mark.parametrize("run", ["no-bwrap"], indirect=True)
def test_an_abstract_socket_reaches_no_other_sandbox(uid_run, tmp_path):
    """Issue 41, item 2. The first process of the machine to bind an abstract unix socket (no file, no permission
    check; made from a datagram socketpair where socket() is refused) tells each process that asks what the others
    said; the voter's test rejects an engine that computes otherwise than most: does it catch no sabotaged engine?"""
    sabotage, said = _two_at_once(uid_run, tmp_path, "vote_socket.py")
    assert not sabotage["artifacts"]["caught"], (sabotage["artifacts"]["caught"], said)


def test_the_student_cannot_shrink_the_count_of_sabotaged_engines(run, tmp_path):
    """Issue 41, item 3. A correct engine that, in runs of the tests only, makes every engine report its own numbers
    on the equivalence probes (tests/adversarial/probe_forger_tail.py) has every mutant of its engine look
    equivalent: is the sabotage check still out of as many engines as the assignment draws, none left out?"""
    engine = BASE_ENGINE.read_text() + (HOSTILE / "probe_forger_tail.py").read_text()
    result, _, _, _ = check(run, tmp_path, engine, (SUITES / "weak.py").read_text())
    checks = {c["id"]: c for c in result["checks"]}
    assert all(checks[c]["status"] == "passed" for c in ("forward", "add", "gradcheck")), checks["forward"]
    sabotage = checks["sabotage"]
    artifacts = sabotage["artifacts"]
    drawn = catalog.load(Path(run.assignment)).sabotages
    assert len(artifacts["bugs"]) == len(drawn), str((list(artifacts["bugs"]), artifacts["left_out"]))
    assert artifacts["in_place"] and set(artifacts["in_place"]) == set(artifacts["left_out"]), artifacts
    assert not set(artifacts["in_place"]) & set(artifacts["of_your_engine"]), artifacts
    assert f"of {len(drawn)} sabotaged engines" in sabotage["feedback"], sabotage["feedback"]
    assert sabotage["score"] == pytest.approx(sabotage["max_score"] * len(artifacts["caught"]) / len(drawn))


@pytest.mark.parametrize("run", ["no-bwrap"], indirect=True)
def test_the_process_table_shows_no_other_sandboxs_processes(uid_run, tmp_path):
    """Issue 41. Every process of two gradings at once starts a child whose command line (readable by every user in
    /proc) carries its own engine's numbers; the voter's test rejects an engine that computes otherwise than most
    command lines it finds: does it catch no sabotaged engine (it sees no process of another sandbox: the other lane
    of its own grading, or the other grading's)?"""
    sabotage, said = _two_at_once(uid_run, tmp_path, "vote_processes.py")
    assert not sabotage["artifacts"]["caught"], (sabotage["artifacts"]["caught"], said)
