"""Assignment specs: which checks, their points and visibility, tolerances and limits.

An assignment is a folder under assignments/ holding `assignment.toml`. It is
validated on load; a mistake raises SpecError naming the file, the field, the value
and what was expected, because the instructor is the one who fixes it.
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Collection
from dataclasses import MISSING, dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

from grader.errors import SpecError, UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (Gradescope's default image): the same parser, before it joined the standard library
    import tomli as tomllib
from grader.sandbox.inside.ops import DEFAULT_OPS, OPS

VISIBILITIES = ("visible", "hidden")


@dataclass(frozen=True)
class CheckSpec:
    id: str
    points: float
    visibility: str = "visible"


@dataclass(frozen=True)
class Tolerances:
    rtol: float = 1e-6
    """Relative tolerance when comparing with the reference engine."""
    atol: float = 1e-9
    """Absolute tolerance when comparing with the reference engine."""
    gradcheck_rtol: float = 1e-4
    """Relative tolerance between analytic gradients and central differences."""


@dataclass(frozen=True)
class AssignmentLimits:
    request_s: float = 5.0
    """Wall-clock seconds for one probe (one expression built and backpropagated)."""
    check_s: float = 30.0
    """Wall-clock seconds for one check, all its probes included."""
    submission_s: float = 180.0
    """Wall-clock seconds for a whole submission."""
    memory_mb: int = 1024
    """Memory cap of the process running the student's code."""
    tests_s: float = 30.0
    """Wall-clock seconds for one run of the student's test suite on one engine."""
    cell_s: float = 30.0
    """Wall-clock seconds for one cell of a notebook submission."""


@dataclass(frozen=True)
class Search:
    max_examples: int = 100
    """Expressions hypothesis tries per rule before shrinking a failure."""


@dataclass(frozen=True)
class Training:
    """The lesson's training loop: forward on every point, squared errors summed, zero grads,
    backward(), p.data -= lr * p.grad, from random.seed(seed)."""

    model: str = "Neuron"
    """Neuron (a single tanh neuron) or MLP."""
    sizes: tuple = (2,)
    """Neuron: (nin,); MLP: (nin, [layer sizes...]), as the constructor takes them."""
    xs: tuple = ()
    ys: tuple = ()
    steps: int = 50
    lr: float = 0.1
    seed: int = 0
    threshold: float = 0.1
    """The loss must fall below this within the steps."""
    rtol: float = 1e-6
    """Relative tolerance between the student's and the reference's loss at every step."""


@dataclass(frozen=True)
class LatePolicy:
    """`[late]`: what lateness costs. By default nothing: late work is only flagged."""

    due: str = ""
    """The deadline, ISO 8601 with its offset: needed to count days late from an LMS's submission time."""
    grace_minutes: float = 0.0
    """Minutes past the deadline that are not late."""
    penalty_per_day: float = 0.0
    """Percent of the points earned taken per day late, or part of a day (0: flag only)."""
    max_penalty: float = 100.0
    """The most percent taken, however late."""


REPAIRS = ("off", "where", "diff")


@dataclass(frozen=True)
class Feedback:
    """`[feedback]`: what a student is shown beyond each check's outcome."""

    repair: str = "where"
    """A verified repair (grader/repair/): off; where (the line and method to change); diff (and the change)."""


@dataclass(frozen=True)
class Assignment:
    id: str
    version: str
    title: str
    ops: tuple[str, ...]
    """Operations the assignment covers (forward and gradcheck use all of them)."""
    required_symbols: tuple[str, ...]
    checks: tuple[CheckSpec, ...]
    tolerances: Tolerances
    limits: AssignmentLimits
    search: Search
    training: Training | None
    sabotages: tuple[str, ...]
    """Ids of the sabotage operators whose mutants the student's tests must catch."""
    packages: tuple[str, ...]
    """Packages a submission may import (numpy, matplotlib...): used if the sandbox's Python has them,
    else a stand-in is imported, whose use raises a clear error, and the student is told."""
    folder: Path
    late: LatePolicy = field(default_factory=LatePolicy)
    feedback: Feedback = field(default_factory=Feedback)

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.checks)

    def without(self, check_ids) -> Assignment:
        """The same assignment without some checks (selftest grades engines, not test suites)."""
        return replace(self, checks=tuple(c for c in self.checks if c.id not in check_ids))


def assignments_root() -> Path:
    return Path(str(resources.files("assignments")))


def available() -> list[str]:
    return sorted(p.parent.name for p in assignments_root().glob("*/assignment.toml"))


def load(
    name_or_path: str | Path, *, checks: Collection[str], operators: Collection[str], drawn: Collection[str] = ()
) -> Assignment:
    """Load an assignment by id (a folder under assignments/) or by a path to its folder or TOML; checks and
    operators are the ids it may name (grader/catalog.py gives the registries'), drawn the sabotages it has when
    it names none (default: every operator)."""
    raw, path = _read(name_or_path)
    return parse(raw, path, checks=checks, operators=operators, drawn=drawn)


def limits(name_or_path: str | Path) -> AssignmentLimits:
    """An assignment's [limits] alone, read as load() reads them but without the registries (so without importing
    the checks): what a sandbox started before the grader is imported needs to know (grader check)."""
    raw, path = _read(name_or_path)
    return _Where(path).section(raw, "limits", AssignmentLimits)


def _read(name_or_path: str | Path) -> tuple[dict[str, Any], Path]:
    path = Path(name_or_path)
    if path.is_dir():
        path = path / "assignment.toml"
    if not path.is_file():
        path = assignments_root() / str(name_or_path) / "assignment.toml"
    if not path.is_file():
        raise UsageError(f"unknown assignment {str(name_or_path)!r}; available: {', '.join(available())}")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    return raw, path


def parse(
    raw: dict[str, Any], path: Path, *, checks: Collection[str], operators: Collection[str], drawn: Collection[str] = ()
) -> Assignment:
    """Validate a spec's parsed TOML; every error names the field, the value and what was expected."""
    known_checks = checks

    where = _Where(path)
    checks_table = where.get(raw, "checks", dict, required=True)
    if not checks_table:
        raise SpecError(f"{path}: [checks] is empty; name at least one check")
    check_specs: list[CheckSpec] = []
    for check_id, entry in checks_table.items():
        if check_id not in known_checks:
            raise SpecError(
                f"{path}: checks.{check_id}: no such check; expected one of {', '.join(sorted(known_checks))}"
            )
        entry = where.expect(f"checks.{check_id}", entry, dict)
        points = where.get(entry, "points", (int, float), required=True, prefix=f"checks.{check_id}")
        if points < 0:
            raise SpecError(f"{path}: checks.{check_id}.points = {points!r}: expected a number >= 0")
        visibility = where.get(entry, "visibility", str, default="visible", prefix=f"checks.{check_id}")
        if visibility not in VISIBILITIES:
            raise SpecError(
                f"{path}: checks.{check_id}.visibility = {visibility!r}: expected one of {', '.join(VISIBILITIES)}"
            )
        where.no_extra(entry, {"points", "visibility"}, f"checks.{check_id}")
        check_specs.append(CheckSpec(check_id, float(points), visibility))
    ops = tuple(where.get(raw, "ops", list, default=list(DEFAULT_OPS)))
    for op in ops:
        if op not in OPS:
            raise SpecError(f"{path}: ops contains {op!r}: expected operations from {', '.join(OPS)}")
    assignment = Assignment(
        id=where.get(raw, "id", str, required=True),
        version=str(where.get(raw, "version", (str, int), required=True)),
        title=where.get(raw, "title", str, default=""),
        ops=ops,
        required_symbols=tuple(where.get(raw, "required_symbols", list, default=["Value"])),
        checks=tuple(check_specs),
        tolerances=where.section(raw, "tolerances", Tolerances),
        limits=where.section(raw, "limits", AssignmentLimits),
        search=where.section(raw, "search", Search),
        training=_training(where, raw) if "training" in raw else None,
        sabotages=_sabotages(where, raw, operators, drawn),
        packages=_packages(where, raw),
        folder=path.parent,
        late=_late(where, raw),
        feedback=_feedback(where, raw),
    )
    where.no_extra(raw, {f.name for f in fields(Assignment)} - {"folder"}, "")
    return assignment


def _sabotages(
    where: _Where, raw: dict[str, Any], operators: Collection[str], drawn: Collection[str]
) -> tuple[str, ...]:
    known = sorted(operators)
    chosen = where.get(raw, "sabotages", list, default=sorted(drawn) or known)
    for sab in chosen:
        if sab not in known:
            raise SpecError(f"{where.path}: sabotages contains {sab!r}: expected ids from {', '.join(known)}")
    return tuple(chosen)


DEFAULT_PACKAGES = ("numpy", "matplotlib", "graphviz", "pandas", "scipy", "seaborn", "sklearn", "tqdm")
"""What lessons import beside the engine (plots, graph drawings, arrays) without the engine needing it."""


def _packages(where: _Where, raw: dict[str, Any]) -> tuple[str, ...]:
    chosen = where.get(raw, "packages", list, default=list(DEFAULT_PACKAGES))
    for name in chosen:
        if not (isinstance(name, str) and name.isidentifier()):
            raise SpecError(f"{where.path}: packages contains {name!r}: expected names of top-level packages")
    return tuple(chosen)


def instant(text: str) -> datetime.datetime:
    """An ISO 8601 date and time, `Z` for UTC included (Python 3.10's fromisoformat does not read it)."""
    return datetime.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)


def _late(where: _Where, raw: dict[str, Any]) -> LatePolicy:
    table = where.get(raw, "late", dict, default={})
    due = where.get(table, "due", (str, datetime.datetime), default="", prefix="late")
    try:
        when = due if isinstance(due, datetime.datetime) else instant(due) if due else None
    except ValueError:
        when = None
    if due and (when is None or when.tzinfo is None):
        raise SpecError(
            f"{where.path}: late.due = {due!r}: expected a date and time with its offset (2026-03-01T23:59:00-05:00)"
        )
    numbers = {}
    for key, top in (("grace_minutes", None), ("penalty_per_day", 100.0), ("max_penalty", 100.0)):
        value = float(where.get(table, key, (int, float), default=getattr(LatePolicy, key), prefix="late"))
        if value < 0 or (top is not None and value > top):
            raise SpecError(
                f"{where.path}: late.{key} = {value!r}: expected a number from 0"
                + (f" to {top:g} (percent)" if top else "")
            )
        numbers[key] = value
    where.no_extra(table, {"due", *numbers}, "late")
    return LatePolicy(when.isoformat() if when else "", **numbers)


def _feedback(where: _Where, raw: dict[str, Any]) -> Feedback:
    table = where.get(raw, "feedback", dict, default={})
    repair = where.get(table, "repair", str, default=Feedback.repair, prefix="feedback")
    if repair not in REPAIRS:
        raise SpecError(f"{where.path}: feedback.repair = {repair!r}: expected one of {', '.join(REPAIRS)}")
    where.no_extra(table, {"repair"}, "feedback")
    return Feedback(repair)


def _training(where: _Where, raw: dict[str, Any]) -> Training:
    table = where.get(raw, "training", dict)
    model = where.get(table, "model", str, required=True, prefix="training")
    if model not in ("Neuron", "MLP"):
        raise SpecError(f"{where.path}: training.model = {model!r}: expected Neuron or MLP")
    sizes = where.get(table, "sizes", list, required=True, prefix="training")
    xs = where.get(table, "xs", list, required=True, prefix="training")
    ys = where.get(table, "ys", list, required=True, prefix="training")
    nin = sizes[0] if sizes and isinstance(sizes[0], int) else None
    if nin is None or (model == "MLP") != (len(sizes) == 2):
        raise SpecError(
            f"{where.path}: training.sizes = {sizes!r}: expected [nin] for a Neuron, "
            "[nin, [sizes of the layers]] for an MLP"
        )
    for i, x in enumerate(xs):
        if not (isinstance(x, list) and len(x) == nin and all(isinstance(v, (int, float)) for v in x)):
            raise SpecError(f"{where.path}: training.xs[{i}] = {x!r}: expected a list of {nin} numbers")
    if len(ys) != len(xs) or not all(isinstance(y, (int, float)) for y in ys):
        raise SpecError(f"{where.path}: training.ys = {ys!r}: expected {len(xs)} numbers, one per point of xs")
    numbers = {}
    for key, kind in (
        ("steps", int),
        ("lr", (int, float)),
        ("seed", int),
        ("threshold", (int, float)),
        ("rtol", (int, float)),
    ):
        numbers[key] = where.get(table, key, kind, default=getattr(Training, key), prefix="training")
    where.no_extra(table, {"model", "sizes", "xs", "ys", *numbers}, "training")
    return Training(
        model, tuple(sizes), tuple(tuple(float(v) for v in x) for x in xs), tuple(float(y) for y in ys), **numbers
    )


class _Where:
    """Reads typed fields out of TOML tables, raising SpecError with the field's full name."""

    def __init__(self, path: Path):
        self.path = path

    def expect(self, name: str, value: Any, kind: type | tuple[type, ...]) -> Any:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            expected = " or ".join(k.__name__ for k in kinds)
            raise SpecError(f"{self.path}: {name} = {value!r}: expected {expected}, got {type(value).__name__}")
        return value

    def get(self, table, key, kind, *, required=False, default=None, prefix=""):
        name = f"{prefix}.{key}" if prefix else key
        if key not in table:
            if required:
                raise SpecError(f"{self.path}: {name} is missing")
            return default
        return self.expect(name, table[key], kind)

    def section(self, raw, key, cls):
        table = self.get(raw, key, dict, default={})
        values = {}
        for f in fields(cls):
            default = f.default
            assert default is not MISSING, f"{cls.__name__}.{f.name}: a spec section's every field has a default"
            kind = (int, float) if isinstance(default, float) else type(default)
            value = self.get(table, f.name, kind, default=default, prefix=key)
            if value <= 0:
                raise SpecError(f"{self.path}: {key}.{f.name} = {value!r}: expected a number > 0")
            values[f.name] = type(default)(value)
        self.no_extra(table, set(values), key)
        return cls(**values)

    def no_extra(self, table, allowed, prefix):
        for key in table:
            if key not in allowed:
                name = f"{prefix}.{key}" if prefix else key
                raise SpecError(f"{self.path}: {name}: unknown field; expected one of {', '.join(sorted(allowed))}")
