"""The sabotage operators, one per file, and the one list of them (as pytest's default_plugins).

Each file holds one function decorated by `@operator` (grader/sabotage/mutate.py), naming
the misconception it plants (a cause of grader/causes.py); importing it registers it. To
add a sabotage, write its file here and add it to the import below, which keeps the files
in alphabetical order (the order `grader selftest` and an assignment's default sabotages list them in).
See docs/authoring.md.
"""

from __future__ import annotations

from grader.sabotage.operators import (  # noqa: F401 - importing registers the operator
    add_half,
    add_missing_outgrad,
    assign_not_accumulate,
    missing_seed,
    mul_missing_outgrad,
    mul_own_data,
    neuron_no_bias,
    pow_off_by_one,
    radd_missing,
    relu_negative_grad,
    sub_as_add,
    tanh_grad_from_input,
    topo_not_reversed,
)

NOT_DRAWN = ("add_missing_outgrad",)
"""Operators an assignment has only when its spec names them: `grader selftest` still proves each (its check
catches it, its verified repair restores it), but plans keep their size (one more run of the tests per operator
drawn)."""
