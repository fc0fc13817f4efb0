"""Shared fixtures: assignments, the fixture zoo, and helpers to grade a source text."""

from __future__ import annotations

import csv
import dataclasses
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader import catalog, spec
from grader.checks.suite import SUITE_CHECKS
from grader.folders import remove_tree
from grader.grading import grade
from grader.result import Result
from grader.sandbox import isolation

HERE = Path(__file__).parent
ZOO = HERE / "zoo"
BAD = HERE / "fixtures" / "bad"
# Correct engines in different styles: the zoo's, and the sabotage detector's wheats (which
# are correct engines too, kept in the package because the grader runs them).
WHEATS = HERE.parent / "grader" / "sabotage" / "engines"
CORRECT_ENGINES = sorted((ZOO / "correct").glob("*.py")) + sorted(WHEATS.glob("wheat_*.py"))
BUGGY_ENGINES = sorted((ZOO / "buggy").glob("*.py"))
BASE_ENGINE = ZOO / "correct" / "list_iterative.py"
LECTURES = HERE / "fixtures" / "lectures"
"""Notebooks as lecturers and students write them (our own): a lecture redefining Value as it goes, with graphviz
drawings and plots; solved exercises printing with rich; an engine printing with rich and plotting with numpy."""
AUTHOR_PYTHON = Path(os.environ.get("GRADER_TEST_AUTHOR_PYTHON", "/opt/micrograd-author/bin/python"))
"""A Python with the packages the lectures' authors had (numpy, matplotlib, rich, graphviz; ipykernel and pytest):
their kernel, and a sandbox's Python that has them. .ci/run makes it."""
ROOT = HERE.parent
# The reference engine and its Neuron/Layer/MLP as one student file.
REFERENCE_SOURCE = (
    (ROOT / "reference" / "engine.py").read_text()
    + "\n"
    + (ROOT / "reference" / "nn.py")
    .read_text()
    .replace("from reference.engine import Value\n", "")
    .replace("from __future__ import annotations\n", "")
)


_OWN_BASETEMP = pytest.StashKey[Path]()
_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The session's temporary folders in a new folder of their own, not pytest's numbered folders under
    /tmp/pytest-of-USER: the suite makes trees 1,600 folders deep on purpose (a hostile student's), and pytest
    removes old numbered folders with shutil.rmtree, which recursion stops there (RecursionError at the end of a
    session that passed, on a machine where an earlier run left one). Under xdist the workers are given theirs."""
    if config.option.basetemp is None and not hasattr(config, "workerinput"):
        config.option.basetemp = tempfile.mkdtemp(prefix="grader-tests-")
        config.stash[_OWN_BASETEMP] = Path(config.option.basetemp)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session's own temporary folder removed without recursion, deep trees included; kept when a test
    failed, to be looked at."""
    own = config.stash.get(_OWN_BASETEMP, None)
    if own is not None and not config.stash.get(_FAILED, False):
        remove_tree(own)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_FAILED] = exitstatus != 0


def with_limits(assignment: spec.Assignment, **limits) -> spec.Assignment:
    """The assignment with some limits changed (short timeouts keep the tests quick)."""
    return dataclasses.replace(assignment, limits=dataclasses.replace(assignment.limits, **limits))


def quick_assignment(folder: Path, checks: tuple[str, ...] | None = None, repair: str = "off") -> Path:
    """A folder holding the micrograd assignment with 15 examples per rule and short limits, for a command's
    --assignment; with `checks`, only those checks (a grading of a small engine then takes about a second); verified
    repairs `off` unless asked for (each regrades a buggy engine once more)."""
    lines = []
    for line in (ROOT / "assignments" / "micrograd" / "assignment.toml").read_text().splitlines():
        name = line.split("=")[0].strip()
        if checks is not None and "{ points" in line and name not in checks:
            continue
        lines.append(line.replace("max_examples = 100", "max_examples = 15"))
    folder.mkdir(parents=True, exist_ok=True)
    lines += ["", "[feedback]", f'repair = "{repair}"']
    (folder / "assignment.toml").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="session")
def micrograd() -> spec.Assignment:
    """The micrograd assignment, without verified repairs (`[feedback] repair = "off"`): a repair regrades a
    buggy engine once more (seconds), which the tests of other things need not pay; tests/test_repair.py turns
    them on."""
    return dataclasses.replace(catalog.load("micrograd"), feedback=spec.Feedback("off"))


@pytest.fixture(scope="session")
def engine_checks(micrograd) -> spec.Assignment:
    """micrograd without the checks on the student's own tests."""
    return micrograd.without(SUITE_CHECKS)


@pytest.fixture(scope="session")
def quick(micrograd) -> spec.Assignment:
    """micrograd with a 1 s limit per probe, for submissions that hang."""
    return with_limits(micrograd, request_s=1.0, check_s=10.0)


@pytest.fixture
def grade_source(tmp_path):
    """Write a source text as micrograd_mine.py in a fresh folder and grade it."""

    def run(source: str, assignment: spec.Assignment) -> Result:
        path = tmp_path / "micrograd_mine.py"
        path.write_text(source, encoding="utf-8")
        return grade(path, assignment)

    return run


@pytest.fixture(scope="session")
def author_python() -> Path:
    """AUTHOR_PYTHON, there (a machine without it cannot say how the lectures ran for their authors)."""
    if not AUTHOR_PYTHON.exists():
        pytest.skip(f"needs a Python with the lectures' packages ({AUTHOR_PYTHON}; .ci/run makes one)")
    return AUTHOR_PYTHON


def csv_rows(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows, each a dict keyed by the header row (the file closed)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def statuses(result: Result) -> dict[str, str]:
    return {c.id: c.status for c in result.checks}


@pytest.fixture(scope="session")
def grader_once(tmp_path_factory):
    """`python -m grader.cli ARGS...` run once per test session and shared by xdist's workers, for a command
    whose output depends on its arguments alone (`grader selftest` takes a minute of the 2-core CI, and
    three tests read it). Returns (returncode, stdout, stderr)."""
    import json
    import os
    import subprocess
    import sys

    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the folder every worker's basetemp is in
    shared = shared / "grader-once"
    shared.mkdir(exist_ok=True)

    def run(*args: str) -> tuple[int, str, str]:
        name = "-".join(a.strip("-").replace("/", "_") for a in args) or "none"
        saved = shared / f"{name}.json"
        with FileLock(str(saved) + ".lock"):
            if not saved.exists():
                done = subprocess.run(
                    [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, timeout=900
                )
                saved.write_text(json.dumps([done.returncode, done.stdout, done.stderr]))
            code, out, err = json.loads(saved.read_text())
        return code, out, err

    return run


# The grader's command line, with bubblewrap and without, on a private install: how the hostile submissions
# (tests/test_adversarial*.py, test_feedback_safe.py) are graded.
TEST_SECRET = "adversarial-tests"
SANDBOX_PYTHON = Path(os.environ.get("GRADER_TEST_SANDBOX_PYTHON", "/opt/micrograd-sandbox/bin/python"))
QUICK = (
    (ROOT / "assignments" / "micrograd" / "assignment.toml")
    .read_text()
    .replace("max_examples = 100", "max_examples = 20")
    .replace("request_s = 5.0 ", "request_s = 3.0 ")
    .replace("tests_s = 30.0 ", "tests_s = 10.0 ")
)


def _bwrap_works() -> bool:
    return isolation.detect().bwrap is not None


@pytest.fixture(scope="session")
def private_install(tmp_path_factory) -> Path:
    """The grader copied where only root can read it (pytest's temporary folders are 0700)."""
    target = tmp_path_factory.mktemp("private-grader")
    for name in ("grader", "reference", "assignments", "student_template"):
        shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    (target / "quick").mkdir()
    (target / "quick" / "assignment.toml").write_text(QUICK)
    return target


@pytest.fixture(params=["bwrap", "no-bwrap"])
def run(request, private_install, tmp_path):
    """Run the grader's command line in one mode; (CompletedProcess, peak RSS of the grader in MB)."""
    mode = request.param
    env = dict(os.environ)
    if mode == "bwrap":
        if not _bwrap_works():
            pytest.skip("bubblewrap cannot create a sandbox here")
    else:
        if os.geteuid() != 0 or not SANDBOX_PYTHON.exists():
            pytest.skip(
                "the no-bubblewrap mode needs root and a Python every user can run "
                f"({SANDBOX_PYTHON}; .ci/run makes one)"
            )
        env.update(GRADER_NO_BWRAP="1", GRADER_SANDBOX_PYTHON=str(SANDBOX_PYTHON), PYTHONPATH=str(private_install))
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["GRADER_SECRET"] = TEST_SECRET
    sandboxes = Path("/run/micrograd-grader") / f"test-{os.getpid()}-{tmp_path.name}"
    if os.geteuid() == 0:
        sandboxes.mkdir(parents=True, mode=0o711)
        sandboxes.chmod(0o711)
        env["GRADER_SANDBOX_ROOT"] = str(sandboxes)

    def grader(*args: str, cwd: Path = tmp_path, timeout: float = 600):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        done = subprocess.run(
            [*(grader.command or [sys.executable, "-m", "grader.cli"]), *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=timeout,
        )
        peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        return done, peak

    grader.mode = mode
    grader.command = None
    """How the grader's command line is started, if not `sys.executable -m grader.cli` as it is when called
    (tests/as_in_docker.py's launcher, as in a container)."""
    grader.own_tmp = mode == "bwrap" or isolation.detect().root and isolation.can_unshare()
    """The sandboxes' /tmp and /dev/shm are size-capped tmpfs of their own (bubblewrap's, or without it a mount
    namespace of their own); else they write on the machine's, which the grader watches."""
    grader.assignment = str(private_install / "quick")
    grader.sandboxes = sandboxes
    yield grader
    if os.geteuid() == 0:
        shutil.rmtree(sandboxes, ignore_errors=True)


# A real browser, for the tests of what a person sees in the HTML reports (test_html.py, test_diagnosis_html.py).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "reports" / "test-artifacts"

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "reports" / "test-artifacts"


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless, driven by Playwright (for the tests of what a person sees in a report)."""
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def open_page(browser, tmp_path):
    """Write a page, open it from a file, and collect console errors and network requests."""
    opened = []

    def run(page_html: str, name: str, width: int = 1000):
        path = tmp_path / f"{name}.html"
        path.write_text(page_html, encoding="utf-8")
        page = browser.new_page(viewport={"width": width, "height": 900})
        errors, requests = [], []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
        opened.append((errors, requests))
        return page

    yield run
    for errors, requests in opened:
        assert errors == [], errors
        assert requests == [], requests


def ctrl_c_reaches_it() -> None:
    """A child's SIGINT as a terminal's Ctrl-C finds it: the default, whatever this test process inherited (a test
    run started in the background by a non-interactive shell ignores SIGINT, and a child inheriting that ignores the
    test's Ctrl-C: Python installs its KeyboardInterrupt only where SIGINT is not ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
