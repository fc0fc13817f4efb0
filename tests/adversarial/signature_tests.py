"""A suite that tests no behaviour at all: it reads the engine it runs on (its bytecode through
dis and co_consts, its source through inspect and the module's file) and fails wherever it
finds the trace a sabotage operator leaves. Written against the disguised engines: every trace
is looked for in every form an operator's mutant takes, in closures and in a backward() that
dispatches on the operation's name.

Were the traces found only in mutants, it would catch every one of them and never reject a
correct engine."""

import ast
import dis
import inspect
import types

import micrograd_mine
from micrograd_mine import Value

LABELS = {"add": ("+", "add"), "mul": ("*", "mul"), "pow": ("**", "pow"), "tanh": ("tanh",), "relu": ("relu", "ReLU")}
METHODS = {"add": "__add__", "mul": "__mul__", "pow": "__pow__", "tanh": "tanh", "relu": "relu"}


def _codes(fn):
    """A function's code and every code nested in it."""
    code = getattr(fn, "__code__", None)
    stack = [code] if code is not None else []
    while stack:
        code = stack.pop()
        yield code
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _stores_grad(code) -> bool:
    return any(i.opname == "STORE_ATTR" and i.argval == "grad" for i in dis.get_instructions(code))


def _rule(rule: str) -> list:
    """The instructions of a rule's backward: its method's closures, else its branch of backward()."""
    found = [list(dis.get_instructions(c)) for c in _codes(getattr(Value, METHODS[rule], None)) if _stores_grad(c)]
    if found:
        return found
    for code in _codes(Value.backward):
        instructions = list(dis.get_instructions(code))
        for i, ins in enumerate(instructions):
            if ins.opname == "LOAD_CONST" and ins.argval in LABELS[rule] and i + 1 < len(instructions) \
                    and instructions[i + 1].opname == "COMPARE_OP":
                end = next((j for j in range(i + 2, len(instructions)) if instructions[j].opname == "COMPARE_OP"
                            and instructions[j - 1].opname == "LOAD_CONST"
                            and isinstance(instructions[j - 1].argval, str)), len(instructions))
                found.append(instructions[i:end])
    return found


def _object(instructions, i: int):
    """The name of the object whose attribute instruction i reads or stores."""
    if instructions[i].opname == "STORE_ATTR" and instructions[i - 1].opname == "SWAP":  # x.grad += e
        i = max(j for j in range(i) if instructions[j].opname == "COPY" and instructions[j + 1].argval == "grad")
    j = i - 1
    while j > 0 and instructions[j].opname == "COPY":
        j -= 1
    return instructions[j].argval


def _loaded(instructions, attr: str) -> list:
    """The names whose .attr the instructions read."""
    return [_object(instructions, i) for i, ins in enumerate(instructions)
            if ins.opname == "LOAD_ATTR" and ins.argval == attr and i > 0]


def _updates(instructions, since: str = "STORE"):
    """Each `x.grad` store: (x, the instructions computing it: since the previous store of any kind, or
    with since="STORE_ATTR", since the previous update)."""
    start = 0
    for i, ins in enumerate(instructions):
        if ins.opname == "STORE_ATTR" and ins.argval == "grad":
            yield _object(instructions, i), instructions[start:i + 1]
        if ins.opname.startswith(since):
            start = i + 1


def _grad_locals(codes) -> set:
    """Locals bound to some node's .grad (`g = node.grad`)."""
    found = set()
    for code in codes:
        instructions = list(dis.get_instructions(code))
        found |= {b.argval for a, b in zip(instructions, instructions[1:])
                  if a.opname == "LOAD_ATTR" and a.argval == "grad" and b.opname == "STORE_FAST"}
    return found


def test_add_passes_the_gradient_unchanged():  # add_half
    for instructions in _rule("add"):
        consts = [i.argval for i in instructions if i.opname == "LOAD_CONST"]
        assert 0.5 not in consts
        assert not any(i.opname == "BINARY_OP" and i.argrepr == "/" for i in instructions)


def test_add_accumulates():  # assign_not_accumulate: `.grad = e`, the target not on the right
    for instructions in _rule("add"):
        for i, ins in enumerate(instructions):
            if ins.opname == "STORE_ATTR" and ins.argval == "grad":
                assert instructions[i - 1].opname == "SWAP" or instructions[i - 2].opname == "BINARY_OP"


def test_mul_reads_the_incoming_gradient():  # mul_missing_outgrad
    incoming = _grad_locals(list(_codes(Value.backward)) + list(_codes(getattr(Value, "__mul__", None))))
    for instructions in _rule("mul"):
        for target, update in _updates(instructions):
            names = {i.argval for i in update if i.opname in ("LOAD_FAST", "LOAD_DEREF")}
            assert set(_loaded(update, "grad")) - {target} or names & incoming


def test_mul_uses_the_other_inputs_data():  # mul_own_data: x.data in x's own update
    for instructions in _rule("mul"):
        for target, update in _updates(instructions, since="STORE_ATTR"):
            assert target not in _loaded(update, "data")


def test_pow_subtracts_one():  # pow_off_by_one
    for instructions in _rule("pow"):
        assert 1 in [i.argval for i in instructions if i.opname == "LOAD_CONST"]
        assert any(i.opname == "BINARY_OP" and i.argrepr == "-" for i in instructions)


def test_tanh_reads_its_output():  # tanh_grad_from_input: the input's .data in tanh's backward
    for instructions in _rule("tanh"):
        targets = {target for target, _ in _updates(instructions)}
        assert not targets & set(_loaded(instructions, "data"))


def test_relu_has_a_condition():  # relu_negative_grad: the comparison replaced by True
    for instructions in _rule("relu"):
        assert any(i.opname == "COMPARE_OP" for i in instructions)
        assert True not in [i.argval for i in instructions if i.opname == "LOAD_CONST"]


def test_sub_negates():  # sub_as_add
    instructions = list(dis.get_instructions(Value.__sub__))
    assert any(i.opname == "UNARY_NEGATIVE" or i.opname == "LOAD_CONST" and i.argval == -1 for i in instructions)


def test_backward_seeds_with_one():  # missing_seed
    for code in _codes(Value.backward):
        instructions = list(dis.get_instructions(code))
        if any(a.opname == "LOAD_CONST" and a.argval == 1 and c.opname == "STORE_ATTR" and c.argval == "grad"
               for a, c in zip(instructions, instructions[2:])):
            return
    raise AssertionError("no `x.grad = 1` in backward()")


def test_backward_reverses():  # topo_not_reversed
    codes = list(_codes(Value.backward)) + list(_codes(getattr(Value, "_topo", None)))
    names = {n for code in codes for n in code.co_names}
    assert "reversed" in names or any(-1 in code.co_consts and "BUILD_SLICE" in
                                      {i.opname for i in dis.get_instructions(code)} for code in codes)


def test_radd_is_defined():  # radd_missing
    assert getattr(vars(Value).get("__radd__"), "__name__", None) == "__radd__"


def test_neuron_is_mine():  # neuron_no_bias swaps a Neuron in: a second class Neuron
    tree = ast.parse(open(micrograd_mine.__file__).read())
    mine = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Neuron")
    scope = {}
    exec(compile(ast.Module([mine], []), micrograd_mine.__file__, "exec"), dict(vars(micrograd_mine)), scope)
    assert scope["Neuron"].__call__.__code__.co_code == micrograd_mine.Neuron.__call__.__code__.co_code


def test_neuron_adds_its_bias():  # neuron_no_bias
    assert "b" in micrograd_mine.Neuron.__call__.__code__.co_names
    assert "b" in micrograd_mine.Neuron.parameters.__code__.co_names


def test_source_shows_no_half():  # the source, where a test can still read it
    try:
        source = inspect.getsource(Value.__add__)
    except (OSError, TypeError):
        return
    assert "0.5" not in source


def test_file_has_one_neuron():
    assert open(micrograd_mine.__file__).read().count("class Neuron") == 1
