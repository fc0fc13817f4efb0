"""Can a hostile student forge a grade, read a secret, or touch a classmate? Each submission in
tests/adversarial/ tries one way, graded through the real command line in both modes the
grader runs in: with bubblewrap, and without it (GRADER_NO_BWRAP=1, as in Docker and so on
Gradescope: each sandbox a uid of its own, the grader installed where only root can read
it, student code on a Python every user can run)."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest
from conftest import BASE_ENGINE, HERE, QUICK, ROOT, SANDBOX_PYTHON, TEST_SECRET

from grader import catalog

HOSTILE = HERE / "adversarial"
SUITES = HERE / "fixtures" / "suites"


def check(run, base, engine: Path | str, tests: Path | str | None = None, name: str = "micrograd_mine.py"):
    """grader check on a submission (and tests) in a folder of base; the result JSON, the HTML, the process."""
    tmp_path = base
    folder = tmp_path / "submission"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(engine.read_text() if isinstance(engine, Path) else engine)
    args = [
        "check",
        str(folder / name),
        "--assignment",
        run.assignment,
        "--json",
        str(tmp_path / "result.json"),
        "--html",
        str(tmp_path / "report.html"),
    ]
    if tests is not None:
        (folder / "test_micrograd.py").write_text(tests.read_text() if isinstance(tests, Path) else tests)
    done, peak = run(*args)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    html = (tmp_path / "report.html").read_text()
    return result, html, done, peak


HANG_GUARD_S = 400
"""Only so that a grader that never ends fails the test instead of hanging it (not a timing assert)."""


def tight(run, base: Path, sabotages: tuple[str, ...] = (), **limits):
    """The grader's command line on QUICK with these limits, and only these sabotages if given; (the command,
    the assignment's limits). For the submissions that wait out a limit: a smaller one shows the same in less
    of the suite's time."""
    text = QUICK
    if sabotages:
        symbols = 'required_symbols = ["Value"]\n'
        assert symbols in text
        text = text.replace(symbols, f"{symbols}sabotages = {list(sabotages)!r}\n".replace("'", '"'), 1)
    for key, value in limits.items():
        line = re.compile(rf"^{key} = [\d.]+", re.M)
        text = (
            line.sub(f"{key} = {value}", text)
            if line.search(text)
            else text.replace("[limits]\n", f"[limits]\n{key} = {value}\n")
        )
    folder = base / "tight"
    folder.mkdir()
    (folder / "assignment.toml").write_text(text)

    def grader(*args: str, cwd: Path = base):
        return run(*args, cwd=cwd, timeout=HANG_GUARD_S)

    grader.assignment, grader.mode = str(folder), run.mode
    return grader, catalog.load(folder).limits


def statuses(result) -> dict[str, str]:
    return {c["id"]: c["status"] for c in result["checks"]}


def scores(result) -> dict[str, float]:
    return {c["id"]: c["score"] for c in result["checks"]}


ENGINE_CHECKS = (
    "forward",
    "add",
    "mul",
    "pow",
    "tanh",
    "relu",
    "neg_sub",
    "accumulate",
    "topo_order",
    "hand_examples",
    "gradcheck",
    "numerical_grad",
    "neuron",
    "training",
)


# -- 1. forged replies -------------------------------------------------------------------------------------


def test_a_module_that_answers_for_the_grader_gains_nothing(run, tmp_path):
    """Does an unwritten engine whose module replaces the grader's code in its own process, answering
    every probe itself and claiming its tests fail only on engines other than its own, earn nothing a
    check does not see in the numbers it claims: no wheat or sabotage points (nothing tells it which
    engine is which), and no engine check whose numbers it cannot compute?"""
    forged, _, _, _ = check(run, tmp_path, HOSTILE / "forger.py", HOSTILE / "forger_tests.py")
    assert forged["status"] == "graded"
    assert "Internal grader error" not in json.dumps(forged)
    assert scores(forged)["sabotage"] == 0 and statuses(forged)["wheat"] != "passed"
    # Gradients of 1 everywhere are right on sums (add, and topo_order probed with + alone, since its *
    # is wrong), as they would be for an honest engine; its numerical_grad is real.
    for check_id in set(ENGINE_CHECKS) - {"add", "topo_order", "numerical_grad"}:
        assert statuses(forged)[check_id] != "passed", check_id
    assert forged["score"] <= 30, scores(forged)


@pytest.mark.parametrize(
    "name, words",
    [
        ("reply_channel_as_stdout.py", ["cannot read"]),
        ("bad_frame.py", ["cannot read"]),
        ("flood.py", ["cannot read"]),
        ("trickle.py", ["did not finish"]),
    ],
)
def test_a_garbled_reply_is_that_requests_error_never_the_graders(run, tmp_path, name, words):
    """Do replies out of step, a frame that is not JSON, 400 MB without a boundary and a reply that
    never ends each cost only the checks they happen in, as the student's error, with the grader
    finishing on time, in bounded memory, with its JSON and HTML written?"""
    if name == "trickle.py":  # each probe of + waits out its request's limit: 1 s shows it as 3 s would
        run, _ = tight(run, tmp_path, request_s=1.0)
    started = time.monotonic()
    result, html, done, peak = check(run, tmp_path, HOSTILE / name)
    assert time.monotonic() - started < 120
    assert peak < 400, f"the grader peaked at {peak:.0f} MB"
    text = json.dumps(result)
    assert "Internal grader error" not in text and "grader/sandbox" not in text
    failing = [c for c in result["checks"] if c["status"] == "error"] if result["status"] == "graded" else []
    messages = [c["feedback"] for c in failing] + ([result["error"]["message"]] if result["error"] else [])
    assert messages and all(any(w in m for w in words) for m in messages[:1]), messages
    assert "<html" in html


# -- 2. tests that tell engines apart without testing behaviour ---------------------------------------------


def test_nothing_in_a_run_names_its_engine(run, tmp_path):
    """Does a test that searches its frames and all of memory for anything naming the engine (the
    plan, wheat, sabotage, an operator's name) find nothing on any run, and so catch no sabotage?"""
    result, _, _, _ = check(run, tmp_path, BASE_ENGINE, HOSTILE / "plan_hunter_tests.py")
    found = statuses(result)
    assert found["student_tests"] == "passed" and found["wheat"] == "passed", [
        c["feedback"] for c in result["checks"][-3:]
    ]
    assert scores(result)["sabotage"] == 0


def _fingerprint_tests() -> str:
    """A test file that knows the bytecode of every engine shipped in the grader's package, and of the
    student's own engine, and fails on any engine that is neither: it recognises engines by code."""
    from grader.sabotage import wheats

    known = set()
    for source in [w.source for w in wheats()] + [BASE_ENGINE.read_text()]:
        namespace: dict = {}
        exec(compile(source, "micrograd_mine.py", "exec"), namespace)
        known.add(_code_hash(namespace["Value"]))
    return f"""import hashlib
from micrograd_mine import Value
KNOWN = {sorted(known)!r}

{inspect.getsource(_code_hash)}
def test_a_known_engine():
    assert _code_hash(Value) in KNOWN

def test_code_lives_in_the_students_file():
    import micrograd_mine
    assert Value.__add__.__code__.co_filename == micrograd_mine.__file__
    assert Value.__module__ == "micrograd_mine"
"""


def _code_hash(cls) -> str:
    digest = hashlib.sha256()
    for name, member in sorted(vars(cls).items()):
        code = getattr(member, "__code__", None)
        if code is not None:
            digest.update(name.encode() + code.co_code)
            for const in code.co_consts:
                if hasattr(const, "co_code"):
                    digest.update(const.co_code)
    return digest.hexdigest()


def test_a_suite_that_recognises_engines_by_their_code_catches_nothing(run, tmp_path):
    """Does a test that passes only on engines whose bytecode it knows (the package's wheats, the
    student's own) catch no sabotage, because every engine is rewritten for the grading and runs
    under the student's own module and file name?"""
    result, _, _, _ = check(run, tmp_path, BASE_ENGINE, _fingerprint_tests())
    assert statuses(result)["student_tests"] == "passed"
    assert scores(result)["sabotage"] == 0
    wheat = next(c for c in result["checks"] if c["id"] == "wheat")
    assert wheat["artifacts"]["invalid"] == ["test_a_known_engine"], wheat["artifacts"]


# -- 3. the engines' code never leaks ------------------------------------------------------------------


def test_feedback_never_carries_an_engines_code(run, tmp_path):
    """Do tests that put the module's source (the engine appended) into assertion and exception
    messages get none of any engine's code into the JSON or the HTML, and is the reference never
    sent into a sandbox at all?"""
    from grader import catalog, secret
    from grader.commands.selftest import reference_source
    from grader.sabotage import plan

    result, html, _, _ = check(run, tmp_path, BASE_ENGINE, HOSTILE / "leak_tests.py")
    source = (tmp_path / "submission" / "micrograd_mine.py").read_bytes()
    tests = (tmp_path / "submission" / "test_micrograd.py").read_text()
    key = TEST_SECRET.encode()
    seed = secret.seed(key, b"plan", source, tests.encode())
    blocks = [r.block for r in plan(catalog.load("micrograd").sabotages, seed, secret.seed(key, b"pool"))]
    assert all("class Value" in b for b in blocks)
    shown = json.dumps(result) + html
    for block in blocks + [reference_source()]:
        lines = [line.strip() for line in block.splitlines() if len(line.strip()) >= 24]
        leaked = [line for line in lines if line in shown and line not in source.decode()]
        assert not leaked, leaked[:3]
    wheat = next(c for c in result["checks"] if c["id"] == "wheat")
    assert "withheld" in wheat["feedback"] or "raised ValueError" in wheat["feedback"]


# -- 4/5. getting out: secrets, the network, classmates, the grader -------------------------------------


def test_no_way_out_of_the_sandbox(run, tmp_path, private_install):
    """From inside a sandbox, can the student import or find the reference and the wheats, read
    /etc/shadow, reach a listener on this machine's loopback, or signal the grader? (Every
    attempt that works would be named in an ESCAPED import error.)"""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    secrets = [str(private_install / "reference" / "engine.py"), str(private_install / "quick" / "assignment.toml")]
    public_ok = run.mode != "bwrap"  # without bubblewrap, what is world-readable is readable by design
    if run.mode == "bwrap":
        secrets.append(str(ROOT / "reference" / "engine.py"))
    source = (
        (HOSTILE / "escape.py")
        .read_text()
        .replace("__PORT__", str(listener.getsockname()[1]))
        .replace("__TARGETS__", repr([str(tmp_path / "planted.txt")]))
        .replace("__SECRETS__", repr(secrets))
        .replace("__PUBLIC_OK__", repr(public_ok))
    )
    result, _, done, _ = check(run, tmp_path, source)
    with pytest.raises(OSError):
        listener.accept()
    assert "ESCAPED" not in json.dumps(result), result["error"]
    assert result["status"] == "graded"
    assert not (tmp_path / "planted.txt").exists()


def test_a_class_cannot_be_touched_from_inside(run, tmp_path):
    """In a batch, can a student overwrite a classmate's result or plant files in the output, or
    kill the grader, and does everyone still get their own, right result, with nothing left behind?"""
    inputs, out = tmp_path / "class", tmp_path / "out"
    inputs.mkdir()
    (inputs / "victim.py").write_text(BASE_ENGINE.read_text())
    (inputs / "killer.py").write_text((HOSTILE / "killer.py").read_text())
    targets = [
        str(out / "students" / "victim" / "result.json"),
        str(out / "victim" / "result.json"),
        str(out / "grades.csv"),
        str(out / "planted.txt"),
    ]
    public_ok = run.mode != "bwrap"
    (inputs / "escaper.py").write_text(
        (HOSTILE / "escape.py")
        .read_text()
        .replace("__PORT__", "9")
        .replace("__TARGETS__", repr(targets))
        .replace("__SECRETS__", "[]")
        .replace("__PUBLIC_OK__", repr(public_ok))
    )
    done, _ = run("batch", str(inputs), "--out", str(out), "--jobs", "2", "--assignment", run.assignment)
    assert done.returncode == 0, done.stderr[-3000:]
    results = {p.parent.name: json.loads(p.read_text()) for p in out.rglob("result.json")}
    assert set(results) == {"victim", "killer", "escaper"}
    assert results["victim"]["status"] == "graded" and results["victim"]["score"] > 60
    assert "ESCAPED" not in json.dumps(results["escaper"])
    assert not (out / "planted.txt").exists()
    if os.geteuid() == 0:
        assert list(run.sandboxes.iterdir()) == []  # every sandbox's folder is gone


def test_a_worker_on_the_instructors_machine_may_not_expose_the_class(private_install, tmp_path):
    """A Dask worker on the instructor's own machine, without bubblewrap (student code as a uid of its
    own): is it refused when that uid could read the class's folders, and only then?"""
    if os.geteuid() != 0 or not SANDBOX_PYTHON.exists():
        pytest.skip(f"needs root and a Python every user can run ({SANDBOX_PYTHON}; .ci/run makes one)")
    public = Path(tempfile.mkdtemp(prefix="grader-class-"))  # under /tmp, as a careless instructor's would be
    public.chmod(0o755)
    (public / "alice.py").write_text("x = 1\n")
    private = tmp_path / "class"  # pytest's folders are 0700: closed to other users
    private.mkdir()
    env = {
        **os.environ,
        "GRADER_NO_BWRAP": "1",
        "GRADER_SANDBOX_PYTHON": str(SANDBOX_PYTHON),
        "PYTHONPATH": str(private_install),
    }
    probe = (
        "import sys; from grader.batch.tasks import fitness, fingerprint, host_id; "
        "print(fitness(fingerprint(), False, sys.argv[1] or host_id(), (sys.argv[2],)))"
    )

    def fit(host: str, folder: Path) -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe, host, str(folder)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    try:
        refused = fit("", public)
        assert "cannot isolate student code" in refused and str(public) in refused, refused
        assert fit("", private) == "None"
        assert fit("another-machine/boot", public) == "None"  # elsewhere, that path is not the class
    finally:
        shutil.rmtree(public, ignore_errors=True)


# -- 6. disk ---------------------------------------------------------------------------------------


def test_disk_is_capped_in_total(run, tmp_path):
    """Is a submission that writes everywhere it can stopped near the disk limit, with a clear
    message, and nothing it wrote left on the machine?"""
    free_before = shutil.disk_usage("/tmp").free
    result, _, done, _ = check(run, tmp_path, HOSTILE / "disk_hog.py")
    assert shutil.disk_usage("/tmp").free > free_before - 300 * 1024 * 1024
    if run.own_tmp:  # the size-capped /tmp says "No space left", and the import goes on
        assert result["status"] == "graded", result["error"]
    else:  # the watcher stops the sandbox and says why
        assert result["status"] == "error" and "disk space" in result["error"]["message"], result["error"]
    assert not list(Path("/tmp").glob("hog*.bin")) and not list(Path("/dev/shm").glob("hog*.bin"))


# -- Gradescope ------------------------------------------------------------------------------------------


def test_gradescope_grades_as_a_user_who_cannot_read_the_autograder(run, tmp_path):
    """Does the exported run_autograder, as root on a fake /autograder tree, grade a submission that
    tries to read the reference (and submit it as its own) without letting it read anything?"""
    done, _ = run("export", "gradescope", "--out", str(tmp_path / "autograder.zip"), "--assignment", run.assignment)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        zf.extractall(root)
    (root / "run_autograder").chmod(0o755)
    (root / "submission").mkdir()
    (root / "submission" / "micrograd_mine.py").write_text(
        (HOSTILE / "reads_the_reference.py").read_text().replace("__ROOT__", str(root))
    )
    env = dict(
        os.environ,
        AUTOGRADER_ROOT=str(root),
        GRADER_PYTHON=sys.executable,
        PYTHONPATH=str(root / "source"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    if run.mode == "no-bwrap":
        env.update(GRADER_NO_BWRAP="1", GRADER_SANDBOX_PYTHON=str(SANDBOX_PYTHON))
    graded = subprocess.run(
        ["bash", str(root / "run_autograder")], capture_output=True, text=True, env=env, timeout=600
    )
    assert graded.returncode == 0, graded.stderr[-3000:]
    data = json.loads((root / "results" / "results.json").read_text())
    engine = [t for t in data["tests"] if t["name"].split(":")[0] in ENGINE_CHECKS]
    assert engine and all(t["score"] == 0 for t in engine), [(t["name"], t["score"]) for t in engine]
    reference = (root / "source" / "reference" / "engine.py").read_text()
    lines = [line.strip() for line in reference.splitlines() if len(line.strip()) >= 30]
    assert not [line for line in lines if line in json.dumps(data)]
