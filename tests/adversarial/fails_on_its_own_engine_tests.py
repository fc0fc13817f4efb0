"""Tests that choose which sabotages count by how they fare: forward-only tests that catch little, and one that
fails wherever the engine is the student's own (its Value carries MINE = True: their engine as written, and, since
the rewrite keeps a class's attributes, its decoy and every mutant of it), while it passes on every correct engine.
Were the mutants of the student's engine left out whenever a test failed on that engine or on its decoy, these
tests would leave out all of them, the ones they miss first: issue 28 D. Graded with a correct engine to which
`Value.MINE = True` is added."""

from micrograd_mine import Value


def test_add_value():
    assert (Value(2.0) + Value(3.0)).data == 5.0


def test_mul_value():
    assert (Value(2.0) * Value(3.0)).data == 6.0


def test_sub_value():
    assert (Value(5.0) - Value(3.0)).data == 2.0


def test_not_on_my_own_engine():
    assert not getattr(Value, "MINE", False)
