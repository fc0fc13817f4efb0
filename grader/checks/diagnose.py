"""Name the misconception behind a wrong answer, in the lesson's words, by reproducing it.

When the student's engine disagrees with the reference on the smallest case, each known
misconception is played on the grader's own correct engines (the wheats, in this
process: trusted code), one mutation at a time; each whose numbers match the student's
exactly is a hypothesis, tested on more than that case (cases.DISCRIMINATING, asked of the
student's engine once per grading): one whose replay is wrong where the student's engine
is right is dropped, and a cause is named, with the method most likely at fault, only
when exactly one remains. `training` tests the causes named so far by replaying the
lesson's loop with each mistake. Causes found another
way (the preflight's missing seed, an inert backward(), values merged by equality, a
`(self)` that is not a tuple, a missing reflected operator) are named here too, so that
every check that fails from one cause can say so once. What each cause's words are is
grader/causes.py's business; this module only recognises them.
"""

from __future__ import annotations

import ast
import functools
import math
import types
from collections.abc import Callable, Iterable

from grader.causes import CAUSES, Cause, family, several
from grader.checks.cases import DISCRIMINATING
from grader.checks.context import Context, reference_run
from grader.errors import CheckTimeout
from grader.programs import Program, ancestors
from grader.protocol import StudentError
from grader.sabotage import all_operators, wheats
from grader.sabotage.mutate import NotApplicable, incoming_dropped, method, replace, rule_updates, value_class
from grader.sandbox.inside import probes
from grader.sandbox.inside.ops import NEEDS, REFLECTED, RULES, UPDATED


def _assign_in(rule: str, which: int | None = None) -> Callable[[ast.Module], None]:
    """`=` for `+=` in the rule's backward: in every update, or (which) only in one input's, self's (0) or
    other's (1), of a rule with two."""

    def mutate(tree: ast.Module) -> None:
        updates = rule_updates(tree, rule)
        if which is not None:
            if len(updates) != 2:
                raise NotApplicable(f"no two updates in the backward of {rule}")
            updates = [updates[which]]
        for update in updates:
            replace(tree, update, ast.Assign([update.target], update.value))

    return mutate


def _on_input(rule: str) -> Callable[[ast.Module], None]:
    """The rule's _backward attached to its input, `self._backward = _backward`, instead of to its output."""

    def mutate(tree: ast.Module) -> None:
        found = method(value_class(tree), RULES[rule][0])
        targets = [
            target
            for node in (ast.walk(found) if found else ())
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Attribute) and target.attr == "_backward" and isinstance(target.value, ast.Name)
        ]
        if not targets:
            raise NotApplicable(f"no `out._backward = ...` in {rule}")
        for target in targets:
            target.value = ast.Name("self", ast.Load())

    return mutate


def _outgrad_dropped(rule: str, which: int | None = None) -> Callable[[ast.Module], None]:
    """The rule's backward forgets the incoming gradient: in every update, or (which) only in one input's."""

    def mutate(tree: ast.Module) -> None:
        if not incoming_dropped(tree, rule, which):
            raise NotApplicable(f"no `* out.grad` in the backward of {rule}")

    return mutate


VARIANTS: dict[str, Callable[[str], list[Callable[[ast.Module], None]]]] = {
    "assign_in_": lambda rule: [_assign_in(rule), _assign_in(rule, 0), _assign_in(rule, 1)],
    "missing_outgrad_": lambda rule: [_outgrad_dropped(rule), _outgrad_dropped(rule, 0), _outgrad_dropped(rule, 1)],
    "backward_on_input_": lambda rule: [_on_input(rule)],
}
"""The misconceptions a student may have in several methods (causes.FAMILIES): each rule's mutations, the
forms the misconception takes in that rule."""


def _detached(rule: str) -> Callable[[ast.Module], None]:
    """The rule's backward passes nothing back (as when its output has no children)."""

    def mutate(tree: ast.Module) -> None:
        for update in rule_updates(tree, rule):
            update.value = ast.Constant(0.0)

    return mutate


def _children_dropped(rule: str) -> Callable[[ast.Module], None]:
    """The rule's output built with no children, as `(self)` for `(self,)` gives in an engine that keeps
    only a tuple of children: its _backward runs, but backward() never reaches the input beyond it."""

    def mutate(tree: ast.Module) -> None:
        found = method(value_class(tree), RULES[rule][0])
        calls = [node for node in ast.walk(found) if isinstance(node, ast.Call)] if found else []
        count = 0
        for call in calls:
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                if isinstance(arg, ast.Tuple) and len(arg.elts) == 1:
                    arg.elts = []
                    count += 1
        if not count:
            raise NotApplicable(f"no one-element tuple of children in {rule}")

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


def _tanh_square_missing(tree: ast.Module) -> None:
    """1 - t**2 (or 1 - t*t) in tanh's backward written 1 - t."""
    count = 0
    for update in rule_updates(tree, "tanh"):
        for node in ast.walk(update.value):
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Sub)
                and isinstance(node.left, ast.Constant)
                and node.left.value == 1
                and isinstance(node.right, ast.BinOp)
                and isinstance(node.right.op, (ast.Pow, ast.Mult))
            ):
                node.right = node.right.left
                count += 1
    if not count:
        raise NotApplicable("no 1 - t**2 in tanh's backward")


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


UNARY_RULES = tuple(rule for rule in UPDATED if rule not in ("add", "mul"))
"""The rules whose output has one child, (self,)."""

# (cause id, mutation): the misconceptions that reproduce by mutating a correct engine, in the order tried.
SIMULATED = [
    *[(f"assign_in_{rule}", mutation) for rule in UPDATED for mutation in VARIANTS["assign_in_"](rule)],
    *[(f"missing_outgrad_{rule}", mutation) for rule in UPDATED for mutation in VARIANTS["missing_outgrad_"](rule)],
    *[
        (op_id, _operator(op_id))
        for op_id in (
            "add_half",
            "mul_own_data",
            "pow_off_by_one",
            "tanh_grad_from_input",
            "relu_negative_grad",
        )
    ],
    ("tanh_square_missing", _tanh_square_missing),
    ("relu_flipped", _relu_flipped),
    *[(f"backward_on_input_{rule}", _on_input(rule)) for rule in UPDATED],
    *[(f"detached_{rule}", _detached(rule)) for rule in UPDATED],
    *[("children_not_tuple", _children_dropped(rule)) for rule in UNARY_RULES],
    ("topo_not_reversed", _operator("topo_not_reversed")),
    ("visited_dropped", _visited_dropped),
    ("sub_as_add", _operator("sub_as_add")),
]


@functools.cache
def _mutant_modules(cause_id: str) -> tuple[types.SimpleNamespace, ...]:
    """The wheats with the cause's mutation (those it applies to), each as a module: Value, Neuron..."""
    mutations = [fn for cid, fn in SIMULATED if cid == cause_id]
    return tuple(m for fn in mutations for wheat in wheats() if (m := _built(wheat.source, (fn,), cause_id)))


@functools.cache
def _combined(spec: tuple[tuple[str, str, int], ...]) -> tuple[types.SimpleNamespace, ...]:
    """The wheats with one misconception in several rules at once: (family, rule, the form's index in
    VARIANTS) each; those wheats every one of them applies to."""
    mutations = tuple(VARIANTS[prefix](rule)[k] for prefix, rule, k in spec)
    return tuple(m for wheat in wheats() if (m := _built(wheat.source, mutations, "several")))


def _built(source: str, mutations, name: str) -> types.SimpleNamespace | None:
    """An engine with the mutations made, as a module; None if one of them does not apply."""
    tree = ast.parse(source)
    try:
        for mutation in mutations:
            mutation(tree)
    except NotApplicable:
        return None
    namespace: dict = {}
    exec(compile(ast.fix_missing_locations(tree), f"<{name}>", "exec"), namespace)
    return types.SimpleNamespace(**namespace)


def _mutants(cause_id: str) -> tuple[type, ...]:
    """The Value classes of the wheats with the cause's mutation."""
    return tuple(module.Value for module in _mutant_modules(cause_id))


def _replay(cls: type, program: Program, seed: bool) -> list | None:
    """A mutant's gradients on a program, or None where it raises (it says nothing there)."""
    try:
        return probes.evaluate(program, cls, True, None, seed)["grad"]
    except Exception:
        return None


def _same(a, b) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def fitting(program: Program, grads: list, seed: bool = False) -> list[str]:
    """The misconceptions whose mutant of a correct engine gives exactly these gradients, in the order tried."""
    nodes = [i for i in ancestors(program) if grads[i] is not None]  # a gradcheck knows only the leaves'
    if not nodes:
        return []
    return [
        cause_id
        for cause_id in dict.fromkeys(cause_id for cause_id, _ in SIMULATED)
        if any(_fits(_replay(cls, program, seed), grads, nodes) for cls in _mutants(cause_id))
    ]


def diagnosed(ctx: Context, program: Program, grads: list, seed: bool = False) -> Cause | None:
    """The misconception behind these gradients, tested on more than the smallest case: every cause
    whose replay fits the smallest case is a hypothesis, and one whose replay is wrong on a program of
    cases.DISCRIMINATING where the student's engine is right is dropped (a zero base special-cased in
    pow fits `k * x**k` at x = 0, and not at x = 2 with k = 1, where the student's engine is right). Of
    several that remain, one whose replay gives the student's wrong numbers on every program another's
    does, and on more, is the one (addition halving the gradient and `=` for `+=` in __add__ both give
    a + a's; only the first gives a + b's). A cause is named only when exactly one remains; two that
    still fit are not told apart, so neither is named. Each cause named is among what the check found
    (ctx.finding), for the checks that read it and can test only a named one (training)."""
    found = fitting(program, grads, seed)
    if found:
        seeded = ctx.features.seed_missing or seed
        try:
            answers = _answers(ctx, seeded)
        except CheckTimeout:  # no time left to test the hypotheses: name none rather than guess
            return None
        found = [cause_id for cause_id in found if not _refuted(_mutants(cause_id), answers, seeded, ctx.close)]
        if len(found) > 1:
            found = _dominant(found, answers, seeded, ctx.close)
    if len(found) != 1:
        return None
    cause = _everywhere(ctx, found[0], seeded) if family(found[0]) in VARIANTS else CAUSES[found[0]]
    ctx.finding.name(cause.id)
    return cause


def _everywhere(ctx: Context, cause_id: str, seed: bool) -> Cause:
    """The misconception named in every rule it is in, once per grading: the rules whose replay together
    gives the student's wrong numbers on more of the discriminating programs than without each, and is
    never wrong where the student's engine is right (`=` for `+=` in __add__, __mul__ and tanh is one
    misconception, named once with its three methods, its first method's id first)."""
    groups = ctx.groups
    prefix = family(cause_id) or ""
    if prefix not in groups:
        groups[prefix] = _grown(prefix, cause_id, *_judged_answers(_answers(ctx, seed), ctx.close), seed, ctx.close)
    spec = groups[prefix]
    ids = tuple(f"{prefix}{rule}" for rule in UPDATED if any(rule == r for _, r, _ in spec))
    if cause_id not in ids:
        return CAUSES[cause_id]
    return several(ids) if len(ids) > 1 else CAUSES[ids[0]]


def _judged_answers(answers: dict, close) -> tuple[dict, list]:
    """The student's answers split: those wrong (program: gradients), and the programs it gets right."""
    wrong, right = {}, []
    for program, got in answers.items():
        if got is None or not got.ok:
            continue
        expected = reference_run(program)
        if expected is None or expected.grad is None or expected.data is None or got.grad is None:
            continue
        want, data = expected.grad, expected.data
        if all(close(want[i], got.grad[i]) and close(data[i], got.data[i]) for i in ancestors(program)):
            right.append(program)
        else:
            wrong[program] = got.grad
    return wrong, right


def _grown(prefix: str, cause_id: str, wrong: dict, right: list, seed: bool, close) -> tuple:
    """The misconception's spec for _combined: the named rule's best form, then each other rule's best form
    that makes the replay reproduce more of the wrong answers."""
    rule = cause_id[len(prefix) :]
    spec: tuple[tuple[str, str, int], ...] = max(
        (((prefix, rule, k),) for k in range(len(VARIANTS[prefix](rule)))),
        key=lambda s: _score(s, wrong, right, seed, close),
    )
    for other in UPDATED:
        if other == rule:
            continue
        options = [spec + ((prefix, other, k),) for k in range(len(VARIANTS[prefix](other)))]
        best = max(options, key=lambda s: _score(s, wrong, right, seed, close))
        if _score(best, wrong, right, seed, close) > _score(spec, wrong, right, seed, close):
            spec = best
    return spec


@functools.lru_cache(maxsize=256)
def _replayed(spec: tuple, program: Program, seed: bool) -> tuple:
    return tuple(_replay(module.Value, program, seed) for module in _combined(spec))


def _score(spec: tuple, wrong: dict, right: list, seed: bool, close) -> int:
    """How many wrong answers the best replay of spec reproduces, of those never wrong where the student's
    engine is right (-1 when there are none such)."""
    best = -1
    for k in range(len(_combined(spec))):
        if any(_wrong_at(_replayed(spec, program, seed)[k], program, close) for program in right):
            continue
        best = max(best, sum(_fits(_replayed(spec, p, seed)[k], grads, ancestors(p)) for p, grads in wrong.items()))
    return best


def _wrong_at(sim: list | None, program: Program, close) -> bool:
    expected = reference_run(program)
    want = expected.grad if expected is not None else None
    return sim is not None and want is not None and not all(close(want[i], sim[i]) for i in ancestors(program))


def _fits(sim: list | None, grads: list, nodes) -> bool:
    return sim is not None and all(_same(grads[i], sim[i]) for i in nodes)


def _answers(ctx: Context, seed: bool) -> dict:
    """The student's engine on the discriminating programs, asked once per grading (one request)."""
    if seed not in ctx.discriminating:
        todo = [
            p
            for p in DISCRIMINATING
            if (expected := reference_run(p)) is not None
            and expected.data is not None
            and not any(ins[0] == "relu" and expected.data[ins[1]] == 0.0 for ins in p)
            and all(NEEDS.get(ins[0], ins[0]) in ctx.assignment.ops for ins in p if ins[0] != "leaf")
        ]
        ctx.discriminating[seed] = dict(zip(todo, ctx.student.run_many(todo, seed=seed, every=True), strict=True))
    return ctx.discriminating[seed]


def _dominant(found: list[str], answers: dict, seed: bool, close) -> list[str]:
    """The one cause whose replay reproduces the student's wrong answers on a strict superset of the
    programs every other's does, or all of them when there is no such one."""
    wrong = {}
    for program, got in answers.items():
        expected = reference_run(program)
        if got is None or not got.ok or got.grad is None:  # (an ok run has its grads)
            continue
        assert expected is not None and expected.grad is not None, "answers are to programs the reference computes"
        if not all(close(expected.grad[i], got.grad[i]) for i in ancestors(program)):
            wrong[program] = got
    reproduced = {
        cause_id: {
            program
            for program, got in wrong.items()
            if any(
                (sim := _replay(cls, program, seed)) is not None
                and all(_same(got.grad[i], sim[i]) for i in ancestors(program))
                for cls in _mutants(cause_id)
            )
        }
        for cause_id in found
    }
    best = [c for c in found if all(c == o or reproduced[o] < reproduced[c] for o in found)]
    return best if len(best) == 1 else found


def _refuted(mutants: tuple[type, ...], answers: dict, seed: bool, close) -> bool:
    """Is every replay of the cause wrong on some program where the student's engine is right?"""
    wrong = set()
    for program, got in answers.items():
        if got is None or not got.ok or got.grad is None or got.data is None:  # (an ok run has its numbers)
            continue
        expected = reference_run(program)
        assert expected is not None, "answers are to programs the reference computes"
        assert expected.grad is not None and expected.data is not None, "the reference's run has its numbers"
        nodes = ancestors(program)
        if not all(close(expected.grad[i], got.grad[i]) and close(expected.data[i], got.data[i]) for i in nodes):
            continue  # the student's engine is wrong here too: no evidence either way
        for k, cls in enumerate(mutants):
            sim = _replay(cls, program, seed)
            if sim is not None and not all(close(expected.grad[i], sim[i]) for i in nodes):
                wrong.add(k)
        if len(wrong) == len(mutants):
            return True
    return False


def in_training(
    ctx: Context, named: Iterable[str], train: Callable[[types.SimpleNamespace], list], losses: list, rtol: float
) -> Cause | None:
    """The cause, among those named (by the checks training reads), whose replay of the lesson's training loop
    gives the student's losses at every step (the hypothesis tested on the whole run), if exactly one."""
    found = []
    for cause_id in named:
        for module in _named_modules(ctx, cause_id):
            try:
                replayed = train(module)
            except Exception:
                continue
            if len(replayed) == len(losses) and all(
                isinstance(a, float) and math.isclose(a, b, rel_tol=rtol, abs_tol=1e-12)
                for a, b in zip(losses, replayed)
            ):
                found.append(cause_id)
                break
    return as_named(ctx, found[0]) if len(found) == 1 else None


def _named_modules(ctx: Context, cause_id: str) -> tuple[types.SimpleNamespace, ...]:
    """The replays of a cause named in this grading: of every rule it was found in."""
    spec = ctx.groups.get(family(cause_id) or "")
    if spec and any(f"{prefix}{rule}" == cause_id for prefix, rule, _ in spec):
        return _combined(spec)
    return _mutant_modules(cause_id)


def as_named(ctx: Context, cause_id: str) -> Cause:
    """A cause this grading named, as it was named (with every method of its family it was found in)."""
    spec = ctx.groups.get(family(cause_id) or "", ())
    ids = tuple(f"{prefix}{rule}" for rule in UPDATED for prefix, r, _ in spec if r == rule)
    return several(ids) if len(ids) > 1 and cause_id == ids[0] else CAUSES[cause_id]


def from_error(error: StudentError | None, program: Program | None = None) -> Cause | None:
    """A cause read off what the student's code raised (its process's claim: the exception's own message)."""
    if error is None:
        return None
    message = error.message
    if "object is not iterable" in message and "Value" in message:
        return CAUSES["children_not_tuple"]
    if "unsupported operand" in message and program:
        for ins in program:
            if ins[0] in REFLECTED:
                return CAUSES[f"missing_{REFLECTED[ins[0]]}"]
    if "unsupported operand type(s) for +: 'int' and 'Value'" in message:
        return CAUSES["missing___radd__"]
    return None
