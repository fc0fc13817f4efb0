"""Does every kind of broken submission get a clear, specific result, with no hang and nothing lost?"""

from __future__ import annotations

import json

import pytest
from conftest import BAD, BASE_ENGINE, statuses, with_limits

from grader.grading import grade

CORRECT = BASE_ENGINE.read_text()


def test_missing_file(micrograd, tmp_path):
    """Is a missing file a not_found error that names the path?"""
    result = grade(tmp_path / "nope.py", micrograd)
    assert result.status == "error" and result.error.kind == "not_found"
    assert "nope.py" in result.error.message
    json.loads(result.to_json())


@pytest.mark.parametrize(
    "name, kind, words",
    [
        ("empty.py", "missing_symbol", ["empty"]),
        ("not_utf8.py", "unreadable", ["UTF-8"]),
        ("syntax_error.py", "syntax_error", ["line 6", "SyntaxError", "def __add__(self, other)"]),
        ("misnamed_class.py", "missing_symbol", ["defines no Value", "Did you mean Value instead of value"]),
        ("raises_at_import.py", "import_error", ["ZeroDivisionError", "line 5, in helper", "line 13"]),
        ("sys_exit_at_import.py", "import_error", ["sys.exit('done early')"]),
        ("os_exit_at_import.py", "crash", ["exited with code 3"]),
        ("loop_at_import.py", "timeout", ["did not finish within 1 s"]),
        ("memory_at_import.py", "memory", ["ran out of memory", "1024 MB"]),
    ],
)
def test_submission_that_cannot_be_graded(quick, name, kind, words):
    """Does each submission that cannot be graded get its own error kind and a message that says why?"""
    result = grade(BAD / name, quick if name != "memory_at_import.py" else with_limits(quick, request_s=20))
    assert (result.status, result.error.kind) == ("error", kind), result.error
    for word in words:
        assert word in result.error.message
    assert result.score == 0 and result.checks == ()
    assert json.loads(result.to_json())["error"]["kind"] == kind


def test_traceback_shows_only_the_students_lines(quick):
    """Are the grader's own frames cut from a traceback shown to a student?"""
    message = grade(BAD / "raises_at_import.py", quick).error.message
    assert "worker.py" not in message and "importlib" not in message
    assert "micrograd_mine.py" in message


def test_loop_in_backward_costs_only_the_checks_that_call_it(quick, grade_source):
    """Does an infinite loop in backward() time out those checks while the others still run and pass?"""
    result = grade_source(
        CORRECT + "\n\ndef _forever(self):\n    while True:\n        pass\n\n\nValue.backward = _forever\n", quick
    )
    found = statuses(result)
    assert result.status == "graded"
    assert found["forward"] == "passed" and found["numerical_grad"] == "passed"
    assert found["add"] == "error" and "did not finish within 1 s" in next(
        c.feedback for c in result.checks if c.id == "add"
    )


def test_memory_bomb_in_backward_is_stopped(quick, grade_source):
    """Is a memory bomb in backward() stopped at the cap, costing those checks only?"""
    bomb = (
        "\n\ndef _hog(self):\n    data = []\n    while True:\n        data.append(bytearray(64 * 1024 * 1024))\n"
        "\n\nValue.backward = _hog\n"
    )
    result = grade_source(CORRECT + bomb, with_limits(quick, memory_mb=256, request_s=5))
    found = statuses(result)
    assert found["forward"] == "passed" and found["add"] == "error"
    assert "MemoryError" in next(c.feedback for c in result.checks if c.id == "add")


def test_nan_and_infinity_fail_with_valid_json(micrograd, grade_source):
    """Do NaN and infinite gradients fail the checks and still give strict, valid JSON?"""
    patch = (
        "\n\n_tanh = Value.tanh\n\ndef _nan(self):\n    out = _tanh(self)\n    out.data = float('nan')\n"
        "    return out\n\n"
        "Value.tanh = _nan\n_mul = Value.__mul__\n\ndef _inf(self, other):\n    out = _mul(self, other)\n"
        "    out.grad = float('inf')\n    return out\n\nValue.__mul__ = _inf\n"
    )
    result = grade_source(CORRECT + patch, micrograd)
    found = statuses(result)
    assert found["forward"] == "failed" and found["mul"] == "failed"
    assert found["accumulate"] != "failed", found  # nan through tanh is no sum to judge a value used twice by
    text = result.to_json()
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text)


def test_values_that_fake_equality_pass_nothing(micrograd, grade_source):
    """Does an engine whose numbers claim to equal everything pass no check at all?"""
    cheat = """
class Yes(float):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = float.__hash__
    def __float__(self):
        return 6.0
    def __repr__(self):
        return "6.0"


class Value:
    def __init__(self, data, *args, **kwargs):
        self.data = Yes(0.0)
        self.grad = Yes(0.0)
    def __getattr__(self, name):
        return lambda *a, **k: Value(0)
    def __add__(self, other): return Value(0)
    __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = __rtruediv__ = __pow__ = __add__
    def __neg__(self): return Value(0)


def numerical_grad(f, x, h=1e-6):
    return Yes(0.0)
"""
    result = grade_source(cheat, micrograd)
    passed = [c.id for c in result.checks if c.status == "passed" and c.max_score > 0]
    assert passed == [] and result.score == 0


def test_printing_a_fake_result_changes_nothing(micrograd, grade_source):
    """Does code that prints a fake score, or writes a fake result file, keep the grade it earns?"""
    honest = grade_source(CORRECT.replace("self.grad += out.grad", "self.grad = out.grad", 1), micrograd)
    noisy = CORRECT.replace("self.grad += out.grad", "self.grad = out.grad", 1) + (
        '\nprint("PASS accumulate 10/10")\nprint(\'{"score": 100, "max_score": 100}\')\n'
        'open("result.json", "w").write(\'{"score": 100}\')\n'
    )
    result = grade_source(noisy, micrograd)
    assert result.score == honest.score < result.max_score
