"""What graded a student is what the student handed in, and the student never chooses what counts (issue 28 D),
against hostile submissions (tests/adversarial/) graded through the real command line, with bubblewrap and without
it (the `run` fixture of test_adversarial.py):

- a notebook's tests, run on the student's own engine, cannot hand the later runs code the notebook does not hold
  (the cells' transformed texts are derived before any of the student's code runs);
- tests cannot fake the numbers that say whether a mutant of the student's engine differs from it (the probes are
  read from a frame sent before the test file is written), so they cannot leave out the mutants they miss;
- nor can they leave those mutants out by how they fare: which engines count never follows the tests' outcomes
  (a test failing on the student's engine, or on its decoy, only cannot catch a mutant of it).
"""

from __future__ import annotations

from conftest import BASE_ENGINE
from test_adversarial import HOSTILE, check, statuses

from grader.checks.suite_runs import Run, Suite, catches, counted_mutants
from grader.grading import grade


def test_a_notebook_cannot_hand_the_other_runs_code_it_does_not_hold(run, tmp_path):
    """Do the tests of a notebook that, run on the student's own engine, rewrite every place the cells' transformed
    texts could be taken from (what the process recorded, what it reports, its reply, and a frame of their own)
    still meet, on every other engine, the cells the notebook holds: their test of what a needed cell defines
    passes on every correct engine as on the student's own, while the other runs still leave the demo cell out?"""
    result, _, _, _ = check(run, tmp_path, HOSTILE / "rewrites_transformed.ipynb", name="rewrites_transformed.ipynb")
    checks = {c["id"]: c for c in result["checks"]}
    assert statuses(result)["student_tests"] == "passed", checks["student_tests"]["feedback"]
    assert checks["wheat"]["status"] == "passed", checks["wheat"]["feedback"]
    assert checks["student_tests"]["artifacts"]["run_once"] == [3], checks["student_tests"]["artifacts"]  # code cell 3


DERIVE = r"""
import json, sys
from grader.sandbox.inside import notebook
notebook.warm()
print(json.dumps(notebook.derive(json.loads(sys.stdin.read()), [3])))
"""


def test_derived_texts_are_the_cells_as_a_shell_that_ran_no_student_code_reads_them():
    """derive(), called in a unit before any student code: each cell of several lines that IPython turns into several
    lines, as the template's shell does; never a text of one line (IPython prefilters those with the namespace,
    so each run transforms them itself), a one-line cell, or a cell the run leaves out; and no more than half a
    frame of them, as JSON (the others transform in each run)."""
    import json
    import subprocess
    import sys

    cells = [[0, "x = 1\n!echo hi\ny = 2\n"], [1, "%%capture\nx = 3\n"], [2, "z = 1"], [3, "a = 1\n%time b = 2\n"]]

    def derive(cells: list) -> list:
        out = subprocess.run(
            [sys.executable, "-c", DERIVE],
            input=json.dumps(cells),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    derived = derive(cells)
    assert derived == [[0, "x = 1\nget_ipython().system('echo hi')\ny = 2\n"]], derived
    wide = [[i, f"x{i} = '{chr(0x4E00 + i) * 30_000}'\ny = 1\n"] for i in range(8)]  # 180 KB each, as JSON
    derived = derive(wide)
    assert [i for i, _ in derived] == [0, 1], [i for i, _ in derived]  # what fits in a frame, with room to spare


def test_tests_cannot_claim_the_mutants_they_miss_are_equivalent(run, tmp_path):
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


def test_tests_cannot_leave_out_the_mutants_of_their_engine_by_failing_on_it(tmp_path, micrograd):
    """Does a suite with a test that fails wherever the engine is the student's own (their engine as written, its
    decoy and its mutants) and passes on every correct engine still have the mutants of the student's engine
    counted, and missed, with the feedback saying why that test cannot catch them? (Graded in-process: how the
    runs' outcomes are judged does not depend on the sandbox's mode.)"""
    (tmp_path / "micrograd_mine.py").write_text(BASE_ENGINE.read_text() + "\n\nValue.MINE = True\n")
    (tmp_path / "test_micrograd.py").write_text((HOSTILE / "fails_on_its_own_engine_tests.py").read_text())
    checks = {c.id: c for c in grade(tmp_path / "micrograd_mine.py", micrograd).checks}
    sabotage = checks["sabotage"]
    missed = set(sabotage.artifacts["of_your_engine"]) - set(sabotage.artifacts["caught"])
    assert missed and missed <= set(sabotage.artifacts["missed"]), sabotage.artifacts
    assert not sabotage.artifacts["left_out"], sabotage.artifacts["left_out"]
    assert "1 test of yours that pass on every correct engine do not pass on your own engine" in sabotage.feedback
    assert checks["student_tests"].artifacts["catching_own_bug"] == ["test_not_on_my_own_engine"]


def _run(outcomes: dict[str, str], probes: tuple = ((1.0,),), ok: bool = True, timeout: bool = False) -> Run:
    tests = {
        name: {"outcome": outcome, "kind": "assertion" if outcome == "failed" else None, "message": "", "duration": 0.0}
        for name, outcome in outcomes.items()
    }
    return Run(ok, tests, [], "", timeout, 0.1, probes)


def test_which_mutants_count_follows_the_engines_numbers_never_the_tests_outcomes():
    """Of the student's engine's mutants: counted whenever the engine is right, its decoy computes its numbers and
    the mutant other ones, however the tests fared on the engine and the decoy; left out when the engine is wrong
    on a probe of the assignment's operations, whatever the tests did. A test failing on the engine or the decoy
    cannot catch such a mutant, and a hang on one counts nothing when the suite did not complete on the decoy."""
    passing, mine, other = {"test_a": "passed", "test_b": "passed"}, ((1.0,),), ((2.0,),)
    differs = _run({"test_a": "failed", "test_b": "failed"}, other)

    def suite(student: Run, decoy: Run, right: bool = True, differing: Run = differs) -> Suite:
        engines = {"add_half": differing, "mul_own_data": _run(passing, mine)}  # the second: an equivalent mutant
        own = frozenset(engines)
        return Suite(student, {"w": _run(passing)}, engines, {}, own=own, decoy=decoy, right=right)

    for found in (
        suite(_run({"test_a": "failed", "test_b": "passed"}), _run(passing)),  # a test fails on the engine
        suite(_run(passing), _run({"test_a": "passed", "test_b": "failed"})),  # a test fails on its decoy
    ):
        counted, dropped = counted_mutants(found)
        assert counted == ["add_half"] and list(dropped) == ["mul_own_data"], dropped
        judged = catches(found, set(), set(), 30.0)
        assert len(judged.own_valid) == 1 and judged.caught == {"add_half": judged.own_valid[0]}, judged
    counted, dropped = counted_mutants(suite(_run(passing), _run(passing), right=False))
    assert counted == [] and all("right numbers" in why for why in dropped.values()), dropped
    assert counted_mutants(suite(_run(passing), _run(passing, other)))[0] == []  # its decoy computes otherwise
    hangs = _run({}, other, ok=False, timeout=True)
    assert catches(suite(_run(passing), _run(passing), differing=hangs), set(), set(), 30.0).caught
    assert not catches(suite(_run(passing), _run({}, ok=False), differing=hangs), set(), set(), 30.0).caught


def test_the_stand_ins_and_magics_a_load_claims_are_read_as_claims():
    """A student's code can append anything to what the sandbox reports as stood in and as magics that did nothing:
    the notes name only package names (at most 20), only the notebook's own cells, and a magic's text on one line,
    capped; a name the assignment offers is never said to be unavailable."""
    from grader.loading import notes_of
    from grader.protocol import Code, loaded

    code = Code("notebook", {}, ((0, "import numpy"), (2, "%matplotlib inline")), ("numpy", "matplotlib", "torch"))
    forged = ["numpy", "=HYPERLINK(1)", "a b", "x" * 200, "torch", *[f"p{i}" for i in range(100)]]
    magics = [["matplotlib", 2, "%matplotlib   inline\n=1"], ["matplotlib", 10**6, "%x"], ["rich", -1, "%y"], "junk"]
    claim = loaded({"ok": True, "result": {"symbols": [], "stand_ins": forged, "magics": magics}})
    notes = notes_of(claim, code)
    named = [n.split(",")[0].removeprefix("Your code imports ") for n in notes[:-1]]
    assert named[:2] == ["numpy", "torch"] and len(notes) <= 20 and all(n.isidentifier() for n in named), named
    assert "torch, which is not installed" in notes[1]  # offered by the assignment: missing, not withheld
    assert notes[-1] == (
        "Your notebook's magics for matplotlib did nothing, so the rest of their cells ran: matplotlib is not "
        "installed where it is graded.\n  code cell 2: %matplotlib inline =1"
    ), notes
