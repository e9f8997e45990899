"""The graph as a review surface, part of `make bench` (issue #33): per-node data on the 100,000-node graph,
matching two graphs (a model against a copy with every node renamed), the two-pane comparison's frames at
200×60, and `graph --svg` of the 20,000-node chain; against `onnx.load` of the same file, in this run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

RENAMED = """
import onnx, tempfile, os
def renamed_copy(path):
    model = onnx.load(path)
    for n, node in enumerate(model.graph.node):
        node.name = f"renamed_{node.op_type}_{n}"
    handle, out = tempfile.mkstemp(suffix=".onnx")
    os.close(handle)
    onnx.save(model, out)
    return out
"""
ONNX_LOAD = """
import time, onnx
start = time.perf_counter()
onnx.load(PATH)
elapsed = time.perf_counter() - start
"""
NODE_DATA = """
import json, os, tempfile, time
from explorer.api import open_document
from explorer.graph.colours import item_colours
from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import layout_graph
from explorer.graph.visible import visible_graph
from explorer.graph.node_data import apply_node_data, read_node_data
from widgets.graph.canvas import draw
document = open_document(PATH)
model = document.view.graph_model()
layout = layout_graph(model, visible_graph(model, initial_expansion(model)))
handle, data_path = tempfile.mkstemp(suffix=".json")
with os.fdopen(handle, "w") as out:
    json.dump({label: float(k % 997) for k, label in enumerate(model.node_label)}, out)
start = time.perf_counter()
sets, problems = read_node_data(data_path, model)
apply_node_data(model, sets[0])
colours, legend = item_colours(model, layout.visible, sets[0].name)
canvas = draw(layout, 200, 58, (0, 0), colours)
elapsed = time.perf_counter() - start
os.unlink(data_path)
extra = {"nodes": model.n_nodes, "matched": sets[0].matched}
"""
MATCH = (
    RENAMED
    + """
import os, time
from explorer.api import open_document
from explorer.graph.compare import compare_documents
other = renamed_copy(PATH)
a, b = open_document(PATH), open_document(other)
a.view.graph_model(); b.view.graph_model()
start = time.perf_counter()
comparison = compare_documents(a, b)
elapsed = time.perf_counter() - start
os.unlink(other)
counts = comparison.match.counts()
extra = {"nodes": comparison.a.n_nodes, "by_structure": counts["matched_by_structure"],
         "unmatched": counts["added"] + counts["removed"], "changed": counts["changed"]}
"""
)
SPLIT_FRAMES = (
    RENAMED
    + """
import asyncio, os, statistics, time
from widgets.app import make_app
from widgets.graph.compare_screen import CompareScreen
other = renamed_copy(PATH)
async def measure():
    app = make_app(PATH, compare=other)
    async with app.run_test(size=(200, 60)) as pilot:
        while not (isinstance(app.screen, CompareScreen) and app.screen.ready):
            await pilot.pause(0.02)
        screen = app.screen
        a, b = screen.pane("a"), screen.pane("b")
        a.render_frame(); b.render_frame()
        pans = []
        for k in range(60):
            a.action_pan((1, 0, -1, 0)[k % 4], (0, 1, 0, -1)[k % 4])
            t = time.perf_counter(); a.render_frame(); pans.append(time.perf_counter() - t)
        syncs = []
        for step in range(20):  # walk the boxes of A: B follows each, both drawn
            t = time.perf_counter()
            a.action_move("down")
            screen.follow("a", a.selected_key[1]) if a.selected_key and a.selected_key[0] == 0 else None
            a.render_frame(); b.render_frame()
            syncs.append(time.perf_counter() - t)
        return statistics.median(pans), max(pans), statistics.median(syncs), max(syncs)
pan, pan_max, sync, sync_max = asyncio.run(measure())
os.unlink(other)
elapsed = pan
extra = {"pan_max": pan_max, "sync": sync, "sync_max": sync_max}
"""
)
SVG = """
import time
from explorer.api import open_document
from explorer.exports.graph_svg import graph_svg
document = open_document(PATH)
model = document.view.graph_model()
start = time.perf_counter()
drawing = graph_svg(model, "all")
elapsed = time.perf_counter() - start
extra = {"bytes": len(drawing), "boxes": drawing.count("<title>")}
"""


def section(out: Path, probes: dict, run_probe: Callable[[str, Path], dict], ratio: Callable,
            onnx_inputs: list[tuple[str, Path]]) -> list[str]:  # fmt: skip
    probes.update({"review_onnx_load": ONNX_LOAD, "review_node_data": NODE_DATA, "review_match": MATCH,
                   "review_split_frames": SPLIT_FRAMES, "review_svg": SVG})  # fmt: skip
    big = out / "bench_graph_100000.onnx"
    if not big.exists():
        from graph_bench import hundred_thousand

        hundred_thousand(big)
    chain = next(path for label, path in onnx_inputs if "20,000" in label)
    transformer = next((path for label, path in onnx_inputs if "transformer" in label), None)
    lines = [
        "## The graph as a review surface (issue #33)",
        "",
        "Per-node data: a `{node name: number}` JSON naming every node of the 100,000-node graph, read, joined,",
        "applied, coloured and the first screen drawn at 200×60 (the layout before the clock). Matching: the",
        "file against a copy with every node renamed (so every op is matched by structure; both graphs built",
        "before the clock). Split pane: `--compare` at 200×60, 60 pans of pane A, and 20 moves in A with B",
        "following (both panes drawn). `graph --svg --expand all`: layout and drawing. Baseline: `onnx.load` of",
        "the same file in this run.",
        "",
        "| measurement | input | nodes | time | onnx.load | ratio | target |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    loads: dict[Path, float] = {}

    def load(path: Path) -> float:
        if path not in loads:
            loads[path] = run_probe("review_onnx_load", path)["seconds"]
        return loads[path]

    data = run_probe("review_node_data", big)
    lines.append(f"| per-node data applied and drawn ({data['matched']:,} keys) | 100,000-node generated graph | "
                 f"{data['nodes']:,} | {data['seconds']:.3f} s | {load(big):.3f} s | "
                 f"{ratio(data['seconds'], load(big))} | ≤ 0.3 s |")  # fmt: skip
    for label, path, target in (("torch transformer", transformer, "≤ 1 s"), ("20,000-node chain", chain, "≤ 5 s")):
        if path is None:
            continue
        found = run_probe("review_match", path)
        lines.append(f"| matching two graphs, every node renamed ({found['by_structure']:,} by structure, "
                     f"{found['unmatched']:,} unmatched, {found['changed']:,} changed) | {label} | "
                     f"{found['nodes']:,} | {found['seconds']:.3f} s | {load(path):.3f} s | "
                     f"{ratio(found['seconds'], load(path))} | {target} |")  # fmt: skip
    split_input = transformer or chain
    frames = run_probe("review_split_frames", split_input)
    lines.append(f"| split-pane frame at 200×60: pan (median / worst) | {split_input.stem} | | "
                 f"{frames['seconds'] * 1000:.1f} / {frames['pan_max'] * 1000:.1f} ms | | | ≤ 16 ms |")  # fmt: skip
    lines.append(f"| split-pane: a move in A, B follows, both drawn (median / worst) | {split_input.stem} | | "
                 f"{frames['sync'] * 1000:.1f} / {frames['sync_max'] * 1000:.1f} ms | | | ≤ 16 ms |")  # fmt: skip
    svg = run_probe("review_svg", chain)
    lines.append(f"| `graph --svg --expand all` ({svg['boxes']:,} boxes, {svg['bytes'] / 1e6:.1f} MB) | "
                 f"20,000-node chain | {svg['boxes']:,} | {svg['seconds']:.2f} s | {load(chain):.3f} s | "
                 f"{ratio(svg['seconds'], load(chain))} | ≤ 3 s |")  # fmt: skip
    lines.append("")
    return lines
