"""The runs of the student's suite, read as claims, and what they prove about the sabotaged engines.

A run's reply is checked for shape and capped (Run, read_run); a grading's runs together are a
Suite. From them, Catches says which of the student's tests are valid (pass on every correct
engine), which sabotaged engines count, and which of those a valid test catches: the sabotage
check pays for it, and it caps what student_tests and wheat pay, since tests that catch nothing
have shown nothing.

Which engines count is never the tests' to say: it follows the plan, the reference, and what each engine computed
on the equivalence probes before its run wrote the test file (no test of the student's had run). How the tests fared
decides only which of them catch what: a test that fails on the student's own engine, or on it rewritten (the
decoy), cannot catch a mutant of it, since it does not tell the mutant from the engine it was made from.

How many count is the plan's alone: those numbers were computed by processes the student's module ran in, so they
are a claim (a module can make every engine report the same numbers), and a mutant of the student's engine that does
not count gives way to its spare, a wheat's mutant by the same operator (issue 41). Claims decide only which of the
two fills the operator's place.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grader import protocol, suite_replies
from grader.checks.cases import EQUAL_DATA, HAND_EXAMPLES, LEAVES, SINGLE, chain, diamond
from grader.checks.reference_engine import reference_run
from grader.checks.suite_text import exception_name
from grader.lanes import RunReply
from grader.sabotage import EngineRun
from grader.sandbox.inside.ops import BINARY, NEEDS
from grader.spec import Tolerances

TIMEOUT_MARGIN = 3  # a crash or a hang counts as a catch only if the wheats ran 3x faster than the limit
UNREADABLE_RUN = "the run answered the grader with something it cannot read (did your code replace the grader's code?)"
FAILURES = {
    "timeout": "the run did not finish in time",
    "memory": "the run was killed (most likely it ran out of memory)",
    "crash": "the run's process stopped (a crash, or os._exit)",
    "disk": "the run filled the sandbox's disk space",
    "protocol": "the run answered the grader with something it cannot read",
}
"""What the grader itself says of a run that failed, by kind: the words for engines other than the
student's, where nothing the run wrote is quoted."""


@dataclass(frozen=True)
class Run:
    """One run of the suite on one engine, as claimed by the run's process."""

    ok: bool
    tests: dict[str, dict[str, Any]]
    collection_errors: list[str]
    error: str
    """Why the run did not complete, with what the student's code raised (for their own engine)."""
    timeout: bool
    duration: float
    probes: tuple = ()
    """The engine's numbers on the equivalence probes, as the run said before its test file was written."""
    said: str = ""
    """Why the run did not complete in the grader's words only (for engines other than the student's)."""

    def failed(self, name: str) -> bool:
        return self.tests.get(name, {}).get("outcome") == "failed"


def read_run(reply: RunReply, allowed: set[str] | None) -> Run:
    """A run's claims, checked for shape (grader/protocol.py); test names outside allowed are dropped. The probes'
    numbers are those the run said before its tests, however it ended."""
    probes = reply.probes or ()
    if reply.failure is not None:
        return Run(
            False,
            {},
            [],
            reply.failure.message,
            reply.failure.kind == "timeout",
            reply.duration,
            probes,
            said=FAILURES.get(reply.failure.kind, "the run failed"),
        )
    message = reply.reply or {}
    if (err := protocol.raised(message)) is not None:
        raised = exception_name(err.type) or "an exception whose class is not a built-in one"
        return Run(
            False,
            {},
            [],
            f"loading your code with it raised {err.type}: {err.message}",
            False,
            reply.duration,
            probes,
            said=f"importing your module with it raised {raised}",
        )
    try:
        claim = suite_replies.suite_run(message.get("result"), allowed)
    except ValueError:
        return Run(False, {}, [], UNREADABLE_RUN, False, reply.duration, probes, said=FAILURES["protocol"])
    return Run(True, claim.tests, claim.collection_errors, "", False, reply.duration, probes)


@dataclass(frozen=True)
class Suite:
    student: Run
    wheats: dict[str, Run]
    """By wheat id."""
    sabotages: dict[str, Run]
    """By operator id: each operator's mutant, of a wheat or of the student's engine."""
    blocks: dict[str, str]
    """The code each engine run appended."""
    stopped: str = ""
    """Why the suite was not run on other engines (it failed on the student's own)."""
    own: frozenset[str] = frozenset()
    """The operators whose mutant was made from the student's own engine."""
    decoy: Run | None = None
    """The student's engine rewritten, unmutated (when any mutant of it was planned)."""
    right: bool = True
    """Whether the student's engine computes the reference's numbers on every equivalence probe made of the
    assignment's operations (engine_right): mutants of an engine with a bug there do not count."""
    spares: dict[str, Run] = field(default_factory=dict)
    """By operator: the run on a wheat's mutant by the operator of a mutant of the student's engine, which counts in
    its place when that one does not (so how many count is the plan's: issue 41)."""


def equivalence_probes() -> list:
    """Programs on which a mutant of the student's engine must differ from the unmutated engine to count:
    every operation alone, a value used twice through each, nesting, shared nodes, the hand examples."""
    found = (
        list(SINGLE.values())
        + [EQUAL_DATA]
        + [chain(op) for op in ("add", "mul")]
        + [diamond(op) for op in ("add", "mul")]
        + [program for _, _, program, _ in HAND_EXAMPLES]
    )
    found += [(("leaf", 1.5), (op, 0, 0)) for op in BINARY]
    for ins in (("pow", 0, 2), ("tanh", 0), ("relu", 0), ("exp", 0), ("neg", 0)):
        found += [(("leaf", 0.7), ins, ("add", 1, 0)), (("leaf", -0.7), ins, ("leaf", -2.0), ("mul", 1, 2))]
    found += [LEAVES + (("radd", 2.0, 0), ("rmul", 3.0, 1), ("rsub", 1.0, 2), ("add", 4, 5), ("mul", 7, 6))]
    return [[list(ins) for ins in program] for program in found]


@functools.cache
def _reference_numbers() -> tuple[tuple[frozenset[str], tuple[float, ...] | None], ...]:
    """Of each equivalence probe: the operations it needs, and the reference's numbers on it (data, then grad), or
    None where it is outside the reference's domain."""
    found = []
    for program in equivalence_probes():
        needs = frozenset(NEEDS.get(ins[0], ins[0]) for ins in program if ins[0] != "leaf")
        expected = reference_run(tuple(tuple(ins) for ins in program))
        found.append((needs, None if expected is None else tuple(expected.data or ()) + tuple(expected.grad or ())))
    return tuple(found)


def engine_right(claimed: tuple, ops: tuple[str, ...], rtol: float, atol: float) -> bool:
    """Do the numbers an engine's run claimed on the equivalence probes (before its tests) agree with the
    reference's on every probe built only from ops (the assignment's: a bug elsewhere costs no check, so it
    must not decide anything either)? False when a probe is missing or raised where the reference computes."""
    reference = _reference_numbers()
    if len(claimed) != len(reference):
        return False
    for (needs, expected), got in zip(reference, claimed, strict=True):
        if expected is None or not needs <= set(ops):
            continue
        if len(got) != len(expected) or not all(
            isinstance(x, float) and math.isclose(x, y, rel_tol=rtol, abs_tol=max(atol, 1e-9))
            for x, y in zip(got, expected, strict=True)
        ):
            return False
    return True


STRETCH = 4
"""How much other gradings on the machine may plausibly slow a run down by the wall clock: a catch whose
judgement would change within that is marked as decided by the clock."""


@dataclass(frozen=True)
class Catches:
    """What the suite proves about the sabotaged engines."""

    valid: list[str]
    """The student's own tests that pass on every correct engine (the only ones that can catch)."""
    counted: list[str]
    """The operators whose mutant counts."""
    caught: dict[str, str] = field(default_factory=dict)
    """Operator -> the valid test that caught its mutant."""
    dropped: dict[str, str] = field(default_factory=dict)
    """Operator -> why its mutant does not count."""
    judged: bool = True
    """False when nothing could be judged: a correct engine's run reported no tests, or no mutant counts."""
    timing: bool = False
    """Whether how fast the suite ran on the correct engines decided a catch: wall-clock time, which
    other gradings on the machine can stretch, so a batch grades such a student again alone."""
    own_valid: list[str] = field(default_factory=list)
    """Of valid, the tests that also pass on the student's own engine and on its decoy: the only ones that can
    catch a mutant of the student's engine."""
    in_place: list[str] = field(default_factory=list)
    """Of counted, the operators whose mutant of the student's engine did not count (dropped says why), and whose
    spare, a wheat's mutant by the same operator, counts in its place."""

    @property
    def share(self) -> float:
        """The share of counted sabotaged engines caught: 0 when nothing could be judged."""
        return len(self.caught) / len(self.counted) if self.judged and self.counted else 0.0


def catches(found: Suite, invalid: set[str], given: set[str], limit: float) -> Catches:
    """Which tests are valid, which mutants count, and which a valid test catches."""
    wheat_runs = list(found.wheats.values())
    valid = [
        n
        for n in found.student.tests
        if n not in invalid
        and n not in given
        and all(r.tests.get(n, {}).get("outcome") == "passed" for r in wheat_runs)
    ]
    decoy = found.decoy
    own_valid = [n for n in valid if _passed(found.student, n) and decoy is not None and _passed(decoy, n)]
    wheat_time = max((r.duration for r in wheat_runs), default=0.0)
    counted, dropped = counted_mutants(found)
    in_place = [op_id for op_id in counted if op_id in dropped]

    def caught_by(op_id: str, wheat_s: float) -> str | None:
        """For a mutant of the student's engine, its decoy stands beside the correct engines: a test that fails on
        it catches nothing, and a crash or a hang counts only when the suite ran, and ran fast, on it too. A spare
        in its place is a wheat's mutant like any other."""
        if op_id in dropped:
            return catching_test(found.spares[op_id], valid, wheat_s, limit)
        if op_id not in found.own:
            return catching_test(found.sabotages[op_id], valid, wheat_s, limit)
        ran = decoy is not None and decoy.ok
        own_s = max(wheat_s, decoy.duration if decoy is not None and ran else limit)
        return catching_test(found.sabotages[op_id], own_valid, own_s, limit, hangs=ran)

    caught = {op_id: by for op_id in counted if (by := caught_by(op_id, wheat_time))}
    judged = bool(counted) and bool(wheat_runs) and all(r.ok and not r.collection_errors for r in wheat_runs)
    timing = wheat_time * TIMEOUT_MARGIN * STRETCH >= limit and any(
        caught_by(op_id, 0.0) != caught_by(op_id, limit) for op_id in counted
    )
    return Catches(valid, counted, caught, dropped, judged, timing, own_valid, in_place)


def _passed(run: Run, name: str) -> bool:
    return run.tests.get(name, {}).get("outcome") == "passed"


def catching_test(run: Run, valid: list[str], wheat_time: float, limit: float, hangs: bool = True) -> str | None:
    """The name of a valid test that catches this sabotage, if any.

    A failed assertion catches it. A crash (another exception) or a hang catches it only when
    the suite ran far inside the time limit on the correct engines, so that a slow or
    fragile suite is not credited for running out of time; a hang not at all without hangs.
    """
    fast = wheat_time * TIMEOUT_MARGIN < limit
    for name in valid:
        t = run.tests.get(name)
        if t and t["outcome"] == "failed" and (t["kind"] == "assertion" or fast):
            return name
    if run.timeout and fast and hangs:
        return "(the suite hung on this engine)"
    return None


def counted_mutants(found: Suite) -> tuple[list[str], dict[str, str]]:
    """The operators whose place counts, and why a mutant of the student's engine does not count. A mutant of a
    correct engine always counts. A mutant of the student's engine counts when that engine computes the reference's
    numbers (found.right), its decoy (the same engine, rewritten) the engine's own, and the mutant other numbers:
    all on the equivalence probes, as each run said before its test file was written; where it does not, its spare
    counts in its place (the operator is then both counted and dropped), and only an operator without a spare is
    left out. How the student's tests fared on any engine decides nothing here (catches() says which of them may
    catch such a mutant)."""
    counted, dropped = [], {}
    for op_id in sorted(found.sabotages):
        why = _not_counted(found, op_id) if op_id in found.own else None
        if why is not None:
            dropped[op_id] = why
        if why is None or op_id in found.spares:
            counted.append(op_id)
    return counted, dropped


def _not_counted(found: Suite, op_id: str) -> str | None:
    """Why the mutant of the student's engine by this operator does not count, or None when it does."""
    decoy = found.decoy.probes if found.decoy is not None else ()
    return _why_not(found.student.probes, found.right, decoy, found.sabotages[op_id].probes)


def _why_not(mine: tuple, right: bool, decoy: tuple, mutant: tuple) -> str | None:
    if not mine:
        return "your engine's numbers on the grader's probes could not be read"
    if not right:
        return (
            "your engine does not yet compute the right numbers on every probe of the assignment's "
            "operations (see the engine checks), so a mutant of it would judge your tests by a bug of yours"
        )
    if decoy != mine:
        return "your engine could not be rewritten faithfully (rewritten, it computes other numbers)"
    if mutant == mine:
        return "the mutant behaves like your engine on every probe (an equivalent mutant)"
    return None


Wanted = Callable[[EngineRun, RunReply, list[RunReply]], bool]
"""SuiteJob.wanted: whether an engine is to run, from the run on the student's engine and the runs done."""


def spares_wanted(ops: tuple[str, ...], tolerances: Tolerances) -> Wanted:
    """Whether an engine of the plan is to run when its turn comes (SuiteJob.wanted): a spare only where the mutant
    of the student's engine it stands for does not count, as counted_mutants() will judge from the same runs (the
    plan puts a spare after that mutant and the decoy); where one of them has not ended yet (another sandbox runs
    it), the spare runs, to be sure."""

    def wanted(engine: EngineRun, own: RunReply, done: list[RunReply]) -> bool:
        if engine.kind != "spare":
            return True
        mutant = next((r for r in done if r.engine is not None and r.engine.id == f"{engine.operator}@own"), None)
        decoy = next((r for r in done if r.engine is not None and r.engine.kind == "decoy"), None)
        if mutant is None or decoy is None:
            return True
        mine = own.probes or ()
        right = engine_right(mine, ops, tolerances.rtol, tolerances.atol)
        return _why_not(mine, right, decoy.probes or (), mutant.probes or ()) is not None

    return wanted
