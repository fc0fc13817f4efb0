"""Every misconception the grader names, worded once: its id, its words in the lesson's
language, and the method of the student's file most likely at fault.

A check that recognises a cause (checks/diagnose.py says how each is recognised) puts the
cause's id on its Outcome; a sabotage operator names the cause its mutant plants, so a
student whose tests miss the mutant reads the same words. The sentence a student reads is
written here, once, when a check's result is made (`said_in`): "Likely cause: ..." for the
first check failing from a cause, "Same cause as <that check>: ..." for every later one,
told apart by comparing ids, never by searching the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.sandbox.inside.ops import RULES, UPDATED


@dataclass(frozen=True)
class Cause:
    id: str
    words: str
    """The misconception, as the lesson would put it: what is wrong (what 'same cause as' repeats)."""
    more: str = ""
    """Said after the words and a colon: the right rule, or what follows from the misconception."""
    method: str | None = None
    """The method (or class) of the student's file most likely at fault, for the report's code."""
    beside: tuple[str, ...] = ()
    """The methods to show instead when the student's file has no `method` (a reflected operator left
    out is written beside, and with, the operator it reflects)."""
    also: tuple[str, ...] = ()
    """The ids of the same misconception in other methods, named with this one (several())."""

    @property
    def sentence(self) -> str:
        """The misconception in full: the words, then what more there is to say."""
        return f"{self.words}: {self.more}" if self.more else self.words


_ACCUMULATED = {rule: RULES[rule][0] for rule in UPDATED}
"""The rules whose backward a student may write with = for += (the cause's id, then the method)."""
_REFLECTED = {
    "__radd__": ("2 + a, and sum() which starts from 0", ("__add__",)),
    "__rmul__": ("2 * a", ("__mul__",)),
    "__rsub__": ("1 - a", ("__sub__", "__neg__")),
    "__rtruediv__": ("1 / a", ("__truediv__", "__pow__")),
}
"""The reflected operators a student may leave out, each with an expression that needs it and the methods
it is written with."""


def _listed(methods: tuple[str, ...]) -> str:
    return methods[0] if len(methods) == 1 else f"{', '.join(methods[:-1])} and {methods[-1]}"


def _assign_words(methods: tuple[str, ...]) -> str:
    where = f"{methods[0]}'s backward" if len(methods) == 1 else f"the backward of {_listed(methods)}"
    return (
        f"in {where}, `=` replaces the gradient instead of adding to it, so a value used more than once keeps "
        "only one path's gradient"
    )


def _on_input_words(methods: tuple[str, ...]) -> str:
    one = len(methods) == 1
    return (
        f"{_listed(methods)} {'attaches its' if one else 'each attach their'} _backward to "
        f"{'its' if one else 'their'} input (self._backward = ...), not to the output "
        f"{'it makes' if one else 'they make'}"
    )


def _outgrad_words(methods: tuple[str, ...]) -> str:
    where = f"{methods[0]}'s backward" if len(methods) == 1 else f"the backward of {_listed(methods)}"
    return f"in {where}, an input's gradient is not multiplied by out.grad, so it is right only where that is 1"


FAMILIES = {
    "assign_in_": (_assign_words, "use += (a value used twice receives gradient from both paths)"),
    "missing_outgrad_": (
        _outgrad_words,
        "multiply by the incoming gradient on every side, as in `self.grad += 1.0 * out.grad`",
    ),
    "backward_on_input_": (
        _on_input_words,
        "attach it to out (out._backward = _backward); on the input it replaces that node's own _backward, so "
        "the gradient stops there",
    ),
}
"""The misconceptions a student may have in several methods at once, by id prefix (the rule follows): the words
for one or several methods, and what more there is to say."""


CAUSES: dict[str, Cause] = {
    cause.id: cause
    for cause in (
        Cause(
            "missing_seed",
            "backward() never sets the output's gradient to 1 before walking the graph (the lesson's self.grad = 1.0)",
            "set it inside backward(), so that loss.backward() works on its own: without it every "
            "gradient stays 0, or backward() stops and asks for it",
            method="backward",
        ),
        Cause(
            "backward_inert",
            "backward() changes no gradient at all, even with the output's set to 1",
            "does something in __init__ (an attribute named backward?) hide the method, or does it never call the "
            "nodes' _backward?",
            "backward",
        ),
        Cause(
            "equal_data_merged",
            "two different nodes holding the same number are treated as one",
            "a Value that defines __eq__ or __hash__ by its data is merged with another by the children set or the "
            "visited set; compare nodes by identity (drop __eq__/__hash__)",
            "__eq__",
        ),
        Cause(
            "children_not_tuple",
            "a node's children are written (self), which is just self in parentheses",
            "a one-element tuple needs a comma, (self,)",
        ),
        *(
            Cause(
                f"missing_{name}",
                f"Value has no {name}",
                f"with a plain number on the left ({example}) Python calls "
                f"{name}, so define it and wrap the number in a Value",
                name,
                beside,
            )
            for name, (example, beside) in _REFLECTED.items()
        ),
        *(
            Cause(f"assign_in_{rule}", _assign_words((method,)), FAMILIES["assign_in_"][1], method)
            for rule, method in _ACCUMULATED.items()
        ),
        *(
            Cause(f"backward_on_input_{rule}", _on_input_words((method,)), FAMILIES["backward_on_input_"][1], method)
            for rule, method in _ACCUMULATED.items()
        ),
        *(
            Cause(f"missing_outgrad_{rule}", _outgrad_words((method,)), FAMILIES["missing_outgrad_"][1], method)
            for rule, method in _ACCUMULATED.items()
        ),
        *(
            Cause(
                f"detached_{rule}",
                f"no gradient flows through {method}: its output is not linked to its input"
                f"{'s' if rule in ('add', 'mul') else ''}",
                "build the output with its inputs as children ((self, other), or "
                "(self,) with the comma) and give it a _backward that adds to their grad",
                method,
            )
            for rule, method in _ACCUMULATED.items()
        ),
        Cause(
            "add_half",
            "addition passes 0.5 * out.grad to each input",
            "+ passes the incoming gradient unchanged",
            "__add__",
        ),
        Cause(
            "mul_own_data",
            "multiplication gives each input its OWN data times out.grad",
            "it should be the OTHER input's",
            "__mul__",
        ),
        Cause("pow_off_by_one", "x ** k is given the derivative k * x**k", "it is k * x**(k-1)", "__pow__"),
        Cause(
            "tanh_grad_from_input",
            "tanh's derivative is taken on its input, 1 - x**2",
            "it is 1 - t**2 on its output t",
            "tanh",
        ),
        Cause(
            "tanh_square_missing",
            "tanh's derivative is written 1 - t, without the square",
            "it is 1 - t**2 on its output t",
            "tanh",
        ),
        Cause(
            "relu_negative_grad", "relu passes the gradient where its input is negative", "it must pass 0 there", "relu"
        ),
        Cause(
            "relu_flipped",
            "relu's condition is the wrong way round",
            "the gradient passes where the input is positive",
            "relu",
        ),
        Cause(
            "topo_not_reversed",
            "backward() walks the nodes from the leaves up",
            "it must walk the topological "
            "order in reverse, from the output down, so each node has all its gradient before passing it on",
            "backward",
        ),
        Cause(
            "visited_dropped",
            "the topological sort has no visited set, so a node reached twice is processed twice",
            method="backward",
        ),
        Cause("sub_as_add", "a - b computes a + b", method="__sub__"),
        Cause(
            "neuron_no_bias",
            "the Neuron has no bias b (in its sum, or in parameters())",
            "a neuron computes tanh(w . x + b), its bias b a Value of its own, added to the weighted sum and listed "
            "by parameters() after the weights, so that training moves it too",
            "Neuron",
        ),
    )
}


def family(cause_id: str) -> str | None:
    """The prefix of the misconception a cause is one method's case of (FAMILIES), if any."""
    return next((prefix for prefix in FAMILIES if cause_id.startswith(prefix)), None)


def several(cause_ids: tuple[str, ...]) -> Cause:
    """One misconception found in several methods (cause ids of one family, each of CAUSES), named once: the
    first id, with words naming every method it is in."""
    words, more = FAMILIES[family(cause_ids[0]) or ""]
    methods = tuple(CAUSES[cause_id].method or cause_id for cause_id in cause_ids)
    return Cause(cause_ids[0], words(methods), more, methods[0], also=tuple(cause_ids[1:]))


def said_in(feedback: str, cause_id: str | None, first: str | None = None, also: tuple[str, ...] = ()) -> str:
    """A check's feedback with its cause said on a line of its own (a table's row shows the feedback's first
    line; the card, the whole cause, whose line no cap on a line's length reaches): 'Likely cause: ...', or,
    when the check named first already said it, 'Same cause as <first>: <the words>'. also: the ids of the same
    misconception in other methods, said with it once. Feedback with no known cause is returned as it is."""
    cause = CAUSES.get(cause_id) if cause_id else None
    if cause is None:
        return feedback
    if also and family(cause.id) and all(family(other) == family(cause.id) and other in CAUSES for other in also):
        cause = several((cause.id, *also))
    if first is not None:
        return f"{feedback}\nSame cause as {first}: {cause.words}."
    return f"{feedback}\nLikely cause: {cause.sentence}."
