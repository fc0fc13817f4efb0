"""Tests that pass on any engine because they assert nothing: they import the engine, make a
Value and look at nothing. They must earn nothing, since they catch no sabotaged engine."""

from micrograd_mine import Value


def test_value_can_be_made():
    Value(1.0)


def test_nothing_to_see():
    assert True


def test_data_is_there():
    v = Value(2.0)
    assert v is not None
