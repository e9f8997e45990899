"""A schedule as the neutral graph: one box per layer, edges where data flows between layers (a transfer from a
workload of one layer to a workload of another, on any core, through DRAM too). A layer is a unit group: drawn
as one node until opened, when it shows its workloads per core with the dependencies between them. Colour
values: time (durations), core, and the most L2 bytes in use before the workloads; with a joined ZeBu trace,
the measured cycles and the estimate error (measured / estimated). With a joined frontend IR the edges are the
network's (the frontend's layer graph, its inputs, weights and outputs included) instead of the transfers'."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from explorer.companions import companions_of
from explorer.formats.scheduler_ir.codes import LAYER_TYPES
from explorer.formatting import plural
from explorer.graph.builder import GraphBuilder
from explorer.models.graph import GraphModel
from explorer.models.schedule import Schedule

if TYPE_CHECKING:
    from explorer.document import Document


class ScheduleSource(Protocol):
    """What the graph is drawn from: the schedule, and the document its companions (a trace, a frontend IR)
    are joined to (the SchedulerIRView, which imports this module when its graph is first asked for)."""

    s: Schedule
    document: Document | None


def schedule_graph(view: ScheduleSource) -> GraphModel:
    s = view.s
    analysis = view.document.schedule_analysis if view.document is not None else None
    b = GraphBuilder()
    n_layers = len(s.layers)
    rows_of_layer: list[list[int]] = [[] for _ in range(n_layers)]
    for row, layer in enumerate(s.wl_layer.tolist()):
        rows_of_layer[layer].append(row)
    time = np.bincount(s.wl_layer, weights=s.wl_time, minlength=n_layers) if s.n_workloads else np.zeros(n_layers)
    l2 = analysis.l2_bytes.astype(np.float64) if analysis is not None else np.zeros(s.n_workloads)
    l2_peak = np.zeros(n_layers)
    if s.n_workloads:
        np.maximum.at(l2_peak, s.wl_layer, l2)
    measured = companions_of(view.document).measured if view.document is not None else None
    layer_measure: dict[str, np.ndarray] = {}
    row_measure: dict[str, np.ndarray] = {}
    if measured is not None:  # a joined trace: its cycles, and how far the estimate is from them
        span = np.where(measured.instructions > 0, measured.end - measured.start, np.nan)
        joined = measured.instructions > 0
        layer_span = np.bincount(s.wl_layer[joined], weights=span[joined], minlength=n_layers)
        layer_estimate = np.bincount(s.wl_layer[joined], weights=s.wl_time[joined], minlength=n_layers)
        with np.errstate(divide="ignore", invalid="ignore"):
            layer_measure = {
                "measured": np.where(layer_span > 0, layer_span, np.nan),
                "estimate_error": np.where(layer_estimate > 0, layer_span / layer_estimate, np.nan),
            }
            row_measure = {"measured": span, "estimate_error": np.where(s.wl_time > 0, span / s.wl_time, np.nan)}
    node_of_row = np.full(s.n_workloads, -1, dtype=np.int64)
    for layer, rows in enumerate(rows_of_layer):
        if not rows:
            continue
        cores = sorted({int(s.wl_core[r]) for r in rows})
        kind = _kind(s, rows[0])
        where = f"core {cores[0]}" if len(cores) == 1 else f"{len(cores)} cores"
        group = b.group(
            s.layers[layer], kind="layer", ref=("workload", rows[0]), unit=True, op=kind,
            detail=f"{plural(len(rows), 'workload')} · {where}",
            time=float(time[layer]), core=where, l2_peak=float(l2_peak[layer]),
            **_measures(layer_measure, layer),
        )  # fmt: skip
        for row in rows:
            core = int(s.wl_core[row])
            # what tells one workload box from its neighbours: core, mesh position, number, time (the layer is
            # the frame's title, and the kind the box's colour and first word)
            node_of_row[row] = b.node(
                f"{s.core_short(core)} · #{int(s.wl_id[row])}", _kind(s, row), group=group,
                detail=f"{float(s.wl_time[row]):,.0f} cycles", ref=("workload", row), lane=core,
                data_key=f"{core}/{int(s.wl_id[row])}",  # how per-node data names a workload
                time=float(s.wl_time[row]), core=f"core {core}", l2_peak=float(l2[row]),
                **_measures(row_measure, row),
            )  # fmt: skip
    frontend = _joined_frontend(view)
    if frontend is not None:  # the network as the frontend IR draws it, its layers holding their workloads
        _frontend_edges(b, frontend, s, rows_of_layer, node_of_row)
        return _with_trace_data(_times_not_types(b.build()), measured is not None)
    if analysis is not None:  # each edge named by what flows: the transfers (tensor ids) that make it
        # one edge per (producer, consumer), in that order, named by its first transfer: grouped by numpy (a
        # Python sort of the pairs held the interpreter 0.3 s on the 518 MB file, and the UI's keys with it)
        deps = analysis.deps
        order = np.lexsort((deps.consumer, deps.producer))  # stable: a pair's transfers keep the file's order
        producers, consumers = deps.producer[order], deps.consumer[order]
        starts = np.flatnonzero(np.r_[True, (producers[1:] != producers[:-1]) | (consumers[1:] != consumers[:-1])])
        counts = np.diff(np.r_[starts, order.size])
        first = order[starts]
        for producer, consumer, tid, dram, count in zip(deps.producer[first].tolist(), deps.consumer[first].tolist(),
                                                        deps.tid[first].tolist(), deps.via_dram[first].tolist(),
                                                        counts.tolist(), strict=True):  # fmt: skip
            if producer != consumer and node_of_row[producer] >= 0 and node_of_row[consumer] >= 0:
                what = f"tensor {tid}" + (" via DRAM" if dram else "")
                b.edge(int(node_of_row[producer]), int(node_of_row[consumer]), what if count == 1 else
                       f"{what} +{count - 1}")  # fmt: skip
    return _with_trace_data(_times_not_types(b.build()), measured is not None)


def _times_not_types(model: GraphModel) -> GraphModel:
    model.detail_is_type = False  # a workload's detail is its time: edge labels name what flows, nothing more
    return model


def _with_trace_data(model: GraphModel, joined: bool) -> GraphModel:
    """A joined ZeBu trace's measured cycles offered as per-node data (a workload's span, a layer's sum): the
    graph opens on them, closed groups aggregate them, the details list them and T ranks them, as the user's
    own numbers would be."""
    if not joined or not isinstance(model.node_values.get("measured"), np.ndarray):
        return model
    from explorer.graph.node_data import NodeDataSet, apply_node_data

    values = model.node_values["measured"]
    layers = model.group_values.get("measured")
    units = np.full(model.n_groups, np.nan)
    if isinstance(layers, np.ndarray) and layers.size == model.n_groups:
        units[model.group_unit] = layers[model.group_unit]
    found = int(np.isfinite(values).sum()) + int(np.isfinite(units).sum())
    apply_node_data(model, NodeDataSet("data: trace cycles", "the joined ZeBu trace", values, units, found, found))
    return model


def _kind(s: Schedule, row: int) -> str:
    code = int(s.wl_type[row])
    return LAYER_TYPES[code] if code < len(LAYER_TYPES) else "?"


def _joined_frontend(view: ScheduleSource) -> GraphModel | None:
    """The joined frontend IR's graph (explorer.companions), or None."""
    document = view.document
    companions = companions_of(document) if document is not None else None
    if companions is None or "frontend" not in companions.documents or "frontend" in companions.refused:
        return None
    return companions.documents["frontend"].view.graph_model()


def _frontend_edges(b: GraphBuilder, frontend: GraphModel, s: Schedule, rows_of_layer: list,
                    node_of_row: np.ndarray) -> None:  # fmt: skip
    """The frontend's edges between the schedule's layers (from a layer's last workload to the next layer's
    first), and its graph inputs, weights and outputs as their own nodes."""
    layer_index = {name: k for k, name in enumerate(s.layers)}
    ends: dict[int, tuple[int, int]] = {}  # frontend node → (node an edge leaves from, node it enters)
    for node, label in enumerate(frontend.node_label):
        rows = rows_of_layer[layer_index[label]] if label in layer_index else []
        if rows:
            ends[node] = (int(node_of_row[rows[-1]]), int(node_of_row[rows[0]]))
        else:
            made = b.node(label, frontend.node_op[node], detail=frontend.node_detail[node],
                          constant=bool(frontend.node_constant[node]))  # fmt: skip
            ends[node] = (made, made)
    for src, dst, label in zip(frontend.edge_src.tolist(), frontend.edge_dst.tolist(), frontend.edge_label,
                               strict=True):  # fmt: skip
        if src in ends and dst in ends:
            b.edge(ends[src][0], ends[dst][1], label)


def _measures(columns: dict[str, np.ndarray], at: int) -> dict[str, Any]:
    """One row of the measured columns, as the builder's colour values."""
    return {key: float(column[at]) for key, column in columns.items()}
