"""Benchmark: what one unit of work costs a sandbox, in each mode this machine offers: its start (the spawn,
until the template says the unit runs), a first request (loading a small module), its close (the cleaning
that ends it, before the next unit may start), and a run of a small suite of tests from spawn to close.

    python bench/bench_units.py [--units 40]

Modes: bubblewrap (where it works), and without it as root a uid of its own (on GRADER_SANDBOX_PYTHON, default
/opt/micrograd-sandbox/bin/python, a Python every user can run: .ci/run makes one).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.sandbox import isolation  # noqa: E402
from grader.sandbox.supervisor import Sandbox, SandboxLimits  # noqa: E402

ENGINE = (ROOT / "tests" / "zoo" / "correct" / "list_iterative.py").read_bytes()
TESTS = (ROOT / "tests" / "fixtures" / "suites" / "good.py").read_text()
LOAD = {"op": "load", "code": {"kind": "py", "file": "micrograd_mine.py"}}
SUITE = {"op": "suite", "code": {"kind": "py", "file": "micrograd_mine.py"}, "tests": TESTS, "engine": None}


def modes() -> dict[str, isolation.Isolation]:
    found = {}
    if isolation.detect().bwrap is not None:
        found["bubblewrap"] = isolation.detect()
    python = os.environ.get("GRADER_SANDBOX_PYTHON", "/opt/micrograd-sandbox/bin/python")
    if os.geteuid() == 0 and os.path.exists(python):
        os.environ["GRADER_SANDBOX_PYTHON"] = python
        isolation.runtime.cache_clear()
        runtime = isolation.runtime()
        isolation.runtime.cache_clear()
        found["uid"] = isolation.Isolation("uid", None, True, runtime)
        if "namespaces" in {f.name for f in dataclasses.fields(isolation.Isolation)}:
            found["uid, no namespaces"] = dataclasses.replace(found["uid"], namespaces=False)
        os.environ.pop("GRADER_SANDBOX_PYTHON")
    return found


def measure(iso: isolation.Isolation, units: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"start": [], "load": [], "close": [], "suite run": []}
    with Sandbox({"micrograd_mine.py": ENGINE}, SandboxLimits(), ("pytest",), iso) as box:
        for i in range(units):
            started = time.perf_counter()
            unit = box.unit("state")
            spawned = time.perf_counter()
            reply = unit.exchange(LOAD, 10)
            loaded = time.perf_counter()
            unit.close()
            closed = time.perf_counter()
            assert reply["ok"], reply
            if i:  # the first unit warms the caches
                times["start"].append(spawned - started)
                times["load"].append(loaded - spawned)
                times["close"].append(closed - loaded)
        for _ in range(max(3, units // 4)):
            started = time.perf_counter()
            unit = box.unit("suite")
            reply = unit.exchange(SUITE, 30)
            unit.close()
            times["suite run"].append(time.perf_counter() - started)
            assert reply["ok"] and reply["result"]["exit"] == 0, reply
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=40)
    args = parser.parse_args()
    print(f"{'mode':<20} {'start':>8} {'load':>8} {'close':>8} {'suite run':>10}   (medians, ms)")
    for name, iso in modes().items():
        times = measure(iso, args.units)
        medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
        print(
            f"{name:<20} {medians['start']:8.2f} {medians['load']:8.2f} {medians['close']:8.2f} "
            f"{medians['suite run']:10.1f}"
        )


if __name__ == "__main__":
    main()
