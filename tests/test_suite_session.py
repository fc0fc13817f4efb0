"""Each run of the student's tests goes on from a pytest session its sandbox's template prepared (configured, its
fixtures parsed, started) before it forked the run, and takes the tests as the grading's first run rewrote them for
assertions: what the student's tests give must be what pytest from the start gives, every run its own, and nothing of
the template's reaches a run but the null device (grader/sandbox/inside/suites.py, template.py)."""

from __future__ import annotations

import ast
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


# -- a run on a sabotaged engine ends at the first test that catches it ----------------------------------------------

CATCHING = """
from micrograd_mine import Value

def test_fails_with_an_exception():
    Value(1.0).no_such_thing()

def test_sum_gradient():
    a, b = Value(2.0), Value(3.0)
    (a + b).backward()
    assert (a.grad, b.grad) == (1.0, 1.0)

def test_product_gradient():
    a, b = Value(2.0), Value(3.0)
    (a * b).backward()
    assert (a.grad, b.grad) == (3.0, 2.0)

def test_last():
    assert True
"""


def _mutant(op_id: str = "add_half"):
    from grader.sabotage import SWAPPED, EngineRun, engine_block, mutant

    return EngineRun(
        f"{op_id}@recursive_set",
        "sabotage",
        "recursive_set",
        op_id,
        engine_block(mutant(op_id, "recursive_set"), SWAPPED),
    )


def _on(sandbox: Sandbox, engine, stop_at: tuple[str, ...]) -> dict:
    job = SuiteJob(_code(), CATCHING, None, 60.0, lambda own: 60.0)
    ran = run_tests(sandbox, job, engine, 60.0, RunSettings(until=time.monotonic() + 120), stop_at).reply
    assert ran is not None and ran.failure is None
    return {name: t["outcome"] for name, t in ran.reply["result"]["tests"].items()}


def test_a_run_ends_at_the_first_listed_test_to_fail_by_an_assertion(sandbox):
    engine = _mutant()
    assert _on(sandbox, engine, ()) == {
        "test_fails_with_an_exception": "failed",
        "test_sum_gradient": "failed",
        "test_product_gradient": "passed",
        "test_last": "passed",
    }
    # an exception does not end it, even of a listed test; the first listed assertion does
    stopped = _on(sandbox, engine, ("test_fails_with_an_exception", "test_sum_gradient", "test_last"))
    assert stopped == {"test_fails_with_an_exception": "failed", "test_sum_gradient": "failed"}
    assert _on(sandbox, engine, ("test_product_gradient",)) == _on(sandbox, engine, ())  # never fails: to the end


def test_where_a_run_may_end_is_what_catches_counts_whatever_runs_remain():
    from grader.checks.suite_runs import stops_at
    from grader.lanes.run import RunReply
    from grader.sabotage import EngineRun

    def reply(engine, **outcomes):
        tests = {n: {"outcome": o, "kind": None, "message": "", "duration": 0.0} for n, o in outcomes.items()}
        return RunReply(engine, {"ok": True, "result": {"exit": 0, "tests": tests, "collection_errors": []}})

    wheats = [EngineRun(f"wheat:{w}", "wheat", w, None, "") for w in ("a", "b")]
    decoy = EngineRun("own:decoy", "decoy", "own", None, "")
    sabotage = EngineRun("x@a", "sabotage", "a", "x", "")
    own_mutant = EngineRun("x@own", "own", "own", "x", "")
    plan = (*wheats, decoy, sabotage, own_mutant)
    kit = (Path(__file__).resolve().parent.parent / "student_template" / TESTS_FILE).read_text()
    given = next(n for n in ast.parse(kit).body if getattr(n, "name", "") == "test_hand_derived_example")
    source = CATCHING + "\nimport pytest\n\n\n" + ast.get_source_segment(kit, given) + "\n"  # the kit's, unchanged
    own = reply(
        None,
        test_sum_gradient="passed",
        test_product_gradient="failed",
        test_last="passed",
        test_hand_derived_example="passed",
        test_imported="passed",
    )
    on_wheats = [
        reply(
            w,
            test_sum_gradient="passed",
            test_product_gradient="passed",
            test_last="failed",
            test_hand_derived_example="passed",
            test_imported="passed",
        )
        for w in wheats
    ]
    on_decoy = reply(decoy, test_sum_gradient="failed", test_product_gradient="passed", test_last="passed")
    stop_at = stops_at(source)
    assert stop_at(sabotage, own, on_wheats[:1], plan) == ()  # a correct engine has yet to run
    # a test that fails on a correct engine, or that the student did not define, never ends a run
    assert stop_at(sabotage, own, on_wheats, plan) == ("test_product_gradient", "test_sum_gradient")
    assert stop_at(own_mutant, own, on_wheats, plan) == ()  # the decoy has yet to run
    assert stop_at(own_mutant, own, [*on_wheats, on_decoy], plan) == ()  # each fails on the engine or its decoy
    assert stop_at(wheats[0], own, on_wheats, plan) == ()  # a correct engine's run goes to its end


def test_the_correct_engines_and_the_decoy_go_first_and_the_spares_last():
    """Where a run may end reads the correct engines' runs and the decoy's; whether a spare runs reads the run on the
    mutant it stands for: so they go in that order, each kind in the plan's order."""
    from grader.lanes.shares import Engines
    from grader.sabotage import EngineRun

    kinds = ["sabotage", "spare", "wheat", "own", "decoy", "spare", "wheat", "sabotage"]
    plan = tuple(EngineRun(f"{kind}{i}", kind, "w", None, "") for i, kind in enumerate(kinds))
    engines = Engines(plan, 1.0, RunSettings())
    taken = []
    while (engine := engines.take()) is not None:
        taken.append(engine.id)
    assert taken == ["wheat2", "decoy4", "wheat6", "sabotage0", "own3", "sabotage7", "spare1", "spare5"]
