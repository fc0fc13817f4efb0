"""The programs hypothesis tries for a shape, computed once and kept.

A search asks hypothesis (derandomised) for programs one at a time; on a correct engine
hypothesis goes through the same programs every time, whoever the student. So those
programs are computed once per shape (here, with the very settings of the search), kept
in memory and in the grader's cache folder, and sent to the student's engine in one
request. Hypothesis runs for real only when some program disagrees: it then replays the
same programs up to that one (from the answers already in hand) and shrinks it.

So hypothesis is imported here, by find(), when a search first runs (a plan not kept yet, or a program that
disagrees): a check whose programs all agree, its plans kept, never imports it (about a tenth of a second of a
process's start).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from grader import __version__, cache
from grader.checks import strategies
from grader.programs import Program

if TYPE_CHECKING:
    import hypothesis

HERE = Path(__file__).parent


def find(shape: strategies.Shape, condition: Callable[[Program], bool], max_examples: int) -> Program | None:
    """The smallest program of the shape hypothesis finds meeting the condition (a search's settings), or None."""
    hypothesis = _hypothesis()
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    try:
        return hypothesis.find(strategies.programs(shape), condition, settings=settings(max_examples))
    except (NoSuchExample, Unsatisfiable):
        return None


@functools.cache
def _hypothesis():
    """hypothesis, imported on a search's first use, caching what it learns in the grader's own cache folder, not
    under ./.hypothesis, the student's folder (no example database is used)."""
    import hypothesis
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(cache_dir() / "hypothesis")
    return hypothesis


def settings(max_examples: int) -> hypothesis.settings:
    hypothesis = _hypothesis()
    from hypothesis import HealthCheck, Phase, Verbosity

    return hypothesis.settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        phases=(Phase.generate, Phase.shrink),
    )


def cache_dir() -> Path:
    return cache.folder()


@functools.cache
def _key_base() -> str:
    """What the programs depend on: the grader, hypothesis (its version file, read without importing it), and the
    code that draws them."""
    digest = hashlib.sha256(f"{__version__}/".encode())
    found = importlib.util.find_spec("hypothesis")
    for folder in (found.submodule_search_locations or []) if found else []:
        digest.update((Path(folder) / "version.py").read_bytes())
    for name in ("strategies.py", "plans.py"):
        digest.update((HERE / name).read_bytes())
    digest.update((HERE.parent / "programs.py").read_bytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=256)
def programs(shape: strategies.Shape, max_examples: int) -> tuple[Program, ...]:
    """The programs a search over this shape tries, in order, when none disagrees."""
    key = hashlib.sha256(f"{_key_base()}/{shape!r}/{max_examples}".encode()).hexdigest()[:32]
    path = cache_dir() / "plans" / f"{key}.json"
    try:
        return tuple(_program(p) for p in json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        pass
    found = _generate(shape, max_examples)
    _store(path, json.dumps([list(map(list, p)) for p in found]))
    return found


def _program(raw: list) -> Program:
    return tuple(tuple(ins) for ins in raw)


def _kept(seen: list[Program], program: Program) -> bool:
    """Keep each program hypothesis tries; False, so it goes on to the next."""
    seen.append(program)
    return False


def _generate(shape: strategies.Shape, max_examples: int) -> tuple[Program, ...]:
    seen: list[Program] = []
    find(shape, lambda p: _kept(seen, p), max_examples)
    return tuple(dict.fromkeys(seen))


def _store(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".plan-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass  # no cache folder: the plan is computed again next time
