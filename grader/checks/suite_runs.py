"""The runs of the student's suite, read as claims, and what they prove about the sabotaged engines.

A run's reply is checked for shape and capped (Run, read_run); a grading's runs together are a
Suite. From them, Catches says which of the student's tests are valid (pass on every correct
engine), which sabotaged engines count, and which of those a valid test catches: the sabotage
check pays for it, and it caps what student_tests and wheat pay, since tests that catch nothing
have shown nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grader import protocol
from grader.checks.suite_text import exception_name
from grader.lanes import RunReply

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
        claim = protocol.suite_run(message.get("result"), allowed)
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
    wheat_time = max((r.duration for r in wheat_runs), default=0.0)
    counted, dropped = _counted_mutants(found, valid)
    caught = {op_id: by for op_id in counted if (by := _caught(found.sabotages[op_id], valid, wheat_time, limit))}
    judged = bool(counted) and bool(wheat_runs) and all(r.ok and not r.collection_errors for r in wheat_runs)
    timing = wheat_time * TIMEOUT_MARGIN * STRETCH >= limit and any(
        _caught(found.sabotages[op_id], valid, 0.0, limit) != _caught(found.sabotages[op_id], valid, limit, limit)
        for op_id in counted
    )
    return Catches(valid, counted, caught, dropped, judged, timing)


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


def _counted_mutants(found: Suite, valid: list[str]) -> tuple[list[str], dict[str, str]]:
    """The operators whose mutant counts, and why the others are left out. A mutant of the student's
    engine counts only when it behaves differently from the unmutated engine on the grader's probes,
    and only when the student's valid tests pass on their engine and on its decoy (the same engine,
    rewritten): a test that recognises its own code fails on the decoy and so counts for nothing."""
    counted, dropped = [], {}
    own_ok = all(found.student.tests.get(n, {}).get("outcome") == "passed" for n in valid)
    decoy = found.decoy
    decoy_ok = (
        decoy is not None
        and decoy.ok
        and decoy.probes == found.student.probes
        and all(decoy.tests.get(n, {}).get("outcome") == "passed" for n in valid)
    )
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
