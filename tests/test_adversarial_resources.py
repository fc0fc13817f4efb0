"""Can one sandbox take more than its share of the machine, or run unconfined? Each hostile
submission in tests/adversarial/ tries one way, graded through the real command line with
bubblewrap and without it (the `run` fixture of test_adversarial.py): memory outside every
process's limit, a CPU hog beside a classmate, files in folders every user may write in, and
a machine where the seccomp filter cannot be applied."""

from __future__ import annotations

import csv
import json
import os
import platform
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import BASE_ENGINE, SANDBOX_PYTHON
from test_adversarial import HOSTILE, SUITES, check, statuses, tight


def _limits():
    from grader.sandbox.supervisor import SandboxLimits

    return SandboxLimits()


# -- item 12: memory across processes --------------------------------------------------------------------


def test_memory_outside_every_process_is_bounded_per_sandbox(run, tmp_path):
    """Do many processes holding files in memory (memfd, or deleted files in /dev/shm and /tmp, which
    no process's address-space limit counts) stay within the sandbox's bounds, and does the grading
    end as the student's error? (The hostile engine says how much it held, and in how many processes;
    without bubblewrap the disk watcher may stop it first, which says so.)"""
    result, _, done, _ = check(run, tmp_path, HOSTILE / "memfd_hog.py")
    assert result["status"] == "error", result["status"]
    message = result["error"]["message"]
    held = re.search(r"HELD (\d+) MB IN (\d+) PROCESSES", message)
    limits = _limits()
    if held is None:  # the watcher stopped it: what it held was counted against its disk space
        assert run.mode == "no-bwrap" and "disk space" in message, message
    else:
        megabytes, processes = int(held.group(1)), int(held.group(2))
        assert processes <= limits.processes, message
        assert megabytes <= limits.disk_mb + 8, message  # the capped /tmp and /dev/shm, and nothing else
    assert "Internal grader error" not in json.dumps(result)


def test_the_grader_says_what_bounds_a_sandbox(run, tmp_path):
    """Does a batch say, once, whether each sandbox has a cgroup of its own, or what bounds it instead?"""
    inputs = tmp_path / "class"
    inputs.mkdir()
    (inputs / "alice.py").write_text(BASE_ENGINE.read_text())
    done, _ = run("batch", str(inputs), "--out", str(tmp_path / "out"), "--jobs", "1", "--assignment", run.assignment)
    assert done.returncode == 0, done.stderr[-3000:]
    said = [line for line in done.stderr.splitlines() if "cgroup" in line]
    assert said and ("cgroup of its own" in said[0] or f"{_limits().processes} processes" in said[0]), done.stderr
    assert len(set(said)) == 1


# -- item 12b: a classmate's CPU hog ---------------------------------------------------------------------


THOROUGH = (SUITES / "good.py").read_text() + textwrap.dedent('''


    def test_many_random_points():
        """backward() agrees with numerical_grad at 2,000 random points (a second or so of CPU)."""
        rng = random.Random(0)
        for _ in range(2000):
            xs = [rng.uniform(-2, 2) for _ in range(3)]
            check_grad(lambda a, b, c: ((a * b + c).tanh() * a + b ** 2).relu() + c * a, *xs)
    ''')
"""A diligent student's tests, one of which takes CPU: each run of them needs the machine for a while."""


def test_a_classmates_cpu_hog_does_not_change_your_grade(run, tmp_path):
    """Graded beside aaron, whose engine starts 60 busy processes each in a session of its own, does
    alice, whose tests take a second of CPU a run, get exactly the grade she gets alone?"""

    def batch(name: str, students: dict[str, str]) -> dict:
        inputs, out = tmp_path / name, tmp_path / f"{name}-out"
        for student, engine in students.items():
            (inputs / student).mkdir(parents=True)
            (inputs / student / "micrograd_mine.py").write_text(engine)
            (inputs / student / "test_micrograd.py").write_text(THOROUGH)
        done, _ = grader("batch", str(inputs), "--out", str(out), "--jobs", "2", "--assignment", grader.assignment)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads((out / "students" / "alice" / "result.json").read_text())

    # Three sabotages, not twelve: each is one more run of both students' tests, and the point is the hog beside
    # alice, not how many engines her tests run on.
    grader, _ = tight(run, tmp_path, sabotages=("add_half", "mul_own_data", "assign_not_accumulate"))

    alone = batch("alone", {"alice": BASE_ENGINE.read_text()})
    beside = batch(
        "beside",
        {"alice": BASE_ENGINE.read_text(), "aaron": (HOSTILE / "cpu_hog.py").read_text() + BASE_ENGINE.read_text()},
    )
    assert alone["status"] == "graded"
    assert (beside["score"], statuses(beside)) == (alone["score"], statuses(alone)), [
        (c["id"], c["feedback"][:200]) for c in beside["checks"] if c["status"] != "passed"
    ]


@pytest.mark.parametrize("run", ["bwrap"], indirect=True)  # the batch's own bookkeeping, the same in either mode
def test_a_student_who_ran_out_of_time_beside_others_is_graded_again_alone(run, tmp_path):
    """In a batch of two at once, is a student whose grading ran out of time graded again alone, after
    the others, and is only that result kept, as final (a rerun skips it)?"""
    inputs, out = tmp_path / "class", tmp_path / "out"
    inputs.mkdir()
    (inputs / "alice.py").write_text(BASE_ENGINE.read_text())
    (inputs / "slowpoke.py").write_text("import time\ntime.sleep(4)\n" + BASE_ENGINE.read_text())
    args = ("batch", str(inputs), "--out", str(out), "--jobs", "2", "--assignment", run.assignment)
    done, _ = run(*args)
    assert done.returncode == 0, done.stderr[-3000:]
    notes = [line for line in done.stderr.splitlines() if "graded again alone" in line]
    assert notes == ["note: slowpoke ran out of time while others were graded; graded again alone"], done.stderr
    slow = json.loads((out / "students" / "slowpoke" / "result.json").read_text())
    assert slow["status"] == "error" and slow["error"]["kind"] == "timeout", slow["error"]
    assert (out / "students" / "slowpoke" / "key.txt").exists()
    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert sorted(r["student"] for r in rows) == ["alice", "slowpoke"]  # one row each, never two
    again, _ = run(*args)
    assert "2 submissions: " in again.stdout and "(2 unchanged" in again.stdout, again.stdout + again.stderr[-2000:]


# -- item 14: folders every user may write in ------------------------------------------------------------


def test_files_in_every_world_writable_folder_count_and_are_removed(run, tmp_path):
    """Without bubblewrap, and without namespaces, does what a sandbox writes into /run/lock and the like count
    against its disk space, and is none of it left after grading? (With bubblewrap those folders are not in its
    view; with a mount namespace of its own, each is an empty read-only one.)"""

    def hogs() -> set[Path]:  # wherever the hostile engine writes
        return {
            p
            for folder in ("/run/lock", "/var/lock", "/var/tmp", "/var/crash", "/var/mail")
            for p in Path(folder).glob("lockhog-*.bin")
        }

    before = hogs()
    result, _, done, _ = check(run, tmp_path, (HOSTILE / "lock_hog.py").read_text() + BASE_ENGINE.read_text())
    if run.own_tmp:
        assert result["status"] == "graded", result["error"]
    else:
        assert result["status"] == "error" and "disk space" in result["error"]["message"], result["error"]
    assert hogs() - before == set()


def test_the_world_writable_folders_are_found_not_listed():
    """Does the walk find /run/lock (where this machine has it) beside /tmp, /var/tmp and /dev/shm, and
    nothing other users cannot write in?"""
    from grader.sandbox import uids

    found = uids.shared_writable()
    assert {"/tmp", "/var/tmp"} <= set(found)
    if os.path.isdir("/run/lock") and os.stat("/run/lock").st_mode & 0o002:
        assert "/run/lock" in found or os.path.realpath("/run/lock") in found
    assert all(os.stat(f).st_mode & 0o002 for f in found)


# -- item 6: a confinement step that cannot be applied ---------------------------------------------------

# The seccomp(2) system call and prctl(PR_SET_SECCOMP), per machine: a kernel built without
# CONFIG_SECCOMP_FILTER answers both with EINVAL. This filter makes the machine such a kernel.
_SECCOMP_NR = {"x86_64": (0xC000003E, 317, 157), "aarch64": (0xC00000B7, 277, 167)}


def _no_seccomp_python(tmp_path: Path) -> Path:
    """A Python that runs as if the kernel had no seccomp filters: an executable script that refuses
    them for itself and everything it starts, then becomes the real interpreter."""
    if platform.machine() not in _SECCOMP_NR or os.geteuid() != 0:
        pytest.skip("needs root on x86_64 or aarch64")
    arch, seccomp_nr, prctl_nr = _SECCOMP_NR[platform.machine()]
    wrapper = tmp_path / "no-seccomp-python"
    wrapper.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent(f"""
        import ctypes, os, struct, sys
        def stmt(code, k): return struct.pack("HBBI", code, 0, 0, k)
        def jump(k, jt, jf): return struct.pack("HBBI", 0x15, jt, jf, k)
        EINVAL = 0x00050000 | 22
        program = [stmt(0x20, 4), jump({arch}, 1, 0), stmt(0x06, 0x7FFF0000), stmt(0x20, 0),
                   jump({seccomp_nr}, 3, 0), jump({prctl_nr}, 0, 3), stmt(0x20, 16), jump(22, 0, 1),
                   stmt(0x06, EINVAL), stmt(0x06, 0x7FFF0000)]
        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
        prog = Prog(len(program), b"".join(program))
        assert ctypes.CDLL(None).prctl(22, 2, ctypes.byref(prog), 0, 0) == 0
        os.execv({sys.executable!r}, [{sys.executable!r}, *sys.argv[1:]])
        """)
    )
    wrapper.chmod(0o755)
    return wrapper


def test_a_sandbox_that_cannot_apply_its_seccomp_filter(run, tmp_path, monkeypatch):
    """On a machine where seccomp filters cannot be applied, does a batch without bubblewrap (each
    sandbox only a uid of its own) refuse to run student code, with exit 3 naming the step; and does
    a check with bubblewrap grade, saying once what is missing?"""
    wrapper = _no_seccomp_python(tmp_path)
    probe = subprocess.run(
        [str(wrapper), "-c", "import ctypes; print(ctypes.CDLL(None).prctl(22, 2, 0, 0, 0))"],
        capture_output=True,
        text=True,
    )
    assert probe.stdout.strip() == "-1", probe.stderr
    monkeypatch.setattr(sys, "executable", str(wrapper))  # the run fixture starts the grader with it
    engine = (
        (HOSTILE / "escape.py")
        .read_text()
        .replace("__PORT__", "9")
        .replace("__TARGETS__", "[]")
        .replace("__SECRETS__", "[]")
        .replace("__PUBLIC_OK__", "True")
    )
    if run.mode == "no-bwrap":
        inputs = tmp_path / "class"
        inputs.mkdir()
        (inputs / "mallory.py").write_text(engine)
        done, _ = run(
            "batch", str(inputs), "--out", str(tmp_path / "out"), "--jobs", "1", "--assignment", run.assignment
        )
        assert done.returncode == 3, done.stderr[-3000:]
        assert "seccomp" in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
        assert not list((tmp_path / "out").rglob("result.json"))
    else:
        result, _, done, _ = check(run, tmp_path, engine)
        assert result["status"] == "graded", result["error"]
        warned = [line for line in done.stderr.splitlines() if "could not apply seccomp" in line]
        assert len(warned) == 1, done.stderr[-3000:]


def test_a_sandbox_started_without_its_filter_fails_closed_in_uid_mode(tmp_path):
    """Should a sandbox be started as a uid of its own, without bubblewrap, where its seccomp filter
    cannot be applied (past every check before it), does it refuse with the isolation error (exit 3)
    that names the step, rather than run student code?"""
    wrapper = _no_seccomp_python(tmp_path)
    if not SANDBOX_PYTHON.exists():
        pytest.skip(f"needs a Python every user can run ({SANDBOX_PYTHON})")
    code = textwrap.dedent("""
        from grader.sandbox import isolation
        from grader.sandbox.supervisor import Sandbox
        iso = isolation.detect()
        assert iso.mode == "uid", iso
        try:
            Sandbox({"micrograd_mine.py": b"class Value: pass"}, iso=iso).close()
            print("STARTED")
        except isolation.IsolationError as exc:
            print("REFUSED", exc.exit_code, exc)
        """)
    env = {**os.environ, "GRADER_NO_BWRAP": "1", "GRADER_SANDBOX_PYTHON": str(SANDBOX_PYTHON)}
    done = subprocess.run(
        [str(wrapper), "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=Path(__file__).parent.parent,
    )
    assert done.stdout.startswith("REFUSED 3") and "seccomp" in done.stdout, done.stdout + done.stderr[-2000:]


def test_the_filter_refuses_memfd_and_keeps_a_session(tmp_path):
    """Inside the filter, is memfd_create refused, and does setsid leave the process in its session?"""
    code = textwrap.dedent("""
        import os, sys
        sys.path.insert(0, "grader/sandbox/inside")
        import confine
        assert confine.lock_down() == []
        before = os.getsid(0)
        os.setsid()
        try:
            os.memfd_create("x")
            memfd = "allowed"
        except OSError:
            memfd = "refused"
        print(memfd, os.getsid(0) == before)
        """)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=Path(__file__).parent.parent
    )
    assert done.stdout.split() == ["refused", "True"], done.stdout + done.stderr
