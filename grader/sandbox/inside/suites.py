"""pytest inside the sandbox: its configuration and its session's start prepared once in the template (no student
code involved), then the rest of one session per unit on the module and tests the unit set up.

pytest's own skeleton of a session (_pytest.main.wrap_session) configures, starts the session, collects, runs the
tests, ends the session and unconfigures. The start (the plugins configured, the fixtures of every plugin parsed) is
the same for every run: the template does it once, before it forks any unit, and each unit, the template's fork,
goes on from there in memory of its own. Its collection, tests, end and exit status are the unit's alone.

The student's tests are rewritten for assertions (pytest's assertion rewriting) once per grading: the first run on
the student's own engine rewrites them before any of the student's code runs and says so (rewritten()); later runs
are given that rewrite and put it where pytest's own cache of rewritten tests is read (place()), and pytest takes it
only for the very same text (its hash is checked). Anything else is rewritten by pytest itself, as usual.

Output capture is `sys` only (no files shared between units), and nothing else is cached.
"""

from __future__ import annotations

import base64
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from names import MODULE, TESTS_FILE


@dataclass
class Prepared:
    """What the template prepared: the tests' path, pytest's Config, the outcomes plugin, and the session started."""

    tests: str
    config: Any
    outcomes: Any
    session: Any


PREPARED: Prepared | None = None
"""Prepared by the template, or None (each unit then runs pytest.main from the start)."""


class Outcomes:
    """A pytest plugin recording each test's outcome, and whether a failure was an assertion."""

    def __init__(self):
        self.tests = {}
        self.collection_errors = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(str(report.longreprtext)[-3000:])

    def pytest_runtest_makereport(self, item, call):
        if call.when in ("setup", "teardown") and call.excinfo is None:
            return
        entry = {"outcome": "passed", "kind": None, "message": "", "duration": round(call.duration, 4)}
        if call.excinfo is not None:
            import pytest

            skipped = call.excinfo.errisinstance(pytest.skip.Exception)
            entry["outcome"] = "skipped" if skipped else "failed"
            entry["kind"] = "assertion" if call.excinfo.errisinstance(AssertionError) else "exception"
            try:
                entry["message"] = call.excinfo.exconly()[:800]
            except Exception:
                entry["message"] = call.excinfo.typename
        name = item.nodeid.split("::", 1)[-1]
        if name not in self.tests or entry["outcome"] != "passed":
            self.tests[name] = entry


def _args(tests: str) -> list[str]:
    return [
        tests,
        f"--rootdir={os.path.dirname(tests)}",
        "-q",
        "--tb=no",
        "--capture=sys",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:stepwise",
        "-o",
        "addopts=",
        "-o",
        "cache_dir=/nonexistent",
        "-p",
        "no:pastebin",
        "-p",
        "no:junitxml",
        "-p",
        "no:doctest",
        "-p",
        "no:legacypath",
        "-p",
        "no:faulthandler",  # it would hold a duplicate of the template's stderr in every unit; units' stderr is void
    ]


def prepare(run_dir: str) -> None:
    """Parse pytest's arguments, register its plugins, configure them and start the session, now, in the template,
    once. Where any of it fails, nothing is kept: each unit then runs pytest from the start."""
    global PREPARED
    import pdb  # noqa: F401 - what each session imports late (pytest's debugging plugin): imported here once

    import pytest
    from _pytest.config import _prepareconfig
    from _pytest.main import Session

    os.makedirs(run_dir, exist_ok=True)
    tests = os.path.join(run_dir, TESTS_FILE)
    outcomes = Outcomes()
    config = _prepareconfig(_args(tests), plugins=[outcomes])
    session = Session.from_config(config)
    session.exitstatus = pytest.ExitCode.OK
    try:
        config._do_configure()
        config.hook.pytest_sessionstart(session=session)
    except Exception:
        config._ensure_unconfigure()
        return
    PREPARED = Prepared(tests, config, outcomes, session)


def run(tests: str, fixtures: list[str]) -> dict:
    """Run pytest on the tests file; every test's outcome and the collection errors."""
    import pytest

    fixture_plugin = _fixtures(fixtures)
    if PREPARED is not None and PREPARED.tests == tests:
        outcomes = PREPARED.outcomes
        if fixture_plugin is not None:  # its fixtures parsed as it registers (pytest does so for a late plugin)
            PREPARED.config.pluginmanager.register(fixture_plugin, "grader-fixtures")
        code = _session_rest(PREPARED.config, PREPARED.session)
    else:
        outcomes = Outcomes()
        plugins = [outcomes] + ([fixture_plugin] if fixture_plugin is not None else [])
        code = pytest.main(_args(tests), plugins=plugins)
    return {"exit": int(code), "tests": outcomes.tests, "collection_errors": outcomes.collection_errors}


def _session_rest(config, session) -> int:
    """A prepared session's collection, run and end, as pytest's skeleton goes on after the session's start: the exit
    status it gives (its usage error, a failure outside the tests, an interruption or pytest.exit's code, an internal
    error), then the session ended and pytest unconfigured, whatever happened."""
    import pytest

    try:
        session.exitstatus = _collected_and_run(config, session)
    finally:
        os.chdir(session.startpath)
        try:
            config.hook.pytest_sessionfinish(session=session, exitstatus=session.exitstatus)
        except pytest.exit.Exception as exc:
            if exc.returncode is not None:
                session.exitstatus = exc.returncode
        config._ensure_unconfigure()
    return session.exitstatus


def _collected_and_run(config, session) -> int:
    """The session's tests collected and run: its exit status, as pytest gives it (told to pytest's plugins, as pytest
    tells them, where the session was interrupted or failed inside)."""
    import pytest
    from _pytest._code import ExceptionInfo
    from _pytest.config import UsageError
    from _pytest.main import Session

    codes = pytest.ExitCode
    try:
        config.hook.pytest_collection(session=session)
        config.hook.pytest_runtestloop(session=session)
    except UsageError:
        return codes.USAGE_ERROR
    except Session.Failed:  # a stop as failed (shouldfail: -x, --maxfail)
        return codes.TESTS_FAILED
    except (KeyboardInterrupt, pytest.exit.Exception) as exc:  # a collection error interrupts, as KeyboardInterrupt
        given = getattr(exc, "returncode", None)
        config.hook.pytest_keyboard_interrupt(excinfo=ExceptionInfo.from_current())
        return codes.INTERRUPTED if given is None else given
    except BaseException:
        try:
            config.notify_exception(ExceptionInfo.from_current(), config.option)
        except pytest.exit.Exception as exc:
            return codes.INTERNAL_ERROR if exc.returncode is None else exc.returncode
        return codes.INTERNAL_ERROR
    if session.testsfailed:
        return codes.TESTS_FAILED
    return codes.NO_TESTS_COLLECTED if session.testscollected == 0 else codes.OK


REWRITTEN_MAX = 8 << 20
"""Characters of a rewrite said or placed, at most (base64 of pytest's cached form of the rewritten tests)."""


def rewritten(tests: str, text: str) -> str:
    """The tests rewritten for assertions by pytest, in the form of pytest's own cache of rewritten test files
    (base64), for later runs to place(); "" where it cannot be made. The text is written at the tests' path for the
    rewrite (so the code names that path) and removed again: the unit asked for it has run none of the student's
    code yet, and the student's code finds no test file when it runs (it is written once the probes are done)."""
    if PREPARED is None:
        return ""
    try:
        from _pytest.assertion import rewrite

        path = Path(tests)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        try:
            source_hash, code = rewrite._rewrite_test(path, PREPARED.config)
        finally:
            path.unlink()
        buffer = io.BytesIO()
        rewrite._write_pyc_fp(buffer, source_hash, code)
        said = base64.b64encode(buffer.getvalue()).decode("ascii")
    except Exception:
        return ""
    return said if len(said) <= REWRITTEN_MAX else ""


def place(tests: str, said: str) -> None:
    """Put a rewrite of the tests where pytest reads its cache of rewritten test files; pytest takes it only where it
    is of the very text at tests (it checks the text's hash), and rewrites the tests itself otherwise."""
    if not said or len(said) > REWRITTEN_MAX:
        return
    try:
        from _pytest.assertion import rewrite

        path = Path(tests)
        folder = rewrite.get_cache_dir(path)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / (path.name[:-3] + rewrite.PYC_TAIL)).write_bytes(base64.b64decode(said, validate=True))
    except Exception:
        return


def _fixtures(names: list[str]):
    """A plugin with one fixture per name of the student's module (Value, Neuron...), for tests
    written nbgrader-style as `def test_x(Value): ...`."""
    if not names:
        return None
    import sys
    import types

    import pytest

    module = sys.modules.get(MODULE)
    plugin = types.ModuleType("grader_fixtures")  # a module, as conftest plugins are: no staticmethod around them
    for name in names:

        def fixture(name=name):
            return getattr(sys.modules.get(MODULE, module), name)

        fixture.__name__ = name
        setattr(plugin, name, pytest.fixture(name=name)(fixture))
    return plugin
