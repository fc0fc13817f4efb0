"""The catalogue of engines the student's tests are run against: wheats (correct engines
written differently) and sabotages (one classic misconception each)."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

import reference.engine
import reference.nn

HERE = Path(__file__).parent
ENGINE_FILENAME = "<engine>"  # no file on disk: inspect.getsource cannot pin an engine's source


@dataclass(frozen=True)
class Engine:
    id: str
    source: str
    """The engine's Python source."""
    replaces: tuple[str, ...]
    """The names it swaps into the student's module (Value, or Neuron)."""
    description: str
    check: str | None = None
    """For a sabotage: the engine check that catches the same bug."""
    catch: str = ""
    """For a sabotage: the kind of test that would catch it, for the student."""


@dataclass(frozen=True)
class Catalogue:
    wheats: tuple[Engine, ...]
    sabotages: tuple[Engine, ...]

    def sabotage(self, engine_id: str) -> Engine:
        return next(e for e in self.sabotages if e.id == engine_id)


def _source(name: str) -> str:
    path = Path(reference.engine.__file__) if name == "reference" else HERE / "engines" / name
    return path.read_text(encoding="utf-8")


@functools.cache
def catalogue() -> Catalogue:
    raw = tomllib.loads((HERE / "catalogue.toml").read_text(encoding="utf-8"))
    wheats = tuple(Engine(w["id"], _source(w["source"]), ("Value",), w["description"]) for w in raw["wheat"])
    sabotages = tuple(
        Engine(s["id"], _source(s["source"]), tuple(s.get("replaces", ["Value"])), s["bug"], s["check"], s["catch"])
        for s in raw["sabotage"]
    )
    return Catalogue(wheats, sabotages)


def submission_source(engine: Engine) -> str:
    """A whole student-style file built on the engine: its Value (or the reference's), the
    reference's Neuron, Layer and MLP on top, and its own Neuron if it sabotages that."""
    nn = Path(reference.nn.__file__).read_text(encoding="utf-8")
    nn = nn.replace("from __future__ import annotations\n", "").replace("from reference.engine import Value\n", "")
    value = engine.source if "Value" in engine.replaces else _source("reference")
    parts = [value, nn] + ([engine.source] if "Value" not in engine.replaces else [])
    return "\n\n".join(parts)


def run_plan(engine: Engine, base: Engine) -> dict:
    """What the worker loads for one run: the engines' sources in order, and the names to swap.

    A sabotage that replaces something other than Value (a Neuron) runs on the base wheat's
    Value, so only its own misconception differs from a correct engine.
    """
    engines = [[engine.source, ENGINE_FILENAME]]
    replace = list(engine.replaces)
    if "Value" not in engine.replaces:
        engines.insert(0, [base.source, ENGINE_FILENAME])
        replace.insert(0, "Value")
    return {"engines": engines, "replace": replace}
