"""The host end of the wire: one builder per request the grader sends into a sandbox, and one
reader per reply, turning the raw JSON a student's process answered into typed claims.

The inside end is sandbox/inside/units.py, one switch over the same ops. Everything that comes
back is untrusted: a reader checks type and shape, caps every string and list, and returns a
typed value or raises ValueError, which the caller reports as a reply the grader cannot read.
No other host module builds a request dictionary or indexes a reply.

Requests: load, eval_many, gradcheck_many, order_many, direct_many, numerical_grad, neuron, train, suite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from grader.errors import WorkerFailure
from grader.files import MODULE_FILE
from grader.programs import Program
from grader.sandbox.inside.probes import MAX_CALLS

# -- what the sandbox loads ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Code:
    """The student's code as a sandbox loads it."""

    kind: str
    """py or notebook."""
    files: dict[str, bytes]
    """Written into the sandbox's read-only work folder."""
    cells: tuple[tuple[int, str], ...] = ()
    """A notebook's code cells: (index among all cells, source)."""
    stand_ins: tuple[str, ...] = ()
    """Packages the assignment allows: where one is not installed, importing it gives a stand-in."""
    stand_in_missing: bool = True
    """Whether any other package the student's own code imports gives a stand-in where it is not installed, and the
    magics of a stood-in package (`%matplotlib inline`) do nothing (sandbox/inside/standins.py)."""
    transformed: tuple[tuple[int, str], ...] = ()
    """Of a notebook, cells as IPython transforms them, derived by a run of the tests on the student's own engine
    before any of the student's code ran in it (transformed()): later runs take these rather than tokenize every
    cell again."""

    @property
    def text(self) -> str:
        """The student's code as one text: the module's file, or a notebook's code cells in order with a blank line
        between them (what the sabotage plan mutates, the suite's feedback quotes, and a notebook's tests are)."""
        if self.kind == "notebook":
            return "\n\n".join(source for _, source in self.cells)
        return self.files.get(MODULE_FILE, b"").decode("utf-8", "replace")

    def request(
        self, skip: frozenset[int] = frozenset(), cell_timeout: float = 30.0, lean: bool = False, derive: bool = False
    ) -> dict:
        """How to load it: the module's file, or the notebook's cells without those in skip (lean: each cell
        transformed runs as plain Python, grader/sandbox/inside/notebook.py's _run_lean; derive: a suite run first
        says how IPython transforms the cells, before it runs any, grader/sandbox/inside/units.py's suite)."""
        if self.kind == "notebook":
            return {
                "kind": "notebook",
                "cells": [list(c) for c in self.cells],
                "skip": sorted(skip),
                "cell_timeout": cell_timeout,
                "stand_ins": list(self.stand_ins),
                "stand_in_missing": self.stand_in_missing,
                "transformed": [list(c) for c in self.transformed],
                "lean": lean,
                "derive": derive,
            }
        return {
            "kind": "py",
            "file": MODULE_FILE,
            "stand_ins": list(self.stand_ins),
            "stand_in_missing": self.stand_in_missing,
        }

    @property
    def warm(self) -> tuple[str, ...]:
        return ("ipython",) if self.kind == "notebook" else ()


# -- requests -----------------------------------------------------------------------------------------------------


def load(code: dict) -> dict:
    return {"op": "load", "code": code}


def eval_many(programs: list[Program], backward: bool, want: list[int] | None, seed: bool, stop_on_error: bool) -> dict:
    return {
        "op": "eval_many",
        "programs": programs,
        "backward": backward,
        "want": want,
        "seed": seed,
        "stop_on_error": stop_on_error,
    }


def gradcheck_many(programs: list[Program], h: float) -> dict:
    return {"op": "gradcheck_many", "programs": programs, "h": h}


def order_many(programs: list[Program], seed: bool) -> dict:
    return {"op": "order_many", "programs": programs, "seed": seed, "stop_on_error": False}


def direct_many(programs: list[Program], incoming: list[float]) -> dict:
    return {"op": "direct_many", "programs": programs, "incoming": incoming, "stop_on_error": False}


def numerical_grad(function: str, x: float, h: float | None) -> dict:
    return {"op": "numerical_grad", "function": function, "x": x, "h": h}


def neuron(nin: int, weights: list[float], bias: float, x: list[float]) -> dict:
    return {"op": "neuron", "nin": nin, "weights": weights, "bias": bias, "x": x}


def train(args: dict, initial: list[float]) -> dict:
    return {"op": "train", "args": {**args, "initial": initial}}


def suite(
    code: dict, tests: str, engine: str | None, fixtures: list[str], probes: list, rewritten: str | None = None
) -> dict:
    """One run of the tests. rewritten: the tests as pytest rewrites them, said by the grading's first run
    (grader/suite_replies.py's Before), for this run to place where pytest reads them; "" asks this run to say them
    (it rewrites them before any of the student's code runs); None neither."""
    return {
        "op": "suite",
        "code": code,
        "tests": tests,
        "engine": engine,
        "fixtures": fixtures,
        "probes": probes,
        "rewrite": rewritten == "",
        "rewritten": rewritten or "",
    }


# -- replies: typed claims ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudentError:
    """What the student's code raised, as its process claims: strings, capped."""

    type: str
    message: str
    traceback: str = ""
    lineno: int | str | None = None
    offset: int | str | None = None
    text: str | None = None
    raised_in: str = ""
    """Of a NotImplementedError, the function of the student's code it came out of (`Value.__add__`)."""

    @classmethod
    def from_claim(cls, raw: Any) -> StudentError:
        if not isinstance(raw, dict):
            return UNREADABLE
        extra = {
            key: raw[key] if isinstance(raw[key], int) and not isinstance(raw[key], bool) else str(raw[key])[:400]
            for key in ("lineno", "offset", "text")
            if key in raw
        }
        said = cls(*(str(raw.get(key, ""))[:4000] for key in ("type", "message", "traceback")), **extra)
        return replace(said, raised_in=str(raw.get("raised_in", ""))[:200])


UNREADABLE = StudentError(
    "UnreadableReply",
    "your code answered the grader with something it cannot read (did it replace the grader's code in its process?)",
)


@dataclass(frozen=True)
class Observation:
    """Numbers read off one engine for one program: data and grad per node, or what went wrong."""

    data: list[Any] | None = None
    grad: list[Any] | None = None
    error: StudentError | None = None
    """The student's code raised: type, message, traceback trimmed to their lines."""
    failure: WorkerFailure | None = None
    """The student's process hung, ran out of memory, died, or broke the protocol."""

    @property
    def ok(self) -> bool:
        return self.error is None and self.failure is None


def number(x: Any) -> Any:
    """A number as claimed (a float, or {"bad": description}), or None if it is neither."""
    if isinstance(x, float) or (isinstance(x, int) and not isinstance(x, bool)):
        return float(x)
    if isinstance(x, dict) and isinstance(x.get("bad"), str):
        return {"bad": x["bad"][:300]}
    return None


def numbers(xs: Any, n: int) -> list[Any] | None:
    """n claimed numbers, or None if the claim is malformed."""
    if not isinstance(xs, list) or len(xs) != n:
        return None
    read = [number(x) for x in xs]
    return None if any(x is None for x in read) else read


def a_number(x: Any) -> Any:
    read = number(x)
    if read is None:
        raise ValueError(x)
    return read


def an_int(x: Any) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise ValueError(x)
    return x


def a_bool(x: Any) -> bool:
    if not isinstance(x, bool):
        raise ValueError(x)
    return x


def a_name(x: Any) -> str:
    if not isinstance(x, str):
        raise ValueError(x)
    return x[:100]


def list_of(read: Callable[[Any], Any], cap: int = 100_000) -> Callable[[Any], list]:
    def convert(xs: Any) -> list:
        if not isinstance(xs, list) or len(xs) > cap:
            raise ValueError(xs)
        return [read(x) for x in xs]

    return convert


def raised(reply: Any) -> StudentError | None:
    """What the student's code raised, if the reply says the request did not complete (None if it did)."""
    if isinstance(reply, dict) and reply.get("ok") is True:
        return None
    return StudentError.from_claim(reply.get("error") if isinstance(reply, dict) else None)


def fields(reply: dict, shape: dict[str, Callable[[Any], Any]]) -> dict[str, Any] | Observation:
    """A reply's result, each field read through its converter in shape (missing fields left out), or an
    Observation of what the student's code raised or of a malformed reply."""
    if (error := raised(reply)) is not None:
        return Observation(error=error)
    result = reply.get("result")
    if not isinstance(result, dict):
        return Observation(error=UNREADABLE)
    try:
        return {key: read(result[key]) for key, read in shape.items() if key in result}
    except (TypeError, ValueError):
        return Observation(error=UNREADABLE)


def observation(value: Any, n: int, backward: bool) -> Observation:
    """One program's numbers in an eval_many reply: n nodes' data (and grads, after backward)."""
    if not isinstance(value, dict):
        return Observation(error=UNREADABLE)
    if "error" in value:
        return Observation(error=StudentError.from_claim(value["error"]))
    data = numbers(value.get("data"), n)
    grad = numbers(value.get("grad"), n) if backward else None
    if data is None or (backward and grad is None):
        return Observation(error=UNREADABLE)
    return Observation(data=data, grad=grad)


def gradcheck(value: Any, program: Program) -> dict | Observation:
    """One program's gradient check in a gradcheck_many reply: the analytic gradients and the output
    one step h up and down each leaf."""
    if isinstance(value, dict) and "error" in value:
        return Observation(error=StudentError.from_claim(value["error"]))
    leaves = [i for i, ins in enumerate(program) if ins[0] == "leaf"]
    if not isinstance(value, dict) or value.get("leaves") != leaves:
        return Observation(error=UNREADABLE)
    analytic, up, down = (numbers(value.get(k), len(leaves)) for k in ("analytic", "up", "down"))
    output = number(value.get("output"))
    if analytic is None or up is None or down is None or output is None:
        return Observation(error=UNREADABLE)
    return {"leaves": leaves, "analytic": analytic, "up": up, "down": down, "output": output}


@dataclass(frozen=True)
class Order:
    """The sequence in which backward() called the operation nodes' own backward (by node index), as the
    student's process claims; hook is the attribute watched, or empty when none could be."""

    hook: str
    watched: tuple[int, ...] = ()
    calls: tuple[int, ...] = ()


def order(value: Any, program: Program) -> Order | Observation:
    """One program's order_many reply: the calls seen, an Order with no hook when nothing could be watched, or
    what the student's code raised."""
    if isinstance(value, dict) and "error" in value:
        return Observation(error=StudentError.from_claim(value["error"]))
    if not isinstance(value, dict):
        return Observation(error=UNREADABLE)
    if value.get("hook") is None:
        return Order("")
    ops = tuple(i for i, ins in enumerate(program) if ins[0] != "leaf")
    calls = value.get("calls")
    if (
        not isinstance(value["hook"], str)
        or value.get("watched") != list(ops)
        or not isinstance(calls, list)
        or len(calls) > MAX_CALLS
        or not all(type(i) is int and i in ops for i in calls)
    ):
        return Observation(error=UNREADABLE)
    return Order(value["hook"][:100] or "?", ops, tuple(calls))


@dataclass(frozen=True)
class Direct:
    """Every node's grad after the output's own backward was called alone, one tuple per incoming gradient asked
    for, as the student's process claims; hook is the attribute called, or empty when none could be."""

    hook: str
    grads: tuple[tuple[Any, ...], ...] = ()


def direct(value: Any, program: Program, incoming: int) -> Direct | Observation:
    """One program's direct_many reply: the grads seen per incoming gradient, a Direct with no hook when the
    output has no backward of its own to call, or what the student's code raised."""
    if isinstance(value, dict) and "error" in value:
        return Observation(error=StudentError.from_claim(value["error"]))
    if not isinstance(value, dict):
        return Observation(error=UNREADABLE)
    if value.get("hook") is None:
        return Direct("")
    grads = value.get("grads")
    read = [numbers(g, len(program)) for g in grads] if isinstance(grads, list) and len(grads) == incoming else None
    if not isinstance(value["hook"], str) or read is None or any(g is None for g in read):
        return Observation(error=UNREADABLE)
    return Direct(value["hook"][:100] or "?", tuple(tuple(g) for g in read if g is not None))


MAX_SYMBOLS = 10_000


@dataclass(frozen=True)
class Loaded:
    """A load reply: the names the student's code defines and the stand-ins it imported, or what it raised.
    symbols is None when the reply could not be read."""

    error: StudentError | None
    symbols: list[str] | None = None
    stand_ins: tuple[str, ...] = ()
    cells: dict[int, dict] | None = None
    """A notebook's cells, by index, as the run reported them (None when it did not say)."""
    magics: tuple[tuple[str, int, str], ...] = ()
    """A notebook's magics of a package standing in, which did nothing: (package, cell index, the magic)."""


MAX_STAND_INS = 20


def _package(x: Any) -> bool:
    return isinstance(x, str) and x.isidentifier() and len(x) <= 100


def _magics(claimed: Any) -> tuple[tuple[str, int, str], ...]:
    """The magics claimed to have done nothing, each a package's name, a cell index and a line of text, capped."""
    if not isinstance(claimed, list):
        return ()
    return tuple(
        (m[0], m[1], " ".join(m[2].split())[:120])
        for m in claimed[:50]
        if isinstance(m, list) and len(m) == 3 and _package(m[0]) and type(m[1]) is int and isinstance(m[2], str)
    )


def loaded(reply: dict) -> Loaded:
    if (error := raised(reply)) is not None:
        return Loaded(error)
    result: dict[str, Any] = reply["result"] if isinstance(reply.get("result"), dict) else {}
    symbols = result.get("symbols")
    if not isinstance(symbols, list) or len(symbols) > MAX_SYMBOLS or not all(isinstance(s, str) for s in symbols):
        symbols = None
    used = result.get("stand_ins")
    stand_ins = tuple(dict.fromkeys(n for n in used[:MAX_STAND_INS] if _package(n))) if isinstance(used, list) else ()
    cells = result.get("cells")
    by_index = (
        {c["index"]: c for c in cells if isinstance(c, dict) and isinstance(c.get("index"), int)}
        if isinstance(cells, list)
        else None
    )
    return Loaded(None, symbols, stand_ins, by_index, _magics(result.get("magics")))
