"""What a batch writes besides each student's result: Gradescope's format, the gradebook,
the class data and the class summary page."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from grader.batch.notes import Grouped, as_data
from grader.fileio import atomic_write  # every batch output: whole, 0600, never through a link
from grader.render import html
from grader.spec import Assignment
from grader.text import printable_data

SUSPICIOUS_IMPORT = re.compile(r"^\s*(?:from|import)\s+(reference|micrograd|torch)\b", re.MULTILINE)


def gradescope(result: dict[str, Any]) -> dict[str, Any]:
    """A result in Gradescope's results.json format (hidden checks stay hidden)."""
    tests = []
    for c in result["checks"]:
        tests.append({
            "name": f"{c['id']}: {c['title']}",
            "score": c["score"],
            "max_score": c["max_score"],
            "status": "passed" if c["status"] == "passed" else "failed",
            "output": ("Not judged (skipped): " if c["status"] == "skipped" else "") + c["feedback"]
            + (f"\n\nSmallest case:\n{c['counterexample']['code']}" if c["counterexample"] else ""),
            "visibility": "hidden" if c["visibility"] == "hidden" else "visible",
        })
    data = {"score": result["score"], "execution_time": result["duration_s"], "tests": tests}
    if result.get("notes"):
        data["output"] = "\n".join(result["notes"])
    if result["status"] == "error":
        data["output"] = f"Could not grade this submission ({result['error']['kind']}): {result['error']['message']}"
    return printable_data(data)  # a student's control characters are shown, never obeyed


def flags_for(source: str) -> list[str]:
    """Imports worth an instructor's look: the reference engine, micrograd itself, torch."""
    return sorted({f"imports {m}" for m in SUSPICIOUS_IMPORT.findall(source)})


def gradebook(rows: list[dict[str, Any]], check_ids: list[str]) -> str:
    """grades.csv: one row per student, one column per check, readable by a spreadsheet or an LMS import."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["student", "score", "max_score", "status", "late", *check_ids])
    for row in rows:
        result = row["result"]
        scores = {c["id"]: c["score"] for c in result["checks"]}
        writer.writerow([row["student"], result["score"], result["max_score"], result["status"],
                         "yes" if row["late"] else "", *(scores.get(cid, "") for cid in check_ids)])
    return buffer.getvalue()


def class_data(rows: list[dict[str, Any]], assignment: Assignment, notes: tuple[Grouped, ...]) -> dict[str, Any]:
    """Everything the class summary shows, as plain data (summary.json). `notes` come one per student and
    kind, the important kinds first: `notes` holds their lines, `note_details` the same with their kind,
    whether it is important, the student, the count and a few example names."""
    check_ids = [c.id for c in assignment.checks]
    graded = [r for r in rows if r["result"]["status"] == "graded"]
    checks = []
    for cid in check_ids:
        statuses = [next((c["status"] for c in r["result"]["checks"] if c["id"] == cid), None) for r in graded]
        passed = sum(s == "passed" for s in statuses)
        checks.append({"id": cid, "passed": passed, "total": len(graded),
                       "rate": round(passed / len(graded), 4) if graded else None})
    checks.sort(key=lambda c: (c["rate"] if c["rate"] is not None else 1.0, c["id"]))
    by_hash: dict[str, list[str]] = {}
    for r in rows:
        if r["result"].get("sha256"):
            by_hash.setdefault(r["result"]["sha256"], []).append(r["student"])
    identical = [students for students in by_hash.values() if len(students) > 1]
    max_score = assignment.max_score
    bins = Counter(min(int(10 * r["result"]["score"] / max_score), 9) if max_score else 0 for r in rows)
    return {
        "assignment": assignment.id,
        "title": assignment.title,
        "max_score": max_score,
        "students": [{"student": r["student"], "score": r["result"]["score"], "status": r["result"]["status"],
                      "error": r["result"]["error"], "late": r["late"], "folder": r["folder"],
                      "flags": r.get("flags", [])} for r in rows],
        "histogram": [bins.get(i, 0) for i in range(10)],
        "checks": checks,
        "errors": [{"student": r["student"], "kind": r["result"]["error"]["kind"],
                    "message": r["result"]["error"]["message"].splitlines()[0]} for r in rows
                   if r["result"]["status"] == "error"],
        "identical": identical,
        "notes": [n.text for n in notes],
        "note_details": as_data(notes),
    }


def write_class_outputs(out: Path, assignment: Assignment, rows: list[dict[str, Any]],
                        notes: tuple[Grouped, ...]) -> None:
    data = class_data(rows, assignment, notes)
    atomic_write(out / "grades.csv", gradebook(rows, [c.id for c in assignment.checks]))
    atomic_write(out / "summary.json", json.dumps(data, indent=2))
    atomic_write(out / "index.html", html.class_report(data))
