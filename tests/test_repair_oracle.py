"""The regraded copy is no oracle (issue 41, item 9).

A repair is verified by grading an edited copy of the student's code. The student's code can always tell the copy
from its own grading (the edit is in it: the code can read its own file), so whether "Verified fix" appears must
not depend on anything the copy could learn there about a hidden check: no hidden check is graded on the copy nor
judged. And the copy is loaded as the original is (the same path and name inside the sandbox, the same modules
imported before it), so nothing else about it tells it apart. Each engine here is real student-shaped code graded
for real, which behaves differently where it sees itself edited, or loaded otherwise than in its grading.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from repair_bugs import buggy, written

from grader import spec
from grader.grading import Options, grade

TANH = "self.grad += (1 - self.data**2) * out.grad"
"""The planted line (tanh's derivative on its input), which the repair writes with the output's value."""
RELU = "self.grad += (out.data > 0) * out.grad"
EDITED = '\n_EDITED = ("self.data*" + "*2) * out.grad") not in open(__file__, encoding="utf-8").read()\n'
"""Whether the code runs as the repair's copy: its own file no longer holds the planted line (the words split, so
that this line does not hold them either)."""


def task(micrograd: spec.Assignment, checks: tuple[str, ...], hidden: tuple[str, ...] = ()) -> spec.Assignment:
    return dataclasses.replace(
        micrograd,
        checks=tuple(
            dataclasses.replace(c, visibility="hidden" if c.id in hidden else "visible")
            for c in micrograd.checks
            if c.id in checks
        ),
        search=dataclasses.replace(micrograd.search, max_examples=15),
        feedback=spec.Feedback("where"),
    )


def graded(folder: Path, text: str, assignment: spec.Assignment, options: Options | None = None, tests: str = ""):
    folder.mkdir(parents=True)
    (folder / "micrograd_mine.py").write_text(text, encoding="utf-8")
    if tests:
        (folder / "test_micrograd.py").write_text(tests, encoding="utf-8")
    return grade(folder / "micrograd_mine.py", assignment, options or Options())


def engine(relu_in_the_copy: str = "") -> str:
    """The lecture's engine with tanh's derivative on its input; in the repair's copy, relu's backward multiplied by
    relu_in_the_copy (none: the same in both)."""
    text, _ = buggy("tanh_grad_from_input", "lecture")
    assert TANH in text and text.count(RELU) == 1
    if relu_in_the_copy:
        text = text.replace(RELU, f"{RELU} * ({relu_in_the_copy} if _EDITED else 1)")
    return text.replace("\nclass Value", EDITED + "\n\nclass Value", 1)


def test_whether_a_repair_is_verified_never_depends_on_a_hidden_check(tmp_path, micrograd):
    """Is the repair of tanh verified, and the same, whether or not the copy breaks relu, a hidden check (before:
    the copy was graded on relu too, and a copy breaking it got no repair, which told the student how relu went
    there); and is it not, when the relu the copy breaks is a visible check?"""
    hidden = task(micrograd, ("tanh", "hand_examples", "relu"), hidden=("relu",))
    plain = graded(tmp_path / "plain", engine(), hidden)
    breaking = graded(tmp_path / "breaking", engine(relu_in_the_copy="-1"), hidden)
    for result in (plain, breaking):
        statuses = {c.id: c.status for c in result.checks}
        assert statuses == {"tanh": "failed", "hand_examples": "failed", "relu": "passed"}, statuses
    assert written(plain) and written(breaking) == written(plain)
    assert written(plain)["tanh"]["fixes"] == ["tanh", "hand_examples"]

    visible = graded(
        tmp_path / "visible", engine(relu_in_the_copy="-1"), task(micrograd, ("tanh", "hand_examples", "relu"))
    )
    assert {c.id: c.status for c in visible.checks}["relu"] == "passed"
    assert not written(visible)  # the edit breaks a visible check: no repair


FINGERPRINT = """
import hashlib as _hashlib, os as _os, re as _re, sys as _sys
_SEEN = _hashlib.sha256(
    "|".join([
        _re.sub("grader-sandbox-[A-Za-z0-9_]+", "grader-sandbox-*", _os.path.abspath(__file__)),
        __name__,
        _re.sub("grader-sandbox-[A-Za-z0-9_]+", "grader-sandbox-*", _os.getcwd()),
        ",".join(sorted(_sys.modules)),
    ]).encode()
).hexdigest()[:16]
_KNOWN = "{known}"
"""
"""What the student's code sees of where it is loaded, as it is imported: its file's path and its name, the folder
it runs in, and the modules already imported (a sandbox's own folder has a name drawn for it, the same either way)."""
TESTS = "from micrograd_mine import Value\n\n\ndef test_data():\n    assert Value(2.0).data == 2.0\n"


def watching(known: str) -> str:
    """The engine with tanh's bug, whose __add__ works only where the code sees what it was told it would see
    (known), and otherwise says what it sees."""
    text, _ = buggy("tanh_grad_from_input", "lecture")
    add = "    def __add__(self, other):\n"
    assert text.count(add) == 1
    text = text.replace(add, add + '        if _SEEN != _KNOWN:\n            raise RuntimeError("seen " + _SEEN)\n')
    return text.replace("\nclass Value", FINGERPRINT.format(known=known) + "\n\nclass Value", 1)


def test_the_copy_is_loaded_as_its_grading_loaded_the_original(tmp_path, micrograd):
    """As `grader check` grades a file beside its tests (the engine's sandbox later joins the runs of the tests, so
    it has pytest imported): does the copy see the same path, name, folder and imported modules as the original
    saw in its grading, so that a __add__ working only there still lets the repair of tanh be verified (before:
    the copy's sandbox had not imported pytest, and its add failed)?"""
    checks = task(micrograd, ("add", "tanh", "hand_examples", "student_tests"))
    options = Options(suite_sandboxes=2)
    first = graded(tmp_path / "first", watching(""), checks, options, TESTS)
    add = next(c for c in first.checks if c.id == "add")
    seen = re.search(r"seen ([0-9a-f]{16})", add.feedback)
    assert add.status == "error" and seen, add.feedback

    result = graded(tmp_path / "second", watching(seen.group(1)), checks, options, TESTS)
    statuses = {c.id: c.status for c in result.checks}
    assert statuses == {"add": "passed", "tanh": "failed", "hand_examples": "failed", "student_tests": "passed"}
    assert written(result)["tanh"]["fixes"] == ["tanh", "hand_examples"]
