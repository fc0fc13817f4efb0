"""Are the sabotage operators real mutations, each applying where its rule is and saying so where
it is not, and does the per-grading rewrite hide every engine's code without changing a number?

Engines here are the grader's own (wheats, the reference): they run in this process."""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
import sys

import pytest
from conftest import ROOT, ZOO

from grader.sabotage import all_operators, engine_block, own_block, plan, wheats
from grader.sabotage.disguise import disguise_tree
from grader.sabotage.mutate import NotApplicable
from grader.sabotage.rewrite import rewrite
from grader.sabotage.trees import unparse

LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
CORPUS = ROOT / "tests" / "corpus" / "engines"

# (program, what it reads): a few expressions that exercise every rule, and the neuron.
PROBES = [
    "a, b = V(2.0), V(-3.0); out = a * b + a; out.backward(); r = [a.grad, b.grad, out.data]",
    "a = V(0.7); out = (a ** 3) * V(2.0); out.backward(); r = [a.grad, out.data]",
    "a = V(0.4); out = a.tanh() * V(-1.5); out.backward(); r = [a.grad, out.data]",
    "a = V(-0.8); out = a.relu() * V(3.0) + a; out.backward(); r = [a.grad, out.data]",
    "a, b = V(1.5), V(0.5); out = (a - b) * V(2.0); out.backward(); r = [a.grad, b.grad, out.data]",
    "a = V(1.2); out = a + a; out.backward(); r = [a.grad, out.data]",
    "a, b = V(1.0), V(2.0); c = a * b; d = c + a; e = d * c; e.backward(); r = [a.grad, b.grad, e.data]",
    "a = V(2.0); out = 3.0 + a; out.backward(); r = [a.grad, out.data]",
    "import random; random.seed(0); n = N(2); r = [len(n.parameters()), n([1.0, -1.0]).data]",
]


def behaviour(source: str) -> list:
    namespace: dict = {}
    exec(compile(source, "engine.py", "exec"), namespace)
    found = []
    for probe in PROBES:
        scope = {"V": namespace["Value"], "N": namespace.get("Neuron")}
        try:
            exec(probe, scope)
            found.append([round(x, 9) for x in scope["r"]])
        except Exception as exc:
            found.append(type(exc).__name__)
    return found


@pytest.mark.parametrize("op_id", sorted(all_operators()))
def test_every_mutant_behaves_differently_from_its_wheat(op_id):
    """Does each operator apply to some wheat, and change what that wheat computes wherever it applies?"""
    op = all_operators()[op_id]
    applied = 0
    for wheat in wheats():
        try:
            source = op.apply(wheat.source)
        except NotApplicable:
            continue
        applied += 1
        assert behaviour(source) != behaviour(wheat.source), f"{op_id} on {wheat.id} changes nothing"
    assert applied, f"{op_id} applies to no wheat"


def test_an_operator_says_when_it_does_not_apply():
    """Does an operator meet an engine without its rule (no tanh, no Neuron) with NotApplicable, not a crash?"""
    no_tanh = re.sub(r"\n    def tanh\(self\):.*?(?=\n    def )", "\n", wheats()[0].source, flags=re.S)
    assert "def tanh" not in no_tanh
    with pytest.raises(NotApplicable, match="tanh"):
        all_operators()["tanh_grad_from_input"].apply(no_tanh)
    with pytest.raises(NotApplicable, match="Neuron"):
        all_operators()["neuron_no_bias"].apply((ROOT / "reference" / "engine.py").read_text())


def test_rewriting_keeps_every_number_and_hides_the_code():
    """Does the per-grading rewrite leave every wheat's numbers as they were, the same for the same seed,
    different for another, with neither source nor bytecode of any method as shipped?"""
    for wheat in wheats():
        first, again, other = (
            rewrite(wheat.source, "seed-a"),
            rewrite(wheat.source, "seed-a"),
            rewrite(wheat.source, "b"),
        )
        assert first == again and first != other
        assert behaviour(first) == behaviour(wheat.source)
        shipped, rewritten = _method_code(wheat.source), _method_code(first)
        same = {name for name in shipped if shipped[name] == rewritten.get(name)}
        backward_rules = {"__add__", "__mul__", "__pow__", "tanh", "relu", "exp", "backward"} & set(shipped)
        if wheat.id == "op_table":  # its rules are all in backward(); its other methods hold no chain rule
            backward_rules = {"backward"}
        assert not (same & backward_rules), (wheat.id, same & backward_rules)


def _method_code(source: str) -> dict[str, str]:
    namespace: dict = {}
    exec(compile(source, "m.py", "exec"), namespace)
    found = {}
    for name, member in vars(namespace["Value"]).items():
        code = getattr(member, "__code__", None)
        if code is not None:
            digest = hashlib.sha256(code.co_code)
            for const in code.co_consts:
                if hasattr(const, "co_code"):
                    digest.update(const.co_code)
            found[name] = digest.hexdigest()
    return found


def test_a_plan_has_every_wheat_and_one_mutant_per_operator_in_an_order_of_its_own():
    """Does a grading's plan hold each wheat once and one mutant per operator, each a Value class and a
    Neuron (every wheat's run swaps its Neuron in, so a swapped Neuron names no operator), in an order and
    on wheats that follow the seed?"""
    first, again, other = (
        plan(tuple(all_operators()), "s1", "p"),
        plan(tuple(all_operators()), "s1", "p"),
        plan(tuple(all_operators()), "s2", "p"),
    )
    assert [r.id for r in first] == [r.id for r in again] and [r.block for r in first] == [r.block for r in again]
    assert [r.id for r in first] != [r.id for r in other]
    assert sorted(r.wheat for r in first if r.kind == "wheat") == sorted(w.id for w in wheats())
    assert sorted(r.operator for r in first if r.kind == "sabotage") == sorted(all_operators())
    for run in first:
        assert "class Value" in run.block and "class Neuron" in run.block
        assert "numerical_grad" not in run.block and '"""' not in run.block


def test_an_engine_block_drops_future_imports_and_keeps_what_it_names():
    """Is an engine block appendable after a student's code (no __future__ import) and only what it swaps in?"""
    block = engine_block(
        "from __future__ import annotations\nimport math\nclass Value: pass\nclass Neuron: pass\n"
        "def numerical_grad(f, x): pass\n",
        ("Value",),
    )
    assert block.strip().splitlines() == ["import math", "", "class Value:", "    pass"]


def test_the_documented_example_operator_works(tmp_path):
    """Does the operator docs/authoring.md shows, added as a file with the cause it shows, register and
    mutate every wheat?"""
    text = (ROOT / "docs" / "authoring.md").read_text()
    cause, example = re.findall(r"```python\n(.*?)```", text, re.S)[-2:]
    script = (
        f"from grader.causes import CAUSES, Cause\ncause = {cause.strip().rstrip(',')}\nCAUSES[cause.id] = cause\n"
        + example
        + (
            "\nfrom grader.sabotage import all_operators, wheats\n"
            "op = all_operators()['exp_from_input']\n"
            "for wheat in wheats():\n"
            "    namespace = {}\n"
            "    exec(op.apply(wheat.source), namespace)\n"
            "    a = namespace['Value'](0.5); a.exp().backward()\n"
            "    assert abs(a.grad - 0.5) < 1e-12, a.grad\n"
            "print('ok')\n"
        )
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert run.stdout.strip() == "ok", run.stderr


def test_the_zoo_buggy_engines_are_not_wheats():
    """Sanity: a buggy zoo engine behaves differently from every wheat (the probes can tell)."""
    buggy = (ZOO / "buggy" / "add_half.py").read_text()
    assert all(behaviour(buggy) != behaviour(w.source) for w in wheats())


def test_a_grading_cannot_be_recomputed_without_the_secret(tmp_path, monkeypatch, micrograd):
    """Are a submission's engines keyed with the grader's secret: the same under one secret, every
    time, and different under another, so that a student with the package cannot compute them?"""
    from grader import secret

    monkeypatch.delenv("GRADER_SECRET", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    made = secret.key()
    assert made == secret.key() and len(made) >= 32
    assert oct((tmp_path / "config" / "micrograd-grader" / "grader-secret").stat().st_mode & 0o777) == "0o600"
    source, tests = b"class Value: pass\n", b"def test_x(): pass\n"
    mine = secret.seed(made, b"plan", source, tests)
    other = secret.seed(b"another instructor", b"plan", source, tests)
    ops = tuple(all_operators())
    assert [r.block for r in plan(ops, mine, secret.seed(made, b"pool"))] == [
        r.block for r in plan(ops, mine, secret.seed(made, b"pool"))
    ]
    assert [r.block for r in plan(ops, mine, secret.seed(made, b"pool"))] != [
        r.block for r in plan(ops, other, secret.seed(b"another instructor", b"pool"))
    ]
    monkeypatch.setenv("GRADER_SECRET", "given")
    assert secret.key() == b"given"
    folder = tmp_path / "assignment"
    folder.mkdir()
    (folder / "grader-secret").write_text("course secret\n")
    monkeypatch.delenv("GRADER_SECRET")
    assert secret.key(folder) == b"course secret"


def _settled(tree: ast.Module, what: str) -> None:
    """Is tree what a parse of its code gives (ast.dump's fields), with no node in two places?"""
    held = [n for n in ast.walk(tree) if not isinstance(n, LEAVES)]
    assert len(held) == len({id(n) for n in held}), f"{what}: a node in two places"
    assert ast.dump(tree) == ast.dump(ast.parse(unparse(tree))), what


def test_each_step_leaves_the_tree_its_code_would_parse_to():
    """Is the tree each operator leaves, and the disguise after it, the one a parse of its code gives, with no node
    in two places: the plan passes it on to the disguise and the rewrite without writing it as code and reading it
    back (issue 44), so what they read must be the same?"""
    engines = [own_block(w.source) for w in wheats()]
    engines += [own_block(p.read_text()) for p in sorted([*ZOO.rglob("*.py"), *CORPUS.glob("*.py")])]
    checked = 0
    for i, own in enumerate(e for e in engines if e is not None):
        for op in all_operators().values():
            try:
                tree = op.mutated(own)
            except NotApplicable:
                continue
            _settled(tree, f"{op.id} on engine {i}")
            _settled(disguise_tree(tree, f"seed-{checked}"), f"the disguise of {op.id} on engine {i}")
            checked += 1
    assert checked > 100
