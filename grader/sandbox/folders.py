"""A sandbox's folders on the host: code/ (inside/'s modules, and their bytecode compiled once per grader
process), work/ (the submission) and scratch/ (where it writes when it writes on the host, without namespaces),
each readable by the sandbox only, under a folder (base) its uid can pass through but not list."""

from __future__ import annotations

import functools
import importlib.util
import os
import py_compile
import shutil
import tempfile
from pathlib import Path

from grader.sandbox import isolation, uids

INSIDE = Path(__file__).with_name("inside")


@functools.cache
def bytecode() -> dict[str, bytes]:
    """inside/'s modules compiled once per grader process, as __pycache__ files (their hash checked against the
    copies beside them): the sandbox's Python, started with -B, writes none, and compiled them at every
    sandbox's start. A Python of another version looks for its own file name and compiles, as before."""
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in INSIDE.glob("*.py"):
            target = Path(tmp) / path.name
            py_compile.compile(
                str(path),
                cfile=str(target),
                dfile=f"{isolation.CODE_DIR}/{path.name}",
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
            )
            found[Path(importlib.util.cache_from_source(path.name)).name] = target.read_bytes()
    return found


def base(iso: isolation.Isolation) -> str | None:
    """Where sandbox folders go: GRADER_SANDBOX_ROOT, or (running student code as other uids without
    bubblewrap) a folder they can pass through but not list; else the usual temporary folder."""
    configured = os.environ.get("GRADER_SANDBOX_ROOT")
    if configured:
        return configured
    if iso.mode != "uid":
        return None
    base = uids.LOCK_DIRS[0].parent / "sandboxes"
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o711)
    return str(base)


def lay_out(root: Path, uid: int, writes_here: bool) -> None:
    """code/ (the units' code) and work/ (the submission) under root, readable by the sandbox (uid) only, and
    scratch/, its own where it writes here (writes_here: no tmpfs of its own)."""
    code, work, scratch = root / "code", root / "work", root / "scratch"
    for folder in (code, work, scratch):
        folder.mkdir()
    for path in INSIDE.glob("*.py"):
        shutil.copyfile(path, code / path.name)
    (code / "__pycache__").mkdir()
    for name, data in bytecode().items():
        (code / "__pycache__" / name).write_bytes(data)
    if uid:
        root.chmod(0o711)
        for folder in (code, work):
            os.chown(folder, 0, uid)
            folder.chmod(0o750)
            for item in [*folder.iterdir(), *folder.glob("__pycache__/*")]:
                os.chown(item, 0, uid)
                item.chmod(0o750 if item.is_dir() else 0o640)
        if writes_here:
            os.chown(scratch, uid, uid)
        scratch.chmod(0o700)


def put(work: Path, uid: int, files: dict[str, bytes]) -> None:
    """Write the submission's files into work/, readable by the sandbox (uid) only."""
    for name, data in files.items():
        (work / name).write_bytes(data)
        if uid:
            os.chown(work / name, 0, uid)
            (work / name).chmod(0o640)
