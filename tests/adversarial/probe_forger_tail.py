

# Issue 41, item 3: the student chooses which of their own mutants count. In a run of the tests only (the engine
# lane's answers are left alone, so every engine check passes), every engine reports the student's own engine's
# numbers on the equivalence probes: the sandbox's probe function is replaced, before the probes are taken, by one
# that builds each program with this module's own Value, whatever engine the run appends after it. Every mutant of
# the student's engine then looks equivalent, and would be left out of the sabotage check's count.
def _forge_the_probes():
    import sys

    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "suite" and frame.f_code.co_filename.endswith("units.py")):
        frame = frame.f_back
    probes = sys.modules.get("probes")
    if frame is None or probes is None:
        return
    real, own, module = probes.evaluate, Value, sys.modules[__name__]

    def evaluate(program, value, *args, **kwargs):
        appended, module.Value = module.Value, own  # this engine's methods name Value: give them their own again
        try:
            return real(program, own, *args, **kwargs)
        finally:
            module.Value = appended

    probes.evaluate = evaluate


_forge_the_probes()
