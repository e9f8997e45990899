"""Schedule review part of `make bench` (issue #14), on the 16-core schedule of the first section (10^6 L2
entries): grouping overlaps into incidents, the memory map's bands for every core, a memory map frame at
200×60, and diff of two versions of the file; against `orjson.loads` of the same file, measured in this run.

The overlaps are planted in memory after loading (the generated file is clean): in every PLANT_EVERY-th
workload's L2 snapshot the second tensor is moved onto the first, and for the diff the second version has those
moves and one extra transfer read per planted workload. Loading is outside the clock in every probe.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

PLANT_EVERY = 4  # about 42,000 planted snapshots in the 168,000 workloads

PLANT = """
import dataclasses
import numpy as np
from explorer.api import open_document

def planted(document):
    s = document.schedule
    rows = np.arange(0, s.n_workloads, PLANT_EVERY)
    rows = rows[np.diff(s.buf_ptr)[rows] >= 2]
    address = s.buf_addr.copy()
    address[s.buf_ptr[rows] + 1] = address[s.buf_ptr[rows]]
    return dataclasses.replace(s, buf_addr=address), rows
"""

PROBES = {
    "review_incidents": PLANT
    + """
import time
from explorer.schedule.buffers import l2_problems, place_l2_entries, wl0_problems
from explorer.schedule.incidents import find_incidents
document = open_document(PATH)
s, rows = planted(document)
problems = l2_problems(s, place_l2_entries(s)) + wl0_problems(s)
words = document.vocabulary
t = time.perf_counter()
incidents = find_incidents(s, problems, words.entry_kinds, document.view.entry_role)
elapsed = time.perf_counter() - t
extra = {"pairs": sum(p.code == "l2-overlap" for p in problems), "incidents": len(incidents),
         "planted": int(rows.size), "entries": int(s.buf_tensor.size)}
""",
    "review_memory_map": """
import time
from explorer.api import open_document
from explorer.schedule.memory_map import memory_map
document = open_document(PATH)
s = document.schedule
placement = document.schedule_analysis.placement
t = time.perf_counter()
maps = [memory_map(s, core, "l2", placement) for core in s.core_ids.tolist()]
maps += [memory_map(s, core, "wl0") for core in s.core_ids.tolist()]
elapsed = time.perf_counter() - t
extra = {"bands": sum(m.bands for m in maps), "cores": int(s.core_ids.size)}
""",
    "review_memory_frame": """
import asyncio, time, statistics
from widgets.app import make_app
async def measure():
    app = make_app(PATH)
    async with app.run_test(size=(200, 60)) as pilot:
        while app.document is None or app.document.partial or not app.views_ready:  # the whole file
            await pilot.pause(0.05)
        await pilot.press("7")
        await pilot.pause(0.2)
        from widgets.schedule.memory_map import MemoryMapView
        view = app.query_one(MemoryMapView)
        view.render_frame()  # the core's bands, computed once per core when first shown
        steps, zooms = [], []
        for step in range(60):
            view.action_step(7)
            t = time.perf_counter(); view.render_frame(); steps.append(time.perf_counter() - t)
        for step in range(20):
            view.action_zoom(0.5) if step % 4 < 2 else view.action_zoom(2.0)
            t = time.perf_counter(); view.render_frame(); zooms.append(time.perf_counter() - t)
        view.action_core(1)
        t = time.perf_counter(); view.render_frame(); first = time.perf_counter() - t
        return statistics.median(steps), max(steps), statistics.median(zooms), max(zooms), first, view.size
step, step_max, zoom, zoom_max, first_core, size = asyncio.run(measure())
elapsed = step
extra = {"step_max_s": step_max, "zoom_s": zoom, "zoom_max_s": zoom_max, "new_core_s": first_core,
         "size": [size.width, size.height]}
""",
    "review_diff": PLANT
    + """
import time
from explorer.diff import diff_documents
a = open_document(PATH)
b = open_document(PATH)
s, rows = planted(b)
in_tid = np.insert(s.in_tid, s.in_ptr[rows], 987_654_321)  # one phantom transfer read per planted workload
in_ptr = s.in_ptr + np.searchsorted(rows, np.arange(s.n_workloads + 1), side="left")
b.schedule = dataclasses.replace(s, in_tid=in_tid, in_ptr=in_ptr,
                                 in_kind=np.insert(s.in_kind, s.in_ptr[rows], 0))  # fmt: skip
t = time.perf_counter()
result = diff_documents(a, b)
elapsed = time.perf_counter() - t
extra = {"placements_changed": result["summary"]["placements_changed"],
         "transfers_changed": result["summary"]["transfers_changed"]}
""",
}


def section(out: Path, probes: dict, run_probe: Callable[[str, Path], dict], ratio: Callable, path: Path) -> list[str]:
    for name, code in PROBES.items():
        probes[name] = f"PLANT_EVERY = {PLANT_EVERY}\n" + code
    print("review (issue #14)", flush=True)
    base = run_probe("baseline_orjson", path)
    incidents = run_probe("review_incidents", path)
    maps = run_probe("review_memory_map", path)
    frame = run_probe("review_memory_frame", path)
    diff = run_probe("review_diff", path)
    width, height = frame["size"]
    ms = 1000
    return [
        "## Schedule review (issue #14)",
        "",
        f"On the 16-core schedule above ({incidents['entries']:,} L2 entries), loaded outside the clock. Overlaps are",
        f"planted in memory: in every {PLANT_EVERY}th workload's snapshot the second tensor is moved onto the first "
        f"({incidents['planted']:,} snapshots, {incidents['pairs']:,} overlap pairs); the diff compares the file with "
        "that planted version, which also reads one phantom transfer per planted workload. The baseline is "
        "`orjson.loads` of the same file in this run.",
        "",
        "| measurement | time | vs baseline | target |",
        "| --- | --- | --- | --- |",
        f"| baseline: `orjson.loads` of the file | {base['seconds']:.2f} s | 1× | |",
        f"| incidents from {incidents['pairs']:,} overlap pairs ({incidents['incidents']:,} incidents) | "
        f"{incidents['seconds']:.2f} s | {ratio(incidents['seconds'], base['seconds'])} | ≤ 2 s |",
        f"| memory map bands of every core, L2 and WL0 ({maps['bands']:,} bands) | {maps['seconds']:.2f} s | "
        f"{ratio(maps['seconds'], base['seconds'])} | ≤ 2 s |",
        f"| diff of the file and its planted version ({diff['placements_changed']:,} placements, "
        f"{diff['transfers_changed']:,} transfers changed) | {diff['seconds']:.2f} s | "
        f"{ratio(diff['seconds'], base['seconds'])} | ≤ 2 s |",
        "",
        f"Memory map frames in the TUI at 200×60 (the view is {width}×{height} cells): one `render_frame`.",
        "",
        "| measurement | median | worst | target |",
        "| --- | --- | --- | --- |",
        f"| moving the cursor (60 steps) | {frame['seconds'] * ms:.1f} ms | {frame['step_max_s'] * ms:.1f} ms | "
        "≤ 16 ms |",
        f"| zooming in and out (20 frames, each repainted) | {frame['zoom_s'] * ms:.1f} ms | "
        f"{frame['zoom_max_s'] * ms:.1f} ms | ≤ 16 ms |",
        f"| the first frame of another core (its bands computed) | {frame['new_core_s'] * ms:.1f} ms | | |",
        "",
    ]
