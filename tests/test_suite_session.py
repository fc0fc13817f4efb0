"""Each run of the student's tests goes on from a pytest session its sandbox's template prepared (configured, its
fixtures parsed, started) before it forked the run, and takes the tests as the grading's first run rewrote them for
assertions: what the student's tests give must be what pytest from the start gives, every run its own, and nothing of
the template's reaches a run but the null device (grader/sandbox/inside/suites.py, template.py)."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BASE_ENGINE

from grader import suite_replies
from grader.files import MODULE_FILE, TESTS_FILE
from grader.lanes.run import RunSettings, SuiteJob, run_tests
from grader.protocol import Code
from grader.sandbox.limits import SandboxLimits
from grader.sandbox.supervisor import Sandbox

INSIDE = Path(__file__).resolve().parent.parent / "grader" / "sandbox" / "inside"

SUITES = {
    "outcomes": """
import pytest
from micrograd_mine import Value

def test_passes():
    assert (Value(2.0) * 3).data == 6.0

def test_assertion():
    assert (Value(2.0) + 3).data == 6.0, "two and three"

def test_exception():
    Value(1.0).no_such_thing()

@pytest.mark.skip(reason="not today")
def test_marked_skip():
    pass

def test_skips_itself():
    pytest.skip("later")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.mark.parametrize("x", [1.0, -2.0])
def test_parametrized(x):
    assert Value(x).data == x

class TestInAClass:
    def test_method(self):
        assert Value(1.0).grad == 0.0
""",
    "fixtures": """
import logging
import unittest
from micrograd_mine import Value

def test_tmp_path(tmp_path):
    (tmp_path / "f").write_text("x")
    assert (tmp_path / "f").read_text() == "x"

def test_capsys(capsys):
    print("hello")
    assert capsys.readouterr().out == "hello\\n"

def test_monkeypatch(monkeypatch):
    monkeypatch.setattr(Value, "data", 5.0, raising=False)
    assert Value.data == 5.0

def test_caplog(caplog):
    logging.getLogger("x").warning("careful")
    assert "careful" in caplog.text

def test_request(request):
    assert request.node.name == "test_request"

class Case(unittest.TestCase):
    def test_unittest(self):
        self.assertEqual(Value(1.0).data, 1.0)
""",
    "collection_error": "from micrograd_mine import NoSuchName\n\ndef test_never():\n    pass\n",
    "module_skip": "import pytest\npytest.skip('all of it', allow_module_level=True)\n\ndef test_x():\n    pass\n",
    "exit": "import pytest\n\ndef test_first():\n    pytest.exit('stop', returncode=3)\n\ndef test_next():\n    pass\n",
    "nbgrader_style": "def test_value(Value):\n    assert Value(1.0).data == 1.0\n",
    "empty": "x = 1\n",
}


def _code() -> Code:
    return Code("py", {MODULE_FILE: BASE_ENGINE.read_bytes()})


def _run(sandbox: Sandbox, tests: str, rewritten: str = "", fixtures: tuple[str, ...] = ()):
    job = SuiteJob(_code(), tests, None, 60.0, lambda own: 60.0, fixtures=fixtures, rewritten=rewritten)
    return run_tests(sandbox, job, None, 60.0, RunSettings(until=time.monotonic() + 120))


def _from_the_start(tmp_path: Path, tests: str, fixtures: tuple[str, ...]) -> dict:
    """The same tests under pytest from the start (pytest.main, as a unit ran it before sessions were prepared), in a
    process of their own."""
    (tmp_path / MODULE_FILE).write_bytes(BASE_ENGINE.read_bytes())
    (tmp_path / TESTS_FILE).write_text(tests)
    script = (
        "import json, sys; sys.path[:0] = [sys.argv[1], '.']\n"
        "import suites, micrograd_mine\n"
        "out = suites.run(sys.argv[2], json.loads(sys.argv[3]))\n"
        "sys.__stdout__.write('\\nRESULT' + json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(INSIDE), str(tmp_path / TESTS_FILE), json.dumps(list(fixtures))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
    )
    return json.loads(done.stdout.rsplit("\nRESULT", 1)[1])


def _shape(result: dict) -> dict:
    """A run's result without what differs from run to run (durations) or names a folder (messages' paths)."""
    return {
        "exit": result["exit"],
        "tests": {name: (t["outcome"], t["kind"]) for name, t in result["tests"].items()},
        "collection_errors": len(result["collection_errors"]),
    }


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(_code().files, SandboxLimits(), ("pytest",)) as box:
        yield box


@pytest.mark.parametrize("name", sorted(SUITES))
def test_a_prepared_session_gives_what_pytest_from_the_start_gives(sandbox, tmp_path, name):
    fixtures = ("Value",) if name == "nbgrader_style" else ()
    ran = _run(sandbox, SUITES[name], fixtures=fixtures).reply
    assert ran is not None and ran.failure is None
    assert _shape(ran.reply["result"]) == _shape(_from_the_start(tmp_path, SUITES[name], fixtures))


def test_every_run_is_a_session_of_its_own(sandbox):
    """The second run of the same suite in the same sandbox counts its own tests only, and a test that left a mark on
    pytest's config in the first finds none in the second."""
    tests = "import pytest\n\ndef test_mark(request):\n    assert not hasattr(pytest, 'left')\n    pytest.left = 1\n"
    first, second = (_run(sandbox, tests).reply for _ in range(2))
    assert first is not None and second is not None
    for run in (first, second):
        assert run.reply["result"]["tests"]["test_mark"]["outcome"] == "passed"
        assert run.reply["result"]["exit"] == 0


def test_a_run_holds_no_descriptor_of_the_template_but_the_null_device(sandbox):
    """pytest's session, configured in the template, holds a descriptor for its log file: the null device, which units
    keep; every other descriptor a unit has above 2 is its own socket to the grader."""
    tests = """
import os, stat

def test_descriptors():
    null = os.stat(os.devnull).st_rdev
    kinds = []
    for fd in range(3, 1024):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == null:
            continue
        kinds.append("socket" if stat.S_ISSOCK(st.st_mode) else oct(st.st_mode))
    assert kinds == ["socket"], kinds
"""
    ran = _run(sandbox, tests).reply
    assert ran is not None and ran.failure is None
    assert ran.reply["result"]["tests"]["test_descriptors"]["outcome"] == "passed", ran.reply["result"]["tests"]


def _pyc(tests: str, code_of: str) -> str:
    """pytest's cached form of a rewrite: the hash of tests' text, with the code compiled from code_of."""
    from _pytest.assertion import rewrite

    buffer = io.BytesIO()
    rewrite._write_pyc_fp(buffer, importlib.util.source_hash(tests.encode()), compile(code_of, TESTS_FILE, "exec"))
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def test_the_first_run_says_the_rewrite_and_later_runs_take_one_of_the_same_text_only(sandbox):
    tests = "def test_it():\n    assert 1 + 1 == 2\n"
    first = _run(sandbox, tests)
    assert first.rewritten and first.reply is not None and first.reply.failure is None
    said = base64.b64decode(first.rewritten)
    assert said[8:16] == importlib.util.source_hash(tests.encode())[:8]  # pytest's cache, of this very text
    other = "def test_it():\n    assert 1 + 1 == 3\n"
    taken = _run(sandbox, tests, rewritten=_pyc(tests, other)).reply  # a later run takes what it is given ...
    assert taken is not None and taken.reply["result"]["tests"]["test_it"]["outcome"] == "failed"
    stale = _run(sandbox, tests, rewritten=_pyc("def test_it(): pass\n", other)).reply  # ... of the same text only
    assert stale is not None and stale.reply["result"]["tests"]["test_it"]["outcome"] == "passed"
    again = _run(sandbox, tests, rewritten=first.rewritten)
    assert not again.rewritten  # not asked again
    assert again.reply is not None and again.reply.reply["result"]["tests"]["test_it"]["outcome"] == "passed"


def test_a_rewrite_is_read_only_from_the_first_frame_and_bounded():
    code, tests = _code(), "def test_it():\n    assert True\n"
    good = base64.b64encode(b"x" * 30).decode()
    assert suite_replies.before_tests([{"rewritten": good}], code, False, False, tests).rewritten == good
    late = [{"probes": []}, {"rewritten": good}]  # a frame after the first, which the student's code could send
    assert suite_replies.before_tests(late, code, False, True, tests).rewritten == ""
    assert suite_replies.before_tests([{"rewritten": good}], code, False, False, None).rewritten == ""  # not asked
    too_long = "A" * (suite_replies.REWRITTEN_PER_CHAR * len(tests) + 65540)
    assert suite_replies.before_tests([{"rewritten": too_long}], code, False, False, tests).rewritten == ""
    for bad in ("not base64!", 7, ["x"]):
        assert suite_replies.before_tests([{"rewritten": bad}], code, False, False, tests).rewritten == ""


def test_the_spares_go_last():
    """Whether a spare runs reads the run on the mutant it stands for: the spares go after every other engine, each in
    the plan's order."""
    from grader.lanes.shares import Engines
    from grader.sabotage import EngineRun

    kinds = ["sabotage", "spare", "wheat", "own", "decoy", "spare", "wheat", "sabotage"]
    plan = tuple(EngineRun(f"{kind}{i}", kind, "w", None, "") for i, kind in enumerate(kinds))
    engines = Engines(plan, 1.0, RunSettings())
    taken = []
    while (engine := engines.take()) is not None:
        taken.append(engine.id)
    assert taken == ["sabotage0", "wheat2", "own3", "decoy4", "wheat6", "sabotage7", "spare1", "spare5"]


def test_where_the_first_run_could_say_no_rewrite_a_later_run_is_not_asked_and_its_probes_are_read(sandbox):
    """A run on another engine is asked for nothing before its tests but the probes, whatever the first run said: were
    it asked to rewrite (the first run's rewrite empty), its first frame would be that, and its probes not read."""
    from grader.checks.suite_runs import equivalence_probes
    from grader.sabotage import SWAPPED, EngineRun, engine_block, wheats

    wheat = wheats()[0]
    engine = EngineRun(f"wheat:{wheat.id}", "wheat", wheat.id, None, engine_block(wheat.source, SWAPPED))
    job = SuiteJob(_code(), SUITES["outcomes"], None, 60.0, lambda own: 60.0, probes=tuple(equivalence_probes()[:2]))
    ran = run_tests(sandbox, job, engine, 60.0, RunSettings(until=time.monotonic() + 120))
    assert ran.reply is not None and ran.reply.failure is None
    assert ran.reply.probes is not None and len(ran.reply.probes) == 2
    assert not ran.rewritten
