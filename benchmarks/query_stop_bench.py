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


PANEL = """
import resource, sys, threading, time
from explorer.api import open_document
from explorer.schedule.query import Interrupted, QueryError
from explorer.schedule.query_child import ForkedQuery
document = open_document(sys.argv[1])
query = ForkedQuery([("f", document)], sys.argv[2], 1000)
stopped = []
if sys.argv[3] == "stop":
    threading.Timer(3.0, lambda: (stopped.append(time.perf_counter()), query.stop())).start()
try:
    query.answer()
except (Interrupted, QueryError):
    pass
ended = time.perf_counter()
own = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]
print(ended - stopped[0] if stopped else 0.0, own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _panel(sql: str, stop: bool) -> tuple[float, int, int, bool]:
    """The Query panel's way (a forked child): seconds from stop() to the answer, the app's own peak and its query
    child's (bytes), and whether scratch was left."""
    scratch = Path(tempfile.mkdtemp(prefix="query-stop-bench-"))
    command = [sys.executable, "-c", PANEL, str(SAMPLE), sql, "stop" if stop else "run"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "TMPDIR": str(scratch)})
    seconds, own, child = done.stdout.split()
    left = any(scratch.iterdir())
    shutil.rmtree(scratch, ignore_errors=True)
    return float(seconds), int(own) * 1024, int(child) * 1024, left


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
    lines += ["", "The TUI's Query panel runs each query in a forked child: from `stop()` (Escape, a new run, `q`) "
              "to the child gone and its scratch removed, and the app's own peak against its child's:", "",
              "| panel query | stop, worst | scratch left | app's peak | child's peak | met |",
              "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for what, sql in STOPPED.items():
        runs = [_panel(sql, stop=True) for _ in range(RUNS)]
        worst = max(run[0] for run in runs)
        left = any(run[3] for run in runs)
        own, child = max(run[1] for run in runs) / 2**20, max(run[2] for run in runs) / 2**20
        lines.append(f"| {what} | {worst:.2f} s | {'yes' if left else 'no'} | {own:,.0f} MiB | {child:,.0f} MiB | "
                     f"{'yes' if worst <= 1 and not left else 'no'} |")  # fmt: skip
        print(lines[-1], flush=True)
    for what, args in list(BOUNDED.items())[:1]:
        _, own, child, left = _panel(args[0], stop=False)
        lines.append(f"| {what} (refused in words) | – | {'yes' if left else 'no'} | {own / 2**20:,.0f} MiB | "
                     f"{child / 2**20:,.0f} MiB | {'yes' if own < 2**30 and not left else 'no'} |")
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
              "3.9 GiB (in the panel too, inside the app's own process); JSON gathered every row (2.6 GiB, first byte "
              "after 139 s)."]  # fmt: skip
    return [*lines, ""]


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from run import splice

    splice(ROOT / "BENCHMARKS.md", section(ROOT / "benchmarks" / "out"))
