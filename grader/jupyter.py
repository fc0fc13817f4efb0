"""`%load_ext grader`, then `%grade`: grade the notebook a Jupyter kernel runs, from one of its cells.

`%grade` takes grader check's options (`%grade --public-only`, `%grade other.ipynb --tests t.py`...) and runs
`grader check` on the notebook as it is saved on disk, in a process of its own, so the grading is exactly a
terminal's: the student's code runs in the grader's sandboxes, never in this kernel, which only reads the
result back (its JSON) and shows it: the table, a card for each check to fix, and the smallest failing case
as a code block to select and paste into the next cell (HTML in Jupyter, the terminal's text elsewhere).
The kernel never imports the grader's checks or the reference engine.

Which notebook: the one named, else the one Jupyter says the kernel runs (JPY_SESSION_NAME, which Jupyter
Server sets; VS Code's __vsc_ipynb_file__), else the only notebook in the kernel's folder.

A grade is of the saved file, so `%grade` says when the file is older than the cells run since (staleness():
from the execution counts Jupyter saves with each cell and the kernel's own history of what it ran).

Why a code block and not `set_next_input` (a new cell holding the case): that cell would be saved into the
notebook being graded, run with it at the next Restart & Run All and graded as part of it, and one would be
added at every `%grade`; a code block changes nothing the student did not paste.

When the grader grades a notebook, its `%load_ext grader` and `%grade` lines do nothing (grader/notebooks.py):
a grading never starts another from inside the sandbox.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import history
from grader.errors import BadResult, GraderError, UsageError
from grader.files import NOTEBOOK_FILE
from grader.notebooks import is_grading_line


def asks_for_grading(cell: str) -> bool:
    """A cell whose every line of code is `%load_ext grader` or `%grade ...` (comments and blank lines aside)."""
    lines = [line.strip() for line in cell.splitlines() if line.strip() and not line.strip().startswith("#")]
    return bool(lines) and all(is_grading_line(line) for line in lines)


def load_ipython_extension(ipython) -> None:
    def grade(line: str) -> None:
        """Grade this notebook as it is saved (grader check's options: %grade --public-only)."""
        run_magic(ipython, line)

    ipython.register_magic_function(grade, "line", "grade")


def run_magic(ipython, line: str) -> None:
    from IPython.display import display

    try:
        request, path, stale = prepared(ipython, line)
        live = "ipykernel" in sys.modules  # a frontend that updates an output in place: progress on one line
        shown = display({"text/plain": f"grading {path.name} as saved..."}, raw=True, display_id=True) if live else None
        outcome = _grade(path, request, shown)
    except GraderError as exc:
        print(f"%grade: {exc}", file=sys.stderr)
        return
    except SystemExit:  # a usage error, which argparse has printed
        return
    if shown is not None:
        shown.update(outcome.bundle(stale), raw=True)
    else:
        display(outcome.bundle(stale), raw=True)


def prepared(ipython, line: str) -> tuple[Any, Path, str]:
    """What a %grade line asks (its options as grader check reads them), the notebook it grades, and whether the
    file is older than the cells run since (staleness); a UsageError (or argparse's exit, its usage said) for a
    line that cannot be read or names what no path can be. Nothing is graded yet."""
    request = _request(line)
    path = request.submission or which_notebook(ipython)
    return request, path, staleness(path, _inputs(ipython))


def _inputs(ipython) -> list[str]:
    """What this kernel ran, by execution count (In[0] is empty; the last is the cell running %grade)."""
    found = getattr(getattr(ipython, "history_manager", None), "input_hist_raw", None)
    return [text if isinstance(text, str) else "" for text in found] if found else [""]


def _request(line: str):
    """The options, as grader check parses them (the notebook's path is None when not given)."""
    import shlex

    from grader.cli import COMMANDS, Parser

    parser = Parser(prog="%grade", description="Grade this notebook as it is saved.")
    for flags, settings in COMMANDS["check"][2]:
        if flags in (("--watch",), ("--json",)):  # one grading, shown here
            continue
        parser.add_argument(*flags, **({**settings, "default": None} if flags == ("submission",) else settings))
    try:
        words = shlex.split(line)
    except ValueError as exc:  # an unclosed quote
        raise UsageError(f"cannot read the line ({exc}): %grade [NOTEBOOK] [grader check's options]") from None
    for word in words:
        try:
            if "\0" in word:
                raise ValueError("a NUL character")
            os.fsencode(word)
        except ValueError as exc:  # a NUL, or a lone surrogate no file name can hold
            raise UsageError(f"{word[:80]!r} cannot be a path or an option ({exc})") from None
    return parser.parse_args(words)


def which_notebook(ipython) -> Path:
    """The notebook this kernel runs: Jupyter's session name, VS Code's variable, or the folder's one notebook."""
    here = Path.cwd()
    named = [os.environ.get("JPY_SESSION_NAME", ""), str(ipython.user_ns.get("__vsc_ipynb_file__", ""))]
    for name in filter(None, named):
        for candidate in (Path(name), here / name, here / Path(name).name):
            if candidate.suffix == ".ipynb" and candidate.is_file():
                return candidate.resolve()
    found = sorted(p for p in here.glob("*.ipynb") if not p.name.startswith("."))
    if len(found) == 1:
        return found[0].resolve()
    raise UsageError(
        f"cannot tell which notebook this kernel runs ({len(found)} notebooks in {here.name or here}): "
        f"give its path, %grade {found[0].name if found else NOTEBOOK_FILE}"
    )


def staleness(path: Path, inputs: list[str]) -> str:
    """A sentence when the file on disk is older than the cells this kernel ran since, else ''.

    Jupyter saves each code cell with the execution count it last ran at. When one of them ran in this kernel
    as saved (In[n] is its text), the file was saved in this session, after In[max count]: any cell run after
    that, %grade's aside, ran since the save. Otherwise (saved in another session, or never run before saving)
    the cells this kernel ran whose text the file does not hold are what the file lacks."""
    from grader import fileio, notebooks

    try:
        saved_at = path.stat().st_mtime
        saved = fileio.read_regular(path)  # through no link, a regular file only (never a pipe), capped
        cells = [c for c in notebooks.read(path, saved).cells if c.cell_type == "code"]
    except (OSError, GraderError):
        return ""
    counted = {c.execution_count: c.source.strip() for c in cells if isinstance(c.execution_count, int)}
    ran = inputs[1:-1]  # the cells before this one
    this_session = any(0 < n < len(inputs) and inputs[n].strip() == text for n, text in counted.items())
    when = time.strftime("%H:%M:%S", time.localtime(saved_at))
    if this_session:
        since = [t for t in inputs[max(counted) + 1 : -1] if t.strip() and not asks_for_grading(t)]
        if not since:
            return ""
        said = (
            f"{path.name} was saved at {when}, and you have run {len(since)} cell{'s' if len(since) != 1 else ''} since"
        )
    else:
        held = {c.source.strip() for c in cells}
        missing = list(dict.fromkeys(t.strip() for t in ran if t.strip() and not asks_for_grading(t)))
        missing = [t for t in missing if t not in held]
        if not missing:
            return ""
        said = (
            f"{len(missing)} cell{'s' if len(missing) != 1 else ''} you ran in this kernel "
            f"{'are' if len(missing) != 1 else 'is'} not in {path.name} as saved (at {when})"
        )
    return (
        f"{said}: %grade grades the file as saved. "
        "Save the notebook (Ctrl+S) and run %grade again to grade what you see."
    )


@dataclass(frozen=True)
class Shown:
    text: str
    html: str | None = None

    def bundle(self, stale: str) -> dict[str, str]:
        from markupsafe import escape

        lead = f"Note: {stale}\n\n" if stale else ""
        found = {"text/plain": lead + self.text}
        if self.html is not None:
            note = f'<p class="grader-stale"><strong>Note:</strong> {escape(stale)}</p>' if stale else ""
            found["text/html"] = note + self.html
        return found


def _grade(path: Path, request, shown) -> Shown:
    """grader check on the saved notebook, in a process of its own (cwd: the notebook's folder, where its reports
    go); its progress shown on one line as it comes, its result read back."""
    before = history.recall(path, None, path.parent)
    with tempfile.TemporaryDirectory(prefix="grader-grade-") as tmp:
        out = Path(tmp) / "result.json"
        command = [sys.executable, "-m", "grader.cli", "check", str(path), "--json", str(out), *_options(request)]
        process = subprocess.Popen(
            command, cwd=path.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace"
        )
        printing, saying = process.stdout, process.stderr
        assert printing is not None and saying is not None, "the process was started with stdout and stderr as PIPE"
        printed: list[str] = []
        reader = threading.Thread(target=lambda: printed.append(printing.read()), daemon=True)
        reader.start()
        said = []
        try:
            for line in saying:
                said.append(line)
                if shown is not None and (line.startswith("[") or line.startswith("running your notebook")):
                    shown.update({"text/plain": f"grading {path.name} as saved: {line.strip()}"}, raw=True)
            code = process.wait()
        except KeyboardInterrupt:  # the kernel's interrupt: stop the grading too, its sandboxes with it
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
            raise
        reader.join()
        text = "".join(printed).rstrip()
        errors = "".join(line for line in said if not line.startswith("[")).strip()
        if code not in (0, 1) or not out.exists():
            return Shown(f"{text}\n{errors}".strip() or f"grader check ended with exit code {code}")
        try:
            from grader.result import Result

            result = Result.from_dict(json.loads(out.read_text(encoding="utf-8")))
        except (ValueError, BadResult) as exc:
            return Shown(f"{text}\n(the result could not be read back: {exc})")
    from grader import kit
    from grader.render.html import inline_report

    change = None
    if before is not None and before.assignment == result.assignment:
        change = history.compare(before, history.Record.of(result, path))
    unwritten = kit.unwritten(_saved(path), notebook=True)  # the box names every kit method still to write
    return Shown(text, inline_report(result, change, f"reports/{path.stem}.html", unwritten))


def _saved(path: Path) -> str | None:
    """The notebook as saved (what was graded, unless it was saved again meanwhile), within kit.PARSED_CHARS."""
    from grader import kit

    try:
        with open(path, "rb") as f:
            data = f.read(kit.PARSED_CHARS + 1)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace") if len(data) <= kit.PARSED_CHARS else None


def _options(request) -> list[str]:
    """grader check's options as given, each path made absolute (the grading runs in the notebook's folder)."""
    found = []
    if request.tests is not None:
        found += ["--tests", str(request.tests.resolve())]
    if request.assignment is not None:
        found += [
            "--assignment",
            str(Path(request.assignment).resolve()) if os.path.exists(request.assignment) else request.assignment,
        ]
    if request.html_path is not None:
        found += ["--html", str(request.html_path.resolve())]
    if request.public_only:
        found.append("--public-only")
    return found
