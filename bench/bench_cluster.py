"""Benchmark: `grader batch --scheduler` on a Dask LocalCluster with 1 and 2 workers.

The class is bench/classgen.py's .py class: by default 1,000 students, each a folder with a
generated micrograd_mine.py (a zoo engine with a Neuron, Layer, MLP and numerical_grad; a
quarter of them with one bug) and the good test suite as test_micrograd.py, so every student
is graded on the whole rubric: engine checks, training, and their tests on every engine of
the sabotage detector. For each cluster size, the batch runs once (`--force`), from a
subprocess, as an instructor would run it; the scheduler lives in this process.

Printed per cluster size: wall time, submissions per minute (in all and per worker), the
peak memory of one worker (the Dask worker process and everything under it: its grading
processes and their sandboxes; sampled PSS, twice a second), the scheduler's CPU time (this
process's, which hosts it, less the memory sampler's own) per task, and the instructor
process's CPU time. A JSON copy of the figures goes to --json for docs/scaling.md.

    python bench/bench_cluster.py [--count 1000] [--workers 1,2] [--assignment ID] [--json FILE]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import classgen

ROOT = Path(__file__).resolve().parent.parent


def tree_pss_mb(pid: int) -> float:
    """The PSS of a process and all its descendants, in MB (RSS where PSS cannot be read)."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for proc in procs:
        try:
            info = proc.memory_full_info()
            total += getattr(info, "pss", info.rss)
        except psutil.Error:
            continue
    return total / 2**20


def run(count: int, workers: int, folder: Path, assignment: str) -> dict:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        pids = list(client.run(os.getpid).values())
        peaks = dict.fromkeys(pids, 0.0)
        stop = threading.Event()
        sampling = [0.0]

        def sample():
            while not stop.wait(0.5):
                for pid in pids:
                    peaks[pid] = max(peaks[pid], tree_pss_mb(pid))
            sampling[0] = time.thread_time()  # the sampler's own CPU, not the scheduler's

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out = Path(tempfile.mkdtemp(prefix=f"bench-cluster-{workers}-"))
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        started = time.monotonic()
        batch = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader.cli",
                "batch",
                str(folder),
                "--out",
                str(out),
                "--assignment",
                assignment,
                "--scheduler",
                cluster.scheduler_address,
                "--force",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        instructor = psutil.Process(batch.pid)
        instructor_cpu = 0.0
        while batch.poll() is None:
            try:
                t = instructor.cpu_times()
                instructor_cpu = t.user + t.system
            except psutil.Error:
                pass
            time.sleep(0.5)
        wall = time.monotonic() - started
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        stop.set()
        sampler.join()
        stdout, stderr = batch.communicate()
        if batch.returncode != 0:
            raise SystemExit(f"the batch failed ({batch.returncode}):\n{stderr[-3000:]}")
        with open(out / "grades.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        scheduler_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime) - sampling[0]
        return {
            "workers": workers,
            "submissions": len(rows),
            "wall_s": round(wall, 1),
            "per_minute": round(60 * len(rows) / wall, 1),
            "per_worker_per_minute": round(60 * len(rows) / wall / workers, 1),
            "peak_worker_mb": round(max(peaks.values()), 0),
            "scheduler_cpu_s": round(scheduler_cpu, 1),
            "scheduler_ms_per_task": round(1000 * scheduler_cpu / len(rows), 2),
            "instructor_cpu_s": round(instructor_cpu, 1),
            "errors": sum(r["status"] == "error" for r in rows),
            "full_marks": sum(float(r["score"]) == float(r["max_score"]) for r in rows),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--workers", default="1,2", help="cluster sizes to try, comma-separated")
    parser.add_argument("--assignment", default="micrograd")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-cluster-class-"))
    classgen.write_py_class(folder, args.count, args.count // 4)
    print(
        f"{args.count} generated .py submissions with tests ({args.count // 4} with one bug) in {folder}; "
        f"{os.cpu_count()} cores"
    )
    results = []
    header = (
        f"{'workers':>7} {'wall s':>8} {'subm/min':>9} {'per worker':>10} {'worker peak MB':>14} "
        f"{'sched CPU s':>11} {'sched ms/task':>13} {'instr CPU s':>11}"
    )
    print(header)
    for n in [int(w) for w in args.workers.split(",")]:
        r = run(args.count, n, folder, args.assignment)
        results.append(r)
        print(
            f"{r['workers']:>7} {r['wall_s']:>8} {r['per_minute']:>9} {r['per_worker_per_minute']:>10} "
            f"{r['peak_worker_mb']:>14.0f} {r['scheduler_cpu_s']:>11} {r['scheduler_ms_per_task']:>13} "
            f"{r['instructor_cpu_s']:>11}",
            flush=True,
        )
    if len(results) > 1:
        print(
            f"speed-up from {results[0]['workers']} to {results[-1]['workers']} workers: "
            f"{results[0]['wall_s'] / results[-1]['wall_s']:.2f}x"
        )
    if args.json:
        args.json.write_text(json.dumps({"count": args.count, "cores": os.cpu_count(), "runs": results}, indent=1))


if __name__ == "__main__":
    main()
