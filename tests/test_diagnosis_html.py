"""What a student sees of a diagnosis in the HTML report (issue 19): the code most likely at fault is
the right method, in the file's line order, and an exception is named once. Real pages in headless
Chromium (the browser fixtures of test_html.py)."""

from __future__ import annotations

from test_diagnosis import variant
from test_html import pytestmark  # noqa: F401 - the same skip

from grader.render import html

NO_RADD = variant(("    def __radd__(self, other):\n        return self + other\n", ""))


def test_a_missing_radd_shows_add_and_names_the_type_error_once(open_page, grade_source, micrograd):
    """A missing __radd__: forward's card shows the student's __add__ (what __radd__ is written with), not
    five methods of forward out of line order, and the TypeError is said once, not repeated as a
    traceback with no line of the student's code."""
    result = grade_source(NO_RADD, micrograd.without(("student_tests", "wheat", "sabotage")))
    forward = next(c for c in result.checks if c.id == "forward")
    assert forward.cause == "missing___radd__"
    assert forward.feedback.count("unsupported operand") == 1, forward.feedback
    page = open_page(html.student_report(result, NO_RADD, "micrograd"), "student-missing-radd")
    card = page.locator("#check-forward")
    assert card.locator(".feedback").inner_text().count("TypeError") == 1
    shown = card.locator(".source").inner_text()
    assert "def __add__" in shown, shown
    for other in ("def __mul__", "def __rmul__", "def __sub__", "def __rsub__"):
        assert other not in shown, shown


def test_the_code_at_fault_is_in_line_order(grade_source, micrograd):
    """Without a recognised cause, the methods a check is about come in the order the file has them."""
    source = variant(("        return (-self) + other\n", "        return self - other\n"))
    shown = str(html.suspect_source(source, "forward"))
    order = [
        shown.index(f"{name}</span>") for name in ("__add__", "__mul__", "__sub__", "__radd__", "__rsub__", "__rmul__")
    ]
    assert order == sorted(order)


def test_a_misconception_in_several_methods_shows_each_of_them():
    """`=` for `+=` in __add__, __mul__ and tanh: the card shows those three methods, in the file's order, and
    no other."""
    source = variant(
        (
            "self.grad += out.grad\n            other.grad += out.grad",
            "self.grad = out.grad\n            other.grad = out.grad",
        ),
        ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),
        ("self.grad += (1 - t ** 2) * out.grad", "self.grad = (1 - t ** 2) * out.grad"),
    )
    shown = str(html.suspect_source(source, "accumulate", "__add__", (), ("__mul__", "tanh")))
    order = [shown.index(f"{name}</span>") for name in ("__add__", "__mul__", "tanh")]
    assert order == sorted(order)
    assert "__pow__</span>" not in shown and "relu</span>" not in shown
