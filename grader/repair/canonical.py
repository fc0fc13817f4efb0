"""The lesson's line for a rule, written in the student's own names: the second candidate of each cause of a rule's
backward that has an inverse edit (inverse.py), whatever the spelling of the mistake.

An inverse edit undoes a mistake spelled as the lesson's students spell it (`x < 0` the other way round, `= ` for
`+=`); a student who writes `(out.data > -1) * out.grad`, or `(0 if out.data < 0 else 1) * out.grad`, made the
same mistake in a spelling no inverse foresees. The canonical rewrite does not read the mistake at all: it writes the
rule's line as the lesson does (`self.grad += (out.data > 0) * out.grad`), taking from the student's statement, found
through the syntax tree (reading.py, places.py), the input whose gradient it sets, the output's value and gradient
as the backward names them (`out.data` or the local `t`; `out.grad`, `res.grad`, or `g` of a dispatching
backward), the other input of a product and the exponent of a power. The statement is found wherever the backward
lives: a closure in the rule's method, a branch of a dispatching backward(), a function given the nodes with
functools.partial, or a lambda of a table keyed by the operations' labels (whose gradients are expressions: each is
rewritten in place). A condition around the statement alone (`if self.data > 0:`) is rewritten with it; where the
statement multiplies the incoming gradient by a local name given one value (`mask = 1.0 if x > -1 else 0.0`), that
value is rewritten instead, on its own line, as the rule's local derivative. The lesson's derivatives, with the
names to fill in, live with the operations' vocabulary (grader/sandbox/inside/ops.py's DERIVATIVES).

Which statements are rewritten: for `=` for `+=`, those written with `=`; for a missing `* out.grad`, those that do
not read the incoming gradient; for any other cause of the rule, every one not already the lesson's line. The
candidate is only that: verify.py regrades it, and it is offered only when the inverse's is not proven first.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.errors import NotApplicable
from grader.repair.edits import Edit, Span
from grader.repair.inverse import INVERSES
from grader.repair.places import Entry, entries
from grader.repair.reading import (
    Source,
    Update,
    accumulations,
    assignments,
    computed,
    grad_target,
    is_input,
    mentions,
    output,
    reads_gradient,
    site_function,
    updates,
)
from grader.sabotage.trees import nodes
from grader.sandbox.inside.ops import DERIVATIVES, RULES, UPDATED

RULE_OF = {
    **{f"assign_in_{rule}": rule for rule in UPDATED},
    **{f"missing_outgrad_{rule}": rule for rule in UPDATED},
    "add_half": "add",
    "mul_own_data": "mul",
    "pow_off_by_one": "pow",
    "tanh_grad_from_input": "tanh",
    "tanh_square_missing": "tanh",
    "relu_negative_grad": "relu",
    "relu_flipped": "relu",
}
"""Each cause of one rule's backward, and its rule: every one has an inverse edit too."""
if not set(RULE_OF) <= set(INVERSES) or set(DERIVATIVES) != set(UPDATED):
    raise ValueError("canonical: a cause without an inverse edit, or a rule without its derivative")


@dataclass(frozen=True)
class Names:
    """The student's names for what the rule's line reads, at one input's gradient."""

    node: str
    data: str
    grad: str
    other: str | None = None
    exponent: str | None = None

    def derivative(self, rule: str) -> str | None:
        """The rule's local derivative in these names (ops.DERIVATIVES), or None where it wants a name not found."""
        if (rule == "mul" and self.other is None) or (rule == "pow" and self.exponent is None):
            return None
        data = self.data if self.data.replace(".", "").replace("_", "").isalnum() else f"({self.data})"
        return DERIVATIVES[rule].format(node=self.node, data=data, other=self.other, exponent=self.exponent)

    def line(self, rule: str) -> str | None:
        """The rule's gradient of the input in these names, as the lesson writes it: its local derivative times the
        output's gradient (the derivative in parentheses where a product would bind it otherwise)."""
        local = self.derivative(rule)
        if local is None:
            return None
        tight = ast.parse(local, mode="eval").body
        bare = isinstance(tight, (ast.Name, ast.Attribute, ast.Constant)) or (
            isinstance(tight, ast.BinOp) and isinstance(tight.op, (ast.Mult, ast.Pow))
        )
        return f"{local if bare else f'({local})'} * {self.grad}"


def canonical(source: Source | str, cause: str) -> Edit | None:
    """The edit writing the lesson's line for the cause's rule at each statement the cause implicates, in the
    student's code (a Source read once, or a text read here), or None (no rule, nothing found, every statement
    already the lesson's, or the code past reading's bounds)."""
    rule = RULE_OF.get(cause)
    if rule is None:
        return None
    try:
        read = source if isinstance(source, Source) else Source(source)
        spans = _in_statements(read, rule, cause) + _in_tables(read, rule, cause)
    except (SyntaxError, ValueError, RecursionError, MemoryError, NotApplicable):
        return None
    changes = read.changes(spans) if spans else None
    return Edit(cause, changes) if changes else None


def _in_statements(source: Source, rule: str, cause: str) -> list[Span]:
    found = list({id(u): u for u in [*updates(source, rule), *accumulations(source, rule)]}.values())
    spans = []
    for update in sorted(found, key=source.start):
        target = grad_target(update)
        names = _names(source, update, found) if target is not None else None
        line = names.line(rule) if names is not None else None
        if target is None or names is None or line is None or not _implicated(source, update, cause, names):
            continue
        local = _local(source, update, names) if not cause.startswith(("assign_in_", "missing_outgrad_")) else None
        derivative = names.derivative(rule)
        if local is not None and derivative is not None:  # `g = 1 - x**2; self.grad += g * out.grad`: g's line
            if source.code(local) != derivative:
                spans.append(source.replace(local, derivative))
            continue
        text = f"{source.code(target)} += {line}"
        if source.code(update) != text:
            spans.append(Span(source.start(_whole(source, update)), source.end(update), text))
    return spans


def _local(source: Source, update: Update, names: Names) -> ast.expr | None:
    """Where an update multiplies the incoming gradient by a local name given one value in its function (`mask = 1.0
    if self.data > 0 else 0.0; self.grad += mask * out.grad`), that value: the local derivative, to rewrite in its
    own line."""
    value = update.value
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
        return None
    for name, other in ((value.left, value.right), (value.right, value.left)):
        if isinstance(name, ast.Name) and _is_incoming(source, update, other, names.grad):
            given = _given(source, update, name.id)
            if len(given) == 1:
                return given[0]
    return None


def _given(source: Source, update: Update, name: str) -> list[ast.expr]:
    """The values the update's function gives a local name."""
    scopes = source.functions(update)
    return [
        n.value
        for n in (assignments(source, scopes[-1]) if scopes else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
    ]


def _is_incoming(source: Source, update: Update, node: ast.expr, incoming: str) -> bool:
    """Is the node the output's gradient, itself or a local name given it (`g = out.grad`)?"""
    if source.code(node) == incoming:
        return True
    given = _given(source, update, node.id) if isinstance(node, ast.Name) else []
    return len(given) == 1 and source.code(given[0]) == incoming


def _implicated(source: Source, update: Update, cause: str, names: Names) -> bool:
    """Is the statement one the cause's mistake is in?"""
    if cause.startswith("assign_in_"):
        return isinstance(update, ast.Assign) and not mentions(update.value, update.targets[0])
    if cause.startswith("missing_outgrad_"):
        return isinstance(update, ast.AugAssign) and not reads_gradient(source, update, names.grad)
    return True


def _whole(source: Source, update: Update) -> ast.stmt:
    """The statement to rewrite: the update, or the `if` around it when it is that if's only statement and its
    condition is the rule's own (not a dispatching backward's test of the operation's name)."""
    parent = source.parents.get(id(update))
    if (
        isinstance(parent, ast.If)
        and parent.body == [update]
        and not parent.orelse
        and not any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in nodes(parent.test))
        and source.functions(parent) == source.functions(update)
    ):
        return parent
    return update


def _names(source: Source, update: Update, found: list[Update]) -> Names | None:
    """The student's names at one statement: its input, the output's value and gradient (reading.output), the other
    input of the rule's statements in the same function, the exponent the statement (or a local it reads) raises
    the input's value to."""
    target = grad_target(update)
    out = output(source, update)
    if target is None or out is None:
        return None
    node = source.code(target.value)
    fn = site_function(source, update)
    inputs = list(
        dict.fromkeys(
            source.code(t.value) for u in found if site_function(source, u) is fn and (t := grad_target(u)) is not None
        )
    )
    other = next((i for i in inputs if i != node), None) if len(inputs) == 2 else None
    exponent = _exponent(source, computed(source, update), lambda e: is_input(source, update, e, target))
    return Names(node, out[0], out[1], other, exponent)


def _exponent(source: Source, parts: list[ast.expr], is_node) -> str | None:
    """The name a power raises the input's value to (`x.data ** (k - 1)`, `x.data ** k`: k), in what an update
    computes with."""
    for node in (n for part in parts for n in nodes(part)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and is_node(node.left):
            right = node.right
            if isinstance(right, ast.BinOp) and isinstance(right.op, ast.Sub) and _one(right.right):
                right = right.left
            if isinstance(right, (ast.Name, ast.Attribute)):
                return source.code(right)
    return None


def _one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1 and not isinstance(node.value, bool)


def _in_tables(source: Source, rule: str, cause: str) -> list[Span]:
    """The rule's gradients in a table of lambdas (places.entries), each rewritten in place."""
    spans = []
    for entry in entries(source.tree, RULES[rule][1]):
        for name, given in entry.gradients:
            line = _entry_names(source, entry, name, given).line(rule)
            if line is None or source.code(given) == line or cause.startswith("assign_in_"):
                continue
            if cause.startswith("missing_outgrad_") and any(
                isinstance(n, ast.Attribute) and n.attr == "grad" for n in nodes(given)
            ):
                continue
            spans.append(source.replace(given, line))
    return spans


def _entry_names(source: Source, entry: Entry, name: str, given: ast.expr) -> Names:
    other = next((i for i in entry.inputs if i != name), None) if len(entry.inputs) == 2 else None
    data = ast.Attribute(ast.Name(name, ast.Load()), "data", ast.Load())
    exponent = _exponent(source, [given], lambda e: ast.dump(e) == ast.dump(data))
    return Names(name, f"{entry.output}.data", f"{entry.output}.grad", other, exponent)
