"""Does `grader check` read the submission once, so that its report shows exactly the code it graded, even when
the file changes on disk while it is being graded (an editor saving, a `--watch` in another terminal)?"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

from conftest import ZOO, quick_assignment

CHECKS = ("forward", "add", "tanh", "accumulate", "gradcheck")
TANH_BUG = "            self.grad += (1 - self.data ** 2) * out.grad\n"
GRADED = "            # the tanh rule as graded\n"
REWRITTEN = "            # the tanh rule as rewritten during the grading\n"


def test_the_report_shows_the_code_graded_not_the_file_as_it_is_after(tmp_path):
    """The file is rewritten (tanh fixed, another comment in its rule) as soon as the first check is done: the
    JSON's sha256 is the bytes graded, tanh fails as those bytes say, and the report's card quotes the graded
    tanh, with its comment, never the rewritten one (the report was read from disk after grading before)."""
    task = quick_assignment(tmp_path / "quick", CHECKS)
    work = tmp_path / "work"
    work.mkdir()
    engine = work / "micrograd_mine.py"
    original = (ZOO / "buggy" / "tanh_grad_from_input.py").read_text()
    assert TANH_BUG in original
    graded = original.replace(TANH_BUG, GRADED + TANH_BUG)
    engine.write_text(graded)
    rewritten = original.replace(TANH_BUG, REWRITTEN + "            self.grad += (1 - out.data ** 2) * out.grad\n")
    command = [sys.executable, "-m", "grader.cli", "check", engine.name, "--assignment", str(task)]
    with subprocess.Popen(
        [*command, "--json", "result.json"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as run:
        assert run.stderr is not None
        for line in run.stderr:  # each check on its own line as it ends (stderr is not a terminal)
            if line.startswith("[1/"):
                engine.write_text(rewritten)
                break
        _, rest = run.communicate(timeout=300)
    assert engine.read_text() == rewritten, rest  # rewritten while the grading went on
    result = json.loads((work / "result.json").read_text())
    assert result["sha256"] == hashlib.sha256(graded.encode()).hexdigest()
    assert {c["id"]: c["status"] for c in result["checks"]}["tanh"] == "failed"
    report = (work / "reports" / "micrograd_mine.html").read_text()
    assert "the tanh rule as graded" in report, "the report quotes no tanh rule"
    assert "rewritten during the grading" not in report
