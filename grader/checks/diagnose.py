"""Name the misconception behind a wrong answer, in the lesson's words, by reproducing it.

When the student's engine disagrees with the reference on the smallest case, each known
misconception is played on the grader's own correct engines (the wheats, in this
process: trusted code), one mutation at a time; the first whose numbers match the
student's exactly is named, with the method most likely at fault. Causes found another
way (the preflight's missing seed, an inert backward(), values merged by equality, a
`(self)` that is not a tuple, a missing reflected operator) are named here too, so that
every check that fails from one cause can say so once.
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

from grader.programs import Program, ancestors
from grader.sabotage import all_operators, wheats
from grader.sabotage.mutate import RULES, NotApplicable, replace, rule_updates
from grader.sandbox.inside import probes


@dataclass(frozen=True)
class Cause:
    id: str
    words: str
    """The misconception, as the lesson would put it."""
    method: str | None
    """The method of Value most likely at fault (for the report's 'code most likely at fault')."""


METHOD_OF = {rule: name for rule, (name, _) in RULES.items()}


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


# (id, words, method, mutation): the misconceptions that reproduce by mutating a correct engine.
SIMULATED = [
    *[(f"assign_in_{rule}", f"in {METHOD_OF[rule]}'s backward, `=` replaces the gradient instead of adding to it, so "
      "a value used more than once keeps only one path's gradient: use += (a value used twice receives gradient "
      "from both paths)", METHOD_OF[rule], _assign_in(rule)) for rule in ("add", "mul", "pow", "tanh", "relu", "exp")],
    ("add_half", "addition passes 0.5 * out.grad to each input: + passes the incoming gradient unchanged",
     "__add__", _operator("add_half")),
    ("mul_own_data", "multiplication gives each input its OWN data times out.grad: it should be the OTHER input's",
     "__mul__", _operator("mul_own_data")),
    ("mul_missing_outgrad", "multiplication forgets to multiply by out.grad (right only when the incoming gradient "
     "is 1)", "__mul__", _operator("mul_missing_outgrad")),
    ("pow_off_by_one", "x ** k is given the derivative k * x**k: it is k * x**(k-1)", "__pow__",
     _operator("pow_off_by_one")),
    ("tanh_grad_from_input", "tanh's derivative is taken on its input, 1 - x**2: it is 1 - t**2 on its output t",
     "tanh", _operator("tanh_grad_from_input")),
    ("relu_negative_grad", "relu passes the gradient where its input is negative: it must pass 0 there", "relu",
     _operator("relu_negative_grad")),
    ("relu_flipped", "relu's condition is the wrong way round: the gradient passes where the input is positive",
     "relu", _relu_flipped),
    ("topo_not_reversed", "backward() walks the nodes from the leaves up: it must walk the topological order in "
     "reverse, from the output down, so each node has all its gradient before passing it on", "backward",
     _operator("topo_not_reversed")),
    ("visited_dropped", "the topological sort has no visited set, so a node reached twice is processed twice",
     "backward", _visited_dropped),
    ("sub_as_add", "a - b computes a + b", "__sub__", _operator("sub_as_add")),
]

KNOWN = {
    "missing_seed": Cause("missing_seed", "backward() never sets the output's gradient to 1 before walking the "
                          "graph (the lesson's self.grad = 1.0), so every gradient stays 0", "backward"),
    "backward_inert": Cause("backward_inert", "backward() changes no gradient at all, even with the output's set to "
                            "1: does something in __init__ (an attribute named backward?) hide the method, or does "
                            "it never call the nodes' _backward?", "backward"),
    "equal_data_merged": Cause("equal_data_merged", "two different nodes holding the same number are treated as one: "
                               "a Value that defines __eq__ or __hash__ by its data is merged with another by the "
                               "children set or the visited set; compare nodes by identity (drop __eq__/__hash__)",
                               "__eq__"),
    "children_not_tuple": Cause("children_not_tuple", "a node's children are written (self), which is just self in "
                                "parentheses: a one-element tuple needs a comma, (self,)", None),
    **{f"missing_{name}": Cause(f"missing_{name}", f"Value has no {name}: with a plain number on the left ({example}) "
                                f"Python calls {name}, so define it and wrap the number in a Value", name)
       for name, example in (("__radd__", "2 + a, and sum() which starts from 0"), ("__rmul__", "2 * a"),
                             ("__rsub__", "1 - a"), ("__rtruediv__", "1 / a"))},
}
CAUSES = {**KNOWN, **{cid: Cause(cid, words, m) for cid, words, m, _ in SIMULATED}}


@functools.cache
def _mutants(cause_id: str) -> tuple[type, ...]:
    """The Value classes of the wheats with the cause's mutation (those it applies to)."""
    mutation = next(fn for cid, _, _, fn in SIMULATED if cid == cause_id)
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
    for cause_id, _, _, _ in SIMULATED:
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
        reflected = {"radd": "__radd__", "rmul": "__rmul__", "rsub": "__rsub__", "rdiv": "__rtruediv__"}
        for ins in program:
            if ins[0] in reflected:
                return CAUSES[f"missing_{reflected[ins[0]]}"]
    if "unsupported operand type(s) for +: 'int' and 'Value'" in message:
        return CAUSES["missing___radd__"]
    return None
