"""The rule checks: each operation's local chain rule, accumulation and ordering, each
judged on random expressions (hypothesis) against the reference engine."""

from __future__ import annotations

from dataclasses import replace

from grader.causes import CAUSES, family
from grader.checks import direct, order, plans, reuse
from grader.checks.cases import EQUAL_DATA, SINGLE
from grader.checks.context import Context, reference_run
from grader.checks.evidence import (
    INCOMING,
    Evidence,
    Missing,
    blocked,
    incoming,
    ops_probed,
    rule_probed,
    rule_properties,
    shares,
    word,
)
from grader.checks.features import basic_cause
from grader.checks.fixed import needed_ops
from grader.checks.gradcheck import gradcheck_judged, judge_gradcheck, judge_gradcheck_many
from grader.checks.judging import Probe, Verdict, compare, compare_many, judged, search
from grader.checks.registry import check
from grader.checks.strategies import BOUNDARY_VALUES, Shape, forward_ops, single_operations
from grader.programs import Program, default_names, expression
from grader.result import Outcome
from grader.sandbox.inside.ops import BINARY, METHODS, NEEDS, RULE_CHECK, RULES, UNARY, WORDS

HINTS = {
    "forward": "Check the forward formula of the operation in the smallest case; with a plain number "
    "on the left (2 + a, 2 * a, 1 - a) Python calls __radd__, __rmul__, __rsub__, so those must exist "
    "and wrap the number in a Value.",
    "add": "For out = a + b the local derivative is 1 for both inputs: each input gets `+= out.grad`, "
    "the incoming gradient passed through unchanged.",
    "mul": "For out = a * b each input gets the OTHER input's data times the incoming gradient: "
    "`self.grad += other.data * out.grad` and `other.grad += self.data * out.grad`.",
    "pow": "For out = x ** k the local derivative is k * x ** (k - 1): "
    "`self.grad += k * self.data ** (k - 1) * out.grad`.",
    "tanh": "tanh's local derivative is 1 - t**2 where t is tanh's OUTPUT (out.data), not its input: "
    "`self.grad += (1 - t**2) * out.grad`.",
    "relu": "relu passes the incoming gradient only where its input was positive, and exactly 0 where it "
    "was negative: `self.grad += (out.data > 0) * out.grad`.",
    "neg_sub": "-x is x * -1, so x gets -1 times the incoming gradient; a - b is a + (-b), so b gets "
    "MINUS the incoming gradient.",
    "accumulate": "Use += : a value used twice receives gradient from both paths, and `=` keeps only the last one.",
    "topo_order": "backward() must call every node's _backward exactly once, after every node that uses "
    "it: build the topological order once (with a visited set) and walk it in reverse.",
    "gradcheck": "Your analytic gradient disagrees with the slope of your own forward pass; find the "
    "operation in the smallest case whose backward rule does not match its forward formula.",
}


MATCHES = "Matches the reference engine on every expression tried."

GRADIENTS = Probe()
"""The probe most searches use: gradients after backward()."""


def _run_search(
    ctx: Context,
    check_id: str,
    shape: Shape,
    probe: Probe = GRADIENTS,
    note: bool = False,
    sweep: list[Program] | tuple[Program, ...] = (),
) -> Outcome:
    """A sweep of fixed programs first, then hypothesis's search for the smallest disagreement;
    note=True says which structures were left out and why."""
    verdicts = compare_many(ctx, list(sweep), probe) if sweep else {}
    verdict = next((verdicts[p] for p in sweep if verdicts.get(p) is not None), None)
    if verdict is None and (not sweep or len(verdicts) == len(sweep)):
        verdict = search(
            ctx, shape, lambda program: compare(ctx, program, probe), lambda many: compare_many(ctx, many, probe)
        )
    if verdict is None:
        return Outcome("passed", MATCHES)
    verdict = verdict.explained(ctx, probe.seed)
    ctx.failing_cases.append(verdict.program)  # gradcheck judges them too
    if verdict.unstable:  # the check whose numbers changed from try to try: what training points to first
        ctx.unstable = ctx.unstable or check_id
    return verdict.outcome(HINTS[check_id] + (ctx.features.limits() if note else ""), "On the smallest failing case, ")


def _probe(ctx: Context) -> Probe:
    """Rule checks seed the output themselves when backward() does not, and keep equal numbers
    apart when the engine merges them: each of those is charged once, elsewhere."""
    f = ctx.features
    return Probe(seed=f.seed_missing, distinct=f.equal_data_merged)


def _rule_shape(ctx: Context, *ops: str, helpers: tuple[str, ...] = ("add", "mul")) -> Shape:
    """A rule probed on leaves and, where the engine's basics work, inside larger expressions; each
    value used once (a value used twice is accumulate's business), unless nothing else gives the rule an
    incoming gradient other than 1 (no `* k` when * is wrong): then nodes of + used twice do (c + c), where
    the preflight found shared nodes of + right."""
    f = ctx.features
    helpers = tuple(op for op in f.trusted(*helpers) if op not in ops)
    wrap = f.mul and f.depth
    return Shape(
        ops=ops,
        helpers=helpers,
        max_ops=f.nested(),
        wrap=wrap,
        share_nodes=not wrap and f.share and set(ops + helpers) <= set(f.reused_by),
    )


def _not_judged(why: str, *blockers: str) -> Outcome:
    """A skip, naming in its artifacts (blocked_by) the checks whose bugs stand in the way (those its reason
    points the student at: '(see forward)')."""
    return Outcome("skipped", f"Not judged: {why}.", artifacts={"probed": [], "blocked_by": list(blockers)})


def _blocked(ctx: Context, *ops: str) -> Outcome | None:
    """Skipped when a basic this rule needs is broken: backward() itself, or the op's own value."""
    f = ctx.features
    if f.backward_inert:
        return _not_judged(
            "backward() changes no gradient at all, so no rule can be seen through it (see topo_order)", "topo_order"
        )
    wrong = [op for op in ops if op in VALUE_DEPENDENT and f.broken.get(op) == "computes a wrong value"]
    if wrong:
        return _not_judged(
            f"{_symbol(wrong[0])} computes a wrong value, and its gradient depends on it (see forward)", "forward"
        )
    return None


VALUE_DEPENDENT = METHODS
"""Operations whose local derivative is read off their own value: with a wrong value it cannot be judged."""


def _symbol(op: str) -> str:
    return WORDS.get(op, op)


def _rule_check(ctx: Context, check_id: str, *ops: str) -> Outcome:
    """A rule's outcome, judged once per submission (accumulate asks which rules are right): on its own first
    (the output's own backward called alone, where the nodes carry one), then inside expressions built only of
    operations shown right, and never failed for another operation's wrong rule."""
    if check_id not in ctx.rules:
        stopped = _blocked(ctx, *ops) or _wrong_alone(ctx, check_id, ops) or _built_on_wrong(ctx, ops)
        if stopped is None:
            shape, probe = _rule_shape(ctx, *ops), _probe(ctx)
            outcome = _run_search(ctx, check_id, shape, probe, note=True)
            stopped = _called_alone(ctx, _rule_evidence(ctx, shape, probe, ops), outcome, check_id)
            stopped = _not_defined(ctx, ops, stopped)
        ctx.rules[check_id] = stopped
    return ctx.rules[check_id]


def _wrong_alone(ctx: Context, check_id: str, ops: tuple[str, ...]) -> Outcome | None:
    """The failed outcome of a rule found wrong on its own, under an incoming gradient other than 1 (the
    preflight's finding: checks/direct.py), which names the cause; None when none of ops is."""
    wrong = tuple(op for op in ops if ctx.features.alone.get(op) is False)
    if not wrong:
        return None
    failed = direct.called_alone(ctx, wrong, dict.fromkeys(wrong, HINTS[check_id]))[1]
    if failed is None or family(failed.cause or "") != "missing_outgrad_":
        return failed
    group = tuple(f"missing_outgrad_{op}" for op in direct.ignoring(ctx) if f"missing_outgrad_{op}" in CAUSES)
    if len(group) < 2 or failed.cause not in group:  # one method forgets out.grad: its own cause
        return failed
    return replace(failed, cause=group[0], artifacts={**failed.artifacts, "causes": list(group)})


METHOD = {**{op: name for op, (name, _) in RULES.items()}, "neg": "__neg__"}
"""The method of Value each operation is written in."""


def _not_defined(ctx: Context, ops: tuple[str, ...], outcome: Outcome) -> Outcome:
    """A rule check's error, saying first which of its operations the engine does not define at all (charged here,
    once: forward, accumulate and gradcheck leave them out)."""
    absent = [op for op in ops if op in ctx.features.absent]
    if outcome.status != "error" or not absent or outcome.not_written:  # a method to write says so itself
        return outcome
    methods = " and ".join(word(op) if word(op) == METHOD[op] else f"{word(op)} ({METHOD[op]})" for op in absent)
    one = len(absent) == 1
    said = (
        f"Your Value has no method for {methods} yet (or for what {'it is' if one else 'they are'} built from): "
        f"write {'it' if one else 'them'} as the lesson does."
    )
    return replace(outcome, feedback=f"{said}\n{outcome.feedback}")


BASICS = ("add", "mul")
"""The operations every larger expression is built with, and others are often built from (a - b is a + (-b))."""


def _built_on_wrong(ctx: Context, ops: tuple[str, ...]) -> Outcome | None:
    """Skipped, naming their checks, when + or * has a rule wrong inside larger expressions and ops may be built
    from them: ops that work on their own, of which none is a basic nor seen to hold its whole rule in its own
    node (a - b written a + (-b) carries +'s bug, and no case of it could tell its own rule apart). None
    otherwise: the rule is judged, inside expressions built only of operations shown right."""
    f = ctx.features
    wrong = [op for op in BASICS if op not in ops and op in f.working and f.wrong(op)]
    own = any(op in BASICS or op in f.alone for op in ops)
    if not wrong or own or not all(op in f.working for op in ops):
        return None
    names = " and ".join(f"{word(op)} (see {op})" for op in wrong)
    return _not_judged(
        f"{_listed_ops(ops)} may be built from other operations (-x as x * -1, a - b as a + (-b), tanh with exp "
        f"and /), and {names} {'is' if len(wrong) == 1 else 'are'} wrong inside larger expressions: fix that first, "
        "then look here again",
        *wrong,
    )


def _listed_ops(ops: tuple[str, ...]) -> str:
    return " and ".join(word(op) for op in ops)


def _called_alone(ctx: Context, evidence: Evidence, outcome: Outcome, check_id: str) -> Outcome:
    """A passed rule check's outcome, its rules under an incoming gradient other than 1 that nested expressions
    could not probe probed by calling the output's own backward alone, where the engine's nodes carry one
    (direct.py): a wrong result fails the check; one held counts as probed; the rest stay missing."""
    wanted = tuple(m.property for m in evidence.missing)
    ops = tuple(op for op in direct.CASES if incoming(op) in wanted)
    if outcome.status != "passed" or not ops:
        return evidence.settle(outcome)
    probed, failed = direct.called_alone(ctx, ops, dict.fromkeys(ops, HINTS[check_id]))
    if failed is not None:
        return failed
    held = {p.split(",")[0] for p in probed}
    missing = tuple(m for m in evidence.missing if m.property not in held)
    return Evidence(evidence.probed + probed, missing).settle(outcome)


def _rule_evidence(ctx: Context, shape: Shape, probe: Probe, ops: tuple[str, ...]) -> Evidence:
    """What a rule check's search probed: each of its operations, and each under an incoming gradient other
    than 1 (nested, or times k), on the programs it judged."""
    ops = tuple(op for op in ops if op in ctx.assignment.ops)
    plan = plans.programs(shape, ctx.assignment.search.max_examples)
    probed = rule_probed((p for p in plan if judged(p, "grad", probe.distinct)), ops)
    return Evidence(probed, tuple(_rule_missing(ctx, p) for p in rule_properties(ops) if p not in probed))


def _rule_missing(ctx: Context, wanted: str) -> Missing:
    """Why a rule's property was not probed, and the check whose bug stands in the way."""
    f = ctx.features
    if not wanted.endswith(INCOMING):
        return Missing(wanted, "no expression with it could be judged")
    if not f.depth:
        why = "nested expressions do not backpropagate in the right order yet, so no rule is probed inside one"
        return Missing(wanted, blocked(why, "topo_order"), "topo_order")
    if f.equal_data_merged:
        why = (
            "your engine merges nodes of equal value, so only expressions whose numbers all "
            "differ are judged, and none of those tried put it under an incoming gradient other than 1"
        )
        return Missing(wanted, blocked(why, "topo_order"), "topo_order")
    blocker = "mul" if not f.trusted("mul") else "add" if not f.trusted("add") else None
    why = "the expressions it is probed inside need + and * to be right, and one is not"
    return Missing(wanted, blocked(why, blocker), blocker)


def _not_working(ctx: Context, op: str, wanted: str) -> Missing:
    """A property not probed because op does not work on its own: forward's to charge when op does not build
    or computes a wrong value, its own rule's check's when only its backward raises."""
    if op not in ctx.builds:
        got = ctx.student.run(SINGLE[op], backward=False)
        expected = reference_run(SINGLE[op], False)
        ctx.builds[op] = (
            got.ok
            and expected is not None
            and expected.data is not None
            and got.data is not None
            and ctx.close(expected.data[-1], got.data[-1])
        )
    if ctx.builds[op] and op in RULE_CHECK:
        return Missing(wanted, blocked("its backward raises", RULE_CHECK[op]), RULE_CHECK[op])
    return Missing(wanted, blocked("the operation does not work on its own yet", "forward"), "forward")


RULE_OF = {
    op: (check_id, tuple(o for o, c in RULE_CHECK.items() if c == check_id)) for op, check_id in RULE_CHECK.items()
}


def sound(ctx: Context) -> tuple[str, ...]:
    """The operations that work on their own and whose rule is right (its check passes), in the
    assignment's order: a value used twice is probed only through those, so that a wrong rule is
    charged to its own check and not to accumulation too."""
    found = []
    for op in ctx.assignment.ops:
        if op not in ctx.features.working:
            continue
        if op in RULE_OF:
            check_id, ops = RULE_OF[op]
            if _rule_check(ctx, check_id, *ops).status != "passed":
                continue
        found.append(op)
    return tuple(found)


@check("forward", "Operations compute the right values (with plain numbers on either side)")
def forward(ctx: Context) -> Outcome:
    ops = forward_ops(ctx.assignment.ops)
    sweep = list(single_operations(ops))
    todo = [program for program in sweep if judged(program, "data")]
    verdicts = compare_many(
        ctx, sweep, Probe("data"), dict(zip(todo, ctx.student.run_many(todo, False, every=True), strict=False))
    )
    first: dict[str, Verdict] = {}  # each operation's smallest failing case (the sweep goes simplest first)
    for program in sweep:
        verdict = verdicts.get(program)
        if verdict is not None and verdict.failure is not None:  # the process failed: nothing after it is known
            return verdict.outcome(HINTS["forward"], "On the smallest failing case, ")
        if verdict is not None:
            first.setdefault(program[-1][0], verdict.explained(ctx))
    absent = _charged_elsewhere(ctx, first, todo)
    first = {op: verdict for op, verdict in first.items() if NEEDS.get(op, op) not in absent}
    if first:
        return _counted_elsewhere(_every_operation(list(first.values())), absent)
    ops = tuple(op for op in ops if NEEDS.get(op, op) not in absent)
    outcome = _run_search(ctx, "forward", Shape(ops=ops, max_ops=4, reuse_leaves=True, share_nodes=True), Probe("data"))
    forms = (program[-1][0] for program in todo if NEEDS.get(program[-1][0], program[-1][0]) not in absent)
    settled = Evidence(tuple(dict.fromkeys(map(_form, forms))) + ("nested expressions",)).settle(outcome)
    return _counted_elsewhere(settled, absent) if settled.status == "passed" else settled


def _counted_elsewhere(outcome: Outcome, absent: tuple[str, ...]) -> Outcome:
    """forward's outcome, saying which operations it left to their own checks."""
    if not absent:
        return outcome
    one = len(absent) == 1
    checks = " and ".join(dict.fromkeys(RULE_CHECK[op] for op in absent))
    said = (
        f"\n{_listed_ops(absent)} cannot be built yet (no method for {'it' if one else 'them'}, or for what "
        f"{'it is' if one else 'they are'} built from, is written yet): counted once, by {checks}."
    )
    return replace(outcome, feedback=outcome.feedback + said)


def _charged_elsewhere(ctx: Context, failing: dict[str, Verdict], probed: list[Program]) -> tuple[str, ...]:
    """The operations forward leaves to their own rule checks: those the engine does not define at all (the
    preflight's finding), each charged once, by the check named for it. None when no operation works: forward
    passes only on what it probed."""
    if not failing:
        return ()
    absent = tuple(op for op in ctx.features.absent if op in RULE_CHECK)
    works = any(NEEDS.get(p[-1][0], p[-1][0]) not in absent and p[-1][0] not in failing for p in probed)
    return absent if works else ()


def _form(op: str) -> str:
    """An operation's name in the forward check's evidence (cadd: + with a plain number)."""
    return f"{word(NEEDS[op])} with a plain number" if op in NEEDS else word(op)


def _every_operation(found: list[Verdict]) -> Outcome:
    """forward's outcome when operations are wrong: every one of them, each once, on its smallest case (one
    line for those that raise the same error); the first one's case is the counterexample, and the first
    recognised cause is the outcome's (the others' are said on their own line)."""
    if len(found) == 1 or all(v.not_written for v in found):  # the starter kit: its first method to write
        return found[0].outcome(HINTS["forward"], "On the smallest failing case, ")
    cause = next((v.cause for v in found if v.cause), None)
    cases: dict[str, list[str]] = {}
    said: dict[str, Verdict] = {}
    for verdict in found:
        names = list(verdict.names or default_names(verdict.program))
        values = ", ".join(f"{names[i]} = {ins[1]!r}" for i, ins in enumerate(verdict.program) if ins[0] == "leaf")
        key = (
            "not written"
            if verdict.not_written
            else verdict.what
            if verdict.status == "error"
            else verdict.program[-1][0]
        )
        cases.setdefault(key, []).append(f"{expression(verdict.program[-1], names)} with {values}")
        said.setdefault(key, verdict)
    lines = [
        f"  {'; '.join(cases[key])}: {'not written yet' if verdict.not_written else verdict.what}"
        + (f"\n    Likely cause: {verdict.cause.sentence}." if verdict.cause and verdict.cause != cause else "")
        for key, verdict in said.items()
    ]
    head = found[0].outcome(HINTS["forward"])
    feedback = (
        f"{len(found)} operations compute a wrong value or raise; each on its smallest case:\n"
        + "\n".join(lines)
        + ("" if cause else f"\n{HINTS['forward']}")
    )
    return replace(
        head,
        status="failed" if any(v.status == "failed" for v in found) else "error",
        feedback=feedback,
        cause=cause.id if cause else None,
    )


@check("add", "+ passes the incoming gradient unchanged to both inputs", backward=True)
def add(ctx: Context) -> Outcome:
    return _rule_check(ctx, "add", "add")


@check("mul", "* gives each input the other input's data times the incoming gradient", backward=True)
def mul(ctx: Context) -> Outcome:
    return _rule_check(ctx, "mul", "mul")


@check("pow", "x ** k gives k * x ** (k - 1)", backward=True)
def pow_(ctx: Context) -> Outcome:
    return _rule_check(ctx, "pow", "pow")


@check("tanh", "tanh's backward is 1 - t**2 on its output t", backward=True)
def tanh(ctx: Context) -> Outcome:
    return _rule_check(ctx, "tanh", "tanh")


@check("relu", "relu passes the gradient where the input is positive, 0 where negative", backward=True)
def relu(ctx: Context) -> Outcome:
    return _rule_check(ctx, "relu", "relu")


@check("neg_sub", "-x and x - y have the right gradients", backward=True)
def neg_sub(ctx: Context) -> Outcome:
    outcome = _rule_check(ctx, "neg_sub", "neg", "sub")
    f = ctx.features
    if outcome.status == "failed" and not f.depth and "neg" not in f.broken and "sub" not in f.broken:
        return _not_judged(
            "-x and a - b are usually built from other operations (x * -1, a + (-b)), and nested "
            "operations do not backpropagate in the right order yet (see topo_order)",
            "topo_order",
        )
    return outcome


# A value used twice through each operation: x op x for the binary ones, f(x) combined with x
# for the others. Built only from operations that work on their own.
def reuse_sweep(ctx: Context, ops: tuple[str, ...]) -> list[Program]:
    f = ctx.features
    working = set(ops)
    found: list[Program] = []
    for op in BINARY if f.depth else ("add", "mul"):  # - and / are nested inside
        if op in working:
            found.append((("leaf", 1.5), (op, 0, 0)))
    if not f.depth:
        return found
    combine = next((op for op in ("add", "mul") if op in working), None)
    if combine is None:
        return found
    for op, ins in (
        ("pow", ("pow", 0, 2)),
        ("tanh", ("tanh", 0)),
        ("relu", ("relu", 0)),
        ("exp", ("exp", 0)),
        ("neg", ("neg", 0)),
    ):
        if op in working and op in ctx.assignment.ops:
            found.append((("leaf", 1.5), ins, (combine, 1, 0)))
            found.append(
                (("leaf", 0.7), ins, ("leaf", -2.0), (combine, 1, 2), ("mul" if "mul" in working else combine, 3, 0))
            )
    return found


@check("accumulate", "A value used several times gets the sum of every path's gradient (+=)", backward=True)
def accumulate(ctx: Context) -> Outcome:
    f = ctx.features
    if f.backward_inert:
        return _not_judged("backward() changes no gradient at all (see topo_order)", "topo_order")
    ops = tuple(op for op in sound(ctx) if f.depth or op in ("add", "mul"))
    apart = tuple(op for op in ctx.assignment.ops if op not in ops and _judged_apart(f, op))
    missing = tuple(_reuse_missing(ctx, op) for op in ctx.assignment.ops if op not in ops + apart + f.absent)
    if "add" in f.absent:
        return _not_judged("the lesson's a + a needs +, which your Value does not define yet (see add)", "add")
    if not ops + apart:
        every = {m.blocker for m in missing} == {"forward"}  # the starter kit: one short line
        return (
            _not_judged("no operation works on its own yet (see forward)", "forward")
            if every
            else Evidence(missing=missing).skipped()
        )
    probe = _probe(ctx)
    sweep = reuse_sweep(ctx, ops)
    covered = {p[1][0] for p in sweep}  # through a right rule, where a right + or * combines f(x) with x
    apart += tuple(op for op in ops if op not in covered and _judged_apart(f, op))
    if ops:
        shape = Shape(
            ops=ops, max_ops=min(f.nested(), 4), reuse_leaves=True, require_reuse=True, wrap=f.mul and f.depth
        )
        outcome = _run_search(ctx, "accumulate", shape, probe, sweep=sweep)
        if outcome.status != "passed":
            return outcome
    helpers = tuple(op for op in ("add", "mul") if _judged_apart(f, op) or op in ops)
    summed = [p for p in reuse_sweep(ctx, apart + helpers) if p[1][0] in apart]
    verdict, summed = reuse.judge_many(ctx, summed, probe.seed) if apart else (None, [])
    if verdict is not None:
        return verdict.outcome(HINTS["accumulate"], "On the smallest failing case, ")
    reused = {p[1][0] for p in sweep if judged(p, "grad", probe.distinct)} | {p[1][0] for p in summed}
    probed = tuple(_reused(op) for op in ctx.assignment.ops if op in reused)
    missing += tuple(_unjudged_reuse(ctx, op) for op in ops + apart if op not in reused)
    said = "A value used twice gets the sum of every path's gradient, through every operation tried."
    return Evidence(probed, missing).settle(Outcome("passed", said if apart else MATCHES))


def _judged_apart(f, op: str) -> bool:
    """Can a value used twice through op be judged against the sum of the engine's own paths: op builds and
    backpropagates (its value or rule may be wrong), and where it needs nesting, nesting works?"""
    builds = op in f.working or f.broken.get(op) == "computes a wrong value"
    return builds and (f.depth or op in ("add", "mul")) and not f.equal_data_merged


def _unjudged_reuse(ctx: Context, op: str) -> Missing:
    """Why a value used twice through op, tried, was judged on no case. On an engine that merges nodes of equal
    value, every such case of relu holds two equal numbers (relu(x) is x where x > 0, and 0 added to or
    multiplied by a node repeats a number), so only that merge, topo_order's bug, keeps it from being judged."""
    if ctx.features.equal_data_merged:
        return _reuse_missing(ctx, op)
    return Missing(_reused(op), "no case of it could be judged")


def _reused(op: str) -> str:
    return f"a value used twice through {word(op)}"


def _reuse_missing(ctx: Context, op: str) -> Missing:
    """Why a value used twice through op is not probed: op does not build, nested expressions do not
    backpropagate right (the use inside f(x) gets no gradient in the right order), or equal numbers merge."""
    f = ctx.features
    if op not in f.working and f.broken.get(op) != "computes a wrong value":
        return _not_working(ctx, op, _reused(op))
    if not (f.depth or op in ("add", "mul")):
        why = "it is probed nested, f(x) combined with x, and nested expressions do not backpropagate right yet"
        return Missing(_reused(op), blocked(why, "topo_order"), "topo_order")
    why = "your engine merges nodes of equal value, and the cases probing it hold equal numbers"
    return Missing(_reused(op), blocked(why, "topo_order"), "topo_order")


@check("topo_order", "backward() runs each node's rule once, after every node that uses it", backward=True)
def topo_order(ctx: Context) -> Outcome:
    f = ctx.features
    if f.backward_inert:
        return Verdict(
            SINGLE["add"],
            "failed",
            "after backward(), a.grad should be 1 but your engine leaves it at 0",
            {"a.grad": 1.0, "b.grad": 1.0},
            {"a.grad": 0.0, "b.grad": 0.0},
            cause=CAUSES["backward_inert"],
        ).outcome(HINTS["topo_order"], "On the smallest case, ")
    if f.equal_data_merged:
        verdict = compare(ctx, EQUAL_DATA, Probe(seed=f.seed_missing))
        if verdict is not None:
            return replace(verdict, cause=CAUSES["equal_data_merged"]).outcome(
                HINTS["topo_order"], "On the smallest failing case, "
            )
    watched = _watched_order(ctx)
    if watched is not None:
        return watched
    add = bool(f.trusted("add"))
    ops = tuple(op for op, ok in (("add", add), ("mul", f.mul_inner or f.mul and not add)) if ok)
    if not ops:
        return _not_judged(
            "neither + nor * gives correct gradients on two leaves yet (see the add and mul checks), "
            "and the order of backward() is probed with them",
            "add",
            "mul",
        )
    reuse = f.reuse
    if reuse:  # a value used twice only through operations that accumulate: `=` for `+=` is accumulate's alone
        ops, reuse = (
            (tuple(op for op in ops if op in f.reused_by), True) if set(ops) & set(f.reused_by) else (ops, False)
        )
    shape = Shape(ops=ops, max_ops=6, reuse_leaves=reuse, share_nodes=reuse, require_depth=2)
    outcome = _run_search(ctx, "topo_order", shape, _probe(ctx))
    return _order_evidence(ctx, shape).settle(_order_not_blamed(outcome))


def _watched_order(ctx: Context) -> Outcome | None:
    """topo_order judged on the calls of each node's own backward, when backward()'s calls can be watched:
    operations that build (their rules may be wrong: no gradient is read). None when they cannot be."""
    ops = tuple(op for op in ("add", "mul") if op in ctx.features.working)
    if not ops:
        return None
    shape = order.shape_of(ops)
    watched = order.watch(ctx, ops, shape)
    if watched is None:
        return None
    hook, verdict = watched
    if verdict is not None:
        if verdict.unstable:  # the order changed from try to try: what training points to first
            ctx.unstable = ctx.unstable or "topo_order"
        return verdict.outcome(HINTS["topo_order"], "On the smallest failing case, ")
    probed = f"{order.PROPERTY}, watched through each node's {hook}"
    return Evidence((probed,)).settle(
        Outcome(
            "passed", f"backward() calls each node's {hook} once, after every node that uses it, on every graph tried."
        )
    )


def _order_evidence(ctx: Context, shape: Shape) -> Evidence:
    """topo_order's evidence from gradients: graphs with shared nodes, judged; none when `=` for `+=` keeps
    them from being judged and nothing of the engine's own can be watched."""
    probe = _probe(ctx)
    if any(shares(p) and judged(p, "grad", probe.distinct) for p in order.planned(ctx, shape)):
        return Evidence((f"{order.PROPERTY}, judged from the gradients",))
    why = (
        "a value used twice keeps only one path's gradient, so gradients cannot show the order on shared "
        "nodes, and your nodes carry no backward of their own (a _backward) the grader can watch"
    )
    return Evidence(missing=(Missing(order.PROPERTY, blocked(why, "accumulate"), "accumulate"),))


def _order_not_blamed(outcome: Outcome) -> Outcome:
    """topo_order's outcome, not failed for another rule's bug: numbers that `=` for `+=` gives on engines whose
    order is right (a replay of the misconception, diagnose.py) show nothing of the order."""
    if outcome.status != "failed" or not outcome.cause or family(outcome.cause) != "assign_in_":
        return outcome
    return _not_judged(
        "where a value is used twice, your numbers are those `=` for `+=` gives with the right order (see "
        "accumulate), so the order backward() walks cannot be seen through them yet",
        "accumulate",
    )


def boundary_sweep(ops: tuple[str, ...]) -> list[Program]:
    """Each operation at its edges, where a backward may raise or divide: 0, and a negative input (a power's base
    among them, with integer exponents), on leaves and, for **, a base computed to 0."""
    found: list[Program] = []
    for op in ops:
        if op == "pow":
            found += [(("leaf", x), ("pow", 0, k)) for x in BOUNDARY_VALUES for k in (1, 2, 3)]
            if "add" in ops:
                found.append((("leaf", 1.5), ("leaf", -1.5), ("add", 0, 1), ("pow", 2, 2)))
        elif op in UNARY:
            found += [(("leaf", x), (op, 0)) for x in BOUNDARY_VALUES]
        elif op in BINARY:
            found += [(("leaf", 0.0), ("leaf", -1.5), (op, 0, 1)), (("leaf", -1.5), ("leaf", 0.0), (op, 0, 1))]
    return found


def found_cases(ctx: Context, ops: tuple[str, ...]) -> list[Program]:
    """The smallest cases the rule checks before this one found failing (a domain error, a 0 under **), of those
    built only from the operations given: one search for all, so no check passes a case another failed."""
    return [p for p in ctx.failing_cases if needed_ops(p) <= set(ops)]


@check("gradcheck", "Analytic gradients agree with central differences of your own forward pass", backward=True)
def gradcheck(ctx: Context) -> Outcome:
    f = ctx.features
    ops = tuple(op for op in ctx.assignment.ops if op in f.working)
    if not ops:
        return _not_judged("no operation works on its own yet (see forward)", "forward")
    shape = Shape(ops=ops, max_ops=5, reuse_leaves=True, share_nodes=True, wrap="mul" in ops, boundary=True)
    sweep = list(dict.fromkeys(reuse_sweep(ctx, ops) + boundary_sweep(ops) + found_cases(ctx, ops)))
    first = judge_gradcheck_many(ctx, sweep) if sweep else {}
    verdict = next((first[p] for p in sweep if first.get(p) is not None), None)
    if verdict is None:
        verdict = search(
            ctx, shape, lambda program: judge_gradcheck(ctx, program), lambda many: judge_gradcheck_many(ctx, many)
        )
    if verdict is None:
        return _gradcheck_evidence(ctx, sweep + list(plans.programs(shape, ctx.assignment.search.max_examples))).settle(
            Outcome("passed", "Analytic and numerical gradients agree on every expression tried.")
        )
    verdict = replace(verdict, cause=basic_cause(f)) if basic_cause(f) else verdict.explained(ctx)
    return verdict.outcome(HINTS["gradcheck"], "On the smallest failing case, ")


def _gradcheck_evidence(ctx: Context, programs: list[Program]) -> Evidence:
    """gradcheck's evidence: each of the assignment's operations in an expression it judged; one that does not
    work on its own is left out of the search, and blocked by forward; one the engine does not define at all is
    left out, charged once by its own check."""
    probed = ops_probed([p for p in programs if gradcheck_judged(p)], ctx.assignment.ops)
    missing = tuple(
        _not_working(ctx, op, word(op))
        if op not in ctx.features.working
        else Missing(word(op), "no expression with it could be judged")
        for op in ctx.assignment.ops
        if word(op) not in probed and op not in ctx.features.absent  # what the engine lacks is its own check's
    )
    return Evidence(probed, missing)
