"""The checks, and the one list of the modules that declare them (as pytest's default_plugins).

A check is a plain function `(ctx: Context) -> Outcome`, registered by id with
`@check` (registry.py); assignments refer to checks by id. A new module of checks is
added to the import below, in the order its checks should be registered.
"""

from __future__ import annotations

from grader.checks import accumulate, fixed, forward, gradcheck, rules, suite, topo_order, training
from grader.checks.registry import REGISTRY, Check, check

MODULES = (fixed, forward, rules, accumulate, topo_order, gradcheck, suite, training)
"""Every module that declares checks; importing this package imports them, so REGISTRY is whole."""

__all__ = ["MODULES", "REGISTRY", "Check", "check"]
