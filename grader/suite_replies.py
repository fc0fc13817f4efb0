"""The wire, host end, for one run of the student's tests: its reply (each test's outcome), and what it said in the
frames it sent before its tests could run (the notebook's cells as IPython transforms them, the engine's numbers on
the equivalence probes). Like grader/protocol.py, of which it is the suite's part: every field a claim, checked for
type and shape, capped."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from grader.protocol import Code

MAX_TESTS = 2000


@dataclass(frozen=True)
class SuiteRun:
    """A suite reply that completed: each test's outcome and the collection errors."""

    tests: dict[str, dict[str, Any]]
    collection_errors: list[str]


def suite_run(result: Any, allowed: set[str] | None) -> SuiteRun:
    """A completed run's result, checked for shape; test names outside allowed are dropped. Raises
    ValueError when it cannot be read."""
    try:
        if len(result["tests"]) > MAX_TESTS:
            raise ValueError("too many tests")
        tests = {
            name: _test_entry(entry)
            for name, entry in result["tests"].items()
            if isinstance(name, str) and len(name) <= 300 and (allowed is None or name in allowed)
        }
        errors = [str(e)[:3000] for e in result["collection_errors"]][:20]
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(exc) from None
    return SuiteRun(tests, errors)


BEFORE_TESTS = 2
"""Event frames a suite run may send before its tests: the derived transformations, then the probes."""


@dataclass(frozen=True)
class Before:
    """What a suite run said before its tests could run, each from its own event frame at its own place in the
    run's frames (sandbox/inside/units.py's suite): claims that no test of the student's made, since a frame
    sent is out of the process's reach. Any other frame, or one out of place, is not read for them."""

    transformed: tuple[tuple[int, str], ...] = ()
    """Of a run asked to derive them (its first frame, sent before any of the student's code ran): transformed()."""
    rewritten: str = ""
    """Of a run asked to rewrite them (the same first frame): the tests as pytest rewrites them, rewritten()."""
    probes: tuple | None = None
    """The engine's numbers on the equivalence probes (the next frame, sent before the test file was written), or
    None when the run sent none there."""


def before_tests(events: list, code: Code, derived: bool, probed: bool, rewrite: str | None = None) -> Before:
    """The claims of a suite run's first event frames (at most BEFORE_TESTS of them are kept), each read only at
    its place: first, when derived or rewrite (the tests' text) was asked, the derived transformations and the
    rewritten tests; then the probes when probed was."""
    events = list(events[:BEFORE_TESTS])
    first_: tuple[tuple[tuple[int, str], ...], str] = ((), "")
    if derived or rewrite is not None:
        first = events.pop(0) if events else None
        if not (isinstance(first, dict) and ("transformed" in first or "rewritten" in first)):
            return Before()
        first_ = (transformed(first, code) if derived else (), rewritten(first, rewrite) if rewrite is not None else "")
    next_ = events[0] if events else None
    if not probed or not isinstance(next_, dict) or not isinstance(next_.get("probes"), list):
        return Before(*first_)
    try:
        probes = tuple(_probe_entry(p) for p in next_["probes"][:200])
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError):
        return Before(*first_)
    return Before(*first_, probes)


BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
REWRITTEN_PER_CHAR = 64
"""Characters of a rewrite claimed per character of the tests, at most (and 64 KB more): base64 of pytest's compiled
form of them, its assertions spelled out."""


def rewritten(first: Any, tests: str) -> str:
    """The tests as pytest rewrites them for assertions, as claimed by the first frame of the grading's first run (an
    event frame its process sends before it runs any of the student's code, as for transformed()): base64 text of a
    bounded length, or "". A claim taken as code only by later runs of the same student's tests, in the sandbox, and
    only for the very same text (pytest checks its hash there): what the runs take is the student's tests as pytest
    reads them."""
    said = first.get("rewritten") if isinstance(first, dict) else None
    if not isinstance(said, str) or len(said) > REWRITTEN_PER_CHAR * len(tests) + 65536:
        return ""
    return said if BASE64.fullmatch(said) else ""


def transformed(first: Any, code: Code) -> tuple[tuple[int, str], ...]:
    """The cells of code as IPython transforms them, as claimed by the first frame of a suite run asked to derive
    them (the event frame its process sends before it runs any of the student's code), each kept only if it names
    one of code's cells and is a text of reasonable length for it; () when there are none.

    A claim taken as code: later runs of the same student's tests run these texts for those cells. Only that
    first frame is read: the process was the template's fork, which never runs student code, until it was sent,
    and a frame sent is out of its reach; whatever the student's code says later (a frame of its own, the reply)
    is not read for it. So what later runs take is the submission's own cells as IPython reads them."""
    sources = dict(code.cells)
    claimed = first.get("transformed") if isinstance(first, dict) else None
    if code.kind != "notebook" or not isinstance(claimed, list):
        return ()
    found = {}
    for entry in claimed[: len(sources)]:
        if (
            isinstance(entry, list)
            and len(entry) == 2
            and type(entry[0]) is int
            and entry[0] in sources
            and isinstance(entry[1], str)
            and len(entry[1]) <= 2 * len(sources[entry[0]]) + 4000
        ):
            found[entry[0]] = entry[1]
    return tuple(sorted(found.items()))


def _probe_entry(entry: Any) -> tuple:
    """One probe's numbers as claimed (rounded, so that equal engines compare equal), or what it raised."""
    if isinstance(entry, dict) and isinstance(entry.get("raised"), str):
        return ("raised", entry["raised"][:80])
    numbers_ = []
    for key in ("data", "grad"):
        for x in entry[key]:
            numbers_.append(round(float(x), 9) if isinstance(x, (int, float)) and not isinstance(x, bool) else "bad")
    return tuple(numbers_)


def _test_entry(entry: Any) -> dict[str, Any]:
    outcome, kind, text, duration = entry["outcome"], entry["kind"], entry["message"], entry["duration"]
    if (
        outcome not in ("passed", "failed", "skipped")
        or kind not in ("assertion", "exception", None)
        or not isinstance(text, str)
        or not isinstance(duration, (int, float))
        or isinstance(duration, bool)
    ):
        raise ValueError(entry)
    return {"outcome": outcome, "kind": kind, "message": text[:800], "duration": float(duration)}
