"""The command line: a thin layer over grader.grading and friends."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader import __version__
from grader.errors import GraderError, SpecError, UsageError
from grader.sandbox.isolation import IsolationError
from grader.text import printable

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ISOLATION, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grader", description="Grade micrograd-style autograd engines rule by rule.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="grade one submission")
    check.add_argument("submission", nargs="?", default="micrograd_mine.py", type=Path)
    check.add_argument("--tests", type=Path, help="the student's tests (default: test_micrograd.py beside it)")
    check.add_argument("--assignment", default="micrograd", help="assignment id or folder (default: micrograd)")
    check.add_argument("--json", type=Path, help="write the result JSON here")
    check.add_argument("--html", type=Path, help="write the HTML report here")
    check.add_argument("--public-only", action="store_true", help="run only the visible checks")
    batch = commands.add_parser("batch", help="grade a class's submissions: folders, zips, notebooks, .py files")
    batch.add_argument("inputs", nargs="+", type=Path, metavar="INPUT")
    batch.add_argument("--out", type=Path, required=True, help="where results, the gradebook and the summary go")
    batch.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel submissions (default: cores)")
    batch.add_argument("--assignment", default="micrograd", help="assignment id or folder (default: micrograd)")
    batch.add_argument("--force", action="store_true", help="regrade submissions already graded")
    batch.add_argument("--scheduler", help="address of a Dask scheduler to grade on (needs the [dask] extra)")
    batch.add_argument("--trusted-code", action="store_true",
                       help="grade even where student code cannot be isolated (only for code you trust)")

    template = commands.add_parser("template", help="copy the student starter kit into DIR")
    template.add_argument("folder", type=Path, metavar="DIR")

    export = commands.add_parser("export", help="build an autograder for another platform")
    export.add_argument("target", choices=["gradescope"])
    export.add_argument("--out", type=Path, required=True, help="the zip to write")
    export.add_argument("--assignment", default="micrograd", help="assignment id or folder (default: micrograd)")

    selftest = commands.add_parser("selftest", help="show that every check tells the reference from each sabotage")
    selftest.add_argument("--assignment", default="micrograd", help="assignment id or folder (default: micrograd)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            from grader.commands.check import main as check_main

            return check_main(
                submission=args.submission,
                assignment=args.assignment,
                tests=args.tests,
                json_path=args.json,
                html_path=args.html,
                public_only=args.public_only,
            )
        if args.command == "batch":
            from grader.batch.run import run_batch

            missing = [str(p) for p in args.inputs if not p.exists()]
            if missing:
                raise UsageError(f"no such file or folder: {', '.join(missing)}")
            return run_batch(args.inputs, args.out, args.assignment, args.jobs, args.force, args.scheduler,
                             trusted=args.trusted_code)
        if args.command == "template":
            from grader.commands.template import main as template_main

            return template_main(folder=args.folder)
        if args.command == "export":
            from grader.commands.export import main as export_main

            return export_main(target=args.target, out=args.out, assignment=args.assignment)
        if args.command == "selftest":
            from grader.commands.selftest import main as selftest_main

            return selftest_main(assignment=args.assignment)
    except KeyboardInterrupt:
        print("\ngrader: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the output was piped into head or a pager that closed
        sys.stderr.close()
        return EXIT_OK
    except UsageError as exc:
        print(printable(f"grader: error: {exc}"), file=sys.stderr)  # a file name may hold control characters
        return EXIT_USAGE
    except IsolationError as exc:
        print(printable(f"grader: {exc}"), file=sys.stderr)
        return EXIT_ISOLATION
    except SpecError as exc:
        print(f"grader: the assignment spec is invalid (for your instructor): {exc}", file=sys.stderr)
        return EXIT_USAGE
    except GraderError as exc:
        print(printable(f"grader: error: {exc}"), file=sys.stderr)
        return EXIT_FAILED
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
