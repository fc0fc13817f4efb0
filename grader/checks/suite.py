"""The student's own tests, graded as the best test-grading systems do (wheats and chaffs).

Their suite runs with real pytest in the suite lane (grader/lanes.py): on their own engine
(`student_tests`), on correct engines written differently (`wheat`: a test that rejects
one is invalid), and on mutants of those engines, one per sabotage operator (`sabotage`:
good tests catch each one). Every run is a fresh process that sees only its engine,
appended after the student's code under the student's module name, in an order derived
from the submission's hash; nothing in it says which engine it is.

What a run answers is a claim about the student's tests on that engine. Only names of
the student's own tests are kept (those of the run on their own engine, defined in their
file), and the feedback quotes from other engines' runs only the first line of an
assertion's message, capped, never anything that repeats the engine's code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grader.checks import check
from grader.checks.context import Context, student_error
from grader.checks.suite_text import given_tests, own_test_names, quote
from grader.lanes import Code, RunReply, SuiteLane
from grader.result import Outcome
from grader.sabotage import WHEATS, all_operators, plan

SUITE_CHECKS = ("student_tests", "wheat", "sabotage")
"""The checks about the student's tests rather than their engine."""
TIMEOUT_MARGIN = 3  # a crash or a hang counts as a catch only if the wheats ran 3x faster than the limit
SLOWDOWN = 10  # a run on another engine may take this many times the run on the student's engine...
MIN_RUN_S = 5.0  # ...but never less than this
FIXTURES = ("Value", "Neuron", "Layer", "MLP", "numerical_grad")
"""Names of the lesson's symbols a test may take as parameters (nbgrader style: def test_x(Value))."""
MAX_TESTS = 2000


@dataclass(frozen=True)
class Run:
    """One run of the suite on one engine, as claimed by the run's process."""

    ok: bool
    tests: dict[str, dict[str, Any]]
    collection_errors: list[str]
    error: str
    timeout: bool
    duration: float
    probes: tuple = ()
    """The engine's numbers on the equivalence probes, read before the tests ran."""

    def failed(self, name: str) -> bool:
        return self.tests.get(name, {}).get("outcome") == "failed"


UNREADABLE_RUN = "the run answered the grader with something it cannot read (did your code replace the grader's code?)"


def read_run(reply: RunReply, allowed: set[str] | None) -> Run:
    """A run's claims, checked for shape; test names outside allowed are dropped."""
    if reply.failure is not None:
        return Run(False, {}, [], reply.failure.message, reply.failure.kind == "timeout", reply.duration)
    message = reply.reply or {}
    if not message.get("ok"):
        err = student_error(message.get("error"))
        return Run(False, {}, [], f"loading your code with it raised {err['type']}: {err['message']}", False,
                   reply.duration, )
    result = message.get("result")
    try:
        tests = {name: _test_entry(entry) for name, entry in result["tests"].items()
                 if isinstance(name, str) and len(name) <= 300 and (allowed is None or name in allowed)}
        errors = [str(e)[:3000] for e in result["collection_errors"]][:20]
        if len(result["tests"]) > MAX_TESTS:
            raise ValueError("too many tests")
        probes = tuple(_probe_entry(p) for p in (result.get("probes") or [])[:200])
    except (KeyError, TypeError, ValueError, AttributeError):
        return Run(False, {}, [], UNREADABLE_RUN, False, reply.duration)
    return Run(True, tests, errors, "", False, reply.duration, probes)


def _probe_entry(entry: Any) -> tuple:
    """One probe's numbers as claimed (rounded, so that equal engines compare equal), or what it raised."""
    if isinstance(entry, dict) and isinstance(entry.get("raised"), str):
        return ("raised", entry["raised"][:80])
    numbers = []
    for key in ("data", "grad"):
        for x in entry[key]:
            numbers.append(round(float(x), 9) if isinstance(x, (int, float)) and not isinstance(x, bool) else "bad")
    return tuple(numbers)


def _test_entry(entry: Any) -> dict[str, Any]:
    outcome, kind, text, duration = entry["outcome"], entry["kind"], entry["message"], entry["duration"]
    if outcome not in ("passed", "failed", "skipped") or kind not in ("assertion", "exception", None) \
            or not isinstance(text, str) or not isinstance(duration, (int, float)) or isinstance(duration, bool):
        raise ValueError(entry)
    return {"outcome": outcome, "kind": kind, "message": text[:800], "duration": float(duration)}


@dataclass(frozen=True)
class Suite:
    student: Run
    wheats: dict[str, Run]
    """By wheat id."""
    sabotages: dict[str, Run]
    """By operator id: each operator's mutant, of a wheat or of the student's engine."""
    blocks: dict[str, str]
    """The code each engine run appended (to keep it out of quoted messages)."""
    stopped: str = ""
    """Why the suite was not run on other engines (it failed on the student's own)."""
    own: frozenset[str] = frozenset()
    """The operators whose mutant was made from the student's own engine."""
    decoy: Run | None = None
    """The student's engine rewritten, unmutated (when any mutant of it was planned)."""


def equivalence_probes() -> list:
    """Programs on which a mutant of the student's engine must differ from the unmutated engine to count:
    every operation alone, a value used twice through each, nesting, shared nodes, the hand examples."""
    from grader.checks.features import EQUAL_DATA, LEAVES, SINGLE, _chain, _diamond
    from grader.checks.fixed import HAND_EXAMPLES

    found = list(SINGLE.values()) + [EQUAL_DATA] + [_chain(op) for op in ("add", "mul")] + \
        [_diamond(op) for op in ("add", "mul")] + [program for _, _, program, _ in HAND_EXAMPLES]
    found += [(("leaf", 1.5), (op, 0, 0)) for op in ("add", "mul", "sub", "div")]
    for ins in (("pow", 0, 2), ("tanh", 0), ("relu", 0), ("exp", 0), ("neg", 0)):
        found += [(("leaf", 0.7), ins, ("add", 1, 0)), (("leaf", -0.7), ins, ("leaf", -2.0), ("mul", 1, 2))]
    found += [LEAVES + (("radd", 2.0, 0), ("rmul", 3.0, 1), ("rsub", 1.0, 2), ("add", 4, 5), ("mul", 7, 6))]
    return [[list(ins) for ins in program] for program in found]


def start_suite(assignment, code: Code, tests: str, limits, iso, seed: str, pool: str, sandboxes: int = 1,
                own: str | None = None, shared=None, before=None) -> SuiteLane:
    """Start the suite lane: the student's run, then every engine of this grading's plan (own: the
    student's engine as a block, for mutants of it)."""
    limit = assignment.limits.tests_s

    def per_run(own_run: RunReply) -> float:
        return min(limit, max(MIN_RUN_S, SLOWDOWN * own_run.duration))

    return SuiteLane(code, tests, limits, iso, lambda: plan(assignment.sabotages, seed, pool, own), limit, per_run,
                     FIXTURES, sandboxes, equivalence_probes(), shared, before)


def suite(ctx: Context) -> Suite | Outcome:
    """The suite's runs, once per submission (the three checks share them)."""
    if "suite" not in ctx.cache:
        ctx.cache["suite"] = _collect(ctx)
    return ctx.cache["suite"]


def _collect(ctx: Context) -> Suite | Outcome:
    if not ctx.has_tests or ctx.suite_lane is None:
        return Outcome("failed", "No tests found: write your tests in test_micrograd.py beside micrograd_mine.py "
                       "(or pass --tests FILE).")
    outcome = ctx.suite_lane.result()
    if outcome.error or outcome.own is None:
        return Outcome("error", f"Running your tests: {outcome.error or 'the run did not start'}.")
    defined = own_test_names(ctx.tests_source)
    student = read_run(outcome.own, None)
    student = Run(student.ok, {n: t for n, t in student.tests.items() if n.split("[", 1)[0] in defined},
                  student.collection_errors, student.error, student.timeout, student.duration)
    if student.timeout or not student.ok:
        return Suite(student, {}, {}, {}, stopped=f"your tests did not complete on your own engine ({student.error})")
    student = Run(student.ok, student.tests, student.collection_errors, student.error, student.timeout,
                  student.duration, read_run(outcome.own, None).probes)
    allowed = set(student.tests)
    wheats, sabotages, blocks, own, decoy = {}, {}, {}, set(), None
    for reply in outcome.runs:
        engine = reply.engine
        run = read_run(reply, allowed)
        if engine.kind == "wheat":
            wheats[engine.wheat] = run
            blocks[engine.wheat] = engine.block
        elif engine.kind == "decoy":
            decoy = run
        else:
            sabotages[engine.operator] = run
            blocks[engine.operator] = engine.block
            if engine.kind == "own":
                own.add(engine.operator)
    return Suite(student, wheats, sabotages, blocks, own=frozenset(own), decoy=decoy)


def _suite_beyond_student(ctx: Context, engines: str) -> Suite | Outcome:
    """The suite's runs, or why it was not run on engines other than the student's."""
    found = suite(ctx)
    if isinstance(found, Suite) and found.stopped:
        return Outcome("error", f"Not run on {engines}: {found.stopped}.")
    return found


def _broken_run(run: Run, on: str, engine_code: str | None = None) -> Outcome | None:
    """An outcome for a run that never got to report its tests (timeout, crash, collection error)."""
    if run.collection_errors:
        text = run.collection_errors[0].strip() if engine_code is None else quote(run.collection_errors[0].strip()
                                                                                  .splitlines()[-1], engine_code)
        return Outcome("error", f"Your test file could not be collected {on}:\n{text}")
    if not run.ok:
        error = run.error if engine_code is None else quote(run.error, engine_code)
        return Outcome("error", f"Your tests did not complete {on}: {error}.")
    if not run.tests:
        return Outcome("failed", "Your test file holds no tests: pytest runs functions named test_*.")
    return None


def _tests(n: int) -> str:
    return "1 test" if n == 1 else f"{n} tests"


def _pass(n: int) -> str:
    return "passes" if n == 1 else "all pass"


def _outcomes(run: Run) -> dict[str, str]:
    return {name: t["outcome"] for name, t in run.tests.items()}


@check("student_tests", "Your own tests pass on your own engine")
def student_tests(ctx: Context) -> Outcome:
    found = suite(ctx)
    if isinstance(found, Outcome):
        return found
    run = found.student
    if broken := _broken_run(run, "on your engine"):
        return broken
    failing = {n: t for n, t in run.tests.items() if t["outcome"] == "failed"}
    skipped = [n for n, t in run.tests.items() if t["outcome"] == "skipped"]
    passed = len(run.tests) - len(failing) - len(skipped)
    artifacts = {"tests": run.tests}
    if not failing and not skipped:
        return Outcome("passed", f"Your {_tests(len(run.tests))} {_pass(len(run.tests))} on your engine.",
                       artifacts=artifacts)
    lines = [f"  {name}: {t['message'].splitlines()[0] if t['message'] else 'failed'}" for name, t in failing.items()]
    lines += [f"  {name}: skipped (not written yet?)" for name in skipped]
    return Outcome("failed", f"{passed} of your {_tests(len(run.tests))} pass on your own engine:\n" + "\n".join(lines),
                   artifacts=artifacts, fraction=passed / len(run.tests))


def invalid_tests(found: Suite) -> dict[str, tuple[str, str]]:
    """Tests that fail on some correct engine: name -> (wheat id, what to quote of the failure)."""
    invalid = {}
    for wheat_id, run in found.wheats.items():
        for name, t in run.tests.items():
            if t["outcome"] == "failed" and name not in invalid:
                said = quote(t["message"], found.blocks[wheat_id]) if t["kind"] == "assertion" else \
                    f"raised {t['message'].split(':', 1)[0][:40]}" if t["message"] else "failed"
                invalid[name] = (wheat_id, said)
    return invalid


@check("wheat", "Your tests pass on correct engines written differently (no false alarms)")
def wheat(ctx: Context) -> Outcome:
    found = _suite_beyond_student(ctx, "other engines")
    if isinstance(found, Outcome):
        return found
    for wheat_id, run in found.wheats.items():
        if broken := _broken_run(run, f"on a correct engine ({WHEATS[wheat_id]})", found.blocks[wheat_id]):
            return broken
    given = given_tests(ctx.tests_source)
    own = [n for n in found.student.tests if n not in given]
    invalid = {n: why for n, why in invalid_tests(found).items() if n in own}
    total = len(own)
    artifacts = {"wheats": {w: _outcomes(r) for w, r in found.wheats.items()}, "invalid": sorted(invalid),
                 "given": sorted(given)}
    if not own:
        return Outcome("failed", "No tests of your own yet: the starter kit's worked example and stubs do not count. "
                       "Write tests that check values and gradients.", artifacts=artifacts, fraction=0.0)
    if not invalid:
        return Outcome("passed", f"Your {_tests(total)} {_pass(total)} on {len(found.wheats)} correct engines "
                       "written in different styles.", artifacts=artifacts)
    lines = [f"  {name} rejects a correct engine ({WHEATS[w]}): {said}" for name, (w, said) in invalid.items()]
    return Outcome(
        "failed",
        f"{len(invalid)} of your {total} tests reject a correct engine, so they are left out when counting sabotages "
        "caught:\n" + "\n".join(lines) + "\nA test should check behaviour (values and gradients, within a tolerance), "
        "not one implementation's details (private names, source code, the exact last digit of a float).",
        artifacts=artifacts, fraction=1 - len(invalid) / total,
    )


def _caught(run: Run, valid: list[str], wheat_time: float, limit: float) -> str | None:
    """The name of a valid test that catches this sabotage, if any.

    A failed assertion catches it. A crash (another exception) or a hang catches it only when
    the suite ran far inside the time limit on the correct engines, so that a slow or
    fragile suite is not credited for running out of time.
    """
    fast = wheat_time * TIMEOUT_MARGIN < limit
    for name in valid:
        t = run.tests.get(name)
        if t and t["outcome"] == "failed" and (t["kind"] == "assertion" or fast):
            return name
    if run.timeout and fast:
        return "(the suite hung on this engine)"
    return None


@check("sabotage", "Your tests catch each sabotaged engine")
def sabotage(ctx: Context) -> Outcome:
    found = _suite_beyond_student(ctx, "the sabotaged engines")
    if isinstance(found, Outcome):
        return found
    operators = all_operators()
    invalid = invalid_tests(found)
    given = given_tests(ctx.tests_source)
    wheat_runs = list(found.wheats.values())
    valid = [n for n in found.student.tests if n not in invalid and n not in given
             and all(r.tests.get(n, {}).get("outcome") == "passed" for r in wheat_runs)]
    wheat_time = max((r.duration for r in wheat_runs), default=0.0)
    counted, dropped = _counted_mutants(found, valid)
    caught, missed = {}, []
    for op_id in counted:
        by = _caught(found.sabotages[op_id], valid, wheat_time, ctx.assignment.limits.tests_s)
        if by:
            caught[op_id] = by
        else:
            missed.append(operators[op_id])
    total = len(counted)
    artifacts = {"caught": caught, "missed": [op.id for op in missed], "valid_tests": valid,
                 "bugs": {op_id: operators[op_id].misconception for op_id in counted},
                 "of_your_engine": sorted(op for op in counted if op in found.own), "left_out": dropped}
    if not valid:
        why = ("each one fails or is skipped on some correct engine (see wheat), or comes unchanged from the "
               "starter kit." if found.student.tests else "there are none.")
        return Outcome("failed", f"None of your tests can count: {why}", artifacts=artifacts, fraction=0.0)
    if not total:
        return Outcome("skipped", "Not judged: no sabotaged engine could be made for this grading.", artifacts=artifacts)
    mine = sum(op in found.own for op in counted)
    made = f" ({mine} made from your own engine)" if mine else ""
    if not missed:
        return Outcome("passed", f"Your tests catch all {total} sabotaged engines{made}.", artifacts=artifacts,
                       fraction=1.0)
    lines = [f"  {op.id}{' (your own engine, mutated)' if op.id in found.own else ''}: {op.misconception}.\n"
             f"    A test that would catch it: {op.catch}." for op in missed]
    return Outcome("failed", f"Your tests catch {len(caught)} of {total} sabotaged engines{made}. Not caught:\n"
                   + "\n".join(lines), artifacts=artifacts, fraction=len(caught) / total)


def _counted_mutants(found: Suite, valid: list[str]) -> tuple[list[str], dict[str, str]]:
    """The operators whose mutant counts, and why the others are left out. A mutant of the student's
    engine counts only when it behaves differently from the unmutated engine on the grader's probes,
    and only when the student's valid tests pass on their engine and on its decoy (the same engine,
    rewritten): a test that recognises its own code fails on the decoy and so counts for nothing."""
    counted, dropped = [], {}
    own_ok = all(found.student.tests.get(n, {}).get("outcome") == "passed" for n in valid)
    decoy = found.decoy
    decoy_ok = decoy is not None and decoy.ok and decoy.probes == found.student.probes and \
        all(decoy.tests.get(n, {}).get("outcome") == "passed" for n in valid)
    for op_id in sorted(found.sabotages):
        if op_id not in found.own:
            counted.append(op_id)
        elif not own_ok:
            dropped[op_id] = "your tests do not all pass on your own engine"
        elif not decoy_ok:
            dropped[op_id] = "your engine could not be rewritten faithfully, or your tests fail on it rewritten"
        elif not found.student.probes or found.sabotages[op_id].probes == found.student.probes:
            dropped[op_id] = "the mutant behaves like your engine on every probe (an equivalent mutant)"
        else:
            counted.append(op_id)
    return counted, dropped
