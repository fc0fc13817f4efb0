"""Hypothesis strategies that build expression programs for one rule at a time.

A Shape says which operations a rule is about, which others may appear beside them,
and which structures the graph may have: nesting, leaves used more than once,
intermediate nodes shared by several consumers (diamonds), and a final `* k` so the
rule's incoming gradient is not 1. Values are small halves and integers, so a shrunk
counterexample reads like the lesson's hand examples.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import reject
from hypothesis import strategies as st

from grader.programs import Program, consumers, depth
from grader.sandbox.inside import ops as op_table

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


def leaf_value(op_after: str | None = None, boundary: bool = False) -> st.SearchStrategy[float]:
    values = POSITIVE_VALUES if op_after == "pow" else LEAF_VALUES
    return st.sampled_from(values + tuple(v for v in BOUNDARY_VALUES if v not in values) if boundary else values)


@st.composite
def programs(draw, shape: Shape) -> Program:
    """A program whose operations follow the shape; its last node is the output."""
    program: list[tuple] = []
    available: list[int] = []  # nodes an operation may still read, most recent last
    n_ops = draw(st.integers(1, shape.max_ops))
    core_at = draw(st.integers(0, n_ops - 1))

    def operand(op: str) -> int:
        # 0 picks the most recent node (nesting); the last choice makes a new leaf.
        choice = draw(st.integers(0, len(available))) if shape.max_ops > 1 or shape.reuse_leaves else len(available)
        if choice == len(available):
            program.append(("leaf", draw(leaf_value(op, shape.boundary))))
            index = len(program) - 1
            if shape.reuse_leaves:
                available.append(index)
            return index
        index = available[-1 - choice]
        is_leaf = program[index][0] == "leaf"
        keep = shape.reuse_leaves if is_leaf else shape.share_nodes
        if not keep:
            available.remove(index)
        return index

    for k in range(n_ops):
        op = draw(st.sampled_from(shape.ops if k == core_at else shape.ops + shape.helpers))
        if op in UNARY:
            program.append((op, operand(op)))
        elif op == "pow":
            base = operand(op)
            exponent = draw(st.sampled_from(EXPONENTS))
            program.append((op, base, exponent))
        elif op in BINARY:
            left = operand(op)
            program.append((op, left, operand(op)))
        elif op in WITH_CONSTANT:
            program.append((op, operand(op), draw(st.sampled_from(CONSTANTS))))
        elif op in CONSTANT_FIRST:
            program.append((op, draw(st.sampled_from(CONSTANTS)), operand(op)))
        else:
            raise ValueError(f"no strategy for operation {op!r}")
        available.append(len(program) - 1)
    if shape.wrap and draw(st.booleans()):
        output = len(program) - 1
        program.append(("leaf", draw(st.sampled_from(SCALES))))
        program.append(("mul", output, len(program) - 1))
    result = tuple(program)
    if shape.require_reuse and not any(
        count > 1 for node, count in consumers(result).items() if result[node][0] == "leaf"
    ):
        reject()
    if depth(result) < shape.require_depth:
        reject()
    return result


def forward_ops(ops: tuple[str, ...]) -> tuple[str, ...]:
    """The spec's operations plus their plain-number forms (a + 2, 2 + a)."""
    return ops + tuple(form for op in ops for form in CONSTANT_FORMS.get(op, ()))


def single_operations(ops: tuple[str, ...]):
    """Every operation once on leaves over a grid of values, simplest first: a sweep that
    finds a wrong formula before any random search."""
    for op in ops:
        if op in UNARY:
            for x in LEAF_VALUES:
                yield (("leaf", x), (op, 0))
        elif op == "pow":
            for k in EXPONENTS:
                for x in POSITIVE_VALUES if isinstance(k, float) else LEAF_VALUES:
                    yield (("leaf", x), ("pow", 0, k))
        elif op in BINARY:
            for x in LEAF_VALUES[:5]:
                for y in LEAF_VALUES[:5]:
                    yield (("leaf", x), ("leaf", y), (op, 0, 1))
        elif op in WITH_CONSTANT:
            for x in LEAF_VALUES[:5]:
                for c in CONSTANTS:
                    yield (("leaf", x), (op, 0, c))
        elif op in CONSTANT_FIRST:
            for x in LEAF_VALUES[:5]:
                for c in CONSTANTS:
                    yield (("leaf", x), (op, c, 0))
