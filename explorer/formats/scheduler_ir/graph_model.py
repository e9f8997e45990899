"""A schedule as the neutral graph: one node per layer, edges where data flows between layers (a transfer
from a workload of one layer to a workload of another, on any core, through DRAM too). Colour values: the
layer's time (its workloads' durations added), its core(s), and the most L2 bytes in use before its workloads."""

from __future__ import annotations

from typing import Any

import numpy as np

from explorer.formats.scheduler_ir.codes import LAYER_TYPES
from explorer.formatting import plural
from explorer.graph import GraphBuilder, GraphModel


def schedule_graph(view: Any) -> GraphModel:
    s = view.s
    analysis = view.document.schedule_analysis if view.document is not None else None
    b = GraphBuilder()
    n_layers = len(s.layers)
    rows_of_layer: list[list[int]] = [[] for _ in range(n_layers)]
    for row, layer in enumerate(s.wl_layer.tolist()):
        rows_of_layer[layer].append(row)
    time = np.bincount(s.wl_layer, weights=s.wl_time, minlength=n_layers) if s.n_workloads else np.zeros(n_layers)
    l2_peak = np.zeros(n_layers)
    if analysis is not None and s.n_workloads:
        np.maximum.at(l2_peak, s.wl_layer, analysis.l2_bytes.astype(np.float64))
    ids = []
    for layer, rows in enumerate(rows_of_layer):
        if not rows:
            ids.append(-1)
            continue
        cores = sorted({int(s.wl_core[r]) for r in rows})
        kind = LAYER_TYPES[int(s.wl_type[rows[0]])] if int(s.wl_type[rows[0]]) < len(LAYER_TYPES) else "?"
        where = f"core {cores[0]}" if len(cores) == 1 else f"{len(cores)} cores"
        ids.append(b.node(
            s.layers[layer], kind, detail=f"{plural(len(rows), 'workload')} · {where}", ref=("workload", rows[0]),
            time=float(time[layer]), core=where, l2_peak=float(l2_peak[layer]),
        ))  # fmt: skip
    if analysis is not None:
        deps = analysis.deps
        layer_of = s.wl_layer
        pairs = set(zip(layer_of[deps.producer].tolist(), layer_of[deps.consumer].tolist(), strict=True))
        for a, c in sorted(pairs):
            if a != c and ids[a] >= 0 and ids[c] >= 0:
                b.edge(ids[a], ids[c])
    return b.build()
