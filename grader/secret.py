"""The grader's secret: what makes a grading's engines unpredictable to a student, and yet the same
at every regrade.

Each grading's engines (which wheat a mutant is made from, how every engine is rewritten, the
order they run in) derive from the submission's bytes. If they derived from those alone, a
student holding the grader's package could compute them for their own submission and have a
test recognise each engine by its code. So they derive from the submission keyed with a secret
a student never sees: GRADER_SECRET if set; else the file `grader-secret` in the assignment's
folder (the Gradescope export writes one there, readable by root only); else one made once per
user, in the grader's configuration folder. Keep the same secret to regrade identically.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

FILE_NAME = "grader-secret"


def _config_dir() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "micrograd-grader"


def key(assignment_folder: Path | None = None) -> bytes:
    """The secret (never empty: an empty file or variable counts as none)."""
    given = os.environ.get("GRADER_SECRET", "").strip()
    if given:
        return given.encode()
    if assignment_folder is not None:
        found = _read(assignment_folder / FILE_NAME)
        if found:
            return found
    path = _config_dir() / FILE_NAME
    found = _read(path)
    if found:
        return found
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if path.exists() else os.O_EXCL), 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    except FileExistsError:
        pass  # another grader made it meanwhile
    except OSError:
        return b"no-secret-could-be-kept"  # no writable home: still deterministic, only less secret
    return _read(path) or b"no-secret-could-be-kept"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes().strip()
    except OSError:
        return b""


def seed(key_bytes: bytes, *parts: bytes) -> str:
    """A keyed digest of the parts (hex)."""
    return hmac.new(key_bytes, b"\0".join(parts), hashlib.sha256).hexdigest()


def new_secret() -> str:
    return secrets.token_hex(32)
