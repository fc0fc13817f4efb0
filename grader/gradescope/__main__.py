"""`python -m grader.gradescope`: what the exported `run_autograder` script runs."""

from grader.gradescope.autograder import main

if __name__ == "__main__":
    raise SystemExit(main())
