"""Does `grader batch --scheduler` grade a class on a real Dask cluster that shares no folder with the
instructor, exactly as a local batch does, and survive a worker or the scheduler going away?

The scheduler and workers are real `dask scheduler` / `dask worker` processes, run as another,
unprivileged user whose home and working folders are elsewhere; the instructor's input, staging
and output folders are closed to that user (mode 0700). The workers run the Python of a virtual
environment other users can read (/opt/micrograd-worker, built by .ci/run, or
GRADER_WORKER_PYTHON) with a copy of this checkout's grader on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import BAD, BUGGY_ENGINES, CORRECT_ENGINES, ROOT, csv_rows
from test_batch import QUICK_SPEC, SUITES, notebook, write_notebook

WORKER_PYTHON = Path(os.environ.get("GRADER_WORKER_PYTHON", "/opt/micrograd-worker/bin/python"))
WORKER_UID = 61_000 + os.getpid() % 1000
PACKAGES = ("grader", "reference", "assignments", "student_template")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="starting the cluster as another user needs root"),
    pytest.mark.skipif(not WORKER_PYTHON.is_file(), reason=f"no worker Python at {WORKER_PYTHON} (.ci/run builds it)"),
]


def _bwrap_works_unprivileged() -> bool:
    try:
        return (
            subprocess.run(
                ["/usr/bin/bwrap", "--unshare-user-try", "--unshare-pid", "--ro-bind", "/", "/", "--", "/bin/true"],
                user=WORKER_UID,
                group=WORKER_UID,
                extra_groups=[],
                capture_output=True,
                timeout=30,
            ).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


class Cluster:
    """A scheduler and workers, each a real process of the worker user, in that user's own folders."""

    def __init__(self, home: Path, code: Path, **env: str):
        self.home, self.code = home, code
        self.env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(code),
            "TMPDIR": str(home),
            **env,
        }
        self.file = home / f"scheduler-{time.monotonic_ns()}.json"
        self.scheduler = self._start(
            ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(self.file)]
        )
        self.workers: dict[str, subprocess.Popen] = {}
        deadline = time.monotonic() + 60
        while True:  # the scheduler writes its file when it is up (a reader may see it half written)
            try:
                self.address = json.loads(self.file.read_text())["address"]
                break
            except (OSError, ValueError, KeyError):
                assert time.monotonic() < deadline, "the scheduler did not start"
                time.sleep(0.1)

    def _start(self, args: list[str], **env: str) -> subprocess.Popen:
        return subprocess.Popen(
            [str(WORKER_PYTHON), "-m", "dask", *args],
            user=WORKER_UID,
            group=WORKER_UID,
            extra_groups=[],
            env={**self.env, **env},
            cwd=self.home,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def add_worker(self, name: str, **env: str) -> None:
        folder = self.home / name
        folder.mkdir(exist_ok=True)
        os.chown(folder, WORKER_UID, WORKER_UID)
        self.workers[name] = self._start(
            [
                "worker",
                "--scheduler-file",
                str(self.file),
                "--nthreads",
                "1",
                "--no-dashboard",
                "--host",
                "127.0.0.1",
                "--name",
                name,
                "--local-directory",
                str(folder),
            ],
            **env,
        )

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(n, timeout=120)

    def kill(self, proc: subprocess.Popen) -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def close(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            self.kill(proc)


@pytest.fixture(scope="module")
def worker_side():
    """The worker user's home (0700, theirs) and a readable copy of this checkout's grader."""
    if not _bwrap_works_unprivileged():
        pytest.skip("bubblewrap does not work for an unprivileged user here: workers could not isolate student code")
    home = Path(tempfile.mkdtemp(prefix="grader-worker-home-"))
    os.chown(home, WORKER_UID, WORKER_UID)
    code = Path(tempfile.mkdtemp(prefix="grader-worker-code-"))
    code.chmod(0o755)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, code / package, ignore=shutil.ignore_patterns("__pycache__"))
    yield home, code
    subprocess.run(["pkill", "-KILL", "-U", str(WORKER_UID)], check=False)
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(code, ignore_errors=True)


@pytest.fixture(scope="module")
def instructor(tmp_path_factory):
    """The instructor's class (in folders the worker user cannot read) and a local batch's results of it."""
    root = tmp_path_factory.mktemp("instructor")
    root.chmod(0o700)
    (root / "quick").mkdir()
    (root / "quick" / "assignment.toml").write_text(QUICK_SPEC)
    inputs = root / "inputs"
    inputs.mkdir(mode=0o700)
    for i, engine in enumerate(CORRECT_ENGINES[:4] + BUGGY_ENGINES[:3]):
        (inputs / f"s{i}.py").write_text(engine.read_text())
    (inputs / "broken.py").write_text((BAD / "syntax_error.py").read_text())
    team = inputs / "team"
    team.mkdir()
    (team / "micrograd_mine.py").write_text(CORRECT_ENGINES[1].read_text())
    (team / "test_micrograd.py").write_text((SUITES / "good.py").read_text())
    write_notebook(inputs / "nb.ipynb", notebook(CORRECT_ENGINES[2].read_text(), "print(Value(2.0) * Value(3.0))"))
    local = root / "local"
    run = batch(inputs, local, root, "--jobs", "2")
    assert run.returncode == 0, run.stderr[-3000:]
    return root, inputs, local


def batch(inputs: Path, out: Path, root: Path, *args: str, **kwargs):
    command = [
        sys.executable,
        "-m",
        "grader.cli",
        "batch",
        str(inputs),
        "--out",
        str(out),
        "--assignment",
        str(root / "quick"),
        *args,
    ]
    if kwargs.pop("background", False):
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


def without_durations(value):
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k not in ("duration_s", "duration")}
    if isinstance(value, list):
        return [without_durations(v) for v in value]
    return value


def assert_same_as_local(out: Path, local: Path) -> None:
    """The same gradebook, and the same result.json for every student (durations aside)."""
    assert (out / "grades.csv").read_text() == (local / "grades.csv").read_text()
    students = sorted(p.name for p in (local / "students").iterdir())
    assert sorted(p.name for p in (out / "students").iterdir()) == students
    for student in students:
        mine = json.loads((out / "students" / student / "result.json").read_text())
        theirs = json.loads((local / "students" / student / "result.json").read_text())
        assert without_durations(mine) == without_durations(theirs), student


def saved(out: Path) -> int:
    return len(list(out.glob("students/*/key.txt")))


def wait_for_saved(out: Path, n: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 300
    while saved(out) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert saved(out) >= n, "the batch saved no result in time"


def test_a_cluster_that_shares_no_folder_grades_as_a_local_batch(worker_side, instructor):
    """Do workers that cannot read the instructor's folders give the same grades.csv and results?"""
    home, code = worker_side
    root, inputs, local = instructor
    out = root / "on-cluster"
    out.mkdir(mode=0o700)
    for private in (root, inputs, out):
        assert private.stat().st_mode & 0o077 == 0
    cluster = Cluster(home, code)
    try:
        cluster.add_worker("w1")
        cluster.add_worker("w2")
        cluster.wait_for_workers(2)
        run = batch(inputs, out, root, "--scheduler", cluster.address)
    finally:
        cluster.close()
    assert run.returncode == 0, run.stderr[-3000:]
    assert_same_as_local(out, local)


def kill_a_worker_mid_batch(cluster, inputs: Path, out: Path, root: Path):
    """Grade the class on two workers and kill one once two students are saved: (process, stdout, stderr)."""
    try:
        cluster.add_worker("w1")
        cluster.add_worker("w2")
        cluster.wait_for_workers(2)
        proc = batch(inputs, out, root, "--scheduler", cluster.address, background=True)
        wait_for_saved(out, 2, proc)
        cluster.kill(cluster.workers["w1"])
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        cluster.close()
    return proc, stdout, stderr


def test_a_killed_worker_costs_no_student(worker_side, instructor):
    """When a worker dies mid-batch, is every student still graded exactly once, as locally?"""
    home, code = worker_side
    root, inputs, local = instructor
    out = root / "worker-killed"
    proc, stdout, stderr = kill_a_worker_mid_batch(Cluster(home, code), inputs, out, root)
    assert proc.returncode == 0, stderr[-3000:]
    assert "10 submissions: " in stdout and "(0 unchanged since the last run)" in stdout
    rows = csv_rows(out / "grades.csv")
    assert len(rows) == len({r["student"] for r in rows}) == 10
    assert_same_as_local(out, local)


def test_a_lost_scheduler_stops_the_batch_and_the_rerun_finishes(worker_side, instructor):
    """When the scheduler goes away, is every finished result kept, and does the same command, on a new
    scheduler, grade only the rest?"""
    home, code = worker_side
    root, inputs, local = instructor
    out = root / "scheduler-lost"
    cluster = Cluster(home, code)
    try:
        cluster.add_worker("w1")
        cluster.wait_for_workers(1)
        proc = batch(inputs, out, root, "--scheduler", cluster.address, background=True)
        wait_for_saved(out, 2, proc)
        cluster.kill(cluster.scheduler)
        _, stderr = proc.communicate(timeout=300)
    finally:
        cluster.close()
    done = saved(out)
    assert proc.returncode == 1 and "lost the Dask scheduler" in stderr, stderr[-3000:]
    assert 2 <= done < 10
    assert f"{done} of 10 graded and saved" in stderr
    again = Cluster(home, code)
    try:
        again.add_worker("w1")
        again.wait_for_workers(1)
        rerun = batch(inputs, out, root, "--scheduler", again.address)
    finally:
        again.close()
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "10 submissions: " in rerun.stdout and f"({done} unchanged since the last run)" in rerun.stdout
    assert_same_as_local(out, local)


def test_a_worker_with_another_grader_stops_the_batch_before_any_student(worker_side, instructor):
    """Does a worker running another grader stop the batch early, with its name and the reason, before
    anyone is graded (its grades would not be the instructor's)?"""
    home, code = worker_side
    root, inputs, _ = instructor
    other = Path(tempfile.mkdtemp(prefix="grader-worker-other-"))
    other.chmod(0o755)
    for package in PACKAGES:
        shutil.copytree(code / package, other / package)
    with open(other / "grader" / "checks" / "rules.py", "a") as f:
        f.write("\n# an older grader\n")
    cluster = Cluster(home, code)
    try:
        cluster.add_worker("good")
        cluster.add_worker("outdated", PYTHONPATH=str(other))
        cluster.wait_for_workers(2)
        out = root / "unfit"
        run = batch(inputs, out, root, "--scheduler", cluster.address)
    finally:
        cluster.close()
        shutil.rmtree(other, ignore_errors=True)
    assert run.returncode == 3, run.stderr[-3000:]
    assert "worker outdated (tcp://127.0.0.1:" in run.stderr and "not the instructor's" in run.stderr
    assert saved(out) == 0 and not (out / "grades.csv").exists()


def test_a_worker_that_cannot_isolate_is_named(worker_side, instructor):
    """Is a worker without bubblewrap, which would run student code as its own user, refused by name?"""
    home, code = worker_side
    root, inputs, _ = instructor
    cluster = Cluster(home, code)
    try:
        cluster.add_worker("unsandboxed", GRADER_NO_BWRAP="1")
        cluster.wait_for_workers(1)
        run = batch(inputs, root / "unsandboxed", root, "--scheduler", cluster.address)
    finally:
        cluster.close()
    assert run.returncode == 3, run.stderr[-3000:]
    assert "worker unsandboxed (tcp://127.0.0.1:" in run.stderr and "cannot isolate student code" in run.stderr


def test_a_submission_that_keeps_killing_workers_is_that_students_error(worker_side, instructor):
    """When the scheduler gives up on a task whose workers died, does that student get an error result
    (which a rerun tries again), and every other student their grade?"""
    home, code = worker_side
    root, inputs, local = instructor
    out = root / "given-up"
    cluster = Cluster(home, code, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0")
    proc, stdout, stderr = kill_a_worker_mid_batch(cluster, inputs, out, root)
    assert proc.returncode == 0, stderr[-3000:]
    rows = {r["student"]: r for r in csv_rows(out / "grades.csv")}
    assert len(rows) == 10
    lost = [s for s in rows if not (out / "students" / s / "key.txt").exists()]
    assert len(lost) >= 1, "no task was running on the killed worker"
    for student in rows:
        result = json.loads((out / "students" / student / "result.json").read_text())
        if student in lost:  # no key: the rerun grades them again
            assert result["status"] == "error" and "died before it finished" in result["error"]["message"]
        else:
            theirs = json.loads((local / "students" / student / "result.json").read_text())
            assert without_durations(result) == without_durations(theirs), student
