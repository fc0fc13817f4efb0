"""Hypothesis strategies that build expression programs for one rule at a time.

A Shape says which operations a rule is about, which others may appear beside them,
and which structures the graph may have: nesting, leaves used more than once,
intermediate nodes shared by several consumers (diamonds), and a final `* k` so the
rule's incoming gradient is not 1. Values are small halves and integers, so a shrunk
counterexample reads like the lesson's hand examples.

hypothesis is imported when a strategy is first asked for, by a search (plans.py), never at this module's import:
a check whose programs all agree with the reference, its plans kept, runs no search and never imports it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grader.programs import Program, consumers, depth
from grader.sandbox.inside import ops as op_table

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

# Shrinking goes towards the front of each list.
LEAF_VALUES = (2.0, -3.0, 0.5, 1.5, -1.0, 3.0, -2.0, -0.5, 2.5, 1.0)
POSITIVE_VALUES = (2.0, 0.5, 1.5, 3.0, 2.5, 1.0)
SCALES = (2.0, -3.0, 0.5, -1.5)  # the final `* k`: never 1, so the incoming gradient differs from 1
EXPONENTS = (2, 3, -1, 0.5, 2.5, -2, 1.5, 1)  # no 0: the lesson's k * x**(k-1) divides by zero at x = 0
CONSTANTS = (2.0, -3.0, 0.5, 1.5, -1.0)
BOUNDARY_VALUES = (0.0, -1.5)
"""With Shape.boundary, leaves may also be these (after the others, so a case shrinks to them only when they are
what fails): 0, and a negative base under ** (outside the reference's domain with a fractional exponent, where it
is not judged)."""

UNARY = tuple(op_table.UNARY)
BINARY = tuple(op_table.BINARY)
WITH_CONSTANT = tuple(plain for plain, _ in op_table.CONSTANT_FORMS.values())
CONSTANT_FIRST = tuple(first for _, first in op_table.CONSTANT_FORMS.values())
# Operations with a plain-number operand, for each operation of the spec's list.
CONSTANT_FORMS = op_table.CONSTANT_FORMS


@dataclass(frozen=True)
class Shape:
    ops: tuple[str, ...]
    """The operations the rule is about; at least one of them appears in every program."""
    helpers: tuple[str, ...] = ()
    """Other operations allowed beside them (only ones the engine gets right)."""
    max_ops: int = 5
    """Operations per program; 1 means single operations on leaves."""
    reuse_leaves: bool = False
    """A leaf may be used by several operations (a + a)."""
    share_nodes: bool = False
    """An intermediate node may be used by several operations (diamonds)."""
    wrap: bool = False
    """May multiply the output by a leaf k != 1, so the incoming gradient is not 1."""
    require_reuse: bool = False
    """Every program uses some leaf more than once."""
    require_depth: int = 1
    """Every program has at least this many operations on its longest path."""
    boundary: bool = False
    """Leaves may be 0, and a power's base 0 or negative (BOUNDARY_VALUES): where a rule's gradient may raise."""


def leaf_value(op_after: str | None = None, boundary: bool = False) -> SearchStrategy[float]:
    from hypothesis import strategies as st

    values = POSITIVE_VALUES if op_after == "pow" else LEAF_VALUES
    return st.sampled_from(values + tuple(v for v in BOUNDARY_VALUES if v not in values) if boundary else values)


class _Builder:
    """One program under construction, drawing its choices from hypothesis in the order they are made."""

    def __init__(self, draw, shape: Shape) -> None:
        self.draw = draw
        self.shape = shape
        self.program: list[tuple] = []
        self.available: list[int] = []  # nodes an operation may still read, most recent last

    def operand(self, op: str) -> int:
        """The node an operand of op reads: an available one, or a new leaf."""
        from hypothesis import strategies as st

        shape, available = self.shape, self.available
        # 0 picks the most recent node (nesting); the last choice makes a new leaf.
        choice = (
            self.draw(st.integers(0, len(available))) if shape.max_ops > 1 or shape.reuse_leaves else len(available)
        )
        if choice == len(available):
            return self.leaf(op)
        index = available[-1 - choice]
        is_leaf = self.program[index][0] == "leaf"
        keep = shape.reuse_leaves if is_leaf else shape.share_nodes
        if not keep:
            available.remove(index)
        return index

    def leaf(self, op: str) -> int:
        """A new leaf under op, available again only if leaves may be reused."""
        self.program.append(("leaf", self.draw(leaf_value(op, self.shape.boundary))))
        index = len(self.program) - 1
        if self.shape.reuse_leaves:
            self.available.append(index)
        return index

    def operation(self, op: str) -> tuple:
        """op's instruction, its operands (and any constant) drawn left to right."""
        from hypothesis import strategies as st

        if op in UNARY:
            return (op, self.operand(op))
        if op == "pow":
            base = self.operand(op)
            return (op, base, self.draw(st.sampled_from(EXPONENTS)))
        if op in BINARY:
            left = self.operand(op)
            return (op, left, self.operand(op))
        if op in WITH_CONSTANT:
            return (op, self.operand(op), self.draw(st.sampled_from(CONSTANTS)))
        if op in CONSTANT_FIRST:
            return (op, self.draw(st.sampled_from(CONSTANTS)), self.operand(op))
        raise ValueError(f"no strategy for operation {op!r}")

    def add(self, op: str) -> None:
        """Append op (after the leaves its operands make) and make it available."""
        instruction = self.operation(op)
        self.program.append(instruction)
        self.available.append(len(self.program) - 1)

    def wrap(self) -> None:
        """Multiply the output by a leaf k != 1."""
        from hypothesis import strategies as st

        output = len(self.program) - 1
        self.program.append(("leaf", self.draw(st.sampled_from(SCALES))))
        self.program.append(("mul", output, len(self.program) - 1))


def _follows(program: Program, shape: Shape) -> bool:
    """Whether the program has the reuse and the depth the shape requires."""
    if shape.require_reuse and not any(
        count > 1 for node, count in consumers(program).items() if program[node][0] == "leaf"
    ):
        return False
    return depth(program) >= shape.require_depth


def programs(shape: Shape) -> SearchStrategy[Program]:
    """The strategy of programs whose operations follow the shape; each program's last node is its output."""
    return _composite()(shape)


@functools.cache
def _composite():
    """_program as a hypothesis strategy, made on the first search (hypothesis imported then)."""
    from hypothesis import strategies as st

    return st.composite(_program)


def _program(draw, shape: Shape) -> Program:
    """A program whose operations follow the shape; its last node is the output."""
    from hypothesis import reject
    from hypothesis import strategies as st

    builder = _Builder(draw, shape)
    n_ops = draw(st.integers(1, shape.max_ops))
    core_at = draw(st.integers(0, n_ops - 1))
    for k in range(n_ops):
        builder.add(draw(st.sampled_from(shape.ops if k == core_at else shape.ops + shape.helpers)))
    if shape.wrap and draw(st.booleans()):
        builder.wrap()
    result = tuple(builder.program)
    if not _follows(result, shape):
        reject()
    return result


def forward_ops(ops: tuple[str, ...]) -> tuple[str, ...]:
    """The spec's operations plus their plain-number forms (a + 2, 2 + a)."""
    return ops + tuple(form for op in ops for form in CONSTANT_FORMS.get(op, ()))


def single_operations(ops: tuple[str, ...]):
    """Every operation once on leaves over a grid of values, simplest first: a sweep that
    finds a wrong formula before any random search."""
    for op in ops:
        yield from _single_cases(op)


def _single_cases(op: str):
    """One operation's programs of the sweep (none for an operation it does not know)."""
    if op in UNARY:
        return ((("leaf", x), (op, 0)) for x in LEAF_VALUES)
    if op == "pow":
        return _pow_cases()
    if op in BINARY:
        return ((("leaf", x), ("leaf", y), (op, 0, 1)) for x in LEAF_VALUES[:5] for y in LEAF_VALUES[:5])
    if op in WITH_CONSTANT:
        return ((("leaf", x), (op, 0, c)) for x in LEAF_VALUES[:5] for c in CONSTANTS)
    if op in CONSTANT_FIRST:
        return ((("leaf", x), (op, c, 0)) for x in LEAF_VALUES[:5] for c in CONSTANTS)
    return ()


def _pow_cases():
    """x ** k for each exponent, over positive bases only under a fractional one."""
    for k in EXPONENTS:
        for x in POSITIVE_VALUES if isinstance(k, float) else LEAF_VALUES:
            yield (("leaf", x), ("pow", 0, k))
