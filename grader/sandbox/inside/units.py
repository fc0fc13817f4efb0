"""Units of work: each runs in a fresh process forked from the template, and talks to the
grader on its own socket only (frames of JSON, see frames.py).

- `state`: loads the student's code once (imports the module, or runs the notebook's
  cells as Restart & Run All would) and then answers requests about the student's own
  engine: build these programs and read their numbers, run numerical_grad, the neuron,
  the training loop. Everything it answers is a claim about the student's own code,
  judged by the grader outside.
- `suite`: one run of the student's tests with pytest, on the student's engine or on
  another engine run after the student's code in the student's own module. It is told
  nothing but the engine's code, which it compiles and drops: the module's file holds
  the student's code only, and the engine's functions carry no text and no lines.
"""

from __future__ import annotations

import importlib.util
import os
import random
import socket
import sys
import traceback
import types
from typing import Any

import frames
import probes
import standins
from names import MODULE, TESTS_FILE


def main(kind: str, fd: int, cfg: dict) -> None:
    sock = socket.socket(fileno=fd)
    if kind == "state":
        State(sock, cfg).serve()
    elif kind == "suite":
        suite(sock, cfg)


class Loader:
    """Loads the student's code as the module micrograd_mine, and describes what it raised."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.files: set[str] = set()

    def load_file(self, path: str, source: str | None = None):
        """Import a .py file (or the given source, written to path first) as the student's module."""
        if source is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(source)
        self.files.add(path)
        sys.path.insert(0, os.path.dirname(path))
        spec = importlib.util.spec_from_file_location(MODULE, path)
        assert spec is not None and spec.loader is not None, "a .py file's location always has a spec and loader"
        module = importlib.util.module_from_spec(spec)
        sys.modules[MODULE] = module
        spec.loader.exec_module(module)
        return module

    def error(self, exc: BaseException) -> dict:
        info: dict[str, Any] = {"type": type(exc).__name__, "message": _text(exc), "traceback": self.traceback(exc)}
        if isinstance(exc, SyntaxError):
            info.update(
                message=exc.msg,
                lineno=exc.lineno,
                offset=exc.offset,
                text=(exc.text or "").rstrip("\n"),
                file=os.path.basename(exc.filename or ""),
            )
        if isinstance(exc, SystemExit):
            info["message"] = f"sys.exit({exc.code!r}) was called"
        if isinstance(exc, NotImplementedError):  # a method still to write: which one, for the reports to group by
            info["raised_in"] = self.raised_in(exc)
        return info

    def own(self, filename: str) -> bool:
        """Is this file the student's code (their module, or a notebook's cell)?"""
        return filename in self.files or filename.startswith("<ipython-input-")

    def raised_in(self, exc: BaseException) -> str:
        """The function of the student's code the exception came out of, last (its qualified name, as
        `Value.__add__`), or empty when none of their code was running."""
        name, tb = "", exc.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if self.own(code.co_filename):
                name = getattr(code, "co_qualname", code.co_name)  # Python 3.11 names the class too
            tb = tb.tb_next
        return name

    def traceback(self, exc: BaseException) -> str:
        """The traceback cut down to the student's own lines, with their file's name only."""
        frames_ = [f for f in traceback.extract_tb(exc.__traceback__) if self.own(f.filename)]
        text = "".join(traceback.format_list(frames_) + traceback.format_exception_only(type(exc), exc))
        for path in self.files:
            text = text.replace(path, os.path.basename(path))
        return text


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose message could not be shown>"


class State:
    """The student's own engine, loaded once, answering one request after another."""

    def __init__(self, sock: socket.socket, cfg: dict):
        self.sock = sock
        self.cfg = cfg
        self.loader = Loader(cfg)
        self.module: types.ModuleType | None = None

    def serve(self) -> None:
        while True:
            request = frames.receive(self.sock)
            if request is None:
                return
            seq = request.get("seq")
            try:
                reply = {"seq": seq, "ok": True, "result": self.handle(request, seq)}
            except BaseException as exc:
                reply = {"seq": seq, "ok": False, "error": self.loader.error(exc)}
            frames.send(self.sock, reply)

    def emit(self, seq, **event) -> None:
        frames.send(self.sock, {"seq": seq, "event": event})

    def handle(self, request: dict, seq):
        op = request["op"]
        if op == "load":
            return self.load(request, seq)
        value = getattr(self.module, "Value", None)
        stop = request.get("stop_on_error", True)
        if op == "eval_many":
            return self._each(
                seq,
                request["programs"],
                lambda program: probes.evaluate(
                    program, value, request["backward"], request.get("want"), request.get("seed", False)
                ),
                stop,
            )
        if op == "order_many":
            return self._each(
                seq, request["programs"], lambda program: probes.order(program, value, request["seed"]), stop
            )
        if op == "direct_many":
            return self._each(
                seq, request["programs"], lambda program: probes.direct(program, value, request["incoming"]), stop
            )
        if op == "gradcheck_many":
            return self._each(
                seq, request["programs"], lambda program: probes.gradcheck(program, value, request["h"]), stop
            )
        if op == "numerical_grad":
            f = probes.FUNCTIONS[request["function"]]
            args = (f, request["x"]) if request.get("h") is None else (f, request["x"], request["h"])
            if self.module is None:
                raise RuntimeError("numerical_grad asked before the student's code was loaded")
            return {"value": probes.number(self.module.numerical_grad(*args))}
        if op == "neuron":
            random.seed(0)
            return probes.neuron_probe(self.module, request["nin"], request["weights"], request["bias"], request["x"])
        if op == "train":
            return probes.train(self.module, probes.Loop(**request["args"]))
        raise ValueError(f"unknown request {op!r}")

    def _each(self, seq, programs: list, fn, stop: bool) -> dict:
        """One event per program, in order; with stop, the first that raises ends the batch (the rest
        would cost as much and tell nothing more: a search stops at the first disagreement)."""
        for index, program in enumerate(programs):
            try:
                value = fn(program)
            except BaseException as exc:
                self.emit(seq, item=index, value={"error": self.loader.error(exc)})
                if stop:
                    return {"count": index + 1}
                continue
            self.emit(seq, item=index, value=value)
        return {"count": len(programs)}

    def load(self, request: dict, seq) -> dict:
        code = request["code"]
        standins.install(code.get("stand_ins", []), code.get("stand_in_missing") is True)
        if code["kind"] == "notebook":
            import notebook

            module, cells = notebook.run(
                code["cells"], code["skip"], code["cell_timeout"], lambda **event: self.emit(seq, **event)
            )
            self.module = module
            return {"symbols": _symbols(module), "cells": cells, "stand_ins": standins.USED, "magics": notebook.MAGICS}
        self.module = self.loader.load_file(os.path.join(self.cfg["work"], code["file"]))
        return {"symbols": _symbols(self.module), "stand_ins": standins.USED}


def _symbols(module) -> list[str]:
    return sorted(n for n in vars(module) if not n.startswith("__"))


def suite(sock: socket.socket, cfg: dict) -> None:
    """One run of the student's tests on one engine; a single reply, and before it what the grader must not take
    from a process the tests ran in, each sent as an event frame (out of the process's reach once sent) before what
    could change it runs:
    - asked to derive (a notebook's run on the student's own engine), first thing, before any of the student's code
      runs, the cells as IPython transforms them (notebook.derive), which later runs take; asked to rewrite (the
      grading's first run on the student's own engine), in the same first frame, the tests as pytest rewrites them
      for assertions (suites.rewritten), which later runs are given and place where pytest reads them (suites.place);
    - asked for probes, once the student's code and the engine are loaded and before the test file is even
      written, the engine's numbers on them, which decide whether a mutant of the student's engine counts."""
    request = frames.receive(sock)
    if request is None:
        return
    seq = request.get("seq")
    code, engine = request["code"], request.pop("engine", None) or ""
    run_dir = os.path.join(cfg["scratch"], "run")
    tests = os.path.join(run_dir, TESTS_FILE)
    import suites

    said = {}
    if code["kind"] == "notebook" and code.get("derive"):
        import notebook

        code["transformed"] = said["transformed"] = notebook.derive(code["cells"], code["skip"])
    if request.get("rewrite") is True:
        said["rewritten"] = suites.rewritten(tests, request["tests"])
    if said:
        frames.send(sock, {"seq": seq, "event": said})
    loader = Loader(cfg)
    os.makedirs(run_dir, exist_ok=True)
    os.chdir(run_dir)
    standins.install(code.get("stand_ins", []), code.get("stand_in_missing") is True)
    try:
        import notebook

        if code["kind"] == "notebook":
            module, _ = notebook.run(
                code["cells"],
                code["skip"],
                code["cell_timeout"],
                lambda **event: None,
                code.get("transformed"),
                code.get("lean") is True,
            )
        else:
            with open(os.path.join(cfg["work"], code["file"]), encoding="utf-8") as f:
                source = f.read()
            module = loader.load_file(os.path.join(run_dir, f"{MODULE}.py"), source)
        if engine:  # as compiled code only: the tests can read neither the engine's text nor a file of it
            notebook.run_engine(module, engine)
        del engine
    except BaseException as exc:
        frames.send(sock, {"seq": seq, "ok": False, "error": loader.error(exc)})
        return
    if request.get("probes"):
        frames.send(sock, {"seq": seq, "event": {"probes": _probe_all(request["probes"])}})
    try:
        with open(tests, "w", encoding="utf-8") as f:
            f.write(request["tests"])
    except BaseException as exc:
        frames.send(sock, {"seq": seq, "ok": False, "error": loader.error(exc)})
        return
    suites.place(tests, request.get("rewritten") or said.get("rewritten") or "")
    result = suites.run(tests, request.get("fixtures") or [])
    frames.send(sock, {"seq": seq, "ok": True, "result": result})


def _probe_all(programs: list) -> list:
    """The numbers the module's Value gives on each program (or the name of what it raised)."""
    value = getattr(sys.modules.get(MODULE), "Value", None)
    found = []
    for program in programs:
        try:
            found.append(probes.evaluate(program, value))
        except BaseException as exc:
            found.append({"raised": type(exc).__name__})
    return found
