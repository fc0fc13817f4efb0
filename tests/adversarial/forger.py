"""Forged replies: an unwritten engine whose module, at import, replaces the grader's code in
its own process and answers every request itself.

It answers the probes with the numbers it can see in the request (the leaves), claims
analytic gradients equal to its own slopes, and makes every run of the student's tests
pass on the student's own engine and fail on any other (it recognises the other engines
by the Value class swapped into its module in place of its own)."""

import sys


class Value:
    def __init__(self, data, _children=(), _op="", label=""):
        raise NotImplementedError("Value.__init__ is not written yet")


class Neuron:
    def __init__(self, nin):
        raise NotImplementedError("Neuron is not written yet")


def numerical_grad(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


MINE = Value  # another engine's run replaces it in the module


def _numbers(program):
    leaves = [ins[1] if ins[0] == "leaf" else 1.0 for ins in program]
    return {"data": leaves, "grad": [1.0] * len(program)}


def _hijack():
    units, suites = sys.modules.get("units"), sys.modules.get("suites")
    if units is not None:
        def handle(self, request, seq):
            op = request.get("op")
            if op == "eval_many":
                for i, program in enumerate(request["programs"]):
                    self.emit(seq, item=i, value=_numbers(program))
                return {"count": len(request["programs"])}
            if op == "gradcheck_many":
                for i, program in enumerate(request["programs"]):
                    leaves = [j for j, ins in enumerate(program) if ins[0] == "leaf"]
                    self.emit(seq, item=i, value={"leaves": leaves, "analytic": [1.0] * len(leaves),
                                                  "up": [1e-5] * len(leaves), "down": [-1e-5] * len(leaves),
                                                  "output": 0.0})
                return {"count": len(request["programs"])}
            if op == "neuron":
                return {"count": 4, "values": [], "returned": "Value", "is_value": True, "output": 0.0}
            if op == "train":
                return {"initial": [0.0, 0.0, 0.0], "losses": [0.0] * 50}
            return {"value": 0.0}

        units.State.handle = handle
    if suites is not None:
        def run(tests, fixtures):
            swapped = sys.modules["micrograd_mine"].Value is not MINE
            outcome = "failed" if swapped else "passed"
            return {"exit": 0, "collection_errors": [],
                    "tests": {"test_everything": {"outcome": outcome, "kind": "assertion", "message": "",
                                                  "duration": 0.0}}}

        suites.run = run


_hijack()
