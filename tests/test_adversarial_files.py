"""Files a hostile student controls (issue 17, items 5, 7 and 9): links in a submission that point at
the reference, the assignment's secret or a classmate's work; links where `grader check` writes its
outputs; and terminal control sequences in what the grader shows. Graded through the real command
line and the exported Gradescope autograder on a fake /autograder tree, with bubblewrap and without."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

import pytest
from conftest import BASE_ENGINE, SANDBOX_PYTHON
from test_adversarial import HOSTILE

SECRET_LINE = "9f3c0e55d1a2b7c8e4f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c"


def unprintable(text: str) -> list[str]:
    """Every control, format or separator character in a text but newline and tab."""
    return sorted({repr(c) for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")})


def strings(data) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in strings(k) + strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in strings(v)]
    return []


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


# -- Gradescope: a fake /autograder tree ---------------------------------------------------------------------


def autograder(run, tmp_path: Path) -> Path:
    """The exported autograder unpacked as Gradescope would, with an empty submission folder."""
    done, _ = run("export", "gradescope", "--out", str(tmp_path / "autograder.zip"), "--assignment", run.assignment)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        zf.extractall(root)
    (root / "submission").mkdir()
    return root


def run_autograder(run, root: Path, tmp_path: Path):
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
    raw = (root / "results" / "results.json").read_text()
    return json.loads(raw), raw, graded


def reference_lines(engine: Path) -> list[str]:
    text = engine.read_text()
    return [line.strip() for line in text.splitlines() if len(line.strip()) >= 30]


@pytest.mark.parametrize("link", ["engine", "tests", "folder"])
def test_gradescope_follows_no_link(run, tmp_path, link):
    """On Gradescope (as root, beside the reference and the secret), is a micrograd_mine.py linked to the
    reference refused rather than graded as the student's (it scored 68), a test_micrograd.py linked to
    the assignment's secret refused rather than run (its text showed in the visible feedback), and a
    folder linked to the reference never entered, each with a message saying what to hand in?"""
    root = autograder(run, tmp_path)
    submission = root / "submission"
    secret = next((root / "source" / "assignments").glob("*/grader-secret"))
    if link == "engine":
        (submission / "micrograd_mine.py").symlink_to("../source/reference/engine.py")
        words = "micrograd_mine.py is a symbolic link; hand in the file itself"
    elif link == "tests":
        (submission / "micrograd_mine.py").write_text(BASE_ENGINE.read_text())
        (submission / "test_micrograd.py").symlink_to(os.path.relpath(secret, submission))
        words = "test_micrograd.py is a symbolic link; hand in the file itself"
    else:
        (submission / "work").symlink_to("../source/reference", target_is_directory=True)
        words = "work is a symbolic link to a folder"
    data, raw, graded = run_autograder(run, root, tmp_path)
    assert data["score"] == 0, data
    assert words in data["output"], data
    assert not [line for line in reference_lines(root / "source" / "reference" / "engine.py") if line in raw]
    assert secret.read_text().strip() not in raw + graded.stdout + graded.stderr


def test_gradescope_shows_control_sequences_without_obeying_them(run, tmp_path):
    """Does results.json (shown on Gradescope's page) carry a student's exception messages and assertion
    lines with their control characters escaped, and the autograder print none of them raw?"""
    root = autograder(run, tmp_path)
    (root / "submission" / "micrograd_mine.py").write_text((HOSTILE / "control_sequences.py").read_text())
    (root / "submission" / "test_micrograd.py").write_text((HOSTILE / "control_sequences_tests.py").read_text())
    data, raw, graded = run_autograder(run, root, tmp_path)
    shown = "\n".join(strings(data))
    assert "\\x1b]52;c;" in shown, shown[:3000]  # the message is there, escaped
    assert not unprintable(shown) and not unprintable(raw + graded.stdout + graded.stderr), unprintable(shown)


# -- grader check: reading ------------------------------------------------------------------------------------


@pytest.mark.parametrize("link", ["engine", "tests"])
def test_check_follows_no_link(run, tmp_path, link):
    """Does `grader check` refuse a micrograd_mine.py linked to the reference engine, and a
    test_micrograd.py linked to a file outside the folder, as an unreadable submission whose message says
    what to hand in, quoting nothing of the file the link points at?"""
    folder = tmp_path / "mallory"
    folder.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text(SECRET_LINE + "\n")
    reference = Path(run.assignment).parent / "reference" / "engine.py"
    if link == "engine":
        (folder / "micrograd_mine.py").symlink_to(reference)
    else:
        (folder / "micrograd_mine.py").write_text(BASE_ENGINE.read_text())
        (folder / "test_micrograd.py").symlink_to(outside)
    done, _ = run(
        "check",
        str(folder / "micrograd_mine.py"),
        "--assignment",
        run.assignment,
        "--json",
        str(tmp_path / "result.json"),
        "--html",
        str(tmp_path / "report.html"),
    )
    assert done.returncode == 1, done.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "error" and result["error"]["kind"] == "unreadable", result["error"]
    name = "micrograd_mine.py" if link == "engine" else "test_micrograd.py"
    assert result["error"]["message"] == f"{name} is a symbolic link; hand in the file itself"
    everything = (
        done.stdout + done.stderr + (tmp_path / "result.json").read_text() + (tmp_path / "report.html").read_text()
    )
    assert SECRET_LINE not in everything
    assert not [line for line in reference_lines(reference) if line in everything]


# -- grader check and friends: writing ------------------------------------------------------------------------


@pytest.mark.parametrize("planted", ["report", "reports folder", "json"])
def test_check_in_a_students_folder_never_writes_through_a_link(tmp_path, planted):
    """A TA runs `grader check` in mallory's folder, where mallory left a link in place of an output (the
    default report, the reports/ folder, or the --json file the TA names): is it refused, naming the
    link, with bob's submission and folder untouched?"""
    bob, mallory = tmp_path / "class" / "bob", tmp_path / "class" / "mallory"
    bob.mkdir(parents=True)
    mallory.mkdir()
    (bob / "micrograd_mine.py").write_text(BASE_ENGINE.read_text())
    (mallory / "micrograd_mine.py").write_text(BASE_ENGINE.read_text())
    args = ["check"]
    if planted == "report":
        (mallory / "reports").mkdir()
        (mallory / "reports" / "micrograd_mine.html").symlink_to("../../bob/micrograd_mine.py")
        link = "reports/micrograd_mine.html"
    elif planted == "reports folder":
        (mallory / "reports").symlink_to("../bob", target_is_directory=True)
        link = "reports"
    else:
        (mallory / "result.json").symlink_to("../bob/micrograd_mine.py")
        args += ["--json", "result.json"]
        link = "result.json"
    before = {p.name: p.read_bytes() for p in bob.iterdir()}
    done = cli(*args, cwd=mallory)
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr[-2000:])
    assert f"{link} is a symbolic link" in done.stderr
    assert {p.name: p.read_bytes() for p in bob.iterdir()} == before


def test_template_and_export_never_write_through_a_link(tmp_path):
    """Do `grader template` (into a folder holding a broken link named like a kit file) and `grader export`
    (onto a link) refuse, creating and changing nothing where the links point?"""
    bob = tmp_path / "bob"
    bob.mkdir()
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "micrograd_mine.py").symlink_to(bob / "planted.py")
    done = cli("template", str(kit), cwd=tmp_path)
    assert done.returncode == 2 and "already holds micrograd_mine.py" in done.stderr, done.stderr
    assert not (bob / "planted.py").exists()
    (bob / "micrograd_mine.py").write_text("bob's work\n")
    (tmp_path / "autograder.zip").symlink_to(bob / "micrograd_mine.py")
    done = cli("export", "gradescope", "--out", str(tmp_path / "autograder.zip"), cwd=tmp_path)
    assert done.returncode == 2 and "autograder.zip is a symbolic link" in done.stderr, done.stderr
    assert (bob / "micrograd_mine.py").read_text() == "bob's work\n"


def test_an_output_replaces_whole_files_and_refuses_links(tmp_path):
    """Does every output go through one writer that replaces a file whole (a batch's private, 0600), leaves
    no temporary file, refuses a link in its place or in place of a folder the grader chose, and never
    changes what the link points at?"""
    from grader import fileio
    from grader.errors import UsageError

    target = tmp_path / "bob.py"
    target.write_text("bob's work\n")
    out = tmp_path / "out"
    fileio.atomic_write(out / "students" / "a" / "result.json", "first")
    fileio.atomic_write(out / "students" / "a" / "result.json", "second")
    written = out / "students" / "a" / "result.json"
    assert written.read_text() == "second" and oct(written.stat().st_mode & 0o777) == oct(0o600)
    assert os.listdir(written.parent) == ["result.json"]
    (out / "link.json").symlink_to(target)
    with pytest.raises(UsageError, match="link.json is a symbolic link"):
        fileio.atomic_write(out / "link.json", "overwritten")
    (tmp_path / "reports").symlink_to(out, target_is_directory=True)
    with pytest.raises(UsageError, match="reports is a symbolic link"):
        fileio.atomic_write(tmp_path / "reports" / "x.html", "planted", base=tmp_path)
    assert target.read_text() == "bob's work\n" and not (out / "x.html").exists()


# -- terminal control sequences -------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["import", "method"])
def test_check_shows_control_sequences_without_obeying_them(run, tmp_path, where):
    """An engine raising exceptions whose messages are OSC 52, OSC 0, clear-screen, C1 CSI, a carriage
    return and a fake score line (at import, or in relu with tests quoting the same): does `grader check`
    print them escaped, never raw, with the fake score line never at the start of a line?"""
    folder = tmp_path / "submission"
    folder.mkdir()
    engine = (HOSTILE / "control_sequences.py").read_text()
    name = "micrograd_mine.py"
    if where == "import":
        engine = engine.replace("RAISE_AT_IMPORT = False", "RAISE_AT_IMPORT = True")
        name = "micrograd\x1b]0;owned\x07_mine\r.py"  # the file's name too
    else:
        (folder / "test_micrograd.py").write_text((HOSTILE / "control_sequences_tests.py").read_text())
    (folder / name).write_text(engine)
    done, _ = run(
        "check",
        str(folder / name),
        "--assignment",
        run.assignment,
        "--json",
        str(tmp_path / "result.json"),
        "--html",
        str(tmp_path / "report.html"),
    )
    assert done.returncode == 1, done.stderr[-3000:]
    assert "\\x1b]52;c;" in done.stdout, done.stdout[-3000:]  # shown, escaped
    assert not unprintable(done.stdout + done.stderr), unprintable(done.stdout + done.stderr)
    scores = [line for line in done.stdout.splitlines() if line.startswith("Score:")]
    assert len(scores) == 1 and not scores[0].startswith("Score: 100"), scores
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == ("error" if where == "import" else "graded")
