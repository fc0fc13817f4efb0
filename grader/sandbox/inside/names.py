"""The student's file names, once, where code inside the sandbox can import them (stdlib only).

The host takes them through grader/files.py.
"""

MODULE = "micrograd_mine"
"""The module the student's engine is loaded as (their tests import it)."""
MODULE_FILE = MODULE + ".py"
TESTS_FILE = "test_micrograd.py"
"""The student's tests, beside the engine."""
