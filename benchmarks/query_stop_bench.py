"""A query stops when asked and stays in its bounds (issue #72), a part of `make bench`: the time from SIGINT to the
process's exit during an aggregate and a sort (target: within 1 s, exit 130, no scratch left), and the peak memory
of SQL that grows without bound (a 2 GB string; a million rows as JSON against the same rows as CSV). On the
bundled 2×2 schedule: the query, not the load, is what is measured.
Run alone: `python benchmarks/query_stop_bench.py`."""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SAMPLE = ROOT / "sample_data" / "clean_2x2_stschedule.json"
RUNS = 3
STOPPED = {
    "an aggregate of 10^12 rows": "SELECT count(*) FROM range(1000000000000) -- workloads",
    "a sort of 4·10^8 rows (spilling)": "SELECT * FROM range(400000000) ORDER BY random() -- workloads",
}
BOUNDED = {
    "a 2 GB string (repeat)": ["SELECT repeat('x', 2000000000) AS s -- workloads"],
    "900,000 rows as CSV": ["SELECT range AS n, repeat('x', 300) AS s FROM range(900000) -- workloads", "--format",
                            "csv"],
    "900,000 rows as JSON": ["SELECT range AS n, repeat('x', 300) AS s FROM range(900000) -- workloads", "--format",
                             "json"],
}  # fmt: skip


def _stop_seconds(sql: str) -> tuple[float, int, bool]:
    """Seconds from SIGINT (sent 3 s into the query) to the exit, the exit status, and whether scratch was left."""
    scratch = Path(tempfile.mkdtemp(prefix="query-stop-bench-"))
    process = subprocess.Popen([sys.executable, "-m", "explorer", "query", str(SAMPLE), sql], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "TMPDIR": str(scratch)})  # fmt: skip
    time.sleep(3.0)
    began = time.perf_counter()
    process.send_signal(signal.SIGINT)
    process.wait()
    seconds = time.perf_counter() - began
    left = any(scratch.iterdir())
    shutil.rmtree(scratch, ignore_errors=True)
    return seconds, process.returncode, left


def _peak(args: list[str]) -> tuple[int, int]:
    """(peak resident bytes, exit status) of one `query` run (the kernel's high-water mark of the child)."""
    code = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
            "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
            "done.returncode)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "explorer", "query", str(SAMPLE), *args],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    peak, status = done.stdout.split()
    return int(peak) * 1024, int(status)


def section(out: Path) -> list[str]:
    del out
    lines = ["## A query stops when asked and stays in its bounds (issue #72)", "",
             f"SIGINT 3 s into the query, on the bundled 2×2 schedule; median and worst of {RUNS} runs (target: "
             "within 1 s, exit 130, no scratch folder left).", "",
             "| query | stop, median | stop, worst | exit | scratch left | met |",
             "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for what, sql in STOPPED.items():
        runs = [_stop_seconds(sql) for _ in range(RUNS)]
        worst = max(t for t, _, _ in runs)
        statuses = sorted({status for _, status, _ in runs})
        left = any(left for _, _, left in runs)
        met = "yes" if worst <= 1.0 and statuses == [130] and not left else "no"
        lines.append(f"| {what} | {statistics.median(t for t, _, _ in runs):.2f} s | {worst:.2f} s | "
                     f"{', '.join(map(str, statuses))} | {'yes' if left else 'no'} | {met} |")  # fmt: skip
        print(lines[-1], flush=True)
    lines += ["", "Peak resident memory of one `query` process (its DuckDB is capped at 2 GiB; the 2×2 file's load "
              "is about 100 MiB; the 2 GB string is refused in words, exit 2):", "", "| query | peak | exit |",
              "| --- | --- | --- |"]  # fmt: skip
    for what, args in BOUNDED.items():
        peak, status = _peak(args)
        lines.append(f"| {what} | {peak / 2**20:,.0f} MiB | {status} |")
        print(lines[-1], flush=True)
    lines += ["", "Before (the issue's probe, 480 MB file for JSON): Ctrl+C at 5 s ended the aggregate at 40 s as an "
              "internal error and the sort ran on past 100 s leaving 1.8 GB of spill; the 2 GB string peaked at "
              "3.9 GiB; JSON gathered every row (2.6 GiB, first byte after 139 s)."]  # fmt: skip
    return [*lines, ""]


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from run import splice

    splice(ROOT / "BENCHMARKS.md", section(ROOT / "benchmarks" / "out"))
