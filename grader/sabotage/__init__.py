"""The engines a student's tests run against, built anew for every grading.

- Wheats: correct engines written in other styles than the reference (engines/wheat_*.py).
  The reference itself never enters a sandbox.
- Sabotages: one mutant per mutation operator (operators/), made from a wheat or, as in
  mutation testing, from the student's own engine, chosen for this grading. A mutant of the
  student's engine counts only where the grader sees it behave differently from the
  unmutated engine, on probes each run computes before its tests (checks/suite_runs.py); a
  decoy (the student's engine rewritten, unmutated) tells a test that checks behaviour from
  one that recognises its own code, which then cannot catch a mutant of it. Those probes are
  computed by the student's code, so they are only a claim: each mutant of the student's engine
  has a spare, a wheat's mutant by the same operator, that counts in its place when it does not,
  and how many sabotages count is the plan's, never the student's to shrink.

Every engine is disguised (disguise.py: each trace an operator leaves is in every correct
engine too) and rewritten for the grading (rewrite.py), and runs after the student's own
code, in the student's module, in an order derived from the submission's hash: a regrade
runs the same engines in the same order, and nothing a test can see names an engine or
says whether it is a wheat or a sabotage. A wheat and its mutants bring their Neuron with
their Value, so that a Neuron swapped in says nothing either.
"""

from grader.sabotage.planning import (
    OWN_BUDGET,
    SWAPPED,
    VARIANTS,
    WHEATS,
    EngineRun,
    Plan,
    Wheat,
    all_operators,
    engine_block,
    mutant,
    normalised,
    own_block,
    own_mutant,
    plan,
    wheats,
)

__all__ = [
    "OWN_BUDGET",
    "SWAPPED",
    "VARIANTS",
    "WHEATS",
    "EngineRun",
    "Plan",
    "Wheat",
    "all_operators",
    "engine_block",
    "mutant",
    "normalised",
    "own_block",
    "own_mutant",
    "plan",
    "wheats",
]
