"""The command line: a thin layer over grader.grading and friends.

Each command is declared once, in COMMANDS: its help, its options, and the module whose
`main(**options)` runs it (each option's dest is that function's keyword). Every error a
command raises on purpose is a GraderError (grader/errors.py), turned here, in one place,
into a line on stderr and its ExitCode. A usage error is one line too (argparse's usage block
is one `--help` away), and an output closed early (`| head`) never turns a failing command
into a success.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, NamedTuple

from grader import __version__
from grader.errors import ExitCode, GraderError
from grader.files import KIT, MODULE_FILE, NOTEBOOK_FILE, TESTS_FILE
from grader.text import printable


def at_least_one(text: str) -> int:
    """--jobs: a whole number of submissions graded at once, 1 or more."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a whole number of submissions graded at once, not {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (submissions graded at once), not {number}")
    return number


Argument = tuple[tuple[str, ...], dict[str, Any]]
"""An option or argument of a command: add_argument's flags, then its keywords."""

ASSIGNMENT: Argument = (
    ("--assignment",),
    {"default": "micrograd", "help": "assignment id or folder (default: micrograd)"},
)


class Command(NamedTuple):
    """A command, declared once: the module holding its main(**options), its one-line help, its arguments
    (argparse's), what it does (its --help's first paragraph) and examples of it (its --help's last)."""

    module: str
    help: str
    arguments: list[Argument]
    about: str
    examples: tuple[str, ...]


COMMANDS: dict[str, Command] = {
    "check": Command(
        "grader.commands.check",
        "grade one submission",
        [
            (
                ("submission",),
                {
                    "nargs": "?",
                    "default": MODULE_FILE,
                    "type": Path,
                    "help": f"your engine: a .py file or a notebook (default: {MODULE_FILE})",
                },
            ),
            (("--tests",), {"type": Path, "help": f"the student's tests (default: {TESTS_FILE} beside it)"}),
            ASSIGNMENT,
            (("--json",), {"dest": "json_path", "metavar": "JSON", "type": Path, "help": "write the result JSON here"}),
            (("--html",), {"dest": "html_path", "metavar": "HTML", "type": Path, "help": "write the HTML report here"}),
            (("--public-only",), {"action": "store_true", "help": "run only the visible checks"}),
            (
                ("--watch",),
                {"action": "store_true", "help": "grade again each time the file or its tests change (Ctrl-C stops)"},
            ),
        ],
        "Grade one student's engine rule by rule, with their own tests (" + TESTS_FILE + " beside it): a table of "
        "the checks, then a card for each one to fix, with the smallest case that shows the bug, and an HTML report "
        "in reports/ (or --html). Exit 0 at full marks, 1 otherwise.",
        (
            "grader check",
            f"grader check {NOTEBOOK_FILE} --html report.html",
            f"grader check {MODULE_FILE} --tests test_mine.py --watch",
        ),
    ),
    "batch": Command(
        "grader.batch.command",
        "grade a class's submissions: folders, zips, notebooks, .py files",
        [
            (
                ("inputs",),
                {
                    "nargs": "+",
                    "type": Path,
                    "metavar": "INPUT",
                    "help": "an LMS's download (a zip or its folder), or students' files, zips and folders",
                },
            ),
            (("--out",), {"type": Path, "required": True, "help": "where results, the gradebook and the summary go"}),
            (
                ("--jobs",),
                {"type": at_least_one, "default": os.cpu_count() or 1, "help": "parallel submissions (default: cores)"},
            ),
            ASSIGNMENT,
            (("--force",), {"action": "store_true", "help": "regrade submissions already graded"}),
            (("--scheduler",), {"help": "address of a Dask scheduler to grade on (needs the [dask] extra)"}),
            (
                ("--trusted-code",),
                {
                    "action": "store_true",
                    "help": "grade even where student code cannot be isolated (only for code you trust)",
                },
            ),
            (
                ("--previous",),
                {
                    "type": Path,
                    "metavar": "DIR",
                    "help": "an earlier batch's --out folder: look for similar work among its students too",
                },
            ),
            (
                ("--base",),
                {
                    "type": Path,
                    "metavar": "FILE",
                    "help": "the lesson's own code (.py or .ipynb): never counted as similar work",
                },
            ),
            (
                ("--roster",),
                {
                    "type": Path,
                    "help": "the LMS's class list (Canvas gradebook export, Moodle grading "
                    "worksheet, Gradescope roster): every student on it gets a row",
                },
            ),
            (
                ("--groups",),
                {
                    "type": Path,
                    "metavar": "FILE",
                    "help": "who is in which group (Canvas's group set export, or a CSV of group and member): "
                    "every member gets the group submission's grade and report",
                },
            ),
        ],
        "Grade every student found in the inputs (Canvas, Moodle and Gradescope downloads are read by their names), "
        "each in a sandbox of their own, and write each one's report, the gradebook (grades.csv), the class summary "
        "(summary.json) and the class page (index.html) into --out. A second run grades only what changed.",
        (
            "grader batch submissions.zip --out graded --roster gradebook.csv",
            "grader batch downloads/ --out graded --jobs 4 --previous ../last-term/graded",
        ),
    ),
    "template": Command(
        "grader.commands.template",
        "copy the student starter kit into DIR",
        [
            (("folder",), {"type": Path, "metavar": "DIR", "help": "the folder to copy it into (made if need be)"}),
        ],
        f"Copy the starter kit students begin from into DIR: {', '.join(KIT)}.",
        ("grader template my-engine",),
    ),
    "export": Command(
        "grader.commands.export",
        "build an autograder for Gradescope, give a graded class back to its LMS, or write a class's reteach notebook",
        [
            (
                ("target",),
                {
                    "choices": ["gradescope", "canvas", "moodle", "gradescope-csv", "feedback", "reteach"],
                    "help": "gradescope: an autograder zip; canvas, moodle, gradescope-csv: the grades as the LMS "
                    "imports them; feedback: every student's report as the LMS's bulk feedback zip; reteach: a "
                    "notebook of what the class got wrong",
                },
            ),
            (
                ("--out",),
                {"type": Path, "required": True, "help": "the file to write (a zip, a CSV, or for reteach an .ipynb)"},
            ),
            ASSIGNMENT,
            (("--from",), {"dest": "graded", "type": Path, "metavar": "DIR", "help": "a graded batch's --out folder"}),
            (("--roster",), {"type": Path, "help": "the LMS's class list (its gradebook export or grading worksheet)"}),
            (("--column",), {"help": "canvas: the assignment's column, as Canvas names it ('Title (id)')"}),
            (("--percent",), {"action": "store_true", "help": "canvas: grades as percentages, not points"}),
            (
                ("--zero-missing",),
                {
                    "action": "store_true",
                    "help": "0 for a roster student with no submission whose grade in the LMS is blank (excused "
                    "students and grades already there are never changed)",
                },
            ),
            (
                ("--allow-unmatched",),
                {"action": "store_true", "help": "export even when graded students match no roster row (left out)"},
            ),
            (
                ("--map",),
                {
                    "dest": "mapping",
                    "type": Path,
                    "metavar": "FILE",
                    "help": "a CSV pairing graded students with roster rows: `student,roster id` per line",
                },
            ),
        ],
        "Build Gradescope's autograder for an assignment, or give a graded class (--from, a batch's --out folder) "
        "back: its grades in the LMS's own import file (the roster gives the rows; overrides.csv applied as it is "
        "now), its reports as the LMS's bulk feedback, or a notebook for the next lecture.",
        (
            "grader export gradescope --out autograder.zip",
            "grader export canvas --from graded --roster gradebook.csv --out canvas-import.csv",
            "grader export feedback --from graded --out feedback.zip",
            "grader export reteach --from graded --out reteach.ipynb",
        ),
    ),
    "override": Command(
        "grader.commands.override",
        "record an instructor's decision about a grade, kept through every regrade (overrides.csv)",
        [
            (
                ("student",),
                {"metavar": "STUDENT", "help": "the student, as the gradebook's `student` column names them"},
            ),
            (("check",), {"nargs": "?", "metavar": "CHECK", "help": "a check id, or `total` (the default)"}),
            (("--out",), {"type": Path, "required": True, "metavar": "DIR", "help": "the batch's --out folder"}),
            (("--points",), {"type": float, "help": "the points that count instead of the grader's"}),
            (("--reason",), {"help": "why: the student's report says it"}),
            (("--by",), {"metavar": "NAME", "help": "who decided (default: your login)"}),
            (("--remove",), {"action": "store_true", "help": "take the override of STUDENT's CHECK out"}),
        ],
        "Set the points that count for a student's check, or their total, instead of the grader's, with the reason "
        "their report shows. The decision is kept in DIR/overrides.csv through every regrade (until the student "
        "hands in new work), and grades.csv, summary.json, the class page and the student's report show the "
        "final score at once, without regrading anyone.",
        (
            'grader override --out graded doejohn pow --points 3 --reason "right rule, one sign wrong"',
            'grader override --out graded doejohn --points 70 --reason "oral exam"',
            "grader override --out graded doejohn pow --remove",
        ),
    ),
    "selftest": Command(
        "grader.commands.selftest",
        "show that every check tells the reference from each sabotage",
        [
            ASSIGNMENT,
        ],
        "Grade the reference engine, correct engines in other styles and every planted bug (mutant) with the "
        "engine checks, and run each catch hint as a test: proves that no correct engine fails a check worth "
        "points and that every mutant is caught by the check named for it. Takes a minute or two.",
        ("grader selftest", "grader selftest --assignment path/to/assignment"),
    ),
}
"""Each command, by name."""


class Help(argparse.HelpFormatter):
    """A command's --help: its description wrapped to the terminal, its examples' lines (indented) kept whole."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(
            line
            if line.startswith("  ")
            else textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent)
            for line in text.splitlines()
        )


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are one line on stderr and exit 2."""

    def error(self, message: str):
        self.exit(ExitCode.USAGE, printable(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="grader", description="Grade micrograd-style autograd engines rule by rule.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, declared in COMMANDS.items():
        command = commands.add_parser(
            name,
            help=declared.help,
            description=declared.about,
            epilog="examples:\n" + "\n".join(f"  {line}" for line in declared.examples),
            formatter_class=Help,
        )
        for flags, settings in declared.arguments:
            command.add_argument(*flags, **settings)
    return parser


def main(argv: list[str] | None = None) -> int:
    options = vars(build_parser().parse_args(argv))
    module = COMMANDS[options.pop("command")].module
    try:
        return importlib.import_module(module).main(**options)
    except KeyboardInterrupt:
        print("\ngrader: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the output was piped into head or a pager that closed before the command ended
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python exits
        return ExitCode.FAILED
    except GraderError as exc:  # a file name may hold control characters: shown, never obeyed
        print(printable(f"grader: {exc.prefix}{exc}"), file=sys.stderr)
        return exc.exit_code


def run() -> None:
    """The process's entry (the `grader` script, `python -m grader.cli`): main's exit code, with the objects the
    command made frozen first, so the interpreter's exit does not collect them once more (70 ms of every grader
    check's wall time); whatever needed closing is closed by then."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
