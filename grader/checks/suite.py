"""The student's own tests, graded as the best test-grading systems do (wheats and chaffs).

Their suite runs with real pytest in the suite lane (grader/lanes/): on their own engine
(`student_tests`), on correct engines written differently (`wheat`: a test that rejects
one is invalid), and on mutants of those engines, one per sabotage operator (`sabotage`:
good tests catch each one). Every run is a fresh process that sees only its engine,
appended after the student's code under the student's module name, in an order derived
from the submission's hash; nothing in it says which engine it is.

Tests that pass everywhere prove nothing by passing: `student_tests` and `wheat` pay at most
the share of sabotaged engines the suite catches (suite_runs.Catches), and nothing when that
cannot be judged.

What a run answers is a claim about the student's tests on that engine. Only names of
the student's own tests are kept (those of the run on their own engine, defined in their
file); of runs on other engines the feedback says only which tests failed and how, in the
grader's words (suite_text.py), never what a test wrote.
"""

from __future__ import annotations

from typing import Any

from grader import notebooks, slicing
from grader.checks.context import Context
from grader.checks.registry import check
from grader.checks.suite_runs import (
    Catches,
    Run,
    Suite,
    catches,
    engine_right,
    equivalence_probes,
    read_run,
    spares_wanted,
)
from grader.checks.suite_text import (
    collection_message,
    elsewhere,
    given_tests,
    interface_words,
    library_advice,
    listed,
    outside_interface,
    own_quote,
    own_test_names,
    shown_name,
)
from grader.files import MODULE_FILE, TESTS_FILE
from grader.lanes import RunReply, SuiteJob
from grader.protocol import Code
from grader.result import Outcome
from grader.sabotage import WHEATS, EngineRun, all_operators, plan

SUITE_CHECKS = ("student_tests", "wheat", "sabotage")
"""The checks about the student's tests rather than their engine."""
SLOWDOWN = 10  # a run on another engine may take this many times the run on the student's engine...
MIN_RUN_S = 5.0  # ...but never less than this
FIXTURES = ("Value", "Neuron", "Layer", "MLP", "numerical_grad")
"""Names of the lesson's symbols a test may take as parameters (nbgrader style: def test_x(Value))."""


def suite_job(assignment, code: Code, tests: str) -> SuiteJob:
    """What the suite lane runs: the student's tests on their own engine, then on every engine of this grading's
    plan, which suite_plan() writes while the first run goes (SuiteLane.planned)."""
    limit = assignment.limits.tests_s

    def per_run(own_run: RunReply) -> float:
        return min(limit, max(MIN_RUN_S, SLOWDOWN * own_run.duration))

    needed = (
        slicing.needed(code.cells, tests, FIXTURES + tuple(assignment.required_symbols))
        if code.kind == "notebook"
        else None
    )
    ran = (tests, None, limit, per_run, FIXTURES, tuple(equivalence_probes()), (), needed, assignment.limits.cell_s)
    return SuiteJob(code, *ran, spares_wanted(assignment.ops, assignment.tolerances))


def suite_plan(
    assignment, seed: str, pool: str, own: str | None = None, shape: str | None = None
) -> tuple[tuple[EngineRun, ...], tuple[str, ...]]:
    """This grading's engines after the student's own, and notes on what the plan left out (own: the student's
    engine as a block, for mutants of it; shape: what decides which engine each mutant is made from, the same
    wherever the files are graded: sabotage.plan)."""
    engines = plan(assignment.sabotages, seed, pool, own, shape)
    return tuple(engines), engines.notes


def suite(ctx: Context) -> Suite | Outcome:
    """The suite's runs, once per submission (the three checks share them)."""
    if ctx.suite_runs is None:
        ctx.suite_runs = _collect(ctx)
    return ctx.suite_runs


def _collect(ctx: Context) -> Suite | Outcome:
    if not ctx.has_tests or ctx.suite_lane is None:
        where = (
            "in a cell of your notebook, as functions named test_*"
            if ctx.student.lane.code.kind == "notebook"
            else f"in {TESTS_FILE} beside {MODULE_FILE}"
        )
        return Outcome("failed", f"No tests found: write your tests {where} (or pass --tests FILE).")
    outcome = ctx.suite_lane.result()
    if outcome.error or outcome.own is None:
        return Outcome("error", f"Running your tests: {outcome.error or 'the run did not start'}.")
    defined = own_test_names(ctx.tests_source)
    student = read_run(outcome.own, None)
    student = Run(
        student.ok,
        {n: t for n, t in student.tests.items() if n.split("[", 1)[0] in defined},
        student.collection_errors,
        student.error,
        student.timeout,
        student.duration,
    )
    if student.timeout or not student.ok:
        return Suite(student, {}, {}, {}, stopped=f"your tests did not complete on your own engine ({student.error})")
    if student.collection_errors:
        return Suite(student, {}, {}, {}, stopped="your test file does not load on your own engine (see student_tests)")
    probes = read_run(outcome.own, None).probes
    student = Run(
        student.ok, student.tests, student.collection_errors, student.error, student.timeout, student.duration, probes
    )
    tolerances = ctx.assignment.tolerances
    right = engine_right(probes, ctx.assignment.ops, tolerances.rtol, tolerances.atol)
    allowed = set(student.tests)
    wheats, sabotages, spares, blocks, own, decoy = {}, {}, {}, {}, set(), None
    for reply in outcome.runs:
        engine = reply.engine
        run = read_run(reply, allowed)
        if engine.kind == "wheat":
            wheats[engine.wheat] = run
            blocks[engine.wheat] = engine.block
        elif engine.kind == "decoy":
            decoy = run
        elif engine.kind == "spare":
            spares[engine.operator] = run
        else:
            sabotages[engine.operator] = run
            blocks[engine.operator] = engine.block
            if engine.kind == "own":
                own.add(engine.operator)
    return Suite(student, wheats, sabotages, blocks, own=frozenset(own), decoy=decoy, right=right, spares=spares)


def _suite_beyond_student(ctx: Context, engines: str) -> Suite | Outcome:
    """The suite's runs, or why it was not run on engines other than the student's."""
    found = suite(ctx)
    if isinstance(found, Suite) and found.stopped:
        return Outcome("error", f"Not run on {engines}: {found.stopped}.")
    return found


def _broken_run(
    run: Run, on: str, own: bool = True, packages: tuple[str, ...] = (), name: str = TESTS_FILE
) -> Outcome | None:
    """An outcome for a run that never got to report its tests (timeout, crash, collection error).
    Of a run on another engine (own False) nothing the run wrote is quoted. name: the student's name for their
    tests' file, which the sandbox runs as TESTS_FILE (what pytest's message names)."""
    if run.collection_errors:
        if own:
            said = collection_message(run.collection_errors[0], packages)
            if name != TESTS_FILE:
                said = said.replace(f"{TESTS_FILE}, line ", f"{name}, line ")
            return Outcome("error", f"Your test file ({name}) could not be loaded {on}:\n{said}")
        return Outcome(
            "error",
            f"Your test file could not be collected {on}, though it is on your own engine: its "
            "top-level code depends on something only your engine has (a name, an attribute, its source). "
            "What pytest said there is not shown, as for every engine other than yours.",
        )
    if not run.ok:
        if own:
            return Outcome("error", f"Your tests did not complete {on}: {run.error}.")
        return Outcome(
            "error",
            f"Your tests did not complete {on}: {run.said}. They do on your own engine, so "
            "something in your module or tests depends on your engine's code.",
        )
    if not run.tests and own:
        return Outcome("failed", "Your test file holds no tests: pytest runs functions named test_*.")
    if not run.tests:
        return Outcome(
            "failed",
            f"None of your tests ran {on} under the names they have on your own engine: a "
            "test's name and parameters must not depend on the engine.",
        )
    return None


def _tests(n: int) -> str:
    return "1 test" if n == 1 else f"{n} tests"


def _pass(n: int) -> str:
    return "passes" if n == 1 else "all pass"


def judged(ctx: Context, found: Suite) -> Catches:
    """What the suite catches, once per submission (sabotage pays for it; it caps student_tests and wheat)."""
    if ctx.catches is None:
        ctx.catches = catches(
            found, set(invalid_tests(found)), given_tests(ctx.tests_source), ctx.assignment.limits.tests_s
        )
    return ctx.catches


def _capped(ctx: Context, found: Suite, check_id: str, outcome: Outcome) -> Outcome:
    """The outcome, paying at most the share of sabotaged engines the suite catches, and saying so."""
    caught = judged(ctx, found)
    earned = 1.0 if outcome.fraction is None and outcome.status == "passed" else (outcome.fraction or 0.0)
    if caught.share >= earned:
        return outcome
    points = next((c.points for c in ctx.assignment.checks if c.id == check_id), 0.0)
    opening = "Your tests pass, but they" if outcome.status == "passed" else "Your tests"
    if not caught.judged:
        cause = (
            "no sabotaged engine could be made for this grading"
            if not caught.counted
            else "they did not run on every correct engine: see wheat"
        )
        why = f"could not be judged on sabotaged engines ({cause}), so they earn nothing here"
    else:
        why = (
            f"catch {len(caught.caught)} of the {len(caught.counted)} sabotaged engines, so they earn "
            f"{points * caught.share:.3g} of {points:.3g} points here"
        )
    said = (
        f"{outcome.feedback}\n{opening} {why}: a test must check values and gradients, so that a wrong engine fails it"
    )
    artifacts = {**outcome.artifacts, "caught_share": round(caught.share, 4)}
    if not caught.judged and outcome.status == "passed" and check_id != "student_tests":
        # wheat's pass needs evidence of what the tests catch; student_tests' evidence is its own run (probed),
        # which passed: it stays passed, paying what the tests were seen to catch (nothing here)
        blocker = "sabotage" if not caught.counted else "wheat"
        artifacts["blocked_by"] = [blocker]
        return Outcome("skipped", f"Not judged: {said} (see {blocker}).", outcome.counterexample, artifacts)
    return Outcome(outcome.status, f"{said} (see sabotage).", outcome.counterexample, artifacts, caught.share)


@check("student_tests", "Your own tests pass on your own engine")
def student_tests(ctx: Context) -> Outcome:
    found = suite(ctx)
    if isinstance(found, Outcome):
        return found
    run = found.student
    if broken := _broken_run(run, "on your engine", packages=ctx.assignment.packages, name=ctx.tests_name):
        return broken
    failing = {n: t for n, t in run.tests.items() if t["outcome"] == "failed"}
    skipped = [n for n, t in run.tests.items() if t["outcome"] == "skipped"]
    given = given_tests(ctx.tests_source)  # the starter kit's worked example is not the student's catch
    catching = catching_own_bug(found, {n: t for n, t in failing.items() if n not in given})
    failing = {n: t for n, t in failing.items() if n not in catching}
    passed = len(run.tests) - len(failing) - len(skipped)
    artifacts: dict[str, Any] = {"tests": run.tests}
    if catching:
        artifacts["catching_own_bug"] = sorted(catching)[:LISTED_ARTIFACT]
    caught = {name: f"  {shown_name(name)}: {own_quote(t['message']) or 'failed'}" for name, t in catching.items()}
    these = (
        "This test fails on your engine and passes"
        if len(catching) == 1
        else f"These {len(catching)} tests fail on your engine and pass"
    )
    good = (
        (
            f"\n{these} on every correct engine: a test that catches a bug in your own engine is a good test, and "
            "costs nothing here (the engine checks charge the bug). Fix the engine, not the test:\n"
            + "\n".join(listed(caught))
        )
        if catching
        else ""
    )
    once = ctx.suite_lane.result().run_once
    if once:  # for the instructor (result.json): how the runs went, which the student has nothing to do about
        place = notebooks.places(ctx.student.lane.code.cells)  # each cell as every message names it: cell_name
        artifacts["run_once"] = [place[n - 1] for n in once if n - 1 in place]
    if not failing and not skipped:
        said = (
            (
                f"Each of your {_tests(len(run.tests))} passes on your engine, or fails there only by catching a bug "
                f"in it.{good}"
            )
            if catching
            else f"Your {_tests(len(run.tests))} {_pass(len(run.tests))} on your engine."
        )
        outcome = Outcome(
            "passed", said, artifacts={**artifacts, "probed": [f"{_tests(len(run.tests))} on your engine"]}
        )
    else:
        lines = {name: f"  {shown_name(name)}: {own_quote(t['message']) or 'failed'}" for name, t in failing.items()}
        lines |= {name: f"  {shown_name(name)}: skipped (not written yet?)" for name in skipped}
        opening = (
            f"{passed} of your {_tests(len(run.tests))} pass, or fail only by catching a bug in your "
            "engine; these do not:"
            if catching
            else f"{passed} of your {_tests(len(run.tests))} pass on your own engine. These do not:"
            if passed
            else f"None of your {_tests(len(run.tests))} pass on your own engine:"
        )
        advice = library_advice([t["message"] for t in failing.values()])
        outcome = Outcome(
            "failed",
            f"{opening}\n" + "\n".join(listed(lines)) + good + (f"\n{advice}" if advice else ""),
            artifacts=artifacts,
            fraction=passed / len(run.tests),
        )
    return outcome if found.stopped else _capped(ctx, found, "student_tests", outcome)


def catching_own_bug(found: Suite, failing: dict[str, dict]) -> dict[str, dict]:
    """The tests failing on the student's engine that pass on every correct engine (none when the suite
    did not run on them all): they catch a bug of the student's engine, which its own check charges."""
    if found.stopped or not found.wheats or any(not run.ok or run.collection_errors for run in found.wheats.values()):
        return {}
    return {
        name: t
        for name, t in failing.items()
        if all(run.tests.get(name, {}).get("outcome") == "passed" for run in found.wheats.values())
    }


def invalid_tests(found: Suite) -> dict[str, tuple[str, str]]:
    """Tests that fail on some correct engine: name -> (wheat id, how it failed, in the grader's words)."""
    invalid = {}
    for wheat_id, run in found.wheats.items():
        for name, t in run.tests.items():
            if t["outcome"] == "failed" and name not in invalid:
                invalid[name] = (wheat_id, elsewhere(t))
    return invalid


@check("wheat", "Your tests pass on correct engines written differently (no false alarms)")
def wheat(ctx: Context) -> Outcome:
    found = _suite_beyond_student(ctx, "other engines")
    if isinstance(found, Outcome):
        return found
    for wheat_id, run in found.wheats.items():
        if broken := _broken_run(run, f"on a correct engine ({WHEATS[wheat_id]})", own=False):
            return broken
    given = given_tests(ctx.tests_source)
    own = [n for n in found.student.tests if n not in given]
    invalid = {n: why for n, why in invalid_tests(found).items() if n in own}
    total = len(own)
    named = sorted(invalid)
    artifacts = {
        "wheats": {w: _counts(r) for w, r in found.wheats.items()},
        "invalid": named[:LISTED_ARTIFACT],
        "invalid_count": len(invalid),
        "given": sorted(given)[:LISTED_ARTIFACT],
    }
    if not own:
        return Outcome(
            "failed",
            "No tests of your own yet: the starter kit's worked example and stubs do not count. "
            "Write tests that check values and gradients.",
            artifacts=artifacts,
            fraction=0.0,
        )
    if not invalid:
        return _capped(
            ctx,
            found,
            "wheat",
            Outcome(
                "passed",
                f"Your {_tests(total)} {_pass(total)} on {len(found.wheats)} correct engines written in "
                "different styles.",
                artifacts={**artifacts, "probed": [f"your tests on {w}" for w in found.wheats]},
            ),
        )
    outside = outside_interface(ctx.tests_source, ctx.student.lane.code.text, invalid)
    lines = {
        name: f"  {shown_name(name)} rejects a correct engine ({WHEATS[w]}): {said}"
        + (
            f"; it uses {', '.join(outside[name])}, which your Value has but the assignment's interface does not"
            if name in outside
            else ""
        )
        for name, (w, said) in invalid.items()
    }
    interface_note = (
        f"\nEvery engine has only: {interface_words()}. Test with those alone (compare .data, "
        "within a tolerance, rather than Values with ==)."
        if outside
        else ""
    )
    return _capped(
        ctx,
        found,
        "wheat",
        Outcome(
            "failed",
            f"{len(invalid)} of your {total} tests reject a correct engine, so they are left out when counting "
            "sabotages caught:\n" + "\n".join(listed(lines)) + "\nA test should check behaviour (values and "
            "gradients, within a tolerance), not one implementation's details (private names, source code, the exact "
            "last digit of a float). "
            "Only how a test failed is shown for engines other than yours, never its message: run it on your own "
            "engine to see that." + interface_note,
            artifacts=artifacts,
            fraction=1 - len(invalid) / total,
        ),
    )


LISTED_ARTIFACT = 10
"""Test names kept per list in a check's artifacts (which tests fail where is a channel out, too)."""


def _counts(run: Run) -> dict[str, int]:
    """How many tests passed, failed and were skipped on one engine (not which: see LISTED_ARTIFACT)."""
    found = {"passed": 0, "failed": 0, "skipped": 0}
    for t in run.tests.values():
        found[t["outcome"]] += 1
    return found


@check("sabotage", "Your tests catch each sabotaged engine")
def sabotage(ctx: Context) -> Outcome:
    found = _suite_beyond_student(ctx, "the sabotaged engines")
    if isinstance(found, Outcome):
        return found
    operators = all_operators()
    caught = judged(ctx, found)
    valid, counted = caught.valid, caught.counted
    own = {op for op in counted if op in found.own and op not in caught.in_place}
    missed = [operators[op_id] for op_id in counted if op_id not in caught.caught]
    total = len(counted)
    artifacts = {
        "caught": {op: shown_name(by) for op, by in caught.caught.items()},
        "missed": [op.id for op in missed],
        "valid_tests": valid[:LISTED_ARTIFACT],
        "valid_count": len(valid),
        "bugs": {op_id: operators[op_id].misconception for op_id in counted},
        "of_your_engine": sorted(own),
        "left_out": caught.dropped,
        "in_place": caught.in_place,
    }
    if notes := ctx.suite_lane.job.notes:  # e.g. an engine too large to mutate
        artifacts["plan_notes"] = list(notes)
    if not valid:
        given = given_tests(ctx.tests_source)
        said = (
            "None of your tests can count: each one fails or is skipped on some correct engine (see wheat)."
            if any(name not in given for name in found.student.tests)
            else "No tests of your own yet: tests you write count here once they catch a sabotaged engine."
        )
        return Outcome("failed", said, artifacts=artifacts, timing=caught.timing, fraction=0.0)
    if not total:
        return Outcome(
            "skipped",
            "Not judged: no sabotaged engine could be made for this grading.",
            artifacts=artifacts,
            timing=caught.timing,
        )
    made = f" ({len(own)} made from your own engine)" if own else ""
    if caught.in_place:  # their numbers are a claim: how many count is not (suite_runs.py)
        made += f"; {len(caught.in_place)} mutants of it that could not count replaced by correct engines' ones"
    if not missed:
        return Outcome(
            "passed",
            f"Your tests catch all {total} sabotaged engines{made}.",
            artifacts={**artifacts, "probed": [f"your tests on {op_id}" for op_id in counted]},
            timing=caught.timing,
            fraction=1.0,
        )
    lines = [
        f"  {op.id}{' (your own engine, mutated)' if op.id in own else ''}: {op.misconception}.\n"
        f"    A test that would catch it: {op.catch}."
        for op in missed
    ]
    blind = len(valid) - len(caught.own_valid)
    if blind and any(op.id in own for op in missed):
        lines.append(
            f"{_tests(blind)} of yours that pass on every correct engine do not pass on your own engine, or on it "
            "rewritten (the same code, its names and layout changed), so they cannot catch a mutant of it: a test "
            "catches a mutant only by passing on the engine it was made from and failing on the mutant."
        )
    return Outcome(
        "failed",
        f"Your tests catch {len(caught.caught)} of {total} sabotaged engines{made}. Not caught:\n" + "\n".join(lines),
        artifacts=artifacts,
        timing=caught.timing,
        fraction=len(caught.caught) / total,
    )
