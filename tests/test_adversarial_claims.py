"""What graded a student is what the student handed in, and the student never chooses what counts (issue 28 D),
against hostile submissions (tests/adversarial/) graded through the real command line, with bubblewrap and without
it (the `run` fixture of test_adversarial.py):

- a notebook's tests, run on the student's own engine, cannot hand the later runs code the notebook does not hold
  (the cells' transformed texts are derived before any of the student's code runs);
"""

from __future__ import annotations

from test_adversarial import HOSTILE, check, private_install, run, statuses  # noqa: F401


def test_a_notebook_cannot_hand_the_other_runs_code_it_does_not_hold(run, tmp_path):  # noqa: F811
    """Do the tests of a notebook that, run on the student's own engine, rewrite every place the cells' transformed
    texts could be taken from (what the process recorded, what it reports, its reply, and a frame of their own)
    still meet, on every other engine, the cells the notebook holds: their test of what a needed cell defines
    passes on every correct engine as on the student's own, while the other runs still leave the demo cell out?"""
    result, _, _, _ = check(run, tmp_path, HOSTILE / "rewrites_transformed.ipynb", name="rewrites_transformed.ipynb")
    checks = {c["id"]: c for c in result["checks"]}
    assert statuses(result)["student_tests"] == "passed", checks["student_tests"]["feedback"]
    assert checks["wheat"]["status"] == "passed", checks["wheat"]["feedback"]
    assert checks["student_tests"]["artifacts"]["run_once"] == [4], checks["student_tests"]["artifacts"]


DERIVE = r"""
import json, sys
from grader.sandbox.inside import notebook
notebook.warm()
print(json.dumps(notebook.derive(json.loads(sys.argv[1]), [3])))
"""


def test_derived_texts_are_the_cells_as_a_shell_that_ran_no_student_code_reads_them():
    """derive(), called in a unit before any student code: each cell of several lines that IPython turns into several
    lines, as the template's shell does; never a text of one line (IPython prefilters those with the namespace,
    so each run transforms them itself), a one-line cell, or a cell the run leaves out."""
    import json
    import subprocess
    import sys

    cells = [[0, "x = 1\n!echo hi\ny = 2\n"], [1, "%%capture\nx = 3\n"], [2, "z = 1"], [3, "a = 1\n%time b = 2\n"]]
    out = subprocess.run(
        [sys.executable, "-c", DERIVE, json.dumps(cells)], capture_output=True, text=True, timeout=60, check=True
    )
    derived = json.loads(out.stdout.strip().splitlines()[-1])
    assert derived == [[0, "x = 1\nget_ipython().system('echo hi')\ny = 2\n"]], derived
