"""Name the misconception behind a wrong answer, in the lesson's words, by reproducing it.

When the student's engine disagrees with the reference on the smallest case, each known
misconception is played on the grader's own correct engines (the wheats, in this
process: trusted code), one mutation at a time; the first whose numbers match the
student's exactly is named, with the method most likely at fault. Causes found another
way (the preflight's missing seed, an inert backward(), values merged by equality, a
`(self)` that is not a tuple, a missing reflected operator) are named here too, so that
every check that fails from one cause can say so once. What each cause's words are is
grader/causes.py's business; this module only recognises them.
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable

from grader.causes import CAUSES, Cause
from grader.programs import Program, ancestors
from grader.sabotage import all_operators, wheats
from grader.sabotage.mutate import NotApplicable, replace, rule_updates
from grader.sandbox.inside import probes
from grader.sandbox.inside.ops import REFLECTED, UPDATED


def _assign_in(rule: str) -> Callable[[ast.Module], None]:
    def mutate(tree: ast.Module) -> None:
        for update in rule_updates(tree, rule):
            replace(tree, update, ast.Assign([update.target], update.value))
    return mutate


def _relu_flipped(tree: ast.Module) -> None:
    count = 0
    for update in rule_updates(tree, "relu"):
        for node in ast.walk(update.value):
            if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.Gt):
                node.ops = [ast.Lt()]
                count += 1
    if not count:
        raise NotApplicable("no > in relu's backward")


def _visited_dropped(tree: ast.Module) -> None:
    count = 0
    for node in list(ast.walk(tree)):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.NotIn):
            replace(tree, node, ast.Constant(True))
            count += 1
    if not count:
        raise NotApplicable("no `not in visited`")


def _operator(op_id: str) -> Callable[[ast.Module], None]:
    return all_operators()[op_id].rewrite


# (cause id, mutation): the misconceptions that reproduce by mutating a correct engine, in the order tried.
SIMULATED = [
    *[(f"assign_in_{rule}", _assign_in(rule)) for rule in UPDATED],
    *[(op_id, _operator(op_id)) for op_id in ("add_half", "mul_own_data", "mul_missing_outgrad", "pow_off_by_one",
                                               "tanh_grad_from_input", "relu_negative_grad")],
    ("relu_flipped", _relu_flipped),
    ("topo_not_reversed", _operator("topo_not_reversed")),
    ("visited_dropped", _visited_dropped),
    ("sub_as_add", _operator("sub_as_add")),
]


@functools.cache
def _mutants(cause_id: str) -> tuple[type, ...]:
    """The Value classes of the wheats with the cause's mutation (those it applies to)."""
    mutation = next(fn for cid, fn in SIMULATED if cid == cause_id)
    classes = []
    for wheat in wheats():
        tree = ast.parse(wheat.source)
        try:
            mutation(tree)
        except NotApplicable:
            continue
        namespace: dict = {}
        exec(compile(ast.fix_missing_locations(tree), f"<{cause_id}>", "exec"), namespace)  # noqa: S102 - ours
        classes.append(namespace["Value"])
    return tuple(classes)


def simulated(program: Program, grads: list, seed: bool = False) -> Cause | None:
    """The first misconception whose mutant of a correct engine gives exactly these gradients."""
    nodes = [i for i in ancestors(program) if grads[i] is not None]  # a gradcheck knows only the leaves'
    if not nodes:
        return None
    for cause_id, _ in SIMULATED:
        for cls in _mutants(cause_id):
            try:
                result = probes.evaluate(program, cls, True, None, seed)
            except Exception:  # noqa: BLE001 - a mutant may raise where the student's did not
                continue
            sim = result["grad"]
            if all(isinstance(grads[i], float) and isinstance(sim[i], float)
                   and math.isclose(grads[i], sim[i], rel_tol=1e-9, abs_tol=1e-12) for i in nodes):
                return CAUSES[cause_id]
    return None


def from_error(message: str, program: Program | None = None) -> Cause | None:
    """A cause read off what the student's code raised."""
    if "object is not iterable" in message and "Value" in message:
        return CAUSES["children_not_tuple"]
    if "unsupported operand" in message and program:
        for ins in program:
            if ins[0] in REFLECTED:
                return CAUSES[f"missing_{REFLECTED[ins[0]]}"]
    if "unsupported operand type(s) for +: 'int' and 'Value'" in message:
        return CAUSES["missing___radd__"]
    return None
