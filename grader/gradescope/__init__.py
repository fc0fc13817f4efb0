"""Everything the grader knows of Gradescope, in one place: the zip `grader export gradescope`
builds (export.py), the autograder its `run_autograder` script runs for each submission
(autograder.py, run as `python -m grader.gradescope`), and the results.json format both the
autograder and a batch write (results.py).

Importing the package imports none of them: a batch reads only the results.json writer.
"""
