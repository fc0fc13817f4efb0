"""Points and secrets around the student's own tests and the training replay, against hostile
submissions (tests/adversarial/), graded through the real command line in both modes (with
bubblewrap and without, the `run` fixture of test_adversarial.py):

- tests that assert nothing earn nothing, since they catch no sabotaged engine;
- a model that picks saturating weights cannot pass training with a backward() that does nothing;
- a suite that fails on other engines with pieces of them in its messages, exception names, test
  ids, skip reasons or collection errors gets no byte of any engine into the feedback.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import zlib
from dataclasses import replace

from conftest import BASE_ENGINE, TEST_SECRET
from test_adversarial import HOSTILE, check, scores, statuses

from grader.checks.suite_text import LISTED

# -- item 3: training from the grader's start ---------------------------------------------------------------


def test_saturated_weights_and_no_backward_do_not_pass_training(run, tmp_path):
    """Does a Neuron whose weights start at +-100 (loss 0 from the first step, every gradient 0) with a
    backward() that does nothing fail training, because the grader sets the starting weights itself,
    and is the student told that backward() left every gradient at 0?"""
    result, html, done, _ = check(run, tmp_path, HOSTILE / "saturated_neuron.py")
    training = next(c for c in result["checks"] if c["id"] == "training")
    assert statuses(result)["neuron"] == "passed"  # its forward pass is right: only training can tell
    assert training["status"] == "failed" and training["score"] == 0, training["feedback"]
    assert "grad is still 0" in training["feedback"], training["feedback"]
    assert "p.data = v" in training["counterexample"]["code"]  # the pasted loop starts where the grader did


def test_a_training_set_that_starts_converged_is_not_judged(grade_source, micrograd):
    """Is a correct engine's training skipped, not passed, when the assignment's threshold is above the
    loss the grader's start already has (nothing there would tell a working backward() from none)?"""
    lax = replace(micrograd, training=replace(micrograd.training, threshold=100.0))
    result = grade_source(BASE_ENGINE.read_text(), lax)
    training = next(c for c in result.checks if c.id == "training")
    assert training.status == "skipped" and training.score == 0, training.feedback
    assert "cannot tell a working backward()" in training.feedback


# -- item 2: tests that assert nothing earn nothing ---------------------------------------------------------


def test_tests_that_assert_nothing_earn_nothing(run, tmp_path):
    """Does a stub engine (every operation raises NotImplementedError) with tests that assert nothing earn
    0 for its tests, since they catch none of the sabotaged engines, and is the student told why?"""
    result, html, done, _ = check(run, tmp_path, HOSTILE / "stub_engine.py", HOSTILE / "asserts_nothing_tests.py")
    found = statuses(result)
    assert found["student_tests"] == "passed" and found["wheat"] == "passed"  # they do pass, everywhere
    assert scores(result)["student_tests"] == scores(result)["wheat"] == 0, scores(result)
    assert result["score"] == 0, scores(result)
    for check_id in ("student_tests", "wheat"):
        feedback = next(c["feedback"] for c in result["checks"] if c["id"] == check_id)
        assert "catch 0 of" in feedback and "earn 0 of 4 points" in feedback, feedback
        assert "must check values and gradients" in feedback


def test_tests_earn_at_most_the_share_of_sabotages_they_catch(tmp_path, micrograd):
    """Does a forward-only suite that catches few sabotaged engines earn that share of student_tests and
    wheat, while the sabotage check's own pay is unchanged?"""
    import shutil

    from conftest import HERE

    from grader.grading import grade

    shutil.copy(BASE_ENGINE, tmp_path / "micrograd_mine.py")
    shutil.copy(HERE / "fixtures" / "suites" / "weak.py", tmp_path / "test_micrograd.py")
    checks = {c.id: c for c in grade(tmp_path / "micrograd_mine.py", micrograd).checks}
    share = len(checks["sabotage"].artifacts["caught"]) / len(checks["sabotage"].artifacts["bugs"])
    assert 0 < share < 1
    assert checks["sabotage"].score == round(checks["sabotage"].max_score * share, 4)
    for check_id in ("student_tests", "wheat"):
        assert checks[check_id].status == "passed"
        assert checks[check_id].score == round(checks[check_id].max_score * share, 4), checks[check_id].feedback


# -- item 4: nothing an engine's run writes reaches the feedback ----------------------------------------------

B64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}=*")
HEX_RUN = re.compile(r"[0-9a-fA-F]{16,}")
B32_RUN = re.compile(r"[A-Z2-7]{16,}=*")
WINDOW = 16
MAGIC = "EXF" + "IL:"  # what exfil_tests.py puts before every piece of an engine it sends


def _decodings(text: str):
    """Every byte string a base64, base32 or hex looking run of text decodes to (from every alignment),
    and what each inflates to when it is (or starts) a zlib stream."""
    found = []
    for run_ in B64_RUN.findall(text):
        for skip in range(4):
            body = run_[skip:].rstrip("=")
            body = body[: len(body) - len(body) % 4]
            with contextlib.suppress(ValueError):
                found.append(base64.b64decode(body))
    for run_ in B32_RUN.findall(text):
        for skip in range(8):
            body = run_[skip:].rstrip("=")
            with contextlib.suppress(ValueError):
                found.append(base64.b32decode(body[: len(body) - len(body) % 8]))
    for run_ in HEX_RUN.findall(text):
        for skip in range(2):
            body = run_[skip:]
            found.append(bytes.fromhex(body[: len(body) - len(body) % 2]))
    for data in list(found):
        with contextlib.suppress(zlib.error):
            found.append(zlib.decompressobj().decompress(data))
    return found


def _engine_windows(source: str, tests: str) -> tuple[set[str], list[str]]:
    """Every 16-character window of this grading's engines (wheats and mutants) that is not in the
    student's own file and holds code (8 characters or more that are not blanks: a window of indentation
    names no engine, and the reports indent their own text), and the engines' blocks."""
    from grader import catalog, secret
    from grader.sabotage import own_block, plan

    key = TEST_SECRET.encode()
    seed = secret.seed(key, b"plan", source.encode(), tests.encode())
    blocks = [
        r.block
        for r in plan(catalog.load("micrograd").sabotages, seed, secret.seed(key, b"pool"), own_block(source))
        if r.kind != "own" and r.kind != "decoy"
    ]
    windows = {b[i : i + WINDOW] for b in blocks for i in range(len(b) - WINDOW + 1)}
    return {w for w in windows if w not in source and len("".join(w.split())) >= 8}, blocks


def _leaked(text: str, windows: set[str]) -> list[str]:
    """Pieces of an engine that text carries, in plain text or in any decodable run: a window of an
    engine's code, or the marker the exfiltrating suite puts before every piece it sends."""
    hits = []
    for data in _decodings(text) + [text.encode()]:
        plain = data.decode("latin-1")
        hits += [plain[i : i + WINDOW] for i in range(len(plain) - WINDOW + 1) if plain[i : i + WINDOW] in windows]
        hits += [plain[max(0, i - 8) : i + 40] for i in range(len(plain)) if plain.startswith(MAGIC, i)]
    return hits


def _exfil(run, tmp_path, broken: bool):
    engine = BASE_ENGINE.read_text() + "\n\n" + (HOSTILE / "exfil_engine_tail.py").read_text()
    tests = (HOSTILE / "exfil_tests.py").read_text()
    if broken:
        engine = engine.replace("LOAD_ERRORS = False", "LOAD_ERRORS = True")
        tests = tests.replace("BREAK = False", "BREAK = True")
    result, html, done, _ = check(run, tmp_path, engine, tests)
    windows, blocks = _engine_windows(engine, tests)
    sample = next(b[i : i + 90] for b in blocks for i in range(0, len(b), 90) if b[i : i + WINDOW] in windows)
    assert _leaked(base64.b64encode(zlib.compress(sample.encode())).decode(), windows)  # the detector works
    assert _leaked("X" + (MAGIC + "\x00\x01").encode().hex(), set())
    shown = {"result.json": json.dumps(result), "report.html": html, "stdout": done.stdout, "stderr": done.stderr}
    for where, text in shown.items():
        assert not _leaked(text, windows), (where, _leaked(text, windows)[:5])
    return result


def test_an_exfiltrating_suite_gets_no_engine_out(run, tmp_path):
    """Does a suite that fails on every engine but the student's own, with pieces of the engine as
    base64 of zlib, hex, exception class names, skip reasons, pytest.fail messages and test ids, get no
    piece of any engine into the JSON, the HTML or the terminal, while the wheat feedback still names
    (some of) the tests that failed, and says how many more?"""
    result = _exfil(run, tmp_path, broken=False)
    wheat = next(c for c in result["checks"] if c["id"] == "wheat")
    assert wheat["status"] == "failed" and wheat["artifacts"]["invalid_count"] > LISTED
    named = [line for line in wheat["feedback"].splitlines() if "rejects a correct engine" in line]
    assert len(named) == LISTED and all(line.split()[0].startswith("test_") for line in named), wheat["feedback"]
    assert "more tests" in wheat["feedback"]
    assert len(wheat["artifacts"]["invalid"]) <= LISTED


def test_collection_and_load_errors_on_other_engines_get_no_engine_out(run, tmp_path):
    """Does the same suite, failing to collect (or its module to import) on every engine but the
    student's own with pieces of the engine in the error, get none of them out, the wheat check saying
    in its own words what went wrong, and the tests earn nothing, since nothing could be judged (student_tests
    passed on its own evidence, its own run, with 0 points; not a skip)?"""
    result = _exfil(run, tmp_path, broken=True)
    checks = {c["id"]: c for c in result["checks"]}
    assert checks["wheat"]["status"] == "error"
    assert "could not be collected" in checks["wheat"]["feedback"] or "did not complete" in checks["wheat"]["feedback"]
    # its property is "your tests pass on your engine", probed by its own run: passed, paying nothing
    student = checks["student_tests"]
    assert student["status"] == "passed" and student["score"] == 0, student
    assert "blocked_by" not in student["artifacts"], student
    assert "could not be judged" in checks["student_tests"]["feedback"], checks["student_tests"]["feedback"]
