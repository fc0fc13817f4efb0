"""`grader export gradescope`: build a Gradescope autograder zip for an assignment: its setup.sh, its
run_autograder (which runs grader/gradescope/autograder.py), the grader and the assignment."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import grader
from grader import catalog, secret
from grader.errors import ExitCode
from grader.fileio import atomic_write

ROOT = Path(grader.__file__).resolve().parent.parent
SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image (as root). Assumed: Gradescope's
# default base image, Ubuntu 22.04, whose python3 is 3.10 (the grader needs 3.10 or later).
set -euo pipefail
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
  echo "setup.sh: the grader needs Python 3.10 or later, and this image's python3 is $(python3 -V 2>&1):" \
       "choose Gradescope's Ubuntu 22.04 base image (or a later one)" >&2; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null || true
# The grader, its reference engine and the assignment: readable by root only.
python3 -m venv /autograder/grader-venv
/autograder/grader-venv/bin/pip install --quiet /autograder/source
chmod -R go-rwx /autograder/source /autograder/grader-venv
# The Python student code runs on: readable by everyone, holding only what student code may use.
python3 -m venv /opt/micrograd-sandbox
/opt/micrograd-sandbox/bin/pip install --quiet pytest ipython
"""
RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission (as root): grade /autograder/submission into
# /autograder/results/results.json. Student code runs as an unprivileged uid of its own, which
# cannot read the autograder's files. AUTOGRADER_ROOT stands in for /autograder, and
# GRADER_PYTHON for the grader's interpreter, when testing.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{GRADER_PYTHON:-$ROOT/grader-venv/bin/python}}"
if [ -z "${{GRADER_SANDBOX_PYTHON:-}}" ] && [ -x /opt/micrograd-sandbox/bin/python ]; then
  export GRADER_SANDBOX_PYTHON=/opt/micrograd-sandbox/bin/python
fi
cd "$ROOT" && exec "$PYTHON" -m grader.gradescope --root "$ROOT" --assignment "$ROOT/source/assignments/{assignment}"
"""
SOURCES = ("pyproject.toml", "README.md", "grader", "reference", "student_template", "assignments/__init__.py")


def main(*, target: str, out: Path, assignment: str) -> int:
    task = catalog.load(assignment)
    buffer = io.BytesIO()  # written whole, then renamed into place: never half a zip, never through a link
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        _add_script(zf, "setup.sh", SETUP_SH)
        _add_script(zf, "run_autograder", RUN_AUTOGRADER.format(assignment=task.folder.name))
        for name in SOURCES:
            _add_tree(zf, ROOT / name, f"source/{name}")
        _add_tree(zf, task.folder, f"source/assignments/{task.folder.name}")
        if not (task.folder / secret.FILE_NAME).is_file():  # the engines' secret, root's only once installed
            zf.writestr(f"source/assignments/{task.folder.name}/{secret.FILE_NAME}", secret.new_secret())
    atomic_write(out, buffer.getvalue(), mode=0o600)  # it holds the reference, the wheats and the engines' secret
    print(f"Gradescope autograder for {task.id} written to {out}: upload it as a zip autograder.")
    return ExitCode.OK


def _add_script(zf: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = 0o755 << 16
    zf.writestr(info, text)


def _add_tree(zf: zipfile.ZipFile, path: Path, arcname: str) -> None:
    if path.is_file():
        zf.write(path, arcname)
        return
    for item in sorted(path.rglob("*")):
        if item.is_file() and "__pycache__" not in item.parts and not item.name.endswith(".pyc"):
            zf.write(item, f"{arcname}/{item.relative_to(path)}")
