"""`grader selftest`'s proof of every catch hint: a hint tells a student whose tests missed a sabotage "a
test that would catch it: ...", so that test must catch it.

Each operator carries the test its hint describes (`Operator.proof`, using only what every engine has).
They are written as one test file and run, with real pytest in the suite lane as a student's tests are,
on the reference (as the student's own engine) and on every wheat and every mutant (as a grading's
engines run, each appended after it): on a correct engine every test must pass, and on a mutant the test
of its operator must fail. A hint whose test misses a mutant is a problem selftest reports (the
neuron_no_bias hint "train a neuron and assert the loss falls" did: a neuron without a bias also fits).
"""

from __future__ import annotations

import os
import textwrap

from grader.checks.suite_runs import read_run
from grader.files import MODULE, MODULE_FILE
from grader.lanes import SuiteJob, SuiteLane, SuiteSandboxes
from grader.protocol import Code
from grader.sabotage import SWAPPED, EngineRun, all_operators, engine_block
from grader.sandbox.supervisor import SandboxLimits

RUN_S = 60.0
HEAD = f"import math\n\nfrom {MODULE} import Neuron, Value, numerical_grad\n"


def test_name(operator_id: str) -> str:
    return f"test_catches_{operator_id}"


def proof_tests(operator_ids) -> str:
    """The test file: for each operator, the test its hint describes."""
    return HEAD + "".join(
        f"\n\ndef {test_name(op)}():\n{textwrap.indent(all_operators()[op].proof, '    ')}\n" for op in operator_ids
    )


def prove(bases: list, mutants: list, operator_ids) -> dict[str, dict[str, str]]:
    """Each engine's id -> each proof test's outcome on it (passed, failed, skipped), or {"": why} when the run
    did not complete. bases[0] is the student's own engine of the run (the reference); every other engine
    is appended after it, as a grading's engines are."""
    code = Code("py", {MODULE_FILE: bases[0].source.encode()})
    plan = tuple(
        EngineRun(e.id, "wheat" if e.check is None else "sabotage", e.id, None, engine_block(e.source, SWAPPED))
        for e in [*bases[1:], *mutants]
    )
    lane = SuiteLane(
        code,
        SandboxLimits(request_s=RUN_S, memory_mb=1024, cpu_s=int(RUN_S * (len(plan) + 2))),
        None,
        SuiteSandboxes(min(os.cpu_count() or 1, 4)),
    )
    lane.start(SuiteJob(code, proof_tests(operator_ids), plan, RUN_S, lambda own: RUN_S))
    lane.go()
    outcome = lane.result()
    if outcome.error or outcome.own is None:
        return {e.id: {"": outcome.error or "the run did not start"} for e in [*bases, *mutants]}
    replies = [(outcome.own, bases[0].id)]
    for r in outcome.runs:
        assert r.engine is not None, "only the run on the student's own engine has no engine"
        replies.append((r, r.engine.id))
    found = {}
    for reply, engine_id in replies:
        run = read_run(reply, None)
        found[engine_id] = (
            {n: t["outcome"] for n, t in run.tests.items()}
            if run.ok and not run.collection_errors
            else {"": run.error or "; ".join(run.collection_errors)[:300]}
        )
    return found


def problems(bases: list, mutants: list, outcomes: dict[str, dict[str, str]], operator_ids) -> list[str]:
    """A correct engine a hint's test fails, and a mutant its operator's hint's test does not catch."""
    found = []
    names = {test_name(op) for op in operator_ids}
    for engine in bases:
        got = outcomes.get(engine.id, {"": "not run"})
        wrong = sorted(n for n in names if got.get(n) != "passed")
        if wrong:
            found.append(
                f"a catch hint's test does not pass on the correct engine {engine.id}: {', '.join(wrong)}"
                + (f" ({got['']})" if "" in got else "")
            )
    for engine in mutants:
        op_id = engine.id.split("@", 1)[0]
        if outcomes.get(engine.id, {}).get(test_name(op_id)) != "failed":
            found.append(
                f"the catch hint of {op_id} does not catch {engine.id}: its test "
                f"({test_name(op_id)}) {outcomes.get(engine.id, {}).get(test_name(op_id), 'did not run')} "
                f"there. Hint: {all_operators()[op_id].catch}"
            )
    return found


def render(mutants: list, outcomes: dict[str, dict[str, str]], operator_ids) -> str:
    lines = [
        "Catch hints, each run as the test it describes: it must pass on every correct engine and fail on "
        "every mutant of its operator",
        "",
    ]
    width = max(len(op) for op in operator_ids) + 2
    for op_id in operator_ids:
        own = [m for m in mutants if m.id.split("@", 1)[0] == op_id]
        caught = sum(outcomes.get(m.id, {}).get(test_name(op_id)) == "failed" for m in own)
        lines.append(f"{op_id + ':':<{width}}{caught}/{len(own)} caught  {all_operators()[op_id].catch}")
    return "\n".join(lines) + "\n"
