"""The tests that read notes_left.py's notes: good tests, and one that fails on a run that found notes an
earlier process (an earlier run of the tests, or the engine lane's process) left in the sandbox. The test
appends them to tests/fixtures/suites/good.py."""


def test_no_earlier_run_left_notes():
    import micrograd_mine

    assert micrograd_mine.FOREIGN == [], micrograd_mine.FOREIGN
