"""The worker: the only process where a student's code runs.

Run as a script inside the sandbox (stdlib only, no grader imports), it confines
itself, loads the student's module and answers requests sent as plain data over a
pipe: build this expression, run backward, run these tests, report the numbers. It
judges nothing; the grader compares the numbers with the reference engine in its own
process. Its siblings probes.py and suites.py hold what it runs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # probes.py and suites.py, beside this file
import probes  # noqa: E402
import suites  # noqa: E402

class Worker:
    """Loads the student's module and answers requests, one JSON object per line."""

    def __init__(self, module_path):
        self.module_path = os.path.abspath(module_path)
        self.module = None

    def student_traceback(self, exc):
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == self.module_path]
        lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
        return "".join(lines).replace(self.module_path, os.path.basename(self.module_path))

    def error(self, exc):
        info = {"type": type(exc).__name__, "message": str(exc), "traceback": self.student_traceback(exc)}
        if isinstance(exc, SyntaxError):
            info.update(message=exc.msg, lineno=exc.lineno, offset=exc.offset, text=(exc.text or "").rstrip("\n"))
        if isinstance(exc, SystemExit):
            info["message"] = f"sys.exit({exc.code!r}) was called"
        return info

    def load(self):
        name = os.path.splitext(os.path.basename(self.module_path))[0]
        sys.path.insert(0, os.path.dirname(self.module_path))
        spec = importlib.util.spec_from_file_location(name, self.module_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        self.module = module
        return {"symbols": sorted(n for n in vars(module) if not n.startswith("__"))}

    def symbol(self, name):
        return getattr(self.module, name)

    def handle(self, request):
        op = request["op"]
        if op == "load":
            return self.load()
        if op == "eval":
            return probes.evaluate(request["program"], self.symbol("Value"), request.get("backward", True), request.get("want"))
        if op == "gradcheck":
            return probes.gradcheck(request["program"], self.symbol("Value"), request["h"])
        if op == "numerical_grad":
            f = probes.FUNCTIONS[request["function"]]
            args = (f, request["x"]) if request.get("h") is None else (f, request["x"], request["h"])
            return {"value": probes.number(self.symbol("numerical_grad")(*args))}
        if op == "neuron":
            random.seed(0)
            return probes.neuron_probe(self.module, request["nin"], request["weights"], request["bias"], request["x"])
        if op == "train":
            return probes.train(self.module, **request["args"])
        if op == "notebook":
            return suites.run_notebook(self.module_path, request["cell_timeout"], request["startup_timeout"])
        if op == "pytest":
            import pytest  # noqa: F401 - imported once here, so every forked run starts warm

            return [
                suites.run_forked(lambda run=run: suites.run_pytest(self.module_path, request["tests"], run["engines"],
                                                      run["replace"]), request["timeout"])
                for run in request["runs"]
            ]
        raise ValueError(f"unknown request {op!r}")

    def serve(self, requests, responses):
        for line in requests:
            request = json.loads(line)
            try:
                reply = {"ok": True, "result": self.handle(request)}
            except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are student errors too
                reply = {"ok": False, "error": self.error(exc)}
            responses.write(json.dumps(reply) + "\n")
            responses.flush()


def fix_addresses():
    """Turn off address randomisation (re-executing once), so an engine that keeps its
    children in a set visits them in the same order on every run."""
    import ctypes

    ADDR_NO_RANDOMIZE = 0x0040000
    personality = ctypes.CDLL(None, use_errno=True).personality
    current = personality(0xFFFFFFFF)
    if current == -1 or current & ADDR_NO_RANDOMIZE or os.environ.get("GRADER_REEXEC"):
        return
    if personality(current | ADDR_NO_RANDOMIZE) != -1:
        os.environ["GRADER_REEXEC"] = "1"
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


def drop_privileges():
    """As root, become the unprivileged uid the grader chose before any student code runs."""
    uid = int(os.environ.get("GRADER_UID", "0"))
    if os.getuid() == 0 and uid:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)


def apply_limits():
    import resource

    limits = json.loads(os.environ.get("GRADER_LIMITS", "{}"))
    mb = 1024 * 1024
    caps = {
        resource.RLIMIT_AS: limits.get("memory_mb", 1024) * mb,
        resource.RLIMIT_CPU: limits.get("cpu_s", 120),  # soft: SIGXCPU, then SIGKILL a second later
        resource.RLIMIT_FSIZE: limits.get("file_mb", 16) * mb,
        resource.RLIMIT_NPROC: limits.get("processes", 64),
        resource.RLIMIT_CORE: 0,
    }
    for which, cap in caps.items():
        resource.setrlimit(which, (cap, cap + 1 if which == resource.RLIMIT_CPU else cap))


def main():
    request_fd, response_fd, module_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    drop_privileges()
    fix_addresses()  # after dropping: a root exec with capabilities would clear the flag
    apply_limits()
    os.chdir(os.path.dirname(module_path))
    requests = os.fdopen(request_fd, "r", encoding="utf-8")
    responses = os.fdopen(response_fd, "w", encoding="utf-8")
    sys.stdin = open(os.devnull)  # noqa: SIM115 - input() must fail fast, not wait for the grader
    os.dup2(sys.stdin.fileno(), 0)
    Worker(module_path).serve(requests, responses)


if __name__ == "__main__":
    main()
