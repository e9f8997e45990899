"""Gemini pipeline part of `make bench` (issue #17): ZeBu traces the size of the largest published one
(ResNet-50 at batch 64: 10,739 instructions) and 100× that, made by repeating the published ResNet-34 trace's
lines later in time (or the demo program's when ../shared is absent); loading against the baseline the issue
names, splitting the lines and reading each with `ast.literal_eval` after the enum reprs are replaced, measured
in the same run; and the trace's timeline redraw at 200×60.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT.parent / "shared" / "samples" / "gemini_pipeline" / "int8_resnet34.sim_quantized_b4_c1_bw16_sim.txt"
SIZES = (("ResNet-50 b64 size", 10_739), ("100× that", 1_073_900))

PROBES = {
    "trace_load": """
import time
from explorer.api import open_document
t = time.perf_counter()
document = open_document(PATH)
elapsed = time.perf_counter() - t
extra = {"instructions": document.summary["instructions"]}
""",
    "trace_literal_eval": """
import ast, re, time
ENUM = re.compile(r"<([A-Za-z_]\\w*)\\.([A-Za-z_]\\w*): (-?\\d+)>")
NAME = re.compile(r"^\\[([A-Za-z_]\\w*),")
t = time.perf_counter()
with open(PATH, encoding="utf-8") as handle:
    text = handle.read()
rows = [ast.literal_eval(NAME.sub(r"['\\1',", ENUM.sub(r"('\\1', '\\2', \\3)", line)))
        for line in text.splitlines() if line.strip()]
elapsed = time.perf_counter() - t
extra = {"instructions": len(rows)}
""",
    "trace_redraw": """
import asyncio, time, statistics
from widgets.app import make_app
async def measure():
    app = make_app(PATH)
    async with app.run_test(size=(200, 60)) as pilot:
        while app.document is None or app.document.partial or not app.views_ready:  # the whole file
            await pilot.pause(0.01)
        await pilot.press("2")
        await pilot.pause(0.2)
        from widgets.schedule.timeline import Timeline
        timeline = app.query_one(Timeline)
        times = []
        for step in range(60):
            timeline.action_zoom(0.8) if step % 3 else timeline.action_pan(0.1)
            start = time.perf_counter()
            timeline.render_frame()
            times.append(time.perf_counter() - start)
        timeline.action_zoom_all()
        start = time.perf_counter()
        timeline.render_frame()
        return statistics.median(times), max(times), time.perf_counter() - start
median, worst, whole = asyncio.run(measure())
elapsed = median
extra = {"worst": worst, "whole": whole}
""",
}


def write_trace(path: Path, instructions: int) -> None:
    """The published trace's lines repeated (times shifted past the previous copy, inst_idx renumbered)."""
    if not PUBLISHED.exists():
        from explorer.formats.gemini_trace.samples import write_long_trace

        write_long_trace(path, instructions)
        return
    lines = [line for line in PUBLISHED.read_text(encoding="utf-8").splitlines() if line.strip()]
    span = max(int(m) for m in re.findall(r"'time': \[\d+, (\d+)\]", "\n".join(lines))) + 1
    time_re = re.compile(r"'inst_idx': (\d+), 'time': \[(\d+), (\d+)\]")
    with path.open("w", encoding="utf-8") as out:
        index = 0
        copy = 0
        while index < instructions:
            shift = copy * span
            for line in lines:
                if index >= instructions:
                    break
                index += 1
                out.write(time_re.sub(lambda m, i=index, s=shift: f"'inst_idx': {i}, 'time': [{int(m[2]) + s}, "
                                      f"{int(m[3]) + s}]", line) + "\n")  # fmt: skip
            copy += 1


def section(out: Path, probes: dict, run_probe: Callable[[str, Path], dict], ratio: Callable) -> list[str]:
    probes.update(PROBES)
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "## Gemini pipeline (issue #17)",
        "",
        "ZeBu traces made by repeating the published ResNet-34 batch-4 trace later in time. Load: `open_document`",
        "(read, decode, checks, the unit lanes). Baseline, as the issue names it: read the text, split the lines,",
        "replace the enum reprs and read each line with `ast.literal_eval` (no checks, no columns), same run.",
        "",
        "| input | file | load | target | baseline (`ast.literal_eval`) | load vs baseline | peak memory |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    first = None
    for label, count in SIZES:
        path = out / f"bench_trace_{count}_sim.txt"
        if not path.exists():
            write_trace(path, count)
        first = first or path
        load = run_probe("trace_load", path)
        base = run_probe("trace_literal_eval", path)
        target = "≤ 0.5 s" if count < 100_000 else "≤ the baseline"
        lines.append(
            f"| {label}: {load['instructions']:,} instructions | {path.stat().st_size / 1e6:.0f} MB | "
            f"{load['seconds']:.2f} s | {target} | {base['seconds']:.2f} s | "
            f"{ratio(load['seconds'], base['seconds'])} | "
            f"{load['peak_mib']:.0f} MiB |"
        )
    redraw = run_probe("trace_redraw", first)
    lines += [
        "",
        "| measurement (the 10,739-instruction trace, 200×60) | median | worst | target |",
        "| --- | --- | --- | --- |",
        f"| timeline redraw after a zoom or pan (60 steps) | {redraw['seconds'] * 1000:.1f} ms | "
        f"{redraw['worst'] * 1000:.1f} ms | ≤ 16 ms |",
        f"| timeline redraw, whole trace in view | {redraw['whole'] * 1000:.1f} ms | | ≤ 16 ms |",
        "",
    ]
    return lines
