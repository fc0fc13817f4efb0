"""`grader batch`'s command: what a batch on this machine starts first, then the batch (grader/batch/run.py).

This module imports little: this machine's grading processes (grader/batch/graders.py) and the batch's one trial
sandbox (grader/sandbox/trial.py) start before the instructor's process imports the rest of the grader, so that they
get ready (each process importing the grader, the sandbox's Python importing pytest) while it does and then finds
the class. No student reaches a grading process before that trial has passed (run.py). On a Dask cluster, each
worker starts its own."""

from __future__ import annotations

from grader.batch.graders import started_first


def main(**options) -> int:
    """`grader batch`: see grader/batch/run.py (main) for what it does with its options."""
    if options.get("scheduler") is not None:
        from grader.batch import run

        return run.main(**options)
    with started_first(options["jobs"]) as graders:
        from grader.batch import run  # the rest of the grader, imported while they start

        return run.main(graders, **options)
