"""Is a grading ever silent for long (issue 21, item 6)? `grader check` prints each check as it ends;
once backward() is known never to end, the checks that call it are skipped with one message instead
of each waiting out its own time limit; a batch without a terminal prints one line per student and
ends naming the slowest and those that could not be graded."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from conftest import BAD, BASE_ENGINE, CORRECT_ENGINES, HERE

MICROGRAD = (HERE.parent / "assignments" / "micrograd" / "assignment.toml").read_text()


def spec_with(*checks: str) -> str:
    """micrograd with only these checks, a small search and a 1 s limit per request (hangs end quickly)."""
    head = (
        MICROGRAD.split("[checks]")[0]
        .replace("max_examples = 100", "max_examples = 10")
        .replace("request_s = 5.0 ", "request_s = 1.0 ")
        .replace("check_s = 30.0 ", "check_s = 10.0 ")
    )
    return (
        head
        + "[checks]\n"
        + "".join(f"{c} = {{ points = 5 }}\n" for c in checks)
        + "\n[training]"
        + MICROGRAD.split("\n[training]")[1]
    )


def hanging(where: str) -> str:
    """The zoo's correct engine with an endless loop at the start of backward(), or of tanh's rule."""
    source = BASE_ENGINE.read_text()
    if where == "backward":
        return source.replace(
            "    def backward(self):\n", "    def backward(self):\n        while True:\n            pass\n", 1
        )
    marked = re.sub(
        r"(def tanh\(self\):.*?def _backward\(\):\n)",
        r"\1            while True:\n                pass\n",
        source,
        count=1,
        flags=re.S,
    )
    assert marked != source
    return marked


def check(tmp_path, source: str, *checks: str) -> tuple[subprocess.CompletedProcess, dict]:
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "assignment.toml").write_text(spec_with(*checks))
    (tmp_path / "micrograd_mine.py").write_text(source)
    run = subprocess.run(
        [sys.executable, "-m", "grader.cli", "check", "--assignment", str(tmp_path / "spec"), "--json", "r.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return run, {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["checks"]}


def test_each_check_is_printed_as_it_ends_and_a_hanging_backward_is_waited_for_once(tmp_path):
    """An engine whose backward() never returns: does stderr show each check as it ends, is the first
    check calling backward() an error showing the smallest case, and is every later one skipped naming it
    (rather than each waiting for its own timeout), while checks that never call backward() still pass?"""
    run, checks = check(tmp_path, hanging("backward"), "forward", "add", "accumulate", "numerical_grad", "training")
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    for i, (check_id, mark) in enumerate(
        [
            ("forward", "PASS"),
            ("add", "ERROR"),
            ("accumulate", "SKIP"),
            ("numerical_grad", "PASS"),
            ("training", "SKIP"),
        ],
        1,
    ):
        assert any(line.startswith(f"[{i}/5] {check_id}  {mark} ") for line in lines), run.stderr
    assert checks["add"]["status"] == "error" and "a.backward()" in checks["add"]["feedback"]
    assert "did not finish within 1 s on either of these (2 s in all)" in checks["add"]["feedback"]
    assert checks["add"]["feedback"].count(".backward()") == 2  # each case waited for is shown
    assert 2.0 <= checks["add"]["duration_s"] < 4.0, checks["add"]  # the time said is the time waited
    for check_id in ("accumulate", "training"):
        assert checks[check_id]["status"] == "skipped"
        assert checks[check_id]["feedback"] == "Not run: backward() does not finish (see add)."
    assert checks["forward"]["status"] == checks["numerical_grad"]["status"] == "passed"
    assert "ERROR add" in run.stdout and "[1/5]" not in run.stdout  # the table on stdout is as it was


def test_a_hang_in_one_rule_alone_is_that_rules_error(tmp_path):
    """When only tanh's backward rule loops, is add still judged (and passed), and tanh the one in error?"""
    _, checks = check(tmp_path, hanging("tanh"), "add", "tanh")
    assert checks["add"]["status"] == "passed", checks["add"]
    assert checks["tanh"]["status"] == "error" and "see add" not in checks["tanh"]["feedback"]


def test_a_batch_without_a_terminal_prints_a_line_per_student_and_names_the_slowest_and_the_errors(tmp_path):
    """Does a batch whose stderr is not a terminal print `[k/3] id score/max (s)` per student, and end
    naming the slowest students and those that could not be graded, with why?"""
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "assignment.toml").write_text(spec_with("forward", "add"))
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "alice.py").write_text(CORRECT_ENGINES[0].read_text())
    (inputs / "bob.py").write_text(CORRECT_ENGINES[1].read_text())
    (inputs / "broken.py").write_text((BAD / "syntax_error.py").read_text())
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "batch",
            str(inputs),
            "--out",
            str(tmp_path / "out"),
            "--jobs",
            "2",
            "--assignment",
            str(tmp_path / "spec"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("[")]
    assert sorted(line[:5] for line in lines) == ["[1/3]", "[2/3]", "[3/3]"], run.stderr
    assert any(re.fullmatch(r"\[\d/3\] alice 10/10 \(\d+\.\d s\)", line) for line in lines), lines
    assert any(
        re.fullmatch(r"\[\d/3\] broken could not be graded: syntax_error \(\d+\.\d s\)", line) for line in lines
    ), lines
    assert re.search(r"^slowest: \w+ \(\d+\.\d s\), \w+ \(\d+\.\d s\), \w+ \(\d+\.\d s\)$", run.stdout, re.M)
    assert "could not be graded: broken (syntax_error)" in run.stdout
    said = [line for line in run.stderr.splitlines() if line.startswith(("grader: warning", "grader: note"))]
    assert len(said) == len(set(said)), f"each warning is said once for the whole batch, not once per process: {said}"
