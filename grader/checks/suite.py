"""The student's own tests, graded as the best test-grading systems do (wheats and chaffs).

Their suite runs with real pytest in the sandbox: on their own engine (`student_tests`),
on correct engines written differently (`wheat`: a test that rejects one is invalid), and
on a catalogue of sabotaged engines (`sabotage`: good tests catch each one). One warm
worker with pytest imported forks once per run, so the runs cost little more than the
suite itself.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Any

from grader.checks import check
from grader.checks.context import Context, Observation
from grader.result import Outcome
from grader.sabotage import catalogue, run_plan

SUITE_CHECKS = ("student_tests", "wheat", "sabotage")
"""The checks about the student's tests rather than their engine."""
TIMEOUT_MARGIN = 3  # a crash or a hang counts as a catch only if the wheats ran 3x faster than the limit
SLOWDOWN = 10  # a run on another engine may take this many times the run on the student's engine...
MIN_RUN_S = 5.0  # ...but never less than this


@dataclass(frozen=True)
class Run:
    """One run of the suite on one engine."""

    ok: bool
    tests: dict[str, dict[str, Any]]
    collection_errors: list[str]
    error: str
    timeout: bool
    duration: float

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> Run:
        result = reply.get("result") or {}
        return cls(reply.get("ok", False), result.get("tests", {}), result.get("collection_errors", []),
                   reply.get("error", ""), reply.get("timeout", False), reply.get("duration", 0.0))

    def failed(self, name: str) -> bool:
        return self.tests.get(name, {}).get("outcome") == "failed"


@dataclass(frozen=True)
class Suite:
    student: Run
    wheats: dict[str, Run]
    sabotages: dict[str, Run]
    stopped: str = ""
    """Why the suite was not run on other engines (it hung on the student's own)."""


def suite(ctx: Context) -> Suite | Outcome:
    """Run the suite on every engine once per submission (the three checks share the runs)."""
    if "suite" in ctx.cache:
        return ctx.cache["suite"]
    ctx.cache["suite"] = _run_suite(ctx)
    return ctx.cache["suite"]


def _run_suite(ctx: Context) -> Suite | Outcome:
    if ctx.tests_file is None:
        return Outcome("failed", "No tests found: write your tests in test_micrograd.py beside micrograd_mine.py "
                       "(or pass --tests FILE).")
    cat = catalogue()
    sabotages = [s for s in cat.sabotages if s.id in ctx.assignment.sabotages]
    limit = ctx.assignment.limits.tests_s
    first = _runs(ctx, [{"engines": [], "replace": []}], limit)
    if isinstance(first, Outcome):
        return first
    student = first[0]
    if student.timeout or not student.ok:
        return Suite(student, {}, {}, stopped=f"your tests did not complete on your own engine ({student.error})")
    per_run = min(limit, max(MIN_RUN_S, SLOWDOWN * student.duration))
    base = cat.wheats[0]
    rest = _runs(ctx, [run_plan(w, base) for w in cat.wheats] + [run_plan(s, base) for s in sabotages], per_run)
    if isinstance(rest, Outcome):
        return rest
    wheats, chaffs = rest[:len(cat.wheats)], rest[len(cat.wheats):]
    return Suite(student, {w.id: r for w, r in zip(cat.wheats, wheats)}, {s.id: r for s, r in zip(sabotages, chaffs)})


def _runs(ctx: Context, plans: list[dict], per_run: float) -> list[Run] | Outcome:
    reply = ctx.student.ask({"op": "pytest", "tests": ctx.tests_file, "runs": plans, "timeout": per_run},
                            timeout=per_run * len(plans) + 30)
    if isinstance(reply, Observation):
        why = reply.failure.message if reply.failure else f"raised {reply.error['type']}: {reply.error['message']}"
        return Outcome("error", f"Running your tests: the test runner {why}.")
    return [Run.from_reply(r) for r in reply]


def _suite_beyond_student(ctx: Context, engines: str) -> Suite | Outcome:
    """The suite's runs, or why it was not run on engines other than the student's."""
    found = suite(ctx)
    if isinstance(found, Suite) and found.stopped:
        return Outcome("error", f"Not run on {engines}: {found.stopped}.")
    return found


def _broken_run(run: Run, on: str) -> Outcome | None:
    """An outcome for a run that never got to report its tests (timeout, crash, collection error)."""
    if run.collection_errors:
        return Outcome("error", f"Your test file could not be collected {on}:\n{run.collection_errors[0].strip()}")
    if not run.ok:
        return Outcome("error", f"Your tests did not complete {on}: {run.error}.")
    if not run.tests:
        return Outcome("failed", "Your test file holds no tests: pytest runs functions named test_*.")
    return None


def _tests(n: int) -> str:
    return "1 test" if n == 1 else f"{n} tests"


def _pass(n: int) -> str:
    return "passes" if n == 1 else "all pass"


@functools.cache
def _template_bodies() -> frozenset[str]:
    from grader.commands.template import template_files

    return frozenset(_bodies(template_files()["test_micrograd.py"]).values())


def _bodies(source: str) -> dict[str, str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    return {node.name: ast.dump(ast.Module(body=node.body, type_ignores=[])) for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test")}


def given_tests(source: str) -> set[str]:
    """The student's tests that are the starter kit's, unchanged (the worked example, the stubs):
    they count for nothing in wheat and sabotage, where only the student's own tests earn."""
    return {name for name, body in _bodies(source).items() if body in _template_bodies()}


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
    """Tests that fail on some correct engine: name -> (wheat id, the failure message)."""
    invalid = {}
    for wheat_id, run in found.wheats.items():
        for name, t in run.tests.items():
            if t["outcome"] == "failed" and name not in invalid:
                invalid[name] = (wheat_id, t["message"])
    return invalid


@check("wheat", "Your tests pass on correct engines written differently (no false alarms)")
def wheat(ctx: Context) -> Outcome:
    found = _suite_beyond_student(ctx, "other engines")
    if isinstance(found, Outcome):
        return found
    cat = {w.id: w for w in catalogue().wheats}
    for wheat_id, run in found.wheats.items():
        if broken := _broken_run(run, f"on a correct engine ({cat[wheat_id].description})"):
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
    lines = [f"  {name} rejects a correct engine ({cat[w].description}): {msg.splitlines()[0] if msg else 'failed'}"
             for name, (w, msg) in invalid.items()]
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


@check("sabotage", "Your tests catch each sabotaged engine of the catalogue")
def sabotage(ctx: Context) -> Outcome:
    found = _suite_beyond_student(ctx, "the sabotaged engines")
    if isinstance(found, Outcome):
        return found
    cat = catalogue()
    invalid = invalid_tests(found)
    given = given_tests(ctx.tests_source)
    wheat_runs = list(found.wheats.values())
    valid = [n for n in found.student.tests if n not in invalid and n not in given
             and all(r.tests.get(n, {}).get("outcome") == "passed" for r in wheat_runs)]
    wheat_time = max(r.duration for r in wheat_runs)
    caught, missed = {}, []
    for sab_id, run in found.sabotages.items():
        by = _caught(run, valid, wheat_time, ctx.assignment.limits.tests_s)
        if by:
            caught[sab_id] = by
        else:
            missed.append(cat.sabotage(sab_id))
    total = len(found.sabotages)
    artifacts = {"caught": caught, "missed": [e.id for e in missed], "valid_tests": valid,
                 "bugs": {s.id: s.description for s in cat.sabotages if s.id in found.sabotages}}
    if not valid:
        why = ("each one fails or is skipped on some correct engine (see wheat), or comes unchanged from the "
               "starter kit." if found.student.tests else "there are none.")
        return Outcome("failed", f"None of your tests can count: {why}", artifacts=artifacts, fraction=0.0)
    if not missed:
        return Outcome("passed", f"Your tests catch all {total} sabotaged engines.", artifacts=artifacts, fraction=1.0)
    lines = [f"  {e.id}: {e.description}.\n    A test that would catch it: {e.catch}." for e in missed]
    return Outcome("failed", f"Your tests catch {len(caught)} of {total} sabotaged engines. Not caught:\n"
                   + "\n".join(lines), artifacts=artifacts, fraction=len(caught) / total)
