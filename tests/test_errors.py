"""One exception tree, one exit-code enum: every exception the grader defines lives in grader/errors.py
under GraderError, commands exit only with an ExitCode, and a machine that cannot lease a uid ends
`grader check` with a message and an exit code, not a traceback."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import grader
from grader import errors, result
from grader.errors import ExitCode, GraderError, IsolationError, NoUid, WorkerFailure

ROOT = Path(grader.__file__).parent
STUDENT_SIDE = ("grader.sandbox.inside", "grader.sabotage.engines")
"""Code that runs in the student's process (stdlib only, the grader's package not importable there) or
is a student-like engine: it keeps its own exceptions."""
ENTRIES = [
    ROOT / "cli.py",
    *sorted((ROOT / "commands").glob("*.py")),
    ROOT / "batch" / "command.py",
    ROOT / "batch" / "run.py",
    *sorted(ROOT.glob("gradescope*.py")),
    *sorted((ROOT / "gradescope").glob("*.py")),
]


def grader_modules():
    for info in pkgutil.walk_packages(grader.__path__, "grader."):
        if not info.name.startswith(STUDENT_SIDE):
            yield info.name


def test_every_exception_class_is_in_errors_under_the_root():
    found = {}
    for name in grader_modules():
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == name:
                found[f"{name}.{cls.__qualname__}"] = cls
    outside = [where for where, cls in found.items() if cls.__module__ != "grader.errors"]
    assert outside == [], f"exception classes outside grader/errors.py: {outside}"
    assert len(found) >= 15
    for where, cls in found.items():
        assert issubclass(cls, GraderError), f"{where} is not a GraderError"
        assert cls is GraderError or cls.__doc__ != GraderError.__doc__ and len(cls.__doc__ or "") > 40, (
            f"{where} says neither what happened nor what to do"
        )


def test_no_exception_class_is_defined_outside_errors_by_source():
    """The same, read from the source (a class defined under an `if`, or in a module not imported)."""
    names = {n for n, c in vars(errors).items() if inspect.isclass(c) and issubclass(c, BaseException)}
    names |= {"Exception", "BaseException", "RuntimeError", "ValueError", "OSError", "KeyboardInterrupt"}
    for path in ROOT.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        if module.startswith(STUDENT_SIDE) or path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                assert not bases & names, f"{path}: class {node.name} is an exception outside grader/errors.py"


def test_exit_codes_are_the_documented_ones():
    assert {c.name: int(c) for c in ExitCode} == {"OK": 0, "FAILED": 1, "USAGE": 2, "ISOLATION": 3, "INTERRUPTED": 130}
    for cls in (GraderError, *[c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, GraderError)]):
        assert isinstance(cls.exit_code, ExitCode), cls
    assert NoUid.exit_code == IsolationError.exit_code == ExitCode.ISOLATION


@pytest.mark.parametrize("path", ENTRIES, ids=lambda p: str(p.relative_to(ROOT)))
def test_entry_modules_exit_only_with_the_enum(path):
    """No `return 1`, `sys.exit(2)`, `exit_code = 3` or `raise SystemExit(0)` in the command modules."""
    text = path.read_text()
    assert not re.search(r"\b(?:sys\.exit|SystemExit|os\._exit)\(\s*-?\d", text), path
    assert not re.search(r"\bexit_code\s*=\s*-?\d", text), path
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("main", "run_batch"):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and inner.value is not None:
                    values = (
                        [inner.value.body, inner.value.orelse] if isinstance(inner.value, ast.IfExp) else [inner.value]
                    )
                    assert not any(isinstance(v, ast.Constant) and isinstance(v.value, int) for v in values), (
                        f"{path}:{inner.lineno} returns a bare exit code"
                    )


def test_worker_failure_kinds_are_all_documented_and_mapped():
    doc = WorkerFailure.__doc__
    assert all(f"`{kind}`" in doc for kind in WorkerFailure.KINDS)
    assert set(WorkerFailure.RESULT_KINDS) == set(WorkerFailure.KINDS)
    assert set(WorkerFailure.RESULT_KINDS.values()) <= set(result.ERROR_KINDS)
    with pytest.raises(ValueError):
        WorkerFailure("exploded", "no such kind")
    made = set()
    for path in ROOT.rglob("*.py"):
        made |= set(re.findall(r"WorkerFailure\(\s*\"(\w+)\"", path.read_text()))
    assert made <= set(WorkerFailure.KINDS) and {"disk", "protocol"} <= made


def test_results_doc_lists_every_error_kind():
    text = (ROOT.parent / "docs" / "results.md").read_text()
    section = text[text.index("Error kinds:") : text.index("Each check:")]
    assert all(f"`{kind}`" in section for kind in result.ERROR_KINDS)
    assert "disk" in section and "cannot read" in section  # what crash stands for


@pytest.mark.skipif(os.geteuid() != 0, reason="a uid of its own per sandbox is leased only by root")
def test_a_uid_that_cannot_be_leased_ends_check_with_a_message(tmp_path):
    """As root without bubblewrap, each sandbox needs a uid leased in a lock folder: where no lock folder
    can be made (here, under a regular file), `grader check` says so and exits 3."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    run = f"""
import sys
from pathlib import Path
from grader.sandbox import uids
uids.LOCK_DIRS = (Path({str(blocker)!r}) / "uids",)
from grader.cli import main
sys.exit(main(["check", {str(ROOT.parent / "examples" / "correct_engine.py")!r}, "--public-only"]))
"""
    proc = subprocess.run(
        [sys.executable, "-c", run],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "GRADER_NO_BWRAP": "1"},
    )
    assert "Traceback" not in proc.stderr
    assert proc.returncode == ExitCode.ISOLATION, proc.stderr
    assert "grader: no sandbox can run as a uid of its own: no folder for the uid locks" in proc.stderr
    assert "make /run or /var/lock writable by root" in proc.stderr


MADE = {
    errors.WorkerFailure: lambda: errors.WorkerFailure("memory", "was killed (most likely it ran out of memory)"),
    errors.OutOfTime: lambda: errors.OutOfTime("did not finish within 2 s", True),
    errors.Rejected: lambda: errors.Rejected("syntax_error", "line 3: invalid syntax", {"cells": [{"status": "ok"}]}),
}
"""Each error whose __init__ takes more than its message, made as the grader makes it."""


def test_every_error_pickles_and_unpickles_equal():
    """Errors cross process boundaries (a batch's grading processes, Dask's workers): does every error class
    come back from pickle as it went, its class, message and attributes (a WorkerFailure's kind, an OutOfTime's
    outer, a Rejected's kind and execution)?"""
    import pickle

    classes = [
        cls
        for cls in vars(errors).values()
        if inspect.isclass(cls) and issubclass(cls, GraderError) and cls.__module__ == "grader.errors"
    ]
    assert errors.WorkerFailure in classes and errors.Rejected in classes and errors.OutOfTime in classes
    for cls in classes:
        error = MADE.get(cls, lambda cls=cls: cls(f"a {cls.__name__} happened"))()
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is cls, cls
        assert (again.args, vars(again), str(again)) == (error.args, vars(error), str(error)), cls
    failure = pickle.loads(pickle.dumps(MADE[errors.OutOfTime]()))
    assert failure.kind == "timeout" and failure.outer is True and failure.result_kind == "timeout"
