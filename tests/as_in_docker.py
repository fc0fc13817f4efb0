"""Run the grader's command line as in a default Docker container (and so on Gradescope): as root, but no process
may make a namespace of any kind. Docker's default seccomp profile refuses clone, unshare and setns with a namespace
flag to a container without CAP_SYS_ADMIN; this installs the same refusal (the filter a sandbox's units add to
themselves, grader/sandbox/inside/confine.py's no_namespaces) on the grader's process, which every sandbox it starts
inherits, and then runs `python -m grader.cli ARGS...`. So the grader finds, by trying, that neither a sandbox nor
its units can have namespaces of their own, as it would in the container.

Usage: python tests/as_in_docker.py ARGS..."""

import runpy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "grader" / "sandbox" / "inside"))
import confine

if not confine.no_namespaces():
    raise SystemExit("as_in_docker: the filter that refuses namespaces could not be applied")
del sys.path[0]
sys.argv = ["grader", *sys.argv[1:]]
runpy.run_module("grader.cli", run_name="__main__", alter_sys=True)
