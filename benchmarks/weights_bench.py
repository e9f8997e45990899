"""Weights never loaded (issue #56), a part of `make bench`: full-size TorchScript exports with their weights inside
one file (hf_exports.export_full), each opened by `ir-explorer graph FILE --json`, `ir-explorer check FILE` and
the TUI's way to its first graph screen (headless: the load, shape inference, the graph, the first layout), against
a bare `onnx.load` of the same file in the same run. Every figure is one process from its start (the interpreter
and its imports included) to its end, the median of RUNS; peak memory is the most the process and its children
(the shape-inference child) held at once, sampled every few milliseconds from /proc. Targets: each at most 0.35×
the bare load's time, peak memory at most 0.25× the file's bytes. Run alone: `python benchmarks/weights_bench.py`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS = 3
SAMPLE_SECONDS = 0.005

BARE_LOAD = "import sys, onnx; onnx.load(sys.argv[1])"
# the floor: what `graph --json` imports before it reads a byte, and the shape-inference child's interpreter
IMPORTS_ALONE = ("import onnx, explorer.cli, explorer.contracts, explorer.exports.graph_json, "
                 "explorer.formats.onnx.document")
CHILD_ALONE = "import onnx"
FIRST_SCREEN = """
import sys
from pathlib import Path
from explorer.api import open_document
from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import layout_graph
from explorer.graph.visible import visible_graph

document = open_document(Path(sys.argv[1]))
document.run_deep_checks()
model = document.view.drawn_graph()
layout_graph(model, visible_graph(model, initial_expansion(model)))
"""


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and its descendants now (0 once gone)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{current}/task/{current}/children") as handle:
                pending += [int(child) for child in handle.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run(argv: list[str]) -> tuple[float, int]:
    """Seconds from start to exit, and the peak resident bytes of the process tree."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tree_rss(process.pid))
        time.sleep(SAMPLE_SECONDS)
    return time.perf_counter() - started, peak


def measure(argv: list[str]) -> tuple[float, int]:
    found = [run(argv) for _ in range(RUNS)]
    return statistics.median(t for t, _ in found), max(m for _, m in found)


def section(out: Path) -> list[str]:
    from hf_exports import export_full

    python = sys.executable
    lines = [
        "## Weights never loaded (issue #56)",
        "",
        "Full-size TorchScript exports (random weights, the default configs), their weights inside the one file.",
        f"One process from start to end, median of {RUNS} runs; peak: the most the process and its children held",
        "at once (/proc, every 5 ms). `onnx.load`: a bare load of the file. First screen: the TUI's way to its",
        "first graph screen, headless (load, shape inference, graph, first layout).",
        "",
        "| file | bytes | `onnx.load`: time, peak | `graph --json` | `check` | first screen | ratios to the load "
        "(time) | peak ÷ file bytes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    imports, child = measure([python, "-c", IMPORTS_ALONE]), measure([python, "-I", "-c", CHILD_ALONE])
    verdicts = []
    for name, path, what in export_full(out):
        if path is None:
            lines.append(f"| {name} | {what} | | | | | | |")
            continue
        size = path.stat().st_size
        bare = measure([python, "-c", BARE_LOAD, str(path)])
        ours = {
            "graph --json": measure([python, "-m", "explorer", "graph", str(path), "--json"]),
            "check": measure([python, "-m", "explorer", "check", str(path)]),
            "first screen": measure([python, "-c", FIRST_SCREEN, str(path)]),
        }
        cells = " | ".join(f"{t:.2f} s, {m / 2**20:,.0f} MiB" for t, m in ours.values())
        ratios = ", ".join(f"{t / bare[0]:.2f}×" for t, _ in ours.values())
        peaks = ", ".join(f"{m / size:.2f}" for _, m in ours.values())
        lines.append(f"| {name} | {size / 2**20:,.0f} MiB | {bare[0]:.2f} s, {bare[1] / 2**20:,.0f} MiB | {cells} | "
                     f"{ratios} | {peaks} |")  # fmt: skip
        missed = [f"{what} {t / bare[0]:.2f}× the load" for what, (t, _) in ours.items() if t > 0.35 * bare[0]]
        missed += [f"{what} peak {m / size:.2f}× the bytes" for what, (_, m) in ours.items() if m > 0.25 * size]
        verdicts.append(f"{name}: " + ("all met." if not missed else "missed: " + ", ".join(missed) + "."))
    lines += ["", f"The floor, in the same run: `graph --json`'s imports alone take {imports[0]:.2f} s and "
              f"{imports[1] / 2**20:,.0f} MiB, the shape-inference child's interpreter with onnx imported "
              f"{child[0]:.2f} s and {child[1] / 2**20:,.0f} MiB, before either reads a byte of the file.", "",
              "Against issue #56's targets (time ≤ 0.35× `onnx.load`, peak ≤ 0.25× the file's bytes):", ""]
    return lines + [f"- {v}" for v in verdicts] + [""]


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "out"
    print("\n".join(section(target)))
