"""What graded a student is what the student handed in, and the student never chooses what counts (issue 28 D),
against hostile submissions (tests/adversarial/) graded through the real command line, with bubblewrap and without
it (the `run` fixture of test_adversarial.py):

- a notebook's tests, run on the student's own engine, cannot hand the later runs code the notebook does not hold
  (the cells' transformed texts are derived before any of the student's code runs);
- tests cannot fake the numbers that say whether a mutant of the student's engine differs from it (the probes are
  read from a frame sent before the test file is written), so they cannot leave out the mutants they miss.
"""

from __future__ import annotations

from conftest import BASE_ENGINE
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


def test_tests_cannot_claim_the_mutants_they_miss_are_equivalent(run, tmp_path):  # noqa: F811
    """Do forward-only tests that, on every engine where they catch nothing, make the run claim the student's own
    engine's numbers on the equivalence probes (in the reply, through the channel's send, and in a frame of their
    own) still have every mutant of the student's engine they miss counted, and missed: none is left out as
    equivalent, so they earn the share of all the sabotages they catch, not of those they chose?"""
    result, _, _, _ = check(run, tmp_path, BASE_ENGINE, HOSTILE / "equivalence_claims_tests.py")
    sabotage = next(c for c in result["checks"] if c["id"] == "sabotage")
    artifacts = sabotage["artifacts"]
    missed_own = set(artifacts["of_your_engine"]) - set(artifacts["caught"])
    assert missed_own and missed_own <= set(artifacts["missed"]), artifacts
    assert not [op for op, why in artifacts["left_out"].items() if "equivalent" in why], artifacts["left_out"]
    assert sabotage["score"] <= sabotage["max_score"] * 2 / len(artifacts["bugs"]), sabotage["feedback"]
