"""Does the plan disguise and rewrite only the mutants of the student's engine it runs (issue 20, the
grader's CPU per grading), and choose the same engines as when it rewrote every one of them?"""

from __future__ import annotations

import gc

from conftest import BASE_ENGINE

from grader.sabotage import all_operators, own_block, plan, planning

OPERATORS = tuple(sorted(all_operators()))


def _ids(runs) -> list[tuple[str, str]]:
    return [(r.id, r.block) for r in runs]


def test_only_the_mutants_run_are_rewritten(monkeypatch):
    """Is each own mutant disguised and rewritten only where the plan runs it (and the decoy once)?"""
    own = own_block(BASE_ENGINE.read_text())
    rewritten = []
    real = planning.own_variant
    monkeypatch.setattr(planning, "own_variant", lambda source, salt: rewritten.append(salt) or real(source, salt))
    for i in range(6):
        rewritten.clear()
        runs = plan(OPERATORS, f"seed-{i}", "pool", own)
        mine = sorted(f"seed-{i}:{r.operator}:own" for r in runs if r.kind == "own")
        assert sorted(rewritten) == sorted([f"seed-{i}:decoy"] + mine), i
        assert mine and len(mine) < len(OPERATORS)


def test_a_mutant_that_cannot_be_rewritten_gives_way_to_a_wheats(monkeypatch):
    """Where the student's code defeats the rewrite of one mutant, is the plan the one with no such mutant
    when the plan drew it, and else unchanged?"""
    own = own_block(BASE_ENGINE.read_text())
    real_variant, real_mutant = planning.own_variant, planning.own_mutated
    for i in range(2):
        seed = f"seed-{i}"
        usual = plan(OPERATORS, seed, "pool", own)
        for op_id in OPERATORS:

            def variant(source, salt, op_id=op_id):
                return None if salt.endswith(f":{op_id}:own") else real_variant(source, salt)

            def mutant(op, source, op_id=op_id):
                return None if op.id == op_id else real_mutant(op, source)

            monkeypatch.setattr(planning, "own_variant", variant)
            failing = plan(OPERATORS, seed, "pool", own)
            monkeypatch.setattr(planning, "own_variant", real_variant)
            monkeypatch.setattr(planning, "own_mutated", mutant)
            without = plan(OPERATORS, seed, "pool", own)
            monkeypatch.setattr(planning, "own_mutated", real_mutant)
            drawn = any(r.id == f"{op_id}@own" for r in usual)
            assert _ids(failing) == _ids(without if drawn else usual), (seed, op_id)


def test_a_plan_is_the_same_whatever_the_process_made_before():
    """Is a grading's plan the same as the first of a process (each wheat's mutant then made once, to learn whether its
    operator applies, and run as it was made) and after other plans (the mutants drawn then made anew), as in a
    batch?"""
    own = own_block(BASE_ENGINE.read_text())
    planning._applies.cache_clear()
    planning._UNUSED.clear()
    planning._variant.cache_clear()
    first = plan(OPERATORS, "seed-x", "pool", own)
    drawn = {(r.operator, r.wheat) for r in first if r.kind in ("sabotage", "spare")}
    assert drawn and not drawn & set(planning._UNUSED), "each wheat's mutant drawn is made once, and run"
    for i in range(4):
        plan(OPERATORS, f"other-{i}", f"pool-{i}", own)
    planning._variant.cache_clear()
    assert _ids(plan(OPERATORS, "seed-x", "pool", own)) == _ids(first)


def test_the_plan_leaves_the_collector_and_keeps_no_tree_of_the_students():
    """Does the plan leave the garbage collector as it found it, and keep no tree of the student's engine after?"""
    own = own_block(BASE_ENGINE.read_text())
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            plan(OPERATORS, "seed-gc", "pool", own)
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    assert planning._own_tree.cache_info().currsize == 0
