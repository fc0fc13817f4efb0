"""Run a notebook's code cells as Restart & Run All would, with IPython's own shell (the
shell a Jupyter kernel runs cells with, and the way the kernel calls it: run_cell, history
stored), in the unit's process. tests/test_notebook_kernel.py holds it to a real kernel run
through nbclient, cell by cell.

The cells run in order in one namespace, registered as the module micrograd_mine. A
cell that raises is recorded and the next one runs; a cell past its time limit is
interrupted with KeyboardInterrupt, as a Jupyter interrupt does; input() fails at once;
exit() shuts the kernel down after its cell, so no later cell runs;
magics and shell escapes work as in IPython. A cell that kills the process is told
apart by the grader, which hears "cell N starts" and then nothing.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import json
import signal
import sys
import types

try:
    import standins
    from names import MODULE  # inside the sandbox: modules beside this one
except ImportError:  # on the host (the tests run notebooks' engines through it)
    from grader.sandbox.inside import standins
    from grader.sandbox.inside.names import MODULE

SHELL = None
PRISTINE = None
"""How the template's shell transforms cells (its transformers), to tell when a student's code changed that."""
TRANSFORMED: dict[str, str] = {}
"""Of this process's cells: each multi-line cell's text as the pristine shell transformed it (see run()); a record
for the tests of this module: what later runs take is derive()'s, made before any student code runs."""
ENGINE_LINE = 1_000_000
"""The line every statement of an engine run after the student's code says it is on (see run_engine)."""
MAGICS: list[list] = []
"""The magics of a package standing in (`%matplotlib inline`), which did nothing: [package, cell index, the magic]."""
CELL = -1
"""The index of the cell running."""


def warm() -> None:
    """Create the shell in the template (no student code), so each unit starts with it ready."""
    global SHELL, PRISTINE
    import IPython.core.logger  # noqa: F401 - what the first cell run would import, in every unit

    SHELL = _shell()
    PRISTINE = _transformers(SHELL)


def _shell():
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "nocolor"
    config.InteractiveShell.autocall = 0
    shell = InteractiveShell.instance(config=config, user_module=types.ModuleType(MODULE))
    # exit() and quit(): the kernel shuts down after the cell (a kernel's shell has ask_exit; this base one lacks it)
    shell.ask_exit = lambda: setattr(shell, "exit_now", True)  # type: ignore[attr-defined]
    shell.enable_gui = lambda gui=None: None  # type: ignore[method-assign] # no event loop, as inline hooks none
    _time_once()
    return shell


def _time_once() -> None:
    """%timeit and %%timeit run their statement once: every figure they ask their timer for is that one run's
    time, scaled to the loops asked for. A kernel repeats the statement until 0.2 s have passed, 7 times over:
    seconds of a grading spent on a figure nobody grades, and a number of runs (each one's side effects, such
    as gradients accumulated by `%timeit loss.backward()`) that depends on the machine's speed."""
    from IPython.core.magics import execution

    class TimedOnce(execution.Timer):
        once = None

        def timeit(self, number=1):
            if self.once is None:
                self.once = super().timeit(1)
            return self.once * number

        def repeat(self, repeat=7, number=1):
            return [self.timeit(number)] * max(1, repeat)

    execution.Timer = TimedOnce  # type: ignore[misc]  # IPython's Timer replaced on purpose, for %timeit


class CellTimeout(KeyboardInterrupt):
    """The cell ran past its time limit (a KeyboardInterrupt, as Jupyter's interrupt is)."""


def _no_input(prompt=""):
    """input() as a Jupyter kernel that takes no input answers it."""
    from IPython.core.error import StdinNotImplementedError

    raise StdinNotImplementedError("input() was called, but no one can answer it when the notebook is graded")


def _transformers(shell) -> tuple:
    manager = shell.input_transformer_manager
    return (
        type(shell).transform_cell,
        id(manager),
        tuple(map(id, manager.cleanup_transforms)),
        tuple(map(id, manager.line_transforms)),
        tuple(map(id, manager.token_transformers)),
        tuple(map(id, shell.input_transformers_post)),
    )


def _use_transformed(shell, given: dict[str, str]) -> None:
    """Each multi-line cell's transformation (the text IPython makes of `%magic`, `!cmd`...) taken from given
    (what the run on the student's own engine derived before running any cell: derive()), and recorded in
    TRANSFORMED, as long as the shell transforms as the template's does; a one-line cell, or any cell once the
    student's code has changed the shell's transformers, is transformed here as IPython does. A text transformed
    is the same text whichever process transforms it: this saves each run of the tests its share of IPython's
    tokenizing.
    And a cell whose text says neither `await` nor `async` runs without the check for top-level await, which
    could find none."""
    transform, should_run_async = shell.transform_cell, shell.should_run_async

    def transform_cell(raw_cell):
        pristine = _transformers(shell) == PRISTINE and len(raw_cell.splitlines()) > 1
        if pristine and raw_cell in given:
            return given[raw_cell]
        cell = transform(raw_cell)
        if pristine:
            TRANSFORMED[raw_cell] = cell
        return cell

    def run_async(raw_cell, *, transformed_cell=None, preprocessing_exc_tuple=None):
        if isinstance(transformed_cell, str) and "await" not in transformed_cell and "async" not in transformed_cell:
            return False
        return should_run_async(
            raw_cell, transformed_cell=transformed_cell, preprocessing_exc_tuple=preprocessing_exc_tuple
        )

    shell.transform_cell, shell.should_run_async = transform_cell, run_async


def run(
    cells: list[list],
    skip: list[int],
    cell_timeout: float,
    emit,
    transformed: list[list] | None = None,
    lean: bool = False,
) -> tuple[types.ModuleType, list[dict]]:
    """Run cells ([index, source] pairs) except those in skip; the module and each cell's status. transformed:
    [index, text] pairs, cells as IPython transforms them (derive(), see _use_transformed).
    lean: run each cell whose transformation is given as plain Python (see _run_lean)."""
    global CELL
    shell = SHELL or _shell()
    given = {}
    if PRISTINE is not None:
        sources = dict(cells)
        given = {sources[i]: text for i, text in transformed or () if i in sources}
        _use_transformed(shell, given)
    module = shell.user_module
    sys.modules[MODULE] = module
    builtins.input = _no_input
    _quiet_magics(shell)
    statuses = []

    def interrupt(signum, frame):
        raise CellTimeout(f"the cell ran past {cell_timeout:g} s and was interrupted")

    signal.signal(signal.SIGALRM, interrupt)
    for count, (index, source) in enumerate(cells, start=1):
        if index in skip:
            statuses.append({"index": index, "status": "skipped"})
            continue
        emit(cell=index, phase="start")
        CELL = index
        signal.setitimer(signal.ITIMER_REAL, cell_timeout)
        try:
            if lean and source in given and _transformers(shell) == PRISTINE and not shell.ast_transformers:
                error = _run_lean(shell, given[source], count)
            else:
                error = _run_cell(shell, source, count)
        except CellTimeout as exc:  # raised between the cell's steps rather than in its code
            error = exc
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if error is None:
            entry = {"index": index, "status": "ok"}
        else:
            status = "timeout" if isinstance(error, CellTimeout) else "error"
            entry = {"index": index, "status": status, "ename": type(error).__name__, "evalue": _said(error)[:500]}
        if shell.exit_now:  # exit() or quit(): a kernel shuts down once the cell is done, so no later cell runs
            entry["exit"] = True
        statuses.append(entry)
        emit(cell=index, **{k: v for k, v in entry.items() if k != "index"})
        if shell.exit_now:
            statuses += [{"index": i, "status": "not_run"} for i, _ in cells[count:]]
            break
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    return module, statuses


def transformed(cells: list[list]) -> list[list]:
    """[index, text] for each of cells this process transformed as the template's shell would."""
    return [[i, TRANSFORMED[source]] for i, source in cells if source in TRANSFORMED]


DERIVED_MAX = 512 * 1024
"""Bytes of transformed text, as JSON, that derive() hands on at most (a frame holds 1 MB); past them, cells
transform in each run."""


def derive(cells: list[list], skip: list[int]) -> list[list]:
    """[index, text] for the cells not in skip that IPython's shell, as the template made it, turns into more than
    one line: to be called in a unit before it runs any of the student's code, so that what later runs take
    (instead of tokenizing each cell again) is the submission's own cells as IPython reads them, whatever the
    student's code does afterwards. Only a text of several lines is a function of the cell alone: IPython
    prefilters a one-line text with the namespace (autocall, automagic), so such a cell transforms in each run."""
    if PRISTINE is None or SHELL is None:  # warm() sets both, or neither
        return []
    shell, found, size = SHELL, [], 0
    transform = type(shell).transform_cell
    for index, source in cells:
        if index in skip or len(source.splitlines()) < 2:
            continue
        try:
            text = transform(shell, source)
        except Exception:
            continue
        size += len(json.dumps(text))
        if size > DERIVED_MAX:
            break
        if len(text.splitlines()) > 1:
            found.append([index, text])
    return found


def _run_cell(shell, source: str, count: int) -> BaseException | None:
    """Run one cell as a Jupyter kernel does (shell.run_cell, its history stored: `_`, `Out[n]` and `_in`
    as the kernel has them, with n the cell's place among the code cells, as after Restart & Run All, even
    when cells before it are left out); what it raised."""
    shell.execution_count = count
    result = shell.run_cell(source, store_history=True)
    return result.error_before_exec or result.error_in_exec


def _run_lean(shell, text: str, count: int) -> BaseException | None:
    """Run a cell's transformed text as IPython's run_code does (the shell's compiler and its `from __future__`
    flags, its builtins such as get_ipython and display, the user's namespace, the cell's name in tracebacks
    and linecache), without the rest of run_cell: no display of the last expression (`_`, `Out`), no history,
    no pre/post-run events. Only the runs of the tests on the cells they need are lean, and those stand only
    once the lean run on the student's own engine gives every test and probe what the run on the whole
    notebook, through run_cell, gives (grader/notebook_suite.py): about half of what a cell costs to run."""
    try:
        code = shell.compile(text, shell.compile.cache(text, count), "exec")
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as exc:
        return exc
    with shell.builtin_trap:
        try:
            exec(code, shell.user_global_ns, shell.user_ns)
        except BaseException as exc:
            return exc
    return None


def run_engine(module: types.ModuleType, source: str) -> None:
    """Run an engine's code in the student's module (a notebook's namespace, or a .py file's module), after
    the student's own code, with the student's `from __future__` imports.

    The engine is compiled from its syntax tree with every line at ENGINE_LINE and every column at 0, under
    the file name the student's own Value has, and its text is not kept anywhere (no file, no line cache):
    what a test can find of it is its bytecode, never its source. inspect.getsource() fails on each of its
    functions alike (their line is past the end of the student's file), whatever the engine."""
    tree = ast.parse(source)
    del source
    for node in ast.walk(tree):
        if "lineno" in node._attributes:  # a node with a place: mypy cannot follow _attributes, hence the ignores
            node.lineno = node.end_lineno = ENGINE_LINE  # type: ignore[attr-defined]
            node.col_offset = node.end_col_offset = 0  # type: ignore[attr-defined]
    code = compile(tree, _file_of(module), "exec", flags=_future_flags(module), dont_inherit=True)
    del tree
    exec(code, vars(module))


def _file_of(module: types.ModuleType) -> str:
    """The file name the student's own Value's code carries (their file, or the notebook cell defining it)."""
    value = vars(module).get("Value")
    for member in list(vars(value).values()) if isinstance(value, type) else []:
        code = getattr(member, "__code__", None)
        if isinstance(code, types.CodeType):
            return code.co_filename
    return getattr(module, "__file__", None) or "<string>"


def _future_flags(module: types.ModuleType) -> int:
    """The compiler flags of the `from __future__` imports the student's code made."""
    found = 0
    for name in __future__.all_feature_names:
        feature: __future__._Feature = getattr(__future__, name)
        if vars(module).get(name) is feature:
            found |= feature.compiler_flag
    return found


def _quiet_magics(shell) -> None:
    """The magics of a package standing in do nothing (recorded in MAGICS), rather than fail their cell as IPython
    would trying to import it: `%matplotlib inline`, `%pylab`, `%config InlineBackend...` of matplotlib, and
    `%load_ext` of a package that stands in. With the package installed, or no stand-ins, they run as they are."""
    run_line_magic = shell.run_line_magic

    def run(magic_name, line, _stack_depth=1):
        package = _package_of(magic_name, line if isinstance(line, str) else "")
        if package and standins.stands_in(package):
            MAGICS.append([package, CELL, f"%{magic_name} {line}".strip()[:120]])
            return None
        return run_line_magic(magic_name, line, _stack_depth + 1)  # one frame further from the student's code

    shell.run_line_magic = run


def _package_of(magic_name: str, line: str) -> str | None:
    """The package a line magic sets up: matplotlib's, or an extension's."""
    if magic_name in ("matplotlib", "pylab") or (magic_name == "config" and line.strip().startswith("InlineBackend")):
        return "matplotlib"
    if magic_name == "load_ext" and line.split():
        from IPython.core import extensions

        module = line.split()[0]
        root = module.split(".")[0]
        return root if root.isidentifier() and module not in getattr(extensions, "BUILTINS_EXTS", ()) else None
    return None


def _said(exc: BaseException) -> str:
    """What a cell raised, as the student reads it: a cell that did not compile says where, in the cell, and what."""
    if isinstance(exc, SyntaxError) and str(exc.filename or "").startswith("<ipython-input-") and exc.lineno:
        text = str(exc.text or "").strip()[:200]
        return f"{exc.msg} (line {exc.lineno} of the cell{': ' + text if text else ''})"
    return _text(exc)


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return type(exc).__name__
