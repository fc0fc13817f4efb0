"""The preflight: which basic behaviours of the student's engine can be trusted.

Each rule is judged on its own. Probing `tanh` inside `tanh(a*b + c) * k` is only fair
when `*`, `+`, nesting and accumulation work; otherwise a bug in `*` would fail the
tanh check too. So before the checks, a few fixed probes find out what works, and each
check builds its expressions only from the structures that passed. A broken structure
is still judged, by the check named for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.checks.context import Context
from grader.checks.judging import compare_many

LEAVES = (("leaf", 2.0), ("leaf", -3.0), ("leaf", 0.5), ("leaf", 1.5))


def _chain(op: str) -> tuple:
    return LEAVES + ((op, 0, 1), (op, 4, 2), (op, 5, 3))


def _diamond(op: str) -> tuple:
    return LEAVES[:2] + ((op, 0, 1), (op, 2, 2), (op, 3, 2))


@dataclass(frozen=True)
class Features:
    add: bool
    """a + b on two leaves gives both gradient 1."""
    mul: bool
    """a * b on two leaves gives each the other's data."""
    chain_op: str | None
    """The operation the structural probes used (add if it works, else mul)."""
    depth: bool
    """Nested expressions backpropagate in the right order."""
    mul_inner: bool
    """* multiplies by the incoming gradient when it is not 1."""
    reuse: bool
    """A leaf used twice gets both contributions (a + a)."""
    share: bool
    """An intermediate node used twice is processed once, with both contributions."""

    def trusted(self, *ops: str) -> tuple[str, ...]:
        """Those of ops that work wherever they appear in an expression."""
        usable = {"add": self.add, "mul": self.mul_inner}
        return tuple(op for op in ops if usable.get(op, False))

    def nested(self) -> int:
        return 5 if self.depth else 1

    def limits(self) -> str:
        """A sentence saying which structures were left out, and why, for the feedback."""
        notes = []
        if not self.depth:
            notes.append("only single operations on leaves were probed, because nested expressions "
                         "do not backpropagate correctly (see topo_order)")
        elif not self.reuse:
            notes.append("each value was used once, because a value used twice does not get both "
                         "gradients (see accumulate)")
        return f" (Note: {notes[0]}.)" if notes else ""


def preflight(ctx: Context) -> Features:
    """Judge every probe the preflight may need, in one request (a hang or crash leaves the rest unjudged)."""
    add2, mul2 = LEAVES[:2] + (("add", 0, 1),), LEAVES[:2] + (("mul", 0, 1),)
    mul_in = LEAVES[:3] + (("mul", 0, 1), ("mul", 3, 2))
    candidates = [add2, mul2, mul_in] + [p for op in ("add", "mul")
                                          for p in (_chain(op), LEAVES[:1] + ((op, 0, 0),), _diamond(op))]
    verdicts = compare_many(ctx, candidates)

    def ok(program) -> bool:
        return program in verdicts and verdicts[program] is None

    add, mul = ok(add2), ok(mul2)
    chain_op = "add" if add else "mul" if mul else None
    if chain_op is None:
        return Features(add, mul, None, False, False, False, False)
    depth = ok(_chain(chain_op))
    reuse = ok(LEAVES[:1] + ((chain_op, 0, 0),))
    mul_inner = mul and depth and ok(mul_in)
    share = depth and reuse and ok(_diamond(chain_op))
    return Features(add, mul, chain_op, depth, mul_inner, reuse, share)
