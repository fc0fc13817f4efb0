"""Whole runs of student code inside the worker: their pytest suite on swapped engines
(one fork of the warm worker per run), and a notebook executed with nbclient.

Stdlib only at import; pytest and nbclient are imported when a run needs them.
"""

from __future__ import annotations

import importlib
import json
import os
import sys

class Outcomes:
    """A pytest plugin recording each test's outcome, and whether a failure was an assertion."""

    def __init__(self):
        self.tests = {}
        self.collection_errors = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(report.longreprtext[-3000:])

    def pytest_runtest_makereport(self, item, call):
        if call.when == "setup" and call.excinfo is None:
            return
        if call.when == "teardown" and call.excinfo is None:
            return
        entry = {"outcome": "passed", "kind": None, "message": "", "duration": round(call.duration, 4)}
        if call.excinfo is not None:
            skipped = call.excinfo.errisinstance(__import__("pytest").skip.Exception)
            entry["outcome"] = "skipped" if skipped else "failed"
            entry["kind"] = "assertion" if call.excinfo.errisinstance(AssertionError) else "exception"
            entry["message"] = call.excinfo.exconly()[:800]
        name = item.nodeid.split("::", 1)[-1]
        if name not in self.tests or entry["outcome"] != "passed":
            self.tests[name] = entry


def run_pytest(module_path, tests, engines, replace):
    """Import the student's module afresh, swap in the engines' names, run pytest on the tests."""
    import pytest

    name = os.path.splitext(os.path.basename(module_path))[0]
    sys.modules.pop(name, None)
    module = importlib.import_module(name)
    namespace = {"__name__": name, "__builtins__": __builtins__}
    for source, filename in engines:
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the grader's own engines
    for symbol in replace:
        setattr(module, symbol, namespace[symbol])
    outcomes = Outcomes()
    code = pytest.main([tests, "-q", "--no-header", "-p", "no:cacheprovider", "-o", "addopts=", "--tb=no",
                        "-p", "no:warnings"], plugins=[outcomes])
    return {"exit": int(code), "tests": outcomes.tests, "collection_errors": outcomes.collection_errors}


def run_forked(fn, timeout):
    """Run fn() in a forked child (a copy of this warm process); its JSON result, or what went wrong."""
    import select
    import signal
    import time

    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        try:
            payload = {"ok": True, "result": fn()}
        except BaseException as exc:  # noqa: BLE001
            payload = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        with os.fdopen(write_end, "w") as out:
            out.write(json.dumps(payload))
        os._exit(0)
    os.close(write_end)
    chunks, deadline, timed_out = [], started + timeout, False
    while True:
        left = deadline - time.monotonic()
        ready = select.select([read_end], [], [], max(left, 0))[0]
        if not ready:
            timed_out = True
            break
        chunk = os.read(read_end, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    duration = round(time.monotonic() - started, 4)
    if timed_out:
        return {"ok": False, "timeout": True, "error": f"did not finish within {timeout:g} s", "duration": duration}
    if not chunks:
        return {"ok": False, "error": f"the test run died (status {status})", "duration": duration}
    reply = json.loads(b"".join(chunks))
    reply["duration"] = duration
    return reply


def run_notebook(path, cell_timeout, startup_timeout):
    """Execute a notebook top to bottom on a fresh kernel, as Restart & Run All would.

    A cell that raises is recorded and execution goes on; a cell past its timeout is
    interrupted and recorded; input() fails at once; a kernel that dies ends the run.
    Returns one entry per code cell: its index and status (ok, error, timeout, not_run).
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb = nbformat.read(path, as_version=4)
    timeout_error = {"ename": "CellTimeout", "evalue": f"the cell ran past {cell_timeout:g} s and was interrupted",
                     "traceback": []}
    client = NotebookClient(nb, timeout=cell_timeout, startup_timeout=startup_timeout, allow_errors=True,
                            interrupt_on_timeout=True, error_on_timeout=timeout_error, kernel_name="python3",
                            record_timing=False)
    died, died_at = None, None
    with client.setup_kernel(cwd=os.path.dirname(path)):
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            try:
                client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            except DeadKernelError as exc:
                died, died_at = str(exc) or "the kernel died", index
                break
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if index == died_at:
            cells.append({"index": index, "status": "killed", "ename": "DeadKernel",
                          "evalue": "the kernel died while running this cell"})
        elif died_at is not None and index > died_at:
            cells.append({"index": index, "status": "not_run"})
        elif errors:
            err = errors[0]
            status = "timeout" if err.get("ename") == "CellTimeout" else "error"
            cells.append({"index": index, "status": status, "ename": err.get("ename", ""),
                          "evalue": str(err.get("evalue", ""))[:500]})
        elif cell.get("execution_count") is None and cell.source.strip():
            cells.append({"index": index, "status": "not_run"})
        else:
            cells.append({"index": index, "status": "ok"})
    return {"cells": cells, "died": died}
