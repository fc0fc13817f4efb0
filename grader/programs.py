"""Expression programs: plain data describing a computation graph, and their Python code.

A program is a tuple of instructions (see grader/sandbox/inside/probes.py); node i is defined
by instruction i and the last node is the output. Programs cross the process boundary
as JSON, hypothesis generates and shrinks them, and a failing one is shown to the
student as code to paste under their own Value class.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

from grader.sandbox.inside.ops import CONSTANT_FORMS, METHODS, SYMBOL

Instruction = tuple
Program = tuple[Instruction, ...]

BINARY_SYMBOL = SYMBOL
CONSTANT_SYMBOL = {**{plain: SYMBOL[op] for op, (plain, _) in CONSTANT_FORMS.items()}, "pow": "**"}
CONSTANT_FIRST_SYMBOL = {first: SYMBOL[op] for op, (_, first) in CONSTANT_FORMS.items()}

# Names in the order the lesson uses them; 'l' and 'o' would read as 1 and 0.
_LETTERS = [c for c in string.ascii_lowercase if c not in "lo"]


def inputs(ins: Instruction) -> list[int]:
    """The node indices an instruction reads."""
    op = ins[0]
    if op == "leaf":
        return []
    if op in BINARY_SYMBOL:
        return [ins[1], ins[2]]
    if op in CONSTANT_FIRST_SYMBOL:
        return [ins[2]]
    return [ins[1]]


def padded(program: Program, count: int) -> Program:
    """The same expression built after count leaves it never uses: every node of it is then made at another
    address, so an engine whose order follows memory addresses (children kept in a set) may walk it otherwise."""
    unused = tuple(("leaf", 1000.0 + i) for i in range(count))  # numbers no node of a search holds
    return unused + tuple(_shifted(ins, count) for ins in program)


def _shifted(ins: Instruction, count: int) -> Instruction:
    """The instruction with the node indices it reads moved count places on."""
    op = ins[0]
    places = () if op == "leaf" else (1, 2) if op in BINARY_SYMBOL else (2,) if op in CONSTANT_FIRST_SYMBOL else (1,)
    return tuple(x + count if i in places else x for i, x in enumerate(ins))


def ancestors(program: Program) -> list[int]:
    """Indices of the nodes the output depends on (the output included), in program order."""
    seen = {len(program) - 1}
    for i in range(len(program) - 1, -1, -1):
        if i in seen:
            seen.update(inputs(program[i]))
    return sorted(seen)


def default_names(program: Program) -> list[str]:
    names = []
    for i in range(len(program)):
        letter = _LETTERS[i % len(_LETTERS)]
        names.append(letter if i < len(_LETTERS) else f"{letter}{i // len(_LETTERS)}")
    return names


def expression(ins: Instruction, names: Sequence[str]) -> str:
    """The right-hand side of one instruction, as Python."""
    op = ins[0]
    if op == "leaf":
        return f"Value({ins[1]!r})"
    if op in BINARY_SYMBOL:
        return f"{names[ins[1]]} {BINARY_SYMBOL[op]} {names[ins[2]]}"
    if op in CONSTANT_SYMBOL:
        return f"{names[ins[1]]} {CONSTANT_SYMBOL[op]} {ins[2]!r}"
    if op in CONSTANT_FIRST_SYMBOL:
        return f"{ins[1]!r} {CONSTANT_FIRST_SYMBOL[op]} {names[ins[2]]}"
    if op == "neg":
        return f"-{names[ins[1]]}"
    if op in METHODS:
        return f"{names[ins[1]]}.{op}()"
    raise ValueError(f"unknown instruction {ins!r}")


def op_label(ins: Instruction) -> str:
    """A short label for the operation that made a node ("+", "**2", "tanh", "+ 2.0")."""
    op = ins[0]
    if op == "leaf":
        return ""
    if op in BINARY_SYMBOL:
        return BINARY_SYMBOL[op]
    if op == "pow":
        return f"**{ins[2]!r}"
    if op in CONSTANT_SYMBOL:
        return f"{CONSTANT_SYMBOL[op]} {ins[2]!r}"
    if op in CONSTANT_FIRST_SYMBOL:
        return f"{ins[1]!r} {CONSTANT_FIRST_SYMBOL[op]}"
    return "-" if op == "neg" else op


def to_code(program: Program, names: Sequence[str] | None = None, backward: bool = True) -> str:
    """Python code that builds the program (only the nodes the output needs) and runs backward()."""
    names = list(names or default_names(program))
    lines = [f"{names[i]} = {expression(program[i], names)}" for i in ancestors(program)]
    if backward:
        lines.append(f"{names[len(program) - 1]}.backward()")
    return "\n".join(lines)


def consumers(program: Program) -> dict[int, int]:
    """How many times each node is read by the nodes the output depends on."""
    counts: dict[int, int] = {}
    for i in ancestors(program):
        for j in inputs(program[i]):
            counts[j] = counts.get(j, 0) + 1
    return counts


def depth(program: Program) -> int:
    """Operations on the longest path from a leaf to the output."""
    level: dict[int, int] = {}
    for i in ancestors(program):
        level[i] = 1 + max((level[j] for j in inputs(program[i])), default=-1)
    return level[len(program) - 1]
