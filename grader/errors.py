"""The grader's exceptions, split by who fixes them: the instructor (spec) or nobody (worker).

Problems in a student's submission are never exceptions that escape: they become a
result with status `error` or a failed check, because one bad submission must not stop
a batch.
"""


class GraderError(Exception):
    """Root of every exception the grader raises on purpose."""


class SpecError(GraderError):
    """An assignment spec is invalid. The instructor fixes the spec file named in the message."""


class UsageError(GraderError):
    """The command line asked for something impossible (a missing file, an unknown assignment)."""


class WorkerFailure(GraderError):
    """The worker running the student's code hung, ran out of memory or died.

    `kind` is one of `timeout`, `memory`, `crash`; the sandbox replaces the worker on the
    next request.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


def host_prefixes() -> list[tuple[str, str]]:
    """Folders of the grader's host that a message for a student must not show, longest first,
    each with what stands in for it (the grader's own files keep their package-relative path)."""
    import os
    import sys
    from pathlib import Path

    install = Path(__file__).resolve().parent.parent
    places = {(str(install) + os.sep, ""), (sys.prefix, "<python>"), (sys.base_prefix, "<python>"),
              (str(Path.home()), "~")}
    return sorted(places, key=lambda p: -len(p[0]))


def without_host_paths(value, extra: list[tuple[str, str]] = ()):
    """A text (or JSON-like data) with the host's folders taken out of every string."""
    prefixes = sorted([*extra, *host_prefixes()], key=lambda p: -len(p[0]))

    def clean(item):
        if isinstance(item, str):
            for prefix, replacement in prefixes:
                if prefix and prefix != "/":
                    item = item.replace(prefix, replacement)
            return item
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items()}
        if isinstance(item, list):
            return [clean(v) for v in item]
        return item

    return clean(value)
