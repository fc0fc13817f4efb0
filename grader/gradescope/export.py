"""`grader export gradescope`: build a Gradescope autograder zip for an assignment: its setup.sh, its
run_autograder (which runs grader/gradescope/autograder.py), the grader and the assignment.

The zip pins what it installs: constraints.txt holds every package the grader needs (its requirements,
followed through theirs) at the version installed in the Python that exports it, the one its tests and the
instructor's own gradings ran with, and setup.sh installs both of its Pythons under those pins. So the same zip
grades the same way next term, whatever pytest, hypothesis or IPython have released since.
"""

from __future__ import annotations

import io
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

import grader
from grader import catalog, secret
from grader.errors import ExitCode
from grader.fileio import atomic_write
from grader.spec import tomllib

ROOT = Path(grader.__file__).resolve().parent.parent
CONSTRAINTS = "constraints.txt"
SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image (as root). Assumed: Gradescope's
# default base image, Ubuntu 22.04, whose python3 is 3.10 (the grader needs 3.10 or later). Every
# package is installed at the version pinned in source/{constraints}, those the grader was exported
# with, under Python {python}: that Python is installed where apt has it, else python3 is used.
set -euo pipefail
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
PY=python{python}
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$PY" "$PY-venv" >/dev/null 2>&1 || PY=python3
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {{
  echo "setup.sh: the grader needs Python 3.10 or later, and this image's python3 is $("$PY" -V 2>&1):" \\
       "choose Gradescope's Ubuntu 22.04 base image (or a later one)" >&2; exit 1; }}
if [ "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" != "{python}" ]; then
  echo "setup.sh: note: the packages were pinned under Python {python} and this image's is $("$PY" -V 2>&1):" \\
       "if a pin cannot be installed, export the autograder again from a Python of this version" >&2
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null || true
# The grader, its reference engine and the assignment: readable by root only.
"$PY" -m venv /autograder/grader-venv
/autograder/grader-venv/bin/pip install --quiet -c /autograder/source/{constraints} /autograder/source
# The Python student code runs on: readable by everyone, holding only what student code may use.
"$PY" -m venv /opt/micrograd-sandbox
/opt/micrograd-sandbox/bin/pip install --quiet -c /autograder/source/{constraints} pytest ipython
chmod -R go-rwx /autograder/source /autograder/grader-venv
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
        pinned = pins(ROOT / "pyproject.toml")
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        _add_script(zf, "setup.sh", SETUP_SH.format(constraints=CONSTRAINTS, python=python))
        zf.writestr(f"source/{CONSTRAINTS}", constraints(pinned))
        _add_script(zf, "run_autograder", RUN_AUTOGRADER.format(assignment=task.folder.name))
        for name in SOURCES:
            _add_tree(zf, ROOT / name, f"source/{name}")
        _add_tree(zf, task.folder, f"source/assignments/{task.folder.name}")
        if not (task.folder / secret.FILE_NAME).is_file():  # the engines' secret, root's only once installed
            zf.writestr(f"source/assignments/{task.folder.name}/{secret.FILE_NAME}", secret.new_secret())
    atomic_write(out, buffer.getvalue(), mode=0o600)  # it holds the reference, the wheats and the engines' secret
    print(
        f"Gradescope autograder for {task.id} written to {out}: upload it as a zip autograder. It installs "
        f"{len(pinned)} packages at the versions this grader runs with (Python {sys.version.split()[0]}; "
        f"source/{CONSTRAINTS})."
    )
    return ExitCode.OK


def pins(pyproject: Path) -> dict[str, str]:
    """Each package the grader needs (pyproject's dependencies, followed through each one's own, with their extras;
    markers read for this Python; the grader's own extras left out) and its version installed here, by name. A
    requirement not installed here (its marker false for this Python) is left out: nothing here says which version
    of it the grader ran with."""
    todo = [(text, "") for text in _dependencies(pyproject)]
    found: dict[str, str] = {}
    followed: set[tuple[str, str]] = set()
    while todo:
        text, extra = todo.pop()
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[name] = dist.version
        for wanted in ("", *sorted(requirement.extras)):
            if (name, wanted) not in followed:  # each package and extra followed once: the walk ends
                followed.add((name, wanted))
                todo += [(child, wanted) for child in dist.requires or ()]
    return dict(sorted(found.items()))


def _dependencies(pyproject: Path) -> list[str]:
    """The grader's own requirements: pyproject's dependencies in a checkout; where the grader is installed without
    one (a regular install), its distribution's, its extras left out (a requirement an extra brings has a marker
    naming it, false with no extra)."""
    if pyproject.is_file():
        return list(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"].get("dependencies", []))
    try:
        return list(metadata.distribution("micrograd-grader").requires or ())
    except metadata.PackageNotFoundError:
        return []


def constraints(pinned: dict[str, str]) -> str:
    """constraints.txt: pip's constraints file of the pins, with a line saying where they come from."""
    lines = [f"# the versions `grader export gradescope` ran with (Python {sys.version.split()[0]})"]
    return "\n".join(lines + [f"{name}=={version}" for name, version in pinned.items()]) + "\n"


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
