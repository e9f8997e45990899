"""Colour modes of the graph view: one colour index per visible item and the legend that explains it.

Categories (op type, dtype, core) take the palette by frequency, the rest "other"; numbers (parameter bytes,
time, L2 peak) fall into five log-scaled buckets. Groups and missing values are grey. The TUI, the SVG and the
HTML figure use the same indices and hex colours, so a legend means the same everywhere.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from explorer.graph.data_set import NodeDataSet
from explorer.graph.metrics import metrics_of
from explorer.graph.visible import VisibleGraph
from explorer.models.graph import GraphModel

PALETTE = (
    "#4f8fe8", "#4cbf73", "#e8a33d", "#b46be8", "#e85d5d", "#3dc4c4",
    "#d4c24a", "#e87bb8", "#8fa8c8", "#9ccf5a", "#c48a5a", "#7a7ae8",
)  # fmt: skip
GRADIENT = ("#2f4f7f", "#2f7f7f", "#5f9f3f", "#cfaf3f", "#e8603d")
GREY = "#7a7a7a"
OTHER = len(PALETTE) - 1  # the last palette colour stands for every rarer category
GRADIENT_BASE = len(PALETTE)
GREY_INDEX = GRADIENT_BASE + len(GRADIENT)
# measured / estimated: blue where the estimate is too high, grey-white near 1×, red where it is too low
DIVERGING = ("#2c5fa8", "#5b8fd1", "#a9c4e8", "#d8d8d8", "#f0b08a", "#e0704a", "#b8322a")
DIVERGING_EDGES = (1 / 4, 1 / 2, 1 / 1.25, 1.25, 2, 4)  # bucket k holds ratios in [edge k-1, edge k)
DIVERGING_BASE = GREY_INDEX + 1
COLOURS = (*PALETTE, *GRADIENT, GREY, *DIVERGING)  # index → hex
DIVERGING_MODES = {"estimate error"}  # ratios: a scale centred on 1×, not a magnitude
MODE_KEYS = {"op type": None, "dtype": "dtype", "parameter bytes": "parameter_bytes", "MACs": "macs",
             "parameters": "params", "activation bytes": "activation_bytes", "time": "time", "core": "core",
             "L2 peak": "l2_peak", "measured time": "measured",
             "estimate error": "estimate_error", "problems": "problems", "diff": "diff"}  # fmt: skip
# the counted modes (explorer.graph.metrics): offered where the format counts its ops, worked out when chosen
COUNTED_MODES = {"MACs": " MACs", "parameters": " params", "activation bytes": "B"}  # mode → its legend's unit
# a comparison's sides (explorer.graph.compare): same, changed, only in A (removed), only in B (added)
DIFF_LEGEND = (("same", "#8fa8c8"), ("changed", "#e8a33d"), ("removed (only in A)", "#e85d5d"),
               ("added (only in B)", "#4cbf73"))  # fmt: skip


def colour_modes(model: GraphModel) -> list[str]:
    """The modes this graph can be coloured by: op type always, then what its nodes carry."""
    modes = ["op type"]
    for mode, key in MODE_KEYS.items():
        if mode in COUNTED_MODES and model.op_counter is not None:
            modes.append(mode)
            continue
        if key is None or key not in model.node_values:
            continue
        column = model.node_values[key]
        # text columns may be computed on demand: offered without reading them all
        has_values = bool(np.isfinite(column).any()) if isinstance(column, np.ndarray) else len(column) > 0
        if has_values:
            modes.append(mode)
    return modes + list(model.data_sets)  # the user's per-node data, each file (or graph of it) a mode


def item_colours(model: GraphModel, visible: VisibleGraph, mode: str) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """(colour index per item, legend as (text, hex) pairs)."""
    if mode in model.data_sets:
        return _data_colours(model, visible, model.data_sets[mode])
    key = MODE_KEYS.get(mode)
    if mode in COUNTED_MODES and model.op_counter is not None:
        metrics_of(model)  # puts each op's count (NaN for none) among the node values
    column = model.node_op if key is None else model.node_values.get(key)
    colours = np.full(visible.n_items, GREY_INDEX, dtype=np.int64)
    if column is None:
        return colours, []
    nodes = np.flatnonzero(visible.item_kind == 0)
    node_ids = visible.item_id[nodes]
    group_column = model.group_values.get(key) if key is not None else None
    is_group = visible.item_kind == 1
    unit = np.zeros(visible.n_items, dtype=bool)
    if model.n_groups:
        unit[is_group] = model.group_unit[visible.item_id[is_group]]
    units = np.flatnonzero(unit)
    if isinstance(column, np.ndarray):
        if group_column is not None and units.size:  # unit groups (schedule layers) coloured as their nodes
            ids = np.concatenate([node_ids, model.n_nodes + visible.item_id[units]])
            return _numeric(np.concatenate([column, group_column]), np.concatenate([nodes, units]), ids, colours, mode)
        return _numeric(column, nodes, node_ids, colours, mode)
    values = [column[n] for n in node_ids.tolist()]
    if key is None:  # a fused op (TVM's conv2d+add+relu) takes the colour of its first operator
        values = [v.split("+", 1)[0] if v else v for v in values]
    if units.size:
        groups = visible.item_id[units].tolist()
        unit_values = [group_column[g] if group_column is not None else model.group_op[g] for g in groups]
        nodes = np.concatenate([nodes, units])
        values = values + unit_values
    counts = Counter(v for v in values if v)
    ranked = [v for v, _ in counts.most_common(OTHER)]
    index = {v: k for k, v in enumerate(ranked)}
    colours[nodes] = [index.get(v, OTHER) if v else GREY_INDEX for v in values]
    legend = [(v, PALETTE[k]) for v, k in index.items()]
    if len(counts) > len(ranked):
        legend.append((f"{len(counts) - len(ranked)} more", PALETTE[OTHER]))
    if (is_group & ~unit).any():
        legend.append(("group", GREY))
    return colours, legend


def _diverging(values: np.ndarray, nodes: np.ndarray, colours: np.ndarray) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """Ratios on a fixed scale centred on 1× (log-symmetric), so 2× too slow and 2× too fast look alike in
    strength; the legend names each bucket with its unit."""
    finite = np.isfinite(values) & (values > 0)
    if not finite.any():
        return colours, [("no values", GREY)]
    colours[nodes[finite]] = DIVERGING_BASE + np.searchsorted(DIVERGING_EDGES, values[finite], side="right")
    edges = ("", *(f"{edge:g}×" for edge in DIVERGING_EDGES), "")
    names = [f"< {edges[1]}"] + [f"{edges[k]}–{edges[k + 1]}" for k in range(1, 6)] + [f"≥ {edges[6]}"]
    names[3] += " (measured ≈ estimated)"
    legend = [(f"measured/estimated {name}" if k == 0 else name, DIVERGING[k]) for k, name in enumerate(names)]
    legend.append(("none", GREY))
    return colours, legend


def _numeric(column: np.ndarray, nodes: np.ndarray, node_ids: np.ndarray, colours: np.ndarray,
             mode: str) -> tuple[np.ndarray, list[tuple[str, str]]]:  # fmt: skip
    values = column[node_ids]
    if mode in DIVERGING_MODES:
        return _diverging(values, nodes, colours)
    if mode == "diff":  # categories: what a comparison found for each box
        present = set(values[np.isfinite(values)].astype(int).tolist())
        for k, (_, colour) in enumerate(DIFF_LEGEND):
            colours[nodes[values == k]] = PALETTE.index(colour)
        return colours, [entry for k, entry in enumerate(DIFF_LEGEND) if k in present or k < 2]
    if mode == "problems":  # categories, not magnitudes: the worst problem in each box
        colours[nodes[values == 2]] = PALETTE.index("#e85d5d")
        colours[nodes[values == 1]] = PALETTE.index("#d4c24a")
        return colours, [("✗ error", "#e85d5d"), ("⚠ warning", "#d4c24a"), ("no problem", GREY)]
    finite = np.isfinite(values) & (values > 0)
    if not finite.any():
        return colours, [("no values", GREY)]
    scaled = np.log1p(values[finite])
    lo, hi = float(scaled.min()), float(scaled.max())
    steps = len(GRADIENT)
    bucket = (
        np.zeros(scaled.size, dtype=np.int64)
        if hi == lo
        else np.minimum(((scaled - lo) / (hi - lo) * steps).astype(np.int64), steps - 1)
    )
    colours[nodes[finite]] = GRADIENT_BASE + bucket
    edges = np.expm1(np.linspace(lo, hi, steps + 1))
    unit = COUNTED_MODES.get(mode, "")
    legend = [(f"{_short(edges[k])}–{_short(edges[k + 1])}{unit}", GRADIENT[k]) for k in range(steps)]
    legend.append(("none", GREY))
    return colours, legend


def _short(value: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= size:
            return f"{value / size:.3g}{unit}"
    return f"{value:.3g}"


def _data_colours(model: GraphModel, visible: VisibleGraph,
                  data: NodeDataSet) -> tuple[np.ndarray, list[tuple[str, str]]]:  # fmt: skip
    """A per-node data set: nodes (and schedule layers, which stand for nodes) on the data's scale (the file's
    thresholds; diverging around its centre, or zero, when the values straddle it; else five even steps from
    the least to the greatest value), other closed groups by their aggregate (a sum on a scale of its own: it
    outgrows any one node's)."""
    colours = np.full(visible.n_items, GREY_INDEX, dtype=np.int64)
    finite_all = data.all_values()
    if finite_all.size == 0:
        return colours, [("no values", GREY)]
    nodes = np.flatnonzero(visible.item_kind == 0)
    groups = np.flatnonzero(visible.item_kind == 1)
    unit = model.group_unit[visible.item_id[groups]] if groups.size else np.zeros(0, dtype=bool)
    node_scale = _data_scale(finite_all, data)
    colours[nodes] = node_scale(data.values[visible.item_id[nodes]])
    legend = node_scale.legend
    group_column = model.group_values.get(data.name)
    if groups.size and group_column is not None:
        colours[groups[unit]] = node_scale(group_column[visible.item_id[groups[unit]]])
        plain = groups[~unit]
        if plain.size and data.aggregate == "sum":
            finite_groups = group_column[np.isfinite(group_column) & ~model.group_unit]
            group_scale = _data_scale(finite_groups, data, thresholds=False) if finite_groups.size else node_scale
            colours[plain] = group_scale(group_column[visible.item_id[plain]])
            legend = [*legend, (f"groups: sum {group_scale.span}", GREY)]
        elif plain.size:
            colours[plain] = node_scale(group_column[visible.item_id[plain]])
            legend = [*legend, (f"groups: {data.aggregate}", GREY)]
    return colours, [*legend, ("none", GREY)]


class _Scale:
    """Values → colour indices, with the legend that explains them."""

    def __init__(self, edges: np.ndarray, base: int, steps: int, legend: list[tuple[str, str]], span: str) -> None:
        self.edges, self.base, self.steps, self.legend, self.span = edges, base, steps, legend, span

    def __call__(self, values: np.ndarray) -> np.ndarray:
        out = np.full(values.size, GREY_INDEX, dtype=np.int64)
        finite = np.isfinite(values)
        bucket = np.searchsorted(self.edges, values[finite], side="left" if self.base == -1 else "right")
        if self.base == -1:  # thresholds: bucket k is "≤ edge k", spread over the gradient
            out[finite] = GRADIENT_BASE + np.round(np.minimum(bucket, self.steps - 1) * (len(GRADIENT) - 1)
                                                   / max(self.steps - 1, 1)).astype(np.int64)  # fmt: skip
        else:
            out[finite] = self.base + np.minimum(bucket, self.steps - 1)
        return out


def _data_scale(finite: np.ndarray, data: NodeDataSet, thresholds: bool = True) -> _Scale:
    lo, hi = float(finite.min()), float(finite.max())
    span = f"{_signed(lo)}–{_signed(hi)}"
    if thresholds and data.thresholds:
        edges = np.asarray(data.thresholds[: len(GRADIENT) - 1], dtype=np.float64)
        steps = edges.size + 1
        names = [f"≤ {_signed(edges[0])}"] + [f"{_signed(edges[k - 1])}–{_signed(edges[k])}"
                                              for k in range(1, edges.size)] + [f"> {_signed(edges[-1])}"]  # fmt: skip
        spread = [round(k * (len(GRADIENT) - 1) / max(steps - 1, 1)) for k in range(steps)]
        return _Scale(edges, -1, steps, [(name, GRADIENT[c]) for name, c in zip(names, spread, strict=True)], span)
    around = data.centre or 0.0  # the file's centre, else zero
    centre = around if lo < around < hi else None
    if centre is not None:
        reach = max(centre - lo, hi - centre)
        edges = centre + reach * np.asarray([-5, -3, -1, 1, 3, 5]) / 7
        names = [f"< {_signed(edges[0])}"] + [f"{_signed(edges[k - 1])}–{_signed(edges[k])}"
                                              for k in range(1, 6)] + [f"≥ {_signed(edges[5])}"]  # fmt: skip
        names[3] = f"≈ {_signed(centre)}"
        return _Scale(edges, DIVERGING_BASE, len(DIVERGING), list(zip(names, DIVERGING, strict=True)), span)
    steps = len(GRADIENT)
    edges = np.linspace(lo, hi, steps + 1)[1:-1] if hi > lo else np.zeros(0)
    bounds = np.linspace(lo, hi, steps + 1)
    names = [f"{_signed(bounds[k])}–{_signed(bounds[k + 1])}" for k in range(steps)] if hi > lo else [_signed(lo)]
    return _Scale(edges, GRADIENT_BASE, steps, list(zip(names, GRADIENT, strict=False)), span)


def _signed(value: float) -> str:
    return "-" + _short(-value) if value < 0 else _short(value)
