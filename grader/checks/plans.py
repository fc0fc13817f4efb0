"""The programs hypothesis tries for a shape, computed once and kept.

A search asks hypothesis (derandomised) for programs one at a time; on a correct engine
hypothesis goes through the same programs every time, whoever the student. So those
programs are computed once per shape (here, with the very settings of the search), kept
in memory and in the grader's cache folder, and sent to the student's engine in one
request. Hypothesis runs for real only when some program disagrees: it then replays the
same programs up to that one (from the answers already in hand) and shrinks it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis.errors import NoSuchExample, Unsatisfiable

from grader import __version__
from grader.checks import strategies
from grader.programs import Program

HERE = Path(__file__).parent


def settings(max_examples: int) -> hypothesis.settings:
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
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "micrograd-grader"


@functools.cache
def _key_base() -> str:
    """What the programs depend on: the grader, hypothesis, and the code that draws them."""
    digest = hashlib.sha256(f"{__version__}/{hypothesis.__version__}".encode())
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
    try:
        hypothesis.find(strategies.programs(shape), lambda p: _kept(seen, p), settings=settings(max_examples))
    except (NoSuchExample, Unsatisfiable):
        pass
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
