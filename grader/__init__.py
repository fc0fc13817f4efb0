"""Rule-by-rule autograder for student-written micrograd-style autograd engines."""

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """`%load_ext grader` in Jupyter: the `%grade` magic (grader/jupyter.py), imported only when asked for."""
    from grader.jupyter import load_ipython_extension as load

    load(ipython)
