"""The results the grader produces: small frozen dataclasses that serialise to the contract's JSON
(docs/results.md) and are read back from it, checked, as untrusted data: a batch reads results from
disk and from its grading processes, and renders them only as these types."""

from __future__ import annotations

import json
import types
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass, replace
from typing import Any, Literal

from grader.errors import BadResult

SCHEMA = 1
Status = Literal["passed", "failed", "error", "skipped"]
"""A check's status: a closed set, checked by mypy where a check says it and by from_dict where a result is read."""
CHECK_STATUSES: tuple[Status, ...] = typing.get_args(Status)
ERROR_KINDS = (
    "not_found",
    "unreadable",
    "syntax_error",
    "import_error",
    "missing_symbol",
    "timeout",
    "memory",
    "crash",
)


@dataclass(frozen=True)
class Counterexample:
    """The smallest failing case found, as code a student can paste under their own class."""

    code: str
    """Python that builds the expression and calls backward()."""
    expected: dict[str, Any]
    """What the reference engine gives, by name (`"a.grad": 2.0`)."""
    got: dict[str, Any]
    """What the student's engine gave for the same names (a number, or a description)."""


@dataclass(frozen=True)
class NotWritten:
    """A method of the starter kit still to write: the student's code raised NotImplementedError in it."""

    method: str
    """The function it came out of (`Value.__add__`), as the student's process said: the reports group by it."""
    message: str
    """Its message's first line, at most 80 characters (`Value.__add__ is not written yet`): what a table row says."""


@dataclass(frozen=True)
class Change:
    """One run of lines of the student's own code a repair changes (grader/repair/)."""

    line: int
    """The first line changed (1-based), or, for an insertion, the line the new lines go before; of a notebook, the
    line in its cell."""
    method: str
    """The method the change is in (`__mul__`, `Neuron.__call__`), or beside (an insertion)."""
    where: str
    """Where, in words: `__mul__'s _backward`, `backward`."""
    before: str
    """The lines as the student wrote them (empty for an insertion)."""
    after: str
    """The lines the edit writes instead (empty where the assignment shows only where: `where`)."""
    cell: int | None = None
    """Of a notebook, the cell the lines are in (its place among the code cells, from 1, as the grader's notebook
    messages name it: notebooks.cell_name). None in a .py file."""


@dataclass(frozen=True)
class Repair:
    """A verified repair: the edit that undoes the check's cause, found in the student's own code, made in a copy
    and proven by grading the copy again (grader/repair/). Only a visible check carries one."""

    changes: tuple[Change, ...]
    """Its runs of lines, in the order of the file (one at least; all in one cell of a notebook)."""
    fixes: tuple[str, ...]
    """The visible checks that failed and pass on the edited copy."""
    level: str
    """What the assignment shows (`[feedback] repair`): `where` (each change's lines, no `after`) or `diff`."""
    waiting: tuple[str, ...] = ()
    """The visible checks that failed from the cause and, on the edited copy, no longer fail from it but wait for
    another check's fix (skipped, blocked only by checks failing from other causes)."""

    @property
    def cell(self) -> int | None:
        """Of a notebook, the cell the repair is in."""
        return self.changes[0].cell

    @property
    def diff(self) -> bool:
        """Does it show the change (`diff`), or only where it is?"""
        return self.level == "diff"


@dataclass(frozen=True)
class Outcome:
    """What a check function returns; the check runner adds id, points and timing."""

    status: Status
    """One of passed, failed, error, skipped."""
    feedback: str
    """One or more sentences for the student: expected, got, the smallest case, the likely cause."""
    counterexample: Counterexample | None = None
    artifacts: dict[str, Any] = field(default_factory=dict)
    """The check's own data for reports (loss curves, caught sabotages, per-test outcomes)."""
    fraction: float | None = None
    """Partial credit in [0, 1]; None means all (passed) or nothing (anything else)."""
    cause: str | None = None
    """The id of the misconception recognised (grader/causes.py), said when the result is made."""
    not_written: NotWritten | None = None
    """The student's code stopped at a method still to write (NotImplementedError)."""
    timing: bool = False
    """A time limit stopped something in the check, or the wall clock decided its judgement (the check runner marks
    it)."""

    def __post_init__(self):
        if self.status not in CHECK_STATUSES:
            raise ValueError(f"status must be one of {CHECK_STATUSES}, got {self.status!r}")


@dataclass(frozen=True)
class CheckResult:
    id: str
    title: str
    status: Status
    score: float
    max_score: float
    visibility: str
    """visible, or hidden (run only when the instructor grades)."""
    feedback: str
    counterexample: Counterexample | None
    artifacts: dict[str, Any]
    duration_s: float
    cause: str | None = None
    """The id of the misconception recognised (grader/causes.py), which the feedback says."""
    not_written: NotWritten | None = None
    """The student's code stopped at a method still to write (NotImplementedError): the reports group such checks."""
    timing: bool = False
    """A time limit stopped something in the check, or the wall clock decided its judgement: a batch grades the
    student again, alone."""
    repair: Repair | None = None
    """The verified repair of the check's cause (a visible check's, the first naming the cause), or None."""


@dataclass(frozen=True)
class SubmissionError:
    """Why a submission could not be graded at all; kind is one of ERROR_KINDS."""

    kind: str
    message: str


@dataclass(frozen=True)
class Result:
    submission: str
    sha256: str | None
    assignment: str
    grader_version: str
    status: str
    """graded, or error when the submission could not be graded at all."""
    error: SubmissionError | None
    score: float
    max_score: float
    duration_s: float
    checks: tuple[CheckResult, ...]
    schema: int = SCHEMA
    notebook: dict[str, Any] | None = None
    """For a notebook: the cells that raised, timed out or never ran when it was executed."""
    notes: tuple[str, ...] = ()
    """What the student should know about how their file was graded (a package stood in for)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        order = (
            [
                "schema",
                "submission",
                "sha256",
                "assignment",
                "grader_version",
                "status",
                "error",
                "score",
                "max_score",
                "duration_s",
                "checks",
            ]
            + (["notebook"] if self.notebook is not None else [])
            + (["notes"] if self.notes else [])
        )
        data["checks"] = [_typed_in_artifacts(check) for check in data["checks"]]
        return {key: list(data[key]) if key in ("notes", "checks") else data[key] for key in order}

    @classmethod
    def from_dict(cls, data: Any) -> Result:
        """The result that to_dict gave `data`, which is untrusted (read from a file, sent by another
        process): every field is checked, and anything else is a BadResult naming the field."""
        if isinstance(data, dict) and isinstance(data.get("checks"), list):
            data = {**data, "checks": [_typed_out_of_artifacts(c) for c in data["checks"]]}
        result = _from_dict(cls, data, "result")
        for i, check in enumerate(result.checks):
            _repair_checked(check, f"result.checks[{i}]")
        return result

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False, default=str)

    def redacted(self) -> Result:
        """The result as a student may see it: hidden checks keep their status and points only."""
        hidden = "Hidden check: it runs when your instructor grades, and its details are shown to them only."
        checks = tuple(
            replace(
                c,
                feedback=hidden,
                counterexample=None,
                artifacts={},
                cause=None,
                not_written=None,
                timing=False,
                repair=None,
            )
            if c.visibility == "hidden"
            else c
            for c in self.checks
        )
        return replace(self, checks=checks)

    @property
    def passed(self) -> bool:
        """Every check that carries points passed (the contract's exit code 0)."""
        return self.status == "graded" and all(c.status == "passed" for c in self.checks if c.max_score > 0)


IN_ARTIFACTS = ("repair", "not_written", "not_written_in", "timing", "cause")
"""The typed fields of a check that the result JSON holds under artifacts, in this order after the check's own data,
where the contract's fixed set of check keys leaves room for them (docs/results.md): the verified repair, the method
still to write's message and name, the time-limit mark (only when set), and the cause's id."""
CHANGE_KEYS = ("line", "cell", "method", "where", "before", "after")
"""A repair's change as the result JSON holds it (`cell` only of a notebook): its first change's keys are the
repair's own, the others are listed under `also`."""


def _typed_in_artifacts(check: dict) -> dict:
    """A check (asdict's) as the result JSON holds it: its typed fields under artifacts (IN_ARTIFACTS)."""
    written, timing, cause, repair = (check.pop(key) for key in ("not_written", "timing", "cause", "repair"))
    extra: dict[str, Any] = {}
    if repair is not None:
        extra["repair"] = _repair_written(repair)
    if written is not None:
        extra |= {"not_written": written["message"], "not_written_in": written["method"]}
    if timing:
        extra["timing"] = True
    if cause is not None:
        extra["cause"] = cause
    if extra:
        check["artifacts"] = {**check["artifacts"], **extra}
    return check


def _repair_written(repair: dict) -> dict:
    """A repair (asdict's) as the contract writes it: its first change's keys, `verified`, `fixes`, `level`, and
    the other changes under `also`."""
    first, *rest = repair["changes"]
    written = {**_change_written(first), "verified": True, "fixes": list(repair["fixes"]), "level": repair["level"]}
    if rest:
        written["also"] = [_change_written(change) for change in rest]
    if repair.get("waiting"):
        written["waiting"] = list(repair["waiting"])
    return written


def _change_written(change: dict) -> dict:
    cell = {"cell": change["cell"]} if change["cell"] is not None else {}
    return {"line": change["line"], **cell, **{k: change[k] for k in ("method", "where", "before", "after")}}


def _typed_out_of_artifacts(check: Any) -> Any:
    """The inverse of _typed_in_artifacts, on untrusted data (anything else is left for from_dict to refuse; a
    not_written without its method, as a result written before the method was named, is grouped by its message)."""
    if not isinstance(check, dict) or not isinstance(check.get("artifacts"), dict):
        return check
    if any(key in check for key in ("not_written", "timing", "cause", "repair")):
        return check
    artifacts = dict(check["artifacts"])
    typed = {key: artifacts.pop(key) for key in IN_ARTIFACTS if key in artifacts}
    written = None
    if "not_written" in typed:
        written = {"method": typed.get("not_written_in", typed["not_written"]), "message": typed["not_written"]}
    elif "not_written_in" in typed:
        raise BadResult("result.checks: a not_written_in without its not_written")
    return {
        **check,
        "artifacts": artifacts,
        "cause": typed.get("cause"),
        "not_written": written,
        "timing": typed.get("timing", False),
        "repair": _repair_read(typed["repair"]) if "repair" in typed else None,
    }


def _repair_read(data: Any) -> dict:
    """A repair as the contract writes it, as the typed field's data (which from_dict then checks field by field);
    anything that is not a verified repair as the grader writes one is a BadResult."""
    where = "result.checks: artifacts.repair"
    if not isinstance(data, dict) or data.get("verified") is not True:
        raise BadResult(f"{where}: not a verified repair")
    unknown = sorted(str(k) for k in data if k not in (*CHANGE_KEYS, "verified", "fixes", "level", "also", "waiting"))
    if unknown:
        raise BadResult(f"{where}: unknown field {unknown[0]!r}")
    also = data.get("also", [])
    if not isinstance(also, list):
        raise BadResult(f"{where}.also: expected a list")
    first = {k: data[k] for k in CHANGE_KEYS if k in data}
    waiting = {"waiting": data["waiting"]} if "waiting" in data else {}
    return {"changes": [first, *also], "fixes": data.get("fixes"), "level": data.get("level"), **waiting}


def _repair_checked(check: CheckResult, where: str) -> None:
    """What a repair's types do not say: it is on a visible check, its lines and cell count from 1, and a
    notebook's is in one cell."""
    repair = check.repair
    if repair is None:
        return
    if check.visibility != "visible":
        raise BadResult(f"{where}: a hidden check with a repair")
    if any(c.line < 1 or (c.cell is not None and c.cell < 1) for c in repair.changes):
        raise BadResult(f"{where}: a repair's line or cell below 1")
    if len({c.cell for c in repair.changes}) != 1:
        raise BadResult(f"{where}: a repair's changes in several cells")


ALLOWED = {
    (Result, "status"): ("graded", "error"),
    (Result, "schema"): (SCHEMA,),
    (CheckResult, "status"): CHECK_STATUSES,
    (CheckResult, "visibility"): ("visible", "hidden"),
    (SubmissionError, "kind"): ERROR_KINDS,
    (Repair, "level"): ("where", "diff"),
}
"""The fields whose value is one of a few, as from_dict checks them."""


def from_data(cls: type, data: Any, where: str, allowed: dict[tuple[type, str], tuple] | None = None):
    """An instance of the dataclass cls from JSON data, every field checked against its annotation (nested
    dataclasses too) and, for the fields `allowed` names (with ALLOWED's), against the values it allows; anything
    else is a BadResult naming the field. Read untrusted data with it (grader/classfiles.py does)."""
    return _from_dict(cls, data, where, {**ALLOWED, **(allowed or {})})


def _from_dict(cls: type, data: Any, where: str, allowed: dict[tuple[type, str], tuple] = ALLOWED):
    """An instance of the dataclass cls from to_dict's data, every field checked against its annotation."""
    if not isinstance(data, dict):
        raise BadResult(f"{where}: expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise BadResult(f"{where}: unknown field {unknown[0]!r}")
    values = {}
    for name, spec in known.items():
        if name not in data:
            if spec.default is MISSING and spec.default_factory is MISSING:
                raise BadResult(f"{where}: no {name!r}")
            continue
        value = _value(_members_type(hints[name]), data[name], f"{where}.{name}", allowed)
        among = allowed.get((cls, name), _members(hints[name]))
        if among is not None and value not in among:
            raise BadResult(f"{where}.{name}: {value!r} is not one of {among}")
        values[name] = value
    if cls is Result and (values.get("status") == "error") != (values.get("error") is not None):
        raise BadResult(f"{where}: an error result, and only one, has an error")
    return cls(**values)


def _members(hint: Any) -> tuple | None:
    """A closed set's (Status's) members, which a value read must be one of; None for any other hint."""
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else None


def _members_type(hint: Any) -> Any:
    """A closed set's members' type (a value read is checked to be of it, then to be one of them); any other hint
    as it is."""
    members = _members(hint)
    return hint if members is None else type(members[0])


def _value(hint: Any, value: Any, where: str, allowed: dict[tuple[type, str], tuple] = ALLOWED) -> Any:
    """value, checked to be JSON data of the annotation's type (a dataclass read with _from_dict)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        kinds = [a for a in args if a is not type(None)]
        return _value(kinds[0] if len(kinds) == 1 else Any, value, where, allowed)
    if isinstance(hint, type) and is_dataclass(hint):
        return _from_dict(hint, value, where, allowed)
    if origin is tuple and isinstance(value, (list, tuple)):
        return tuple(_value(args[0], v, f"{where}[{i}]", allowed) for i, v in enumerate(value))
    if origin is dict and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _value(args[1], v, f"{where}.{k}", allowed) for k, v in value.items()}
    if hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value  # an int stays one: the JSON written again is the JSON read
    if hint in (int, str, bool) and type(value) is hint:
        return value
    raise BadResult(f"{where}: expected {getattr(hint, '__name__', hint)}, got {type(value).__name__}")
