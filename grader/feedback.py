"""What the grader says about a submission, made fit to leave the grading machine: safe and short.

Every result `grade()` returns passes through `cleaned` once, so the terminal, the JSON, the HTML
report, Gradescope's results.json and a batch's gradebook and class page all show the same text:

- no path of the grading machine: the grader's install, the Python install and virtual
  environment (sys.prefix, sys.base_prefix, the sandbox's Python), the home folder, the sandbox's
  folders inside (/tmp/run, /sandbox, /opt/grader) and outside (grader-sandbox-*), any
  site-packages; a file of the student's is named by its name alone;
- no frame of pytest, importlib or any library in a traceback: only the student's own lines and
  the error stay;
- numbers with six significant digits (`0.678498`, not `0.6784976436143842`), more only where
  an expected and a wrong number would otherwise look the same: `numbers()`, which every check
  and renderer writes them with (a student's own text, and code to paste, keep theirs);
- no card over CARD_LINES lines: a check's feedback is cut at FEEDBACK_LINES and its smallest
  case at CODE_LINES (saying how much was left out), every line at LINE_CHARS characters, so a
  terminal section, an HTML card or a results.json entry stays under the cap whatever the
  student's code printed or the search found.

Much of what is cleaned is the student's (an exception's message, a test's output), and the cleaning
runs in the grader's own process, so it is bounded before it starts and linear in what it reads: a
text is read up to TEXT_CHARS, a line up to CUT_CHARS (the cut drops the last, partial word, so no
path is left half-cleaned), and paths are found with str methods in the text's words, never with a
regular expression whose quantifiers nest or overlap (`(?:/[^ ]+)*/site-packages/` took
exponential time on a run of slashes).
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import replace
from pathlib import Path

from grader.errors import host_prefixes
from grader.files import MODULE_FILE, TESTS_FILE
from grader.kit import Start, start
from grader.result import CheckResult, Counterexample, NotWritten, Repair, Result, SubmissionError

CARD_LINES = 40
"""The most lines one check's card takes anywhere: its heading, feedback, smallest case and numbers."""
CODE_LINES = 20
"""A smallest case longer than this is cut (none the checks make is: a repeated structure is a loop)."""
FEEDBACK_LINES = CARD_LINES - 4
"""A card is its heading, the feedback, then for a smallest case a line before it and two of numbers after."""
LINE_CHARS = 300
NOTE_LINES = 12
PROBLEMS = 12
"""A notebook's cells that did not run cleanly, listed (the rest counted), so that section stays under the cap."""
DIGITS = 6
SAME = 1e-6
"""Numbers a table of expected and got values shows as equal (relative): the assignments' usual tolerance."""

OWN_CODE = ("grader/", "reference/")
"""The grader's own files, as a traceback names them once the install's folder is taken out: an internal
error keeps their frames, for the instructor to report."""
SANDBOX_FOLDERS = ("/tmp/run/", "/opt/grader/", "/sandbox/")
"""The sandbox's own folders, as student code sees them (grader/sandbox/isolation.py)."""
TEXT_CHARS = 200_000
"""The most of one text read (a card shows CARD_LINES lines of LINE_CHARS characters)."""
CUT_CHARS = 4 * LINE_CHARS
"""The most of one line read: more than is shown, since taking a path out shortens it."""
WORD_ENDS = " \t'\"(),:"
"""Where a line longer than CUT_CHARS may be cut: after one of these, so that no path is cut in two."""
_FRAME = re.compile(r'^(\s*)File "(?P<py>[^"]*)", line \d+|^(?P<pt>\S+?):\d+: in \S|^\s*<frozen [^>]+>:\d+: in ')
_PATH_WORDS = re.compile(r"""([\s'"]+)""")
"""What separates the words a path through a sandbox's folder can be (one class, one quantifier: linear)."""
_LIBRARY_WORDS = re.compile(r"""([\s'"():,]+)""")
"""What separates the words a library's path can be."""
SANDBOX_ROOTS = ("/grader-sandbox-", "/grader-task-")
"""Folders of a sandbox on the host (wherever GRADER_SANDBOX_ROOT puts it) or of a batch's grading: a path
through one goes, up to the file's name."""
LIBRARY_FOLDERS = ("/site-packages/", "/dist-packages/")
PYTHON_LIBRARY = "/lib/python3."
"""A Python's standard library (`/lib/python3.11/`): a path up to the last of these folders goes."""


def machine_paths() -> list[tuple[str, str]]:
    """Folders of this machine no feedback may show, longest first, each with what stands in for it."""
    found = set(host_prefixes()) | {
        (os.path.realpath(sys.prefix), "<python>"),
        (os.path.realpath(sys.base_prefix), "<python>"),
    }
    sandbox_python = os.environ.get("GRADER_SANDBOX_PYTHON")
    if sandbox_python:
        prefix = Path(sandbox_python).parent.parent
        found |= {(str(prefix), "<python>"), (str(prefix.resolve()), "<python>")}
    found |= {(folder, "") for folder in SANDBOX_FOLDERS}
    return sorted((p for p in found if p[0] not in ("", "/")), key=lambda p: -len(p[0]))


def without_paths(text: str, paths: list[tuple[str, str]] | None = None) -> str:
    """The text (bounded first) with every folder of the machine taken out (a student's file keeps its name)."""
    text = bounded(text)
    if any(root in text for root in SANDBOX_ROOTS):
        text = _each_word(text, _PATH_WORDS, _without_sandbox_root)
    for prefix, replacement in paths if paths is not None else machine_paths():
        text = text.replace(prefix, replacement)
    if any(folder in text for folder in LIBRARY_FOLDERS) or PYTHON_LIBRARY in text:
        text = _each_word(text, _LIBRARY_WORDS, _without_library_path)
    return text


def bounded(text: str) -> str:
    """The text up to TEXT_CHARS (at a line's end), each line up to CUT_CHARS: a line cut loses its last,
    partial word (after the last of WORD_ENDS: a path cut in two would no longer be recognised, and would
    show), and ends with '...'."""
    if len(text) <= CUT_CHARS:
        return text
    if len(text) > TEXT_CHARS:
        end = text.rfind("\n", 0, TEXT_CHARS)
        text = text[: end if end > 0 else TEXT_CHARS]
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if len(line) > CUT_CHARS:
            cut = line[:CUT_CHARS]
            lines[i] = cut[: max(0, *(cut.rfind(c) + 1 for c in WORD_ENDS))] + "..."
    return "\n".join(lines)


def _each_word(text: str, separators: re.Pattern, clean) -> str:
    parts = separators.split(text)  # words at the even places, what separates them at the odd ones
    parts[::2] = [clean(word) for word in parts[::2]]
    return "".join(parts)


def _without_sandbox_root(word: str) -> str:
    """A word holding a path through a sandbox's or a grading's folder (`/tmp/grader-task-x1/s/alice/a.py:3`),
    without the path up to the file's name (`a.py:3`)."""
    named = -1  # where the first such folder's name (never empty) ends
    for root in SANDBOX_ROOTS:
        at = word.find(root)
        while at != -1:
            end = word.find("/", at + len(root))
            if end > at + len(root):
                named = end if named == -1 else min(named, end)
                break
            at = word.find(root, at + len(root)) if end != -1 else -1
    if named == -1:
        return word
    return word[: word.find("/")] + word[word.rfind("/") + 1 :]


def _without_library_path(word: str) -> str:
    """A word holding a path into a library (`/usr/lib/python3.11/site-packages/torch/nn.py`), without the path
    up to the last library folder (`torch/nn.py`)."""
    end = max((i + len(folder) for folder in LIBRARY_FOLDERS if (i := word.rfind(folder)) != -1), default=-1)
    at = word.find(PYTHON_LIBRARY)
    while at != -1:
        digits = at + len(PYTHON_LIBRARY)
        stop = digits
        while stop < len(word) and word[stop].isdigit():
            stop += 1
        if stop > digits and stop < len(word) and word[stop] == "/":
            end = max(end, stop + 1)
        at = word.find(PYTHON_LIBRARY, stop)
    if end == -1:
        return word
    return word[: word.find("/")] + word[end:]


def without_library_frames(text: str) -> str:
    """A traceback (Python's or pytest's) with only the frames in the student's own files (and the grader's,
    for an internal error): a frame of pytest, importlib or any other library goes, with the source lines
    printed under it."""
    if "line " not in text and ": in " not in text:
        return text
    kept, dropping = [], None
    for line in text.splitlines():
        frame = _FRAME.match(line)
        if frame:
            where = frame.group("py") or frame.group("pt") or ""
            indent = len(line) - len(line.lstrip())
            dropping = (
                None
                if os.path.basename(where) in (MODULE_FILE, TESTS_FILE)
                or where.startswith(("<cell", "<ipython-input", *OWN_CODE))
                else indent
            )
            if dropping is None:
                kept.append(line)
            continue
        if (
            dropping is not None
            and line.strip()
            and (len(line) - len(line.lstrip()) > dropping or line.strip() in ("???", "^" * len(line.strip())))
        ):
            continue
        dropping = None
        kept.append(line)
    return "\n".join(kept)


def capped(text: str, most: int, what: str = "lines") -> str:
    """At most `most` lines of at most LINE_CHARS characters, the last saying how many were left out."""
    lines = [line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 3] + "..." for line in text.splitlines()]
    if len(lines) > most:
        lines = lines[: most - 1] + [f"... ({len(lines) - most + 1} more {what} not shown)"]
    return "\n".join(lines)


def said(text: str, paths: list[tuple[str, str]] | None = None, most: int = FEEDBACK_LINES) -> str:
    """A sentence of the grader's (with the student's words quoted in it), fit to show."""
    return capped(without_library_frames(without_paths(text, paths)), most)


def without_hidden(text: str, hidden: set[str] | frozenset[str]) -> str:
    """A visible check's feedback with no mention of the hidden checks (a student must not learn what they
    test): '(see <hidden>)' goes, and a hidden id leaves a list of checks ('(add, mul, <hidden>...)')."""
    for check_id in sorted(hidden):
        name = re.escape(check_id)
        text = re.sub(rf" ?\(see (?:the )?{name}(?: check)?\)", "", text)
        text = re.sub(rf"\bsee (?:the )?{name}\b(?: check)?", "see the checks above", text)
        text = re.sub(rf"(?<=\(){name}, |, {name}\b(?=[,.)])", "", text)
    return text


def numbers(*values, close: float = 0.0) -> tuple[str, ...]:
    """Numbers as feedback shows them: DIGITS significant digits, or as many more as it takes for numbers
    that differ to look different (an expected 12.01 and a wrong 12.0100001); anything else as it is. With
    `close`, numbers within that relative tolerance of each other are the same to a reader (a table of expected
    and got values beside the one that is wrong: 0.7 and 0.70000000001 are both 0.7)."""
    floats = [v for v in values if isinstance(v, float)]
    apart = [
        (a, b)
        for i, a in enumerate(floats)
        for b in floats[i + 1 :]
        if a != b and a == a and b == b and not (close and math.isclose(a, b, rel_tol=close, abs_tol=close * 1e-3))
    ]
    digits = DIGITS
    while digits < 17 and any(f"{a:.{digits}g}" == f"{b:.{digits}g}" for a, b in apart):
        digits += 1
    return tuple(f"{v:.{digits}g}" if isinstance(v, float) else str(v) for v in values)


_DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?:[eE][+-]?\d+)?")
"""A decimal number written in a text (digits, a point, digits, maybe an exponent: no quantifier overlaps)."""


def short_numbers(line: str) -> str:
    """A line of the student's own text (a test's failure message) with each number of more than DIGITS
    significant digits written with DIGITS, or as many more as the line's other numbers need to look
    different from it ('assert 3.242010997697502 < 0.1' is 'assert 3.24201 < 0.1'); the rest as written."""
    found = _DECIMAL.findall(line)
    if not any(_significant(n) > DIGITS for n in found):
        return line
    shown = dict(zip(found, numbers(*(float(n) for n in found)), strict=True))
    return _DECIMAL.sub(lambda m: shown[m[0]] if _significant(m[0]) > DIGITS else m[0], line)


def _significant(number: str) -> int:
    return len(number.lstrip("-").split("e")[0].split("E")[0].replace(".", "").lstrip("0"))


def summary(text: str) -> str:
    """A feedback's first line as a one-line summary (a table's cell, the terminal's row): a line that leads
    into a list ('0 of your 5 tests pass on your own engine:', '... Not caught:') ends as a sentence instead,
    never with a dangling colon."""
    first = (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""
    if not first.endswith(":"):
        return first
    first = first[:-1].rstrip()
    head, dot, last = first.rpartition(". ")
    if dot and len(last.split()) <= 3:  # 'Not caught', 'Still failing': the list's own heading goes with it
        first = head
    return first if first.endswith((".", "!", "?")) else first + "."


def first_sentence(text: str) -> str:
    """A line's first sentence (a table's row: the card says the rest, its cause included): up to the first
    full stop that follows a word and is followed by a space and a capital ('w . x' and '0.5' go on)."""
    start = 0
    while (at := text.find(". ", start)) != -1:
        after = text[at + 2 : at + 3]
        if at > 0 and not text[at - 1].isspace() and after.isupper():
            return text[: at + 1]
        start = at + 2
    return text


def advisory(check: CheckResult) -> bool:
    """A check that carries no points (deep_graph): its verdict is advice, never a failure, and it is shown after
    every check that costs points, in a colour of its own."""
    return check.max_score == 0


def ordered(result: Result) -> list[CheckResult]:
    """The checks in the rubric's order, the advisory ones last (a table's rows)."""
    return [c for c in result.checks if not advisory(c)] + [c for c in result.checks if advisory(c)]


def to_fix(result: Result) -> list[CheckResult]:
    """The checks that get a card, in the order a student should read them: those that failed or raised first,
    then every other check below full points (partial credit, not judged), each in the rubric's order, then an
    advisory check that did not pass (no points: after everything that costs points). A check stopped at a method
    still to write, or waiting for them (held), is in the starter kit's box instead, and a hidden one shows its
    row only."""
    boxed = set(held(result))
    shown = [
        c
        for c in ordered(result)
        if c.visibility != "hidden"
        and not c.not_written
        and c.id not in boxed
        and (c.status in ("failed", "error") or c.score < c.max_score)
    ]
    failing = [c for c in shown if c.status in ("failed", "error") and not advisory(c)]
    rest = [c for c in shown if c.status not in ("failed", "error")]
    return failing + rest + [c for c in shown if advisory(c)]


def not_written(result: Result) -> tuple[dict[str, list[str]], str | None, bool]:
    """The checks the student's code stopped by raising NotImplementedError (starter-kit methods still to write),
    grouped by the method (`Value.__add__`, where the student's process said it came from); the first method to
    write; and whether nothing works yet (no check with points passed). Every report shows them as one section."""
    waiting: dict[str, list[str]] = {}
    for c in ordered(result):
        if c.status in ("failed", "error") and c.not_written:
            waiting.setdefault(c.not_written.method, []).append(c.id)
    nothing = not any(c.status == "passed" and c.max_score > 0 for c in result.checks)
    return waiting, next(iter(waiting), None), nothing


def kit_start(result: Result, unwritten: tuple[str, ...] = ()) -> Start | None:
    """Where the student stands with the starter kit (grader/kit.py): every method still to write (`unwritten`: those
    the student's code leaves raising NotImplementedError, read from it; the checks' own are added), the checks
    waiting for them and what to write next; None when no check waits for one."""
    stopped = {
        c.id: c.not_written.method
        for c in ordered(result)
        if c.status in ("failed", "error") and c.not_written and c.visibility != "hidden"
    }
    return start(stopped, unwritten)


def held(result: Result) -> list[str]:
    """The checks not judged (skipped) while the starter kit is still unwritten and nothing works yet: each waits
    for the methods the start-here box names, which is their card (four cards saying 'not judged: no operation
    works yet' would push where to start off the screen)."""
    waiting, _, nothing = not_written(result)
    return [c.id for c in ordered(result) if waiting and nothing and c.status == "skipped" and c.visibility != "hidden"]


def _data(value, paths):
    if isinstance(value, str):
        return capped(without_paths(value, paths), FEEDBACK_LINES)
    if isinstance(value, dict):
        return {k: _data(v, paths) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_data(v, paths) for v in value)
    return value


def _check(check: CheckResult, paths) -> CheckResult:
    example = check.counterexample
    if example is not None:
        code = without_paths(example.code, paths)
        code = capped(code, CODE_LINES, "lines of the case") if len(code.splitlines()) > CODE_LINES else code
        example = Counterexample(code, _data(example.expected, paths), _data(example.got, paths))
    most = FEEDBACK_LINES - (len(example.code.splitlines()) + 1 if example is not None else -3)
    written = check.not_written
    return replace(
        check,
        feedback=said(check.feedback, paths, most),
        counterexample=example,
        artifacts=_data(check.artifacts, paths),
        not_written=written and NotWritten(_data(written.method, paths), _data(written.message, paths)),
        repair=_repair(check.repair, paths),
    )


def _repair(repair: Repair | None, paths) -> Repair | None:
    """A verified repair with its every text cleaned like any other: the student's lines it quotes (as written and
    as changed), and where they are."""
    if repair is None:
        return None
    changes = tuple(
        replace(c, **{k: _data(getattr(c, k), paths) for k in ("method", "where", "before", "after")})
        for c in repair.changes
    )
    return replace(
        repair,
        changes=changes,
        fixes=tuple(_data(f, paths) for f in repair.fixes),
        waiting=tuple(_data(w, paths) for w in repair.waiting),
    )


def _notebook(notebook: dict, paths) -> dict:
    """A notebook's report with at most PROBLEMS problems of at most two lines each, then how many more."""
    data = _data(notebook, paths)
    problems = data.get("problems")
    if isinstance(problems, list):
        shown = [capped(str(p), 2) for p in problems[:PROBLEMS]]
        more = len(problems) - len(shown)
        data["problems"] = shown + ([f"...and {more} more cells that did not run cleanly."] if more > 0 else [])
    return data


def cleaned(result: Result, extra: tuple[tuple[str, str], ...] = ()) -> Result:
    """The result with every text in it fit to leave the machine (the module's docstring says how); `extra`: more
    folders no text may show, each with what stands in for it (a batch's private grading folder)."""
    paths = sorted([*machine_paths(), *(p for p in extra if p[0] not in ("", "/"))], key=lambda p: -len(p[0]))
    error = result.error and SubmissionError(result.error.kind, said(result.error.message, paths))
    return replace(
        result,
        error=error,
        checks=tuple(_check(c, paths) for c in result.checks),
        notebook=_notebook(result.notebook, paths) if result.notebook is not None else None,
        notes=tuple(said(n, paths, NOTE_LINES) for n in result.notes),
    )
