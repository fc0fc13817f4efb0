"""The report templates as jinja2 compiled them, kept in the grader's cache folder (grader/cache.py), so a process
rendering one report (a student's `grader check`) loads them rather than compiling each again, tens of milliseconds.
jinja2 keys each by its template's name and source and by its own version and Python's; what it keeps is loaded as
code, so it is kept only where this user alone may write. Where it cannot be kept, templates are compiled in memory,
as without a cache."""

from __future__ import annotations

import jinja2

from grader import cache


class _Kept(jinja2.FileSystemBytecodeCache):
    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass  # a full disk, a folder that cannot be written: compiled again next time


def kept() -> jinja2.BytecodeCache | None:
    """Where the compiled templates are kept, or None (compiled in each process)."""
    where = cache.private("templates")
    return _Kept(str(where)) if where is not None else None
