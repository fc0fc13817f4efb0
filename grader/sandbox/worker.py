"""The worker: the only process where a student's code runs.

Run as a script inside the sandbox (stdlib only, no grader imports), it loads the
student's module and answers probes sent as plain data over a pipe: build this
expression, run backward, report the numbers. It judges nothing; the grader compares
the numbers with the reference engine in its own process.

The grader also imports this module to run the very same programs on the reference
engine, so the student's engine and the oracle are always driven by one piece of code.

A program is a list of instructions; instruction i defines node i:
    ["leaf", x]                      Value(x)
    ["add"|"mul"|"sub"|"div", i, j]  node_i (op) node_j
    ["pow", i, k]                    node_i ** k, k a constant
    ["neg"|"tanh"|"relu"|"exp", i]   unary operation on node_i
    ["cadd"|"cmul"|"csub"|"cdiv", i, c]   node_i (op) c, c a plain number
    ["radd"|"rmul"|"rsub"|"rdiv", c, i]   c (op) node_i
The last node is the output.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import sys
import traceback

BINARY = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - b,
    "div": lambda a, b: a / b,
}
UNARY = {
    "neg": lambda a: -a,
    "tanh": lambda a: a.tanh(),
    "relu": lambda a: a.relu(),
    "exp": lambda a: a.exp(),
}
WITH_CONSTANT = {
    "pow": lambda a, k: a**k,
    "cadd": lambda a, c: a + c,
    "cmul": lambda a, c: a * c,
    "csub": lambda a, c: a - c,
    "cdiv": lambda a, c: a / c,
}
CONSTANT_FIRST = {
    "radd": lambda c, a: c + a,
    "rmul": lambda c, a: c * a,
    "rsub": lambda c, a: c - a,
    "rdiv": lambda c, a: c / a,
}

# Plain-float functions the student's numerical_grad is asked to differentiate.
FUNCTIONS = {
    "cube": lambda x: x**3,
    "sin": math.sin,
    "tanh": math.tanh,
    "exp": math.exp,
    "poly": lambda x: 3 * x**2 - 4 * x + 5,
}


def build(program, Value):
    """Build every node of the program with the given Value class."""
    nodes = []
    for ins in program:
        op = ins[0]
        if op == "leaf":
            nodes.append(Value(ins[1]))
        elif op in BINARY:
            nodes.append(BINARY[op](nodes[ins[1]], nodes[ins[2]]))
        elif op in UNARY:
            nodes.append(UNARY[op](nodes[ins[1]]))
        elif op in WITH_CONSTANT:
            nodes.append(WITH_CONSTANT[op](nodes[ins[1]], ins[2]))
        elif op in CONSTANT_FIRST:
            nodes.append(CONSTANT_FIRST[op](ins[1], nodes[ins[2]]))
        else:
            raise ValueError(f"unknown instruction {ins!r}")
    return nodes


def number(x):
    """A plain float for a number the student's engine produced, or a description of what it was.

    Float and int subclasses are read through the base type, so an object that overrides
    __eq__, __float__ or __repr__ reports the number it really holds.
    """
    if isinstance(x, bool):
        return {"bad": "a bool, not a number"}
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, int):
        try:
            return float(int.__index__(x))
        except OverflowError:
            return math.copysign(math.inf, int.__index__(x))
    return {"bad": f"a {type(x).__name__}, not a number"}


def read(obj, attr):
    try:
        return number(getattr(obj, attr))
    except Exception as exc:  # noqa: BLE001 - the student's property may raise anything
        return {"bad": f"reading .{attr} raised {type(exc).__name__}: {exc}"}


def evaluate(program, Value, backward=True, want=None):
    """Build the program, call backward() on its output, and read data and grad of the nodes."""
    nodes = build(program, Value)
    if backward:
        nodes[-1].backward()
    picked = range(len(nodes)) if want is None else want
    return {
        "data": [read(nodes[i], "data") for i in picked],
        "grad": [read(nodes[i], "grad") for i in picked] if backward else None,
    }


def gradcheck(program, Value, h):
    """Analytic gradients of the leaves beside central differences of the engine's own forward."""
    leaves = [i for i, ins in enumerate(program) if ins[0] == "leaf"]
    observed = evaluate(program, Value, want=leaves + [len(program) - 1])
    analytic, output = observed["grad"][:-1], observed["data"][-1]
    numeric = []
    for i in leaves:
        x = program[i][1]
        up = [list(ins) for ins in program]
        down = [list(ins) for ins in program]
        up[i][1] = x + h
        down[i][1] = x - h
        hi = number(build(up, Value)[-1].data)
        lo = number(build(down, Value)[-1].data)
        bad = hi if isinstance(hi, dict) else lo if isinstance(lo, dict) else None
        numeric.append(bad or (hi - lo) / (2 * h))
    return {"leaves": leaves, "analytic": analytic, "numeric": numeric, "output": output}


def neuron_probe(module, nin, weights, bias, x):
    """Build Neuron(nin), set its parameters through parameters(), call it on plain floats."""
    neuron = module.Neuron(nin)
    params = list(neuron.parameters())
    report = {
        "count": len(params),
        "values": [type(p).__name__ for p in params if not isinstance(p, module.Value)],
    }
    if len(params) != nin + 1 or report["values"]:
        return report
    for p, v in zip(params, list(weights) + [bias]):
        p.data = v
    out = single(neuron(list(x)))
    report["returned"] = type(out).__name__
    report["is_value"] = isinstance(out, module.Value)
    report["output"] = read(out, "data") if report["is_value"] else number(out)
    return report


def single(out):
    """A network's single output: a Value, or a list holding one (both are common)."""
    return out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out


def train(module, model, sizes, xs, ys, steps, lr, seed, initial=None):
    """The lesson's training loop, exactly as students write it, on the module's engine.

    With initial, the parameters start from those values (the reference replaying the
    student's run from the same weights).
    """
    random.seed(seed)
    net = getattr(module, model)(*sizes)
    params = list(net.parameters())
    if initial is not None:
        for p, v in zip(params, initial):
            p.data = v
    start = [read(p, "data") for p in params]
    losses = []
    for _ in range(steps):
        ypred = [single(net(list(x))) for x in xs]
        loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))
        for p in net.parameters():
            p.grad = 0.0
        loss.backward()
        for p in net.parameters():
            p.data += -lr * p.grad
        losses.append(read(loss, "data"))
    return {"initial": start, "losses": losses}


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
    died = None
    try:
        client.execute(cwd=os.path.dirname(path))
    except DeadKernelError as exc:
        died = str(exc) or "the kernel died"
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            err = errors[0]
            status = "timeout" if err.get("ename") == "CellTimeout" else "error"
            cells.append({"index": index, "status": status, "ename": err.get("ename", ""),
                          "evalue": str(err.get("evalue", ""))[:500]})
        elif cell.get("execution_count") is None and cell.source.strip():
            cells.append({"index": index, "status": "not_run"})
        else:
            cells.append({"index": index, "status": "ok"})
    if died:  # the last cell that started is the one the kernel died in
        started = [c for c in cells if c["status"] != "not_run"]
        if started:
            started[-1].update(status="killed", ename="DeadKernel", evalue="the kernel died while running this cell")
    return {"cells": cells, "died": died}


# ---------------------------------------------------------------------------------------
# The worker process
# ---------------------------------------------------------------------------------------


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
            return evaluate(request["program"], self.symbol("Value"), request.get("backward", True), request.get("want"))
        if op == "gradcheck":
            return gradcheck(request["program"], self.symbol("Value"), request["h"])
        if op == "numerical_grad":
            f = FUNCTIONS[request["function"]]
            args = (f, request["x"]) if request.get("h") is None else (f, request["x"], request["h"])
            return {"value": number(self.symbol("numerical_grad")(*args))}
        if op == "neuron":
            random.seed(0)
            return neuron_probe(self.module, request["nin"], request["weights"], request["bias"], request["x"])
        if op == "train":
            return train(self.module, **request["args"])
        if op == "notebook":
            return run_notebook(self.module_path, request["cell_timeout"], request["startup_timeout"])
        if op == "pytest":
            import pytest  # noqa: F401 - imported once here, so every forked run starts warm

            return [
                run_forked(lambda run=run: run_pytest(self.module_path, request["tests"], run["engines"],
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
