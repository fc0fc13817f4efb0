"""Can a student read what the instructor gave a batch beside the class: the roster (names, SIS ids,
emails), the groups, the lesson's code, an earlier term's results? Without bubblewrap (uid mode: as root,
`GRADER_NO_BWRAP=1`, as in Docker and so on Gradescope), each sandbox is a uid of its own that can read
whatever the machine lets every user read, so every path the batch is handed must be closed to it, or the
batch refuses to start (exit 3), naming it; with bubblewrap a sandbox sees none of them. (Issue 41, item 4:
with the roster in a course folder others could read, beside submissions they could not, a student's code
read a classmate's SIS id and email, and the isolation check passed.)"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import BASE_ENGINE, HERE

HOSTILE = HERE / "adversarial"
SANDBOX_ROOT = "/run/micrograd-grader"
GIVEN = ("roster", "groups", "base", "previous", "entered")
ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Micrograd engine (4401)\n"
    "    Points Possible,,,,,10.00\n"
    '"Snoop, Sam",11111,S0011111,ssnoop,Section 01,\n'
    '"Classmate, Carol",22222,S0022222,carol@example.edu,Section 01,\n'
)


def _course(given: str) -> tuple[Path, dict[str, Path]]:
    """A course folder others can read (as a careless instructor's would be), holding the class's
    submissions in a folder only root can read, and the given files: only `given` open to others."""
    # Not under /tmp nor any folder every user may write in: where root can make namespaces, each sandbox has those
    # covered. The run fixture's parent folder of its sandboxes is a root-owned one others may enter, as a course's is.
    course = Path(tempfile.mkdtemp(prefix="course-", dir=SANDBOX_ROOT))
    course.chmod(0o755)
    submissions = course / "submissions"
    submissions.mkdir(mode=0o700)
    paths = {
        "roster": course / "roster.csv",
        "groups": course / "groups.csv",
        "base": course / "lesson.py",
        "previous": course / "last-term",
    }
    paths["roster"].write_text(ROSTER)
    paths["groups"].write_text("group_name,canvas_user_id\nTeam Tanh,11111\nTeam Tanh,22222\n")
    paths["base"].write_text(BASE_ENGINE.read_text())
    paths["previous"].mkdir()
    (paths["previous"] / "work.json").write_text(json.dumps({"students": []}))
    for name, path in paths.items():
        path.chmod((0o755 if path.is_dir() else 0o644) if name == given else (0o700 if path.is_dir() else 0o600))
    if given == "entered":  # an earlier term's folder others may enter but not list: its work.json is theirs to open
        paths["previous"].chmod(0o711)
    (paths["previous"] / "work.json").chmod(0o644)
    targets = [str(p) for p in paths.values()] + [str(paths["previous"] / "work.json")]
    engine = (HOSTILE / "roster_reader.py").read_text().replace("__TARGETS__", repr(targets))
    (submissions / "snoop_11111_50001_micrograd_mine.py").write_text(engine)
    return course, paths


@pytest.mark.parametrize("given", GIVEN)
def test_a_path_given_to_a_batch_is_closed_to_its_sandboxes(run, given):
    """The roster, the groups, the lesson's code or an earlier term's folder (listed, or only entered), each in
    turn readable by every user, in a course folder beside submissions only root can read: without bubblewrap,
    does the batch refuse to start (exit 3) naming that path, before anything is graded; with bubblewrap (each
    sandbox sees none of them), does the snoop's code read none of them?"""
    if run.mode == "bwrap" and given != "roster":
        pytest.skip("with bubblewrap no path of the host is in a sandbox: one of them shows it")
    course, paths = _course(given)
    try:
        out = course / "graded"
        args = ["batch", str(course / "submissions"), "--out", str(out), "--assignment", run.assignment]
        for name, path in paths.items():
            args += [f"--{name}", str(path)]
        done, _ = run(*args)
        results = [p.read_text() for p in out.rglob("result.json")] if out.exists() else []
        assert not [r for r in results if "LEAKED" in r], results
        if run.mode == "bwrap":
            assert done.returncode == 0 and len(results) == 1, done.stderr[-3000:]
            return
        assert done.returncode == 3, done.stderr[-3000:]
        named = paths["previous" if given == "entered" else given]
        assert "student code could read files it must not" in done.stderr and str(named) in done.stderr
        assert "Traceback" not in done.stderr and results == [], done.stderr[-3000:]
    finally:
        shutil.rmtree(course, ignore_errors=True)


def test_every_path_closed_the_batch_grades(run):
    """The same course with every given path closed to others (the course folder itself may be open): does the
    batch grade, and the snoop read nothing?"""
    if run.mode == "bwrap":
        pytest.skip("shown above with bubblewrap")
    course, paths = _course("")
    try:
        out = course / "graded"
        args = ["batch", str(course / "submissions"), "--out", str(out), "--assignment", run.assignment]
        for name, path in paths.items():
            args += [f"--{name}", str(path)]
        done, _ = run(*args)
        assert done.returncode == 0, done.stderr[-3000:]
        results = [p.read_text() for p in out.rglob("result.json")]
        assert results and not [r for r in results if "LEAKED" in r], results
    finally:
        shutil.rmtree(course, ignore_errors=True)


def test_an_export_given_files_others_can_read_refuses_without_bubblewrap(run):
    """grader export canvas with the roster, then a --map, readable by every user (the graded folder closed):
    without bubblewrap, where a batch's sandboxes on this machine are uids that could read them, is it refused
    (exit 3) naming the file, and does it export once both are closed?"""
    if run.mode == "bwrap":
        pytest.skip("with bubblewrap no sandbox sees a path of the host")
    course, paths = _course("")
    try:
        graded = course / "graded"
        graded.mkdir(mode=0o700)
        header = "student,score,max_score,status,late,lms,lms_user_id,submission_id,raw_score,late_penalty,reason\n"
        (graded / "grades.csv").write_text(header + "snoop,50.0,100.0,graded,,canvas,11111,50001,50.0,0.0,\n")
        (graded / "summary.json").write_text(json.dumps({"students": []}))
        mapping = course / "map.csv"
        mapping.write_text("student,roster id\nsnoop,11111\n")
        mapping.chmod(0o600)
        args = ["export", "canvas", "--from", str(graded), "--roster", str(paths["roster"]), "--map", str(mapping)]
        args += ["--column", "Micrograd engine (4401)", "--out", str(graded / "canvas.csv")]
        for opened in (paths["roster"], mapping):
            opened.chmod(0o644)
            done, _ = run(*args)
            assert done.returncode == 3 and str(opened) in done.stderr, done.stderr[-3000:]
            assert "Traceback" not in done.stderr and not (graded / "canvas.csv").exists()
            opened.chmod(0o600)
        done, _ = run(*args)
        assert done.returncode == 0 and "S0022222" in (graded / "canvas.csv").read_text(), done.stderr[-3000:]
    finally:
        shutil.rmtree(course, ignore_errors=True)
