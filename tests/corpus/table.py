"""Grade every corpus engine with the grader and tabulate its verdicts against truth.json.

    python tests/corpus/table.py tests/corpus/before.md

Engine checks only (the student's-tests checks are left out). Each cell shows the truth
and the grader's verdict; a false failure (truth pass, grader anything but passed), a
false pass (truth fail, grader passed or skipped) and an ungradable file (the result's
status is error) are marked.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import truth as corpus_truth  # noqa: E402

from grader import catalog  # noqa: E402
from grader.grading import grade  # noqa: E402

SUITE_CHECKS = ("student_tests", "wheat", "sabotage")


def grade_one(path: Path):
    return grade(path, catalog.load("micrograd").without(SUITE_CHECKS))


def grade_all(paths, jobs: int = 4):
    with ProcessPoolExecutor(jobs) as pool:
        return dict(zip((p.stem for p in paths), pool.map(grade_one, paths)))


def classify(truth: str, status: str | None, elsewhere: bool = False) -> str:
    """'ok', 'charged elsewhere', 'false failure', 'false pass' or 'ungradable' for one verdict.

    A skip that names a broken basic whose own check the truth fails is charged elsewhere (the
    rule cannot be seen through a broken backward(); see tests/test_corpus.py)."""
    if status is None:
        return "ungradable"
    if truth == "pass":
        return "ok" if status == "passed" else "charged elsewhere" if elsewhere else "false failure"
    return "ok" if status in ("failed", "error") else "false pass"


def _elsewhere(result, check: str, truth: dict) -> bool:
    import re

    found = next((c for c in result.checks if c.id == check), None)
    named = re.findall(r"\(see (?:the )?(\w+)", found.feedback) if found else []
    return (
        found is not None and found.status == "skipped" and bool(named) and all(truth.get(n) == "fail" for n in named)
    )


def render(results, truth) -> str:
    checks = corpus_truth.CHECKS
    counts = {"false failure": 0, "false pass": 0, "ungradable": 0}
    rows = []
    details = []
    for engine in sorted(truth):
        result = results[engine]
        graded = result.status == "graded"
        statuses = {c.id: c.status for c in result.checks} if graded else {}
        cells = []
        for check in checks:
            kind = classify(
                truth[engine][check],
                statuses.get(check) if graded else None,
                graded and _elsewhere(result, check, truth[engine]),
            )
            if kind not in ("ok", "charged elsewhere"):
                counts[kind] += 1
            want = "P" if truth[engine][check] == "pass" else "F"
            got = {"passed": "P", "failed": "F", "error": "E", "skipped": "S"}.get(statuses.get(check), "-")
            mark = {
                "ok": "",
                "charged elsewhere": "*",
                "false failure": " **FF**",
                "false pass": " **FP**",
                "ungradable": " **UG**",
            }[kind]
            cells.append(f"{want}/{got}{mark}")
            if kind in ("false failure", "false pass") and graded:
                feedback = next(c.feedback for c in result.checks if c.id == check).splitlines()[0][:160]
                details.append(f"- `{engine}` / `{check}` ({kind}): grader {statuses[check]}: {feedback}")
        if not graded:
            details.append(
                f"- `{engine}`: not graded ({result.error.kind}): {result.error.message.splitlines()[0][:160]}"
            )
        rows.append(f"| `{engine}` | " + " | ".join(cells) + " |")
    total = len(truth) * len(checks)
    summary = (
        f"**{counts['false failure']} false failures, {counts['false pass']} false passes, "
        f"{counts['ungradable']} ungradable verdicts ({sum(1 for e in truth if results[e].status != 'graded')} "
        f"files not graded at all), out of {total} verdicts** ({len(truth)} engines x {len(checks)} checks)."
    )
    header = "| engine | " + " | ".join(checks) + " |"
    rule = "|---|" + "---|" * len(checks)
    return "\n".join([summary, "", header, rule, *rows, "", "Mismatches:", "", *details, ""])


def main(argv):
    out = Path(argv[0]) if argv else HERE / "before.md"
    truth = json.loads(corpus_truth.TRUTH_JSON.read_text())
    paths = [corpus_truth.ENGINES / f"{engine}.py" for engine in sorted(truth)]
    results = grade_all(paths)
    table = render(results, truth)
    title = "# The current grader on the corpus, against the ground truth\n\n"
    legend = (
        "Each cell is `truth/grader`: P pass, F fail, E error, S skipped, - not graded. "
        "**FF** false failure (truth pass, grader did not pass), **FP** false pass (truth fail, "
        "grader passed or skipped), **UG** the file could not be graded at all (result status error); "
        "S* a skip charged elsewhere (it names a broken basic whose own check the truth fails). "
        "Engine checks only; `deep_graph` is advisory and not compared. Regenerate with "
        f"`python tests/corpus/table.py tests/corpus/{out.name}`.\n\n"
    )
    out.write_text(title + legend + table)
    print(table.splitlines()[0])


if __name__ == "__main__":
    main(sys.argv[1:])
