"""The two lanes of one grading, each in a sandbox of its own (as root, each its own uid):

- the engine lane (engine.py): one process that loads the student's code once (the module, or the
  notebook run as Restart & Run All) and answers the engine checks' probes; it is reloaded from a
  fresh fork if the student's code kills it;
- the suite lane (suite.py: its stages, the scheduling of its runs, and its outcome): the student's
  tests run with pytest, once on their own engine and then once per engine of the plan, each run
  (run.py) in a fresh process, one after another, with the sandbox cleaned in between. It runs
  beside the engine lane, on the other core.

The lanes never share a process, a uid or a writable folder at once, so what the engine lane's
process sees (nothing secret) cannot reach the suite runs, and no run can reach another. A
sandbox passes from the engine lane to the suite only once the engine's process has ended and
the sandbox is cleaned: a batch's one sandbox, and a student's check (a .py file or a notebook), whose
engine sandbox joins the runs once the engine checks are done (grader/sandbox/prestarted.py's layout).

Both lanes work under the grading's deadline (the end of the submission's time limit): no
request outlasts it, and no run of the suite starts after it.
"""

from grader.lanes.engine import EngineLane
from grader.lanes.run import RunReply, RunSettings, SuiteJob
from grader.lanes.suite import LaneState, Stage, SuiteLane, SuiteOutcome, SuiteSandboxes

__all__ = [
    "EngineLane",
    "LaneState",
    "RunReply",
    "RunSettings",
    "Stage",
    "SuiteJob",
    "SuiteLane",
    "SuiteOutcome",
    "SuiteSandboxes",
]
