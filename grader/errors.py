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
