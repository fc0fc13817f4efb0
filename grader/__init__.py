"""Rule-by-rule autograder for student-written micrograd-style autograd engines."""

__version__ = "0.1.0"
