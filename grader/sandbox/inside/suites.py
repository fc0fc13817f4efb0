"""pytest inside the sandbox: its configuration prepared once in the template (no student
code involved), then one session per unit on the module and tests the unit set up.

Output capture is `sys` only (no files shared between units), and nothing is cached.
"""

from __future__ import annotations

import os

from names import MODULE, TESTS_FILE

PREPARED = None
"""(tests path, pytest Config, Outcomes) prepared by the template, or None."""


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
    ]


def prepare(run_dir: str) -> None:
    """Parse pytest's arguments and register its plugins now, in the template, once."""
    global PREPARED
    import faulthandler  # noqa: F401 - what each session imports late (pytest's faulthandler and debugging
    import pdb  # noqa: F401 - plugins): imported here once, not again in every run

    import pytest  # noqa: F401
    from _pytest.config import _prepareconfig

    os.makedirs(run_dir, exist_ok=True)
    tests = os.path.join(run_dir, TESTS_FILE)
    outcomes = Outcomes()
    config = _prepareconfig(_args(tests), plugins=[outcomes])
    PREPARED = (tests, config, outcomes)


def run(tests: str, fixtures: list[str]) -> dict:
    """Run pytest on the tests file; every test's outcome and the collection errors."""
    import pytest

    fixture_plugin = _fixtures(fixtures)
    if PREPARED is not None and PREPARED[0] == tests:
        _, config, outcomes = PREPARED
        if fixture_plugin is not None:
            config.pluginmanager.register(fixture_plugin, "grader-fixtures")
        code = config.hook.pytest_cmdline_main(config=config)
    else:
        outcomes = Outcomes()
        plugins = [outcomes] + ([fixture_plugin] if fixture_plugin is not None else [])
        code = pytest.main(_args(tests), plugins=plugins)
    return {"exit": int(code), "tests": outcomes.tests, "collection_errors": outcomes.collection_errors}


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
