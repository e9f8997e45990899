"""What a reviewer asks of a model: parameters, multiply-accumulates and activation bytes per op, summed per group
and for the model, with each group's share (issue #57).

A format counts its ops (`GraphModel.op_counter`: its rules and its shapes); this module binds the user's dims
(`--dims seq=2048`), sums each group's members (every op once, in its group and each enclosing one), and picks
the groups a review lists (`breakdown`). An op whose count is unknown adds nothing to a sum: the sum says how
many ops it leaves out, so no figure is wrong, only incomplete, and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from explorer.models.count import ZERO, Count, OpCounter, OpCounts, total
from explorer.models.dim_expressions import parts
from explorer.models.graph import ROOT, GraphModel

KINDS = ("params", "macs", "activation_bytes")  # what is counted, as `graph --json` and `info --json` name it
TITLES = {"params": "parameters", "macs": "multiply-accumulates", "activation_bytes": "activation bytes"}
LISTED_GROUPS = 10
# groups the view makes, not the model: their members are listed
DISPLAY_KINDS = frozenset({"chunk", "stack", "plumbing"})


@dataclass
class Sum:
    """A group's (or the model's) sum of one kind: the known part and how many ops it leaves out."""

    count: Count = ZERO
    unknown_ops: int = 0

    def text(self) -> str:
        if not self.unknown_ops:
            return short_count(self.count)
        ops = f"{self.unknown_ops:,} op{'s' if self.unknown_ops != 1 else ''}"
        return f"{short_count(self.count)} (+ {ops} not counted)"


@dataclass
class ModelMetrics:
    """The counts of one graph with these dims bound: per node, per group, for the model."""

    dims: dict[str, int]
    ops: list[OpCounts | None]  # per node, dims bound
    groups: list[dict[str, Sum]]  # per group: kind → its sum
    model: dict[str, Sum]
    node_values: dict[str, np.ndarray] = field(default_factory=dict)  # kind → per node number (NaN: none)
    group_values: dict[str, np.ndarray] = field(default_factory=dict)  # kind → per group number (NaN: none)

    def share(self, kind: str, count: Count) -> float | None:
        """The part of the model's known total this count is, when both are numbers."""
        whole, part = self.model[kind].count.value, count.value
        return part / whole if whole and part is not None else None


def metrics_of(model: GraphModel, dims: Mapping[str, int] | None = None) -> ModelMetrics | None:
    """The model's counts with `dims` bound (by default the user's, `GraphModel.metric_dims`; None where its format
    counts nothing), worked out once per dims and per stamp of what the counts are read from."""
    counter = model.op_counter
    if counter is None:
        return None
    bound = dict(sorted((model.metric_dims if dims is None else dims).items()))
    key = (tuple(bound.items()), counter.stamp())
    cached = model.metrics_cache
    if cached is not None and cached[0] == key:
        return cached[1]
    raw = _raw_counts(model, counter)
    ops = [None if op is None else _bound(op, bound) for op in raw]
    pair_node, pair_group = _memberships(model)
    chains: dict[int, list[int]] | None = None  # group → it and its enclosing groups, made for the first formula
    whole: dict[str, Sum] = {}
    groups: list[dict[str, Sum]] = [{} for _ in range(model.n_groups)]
    node_values: dict[str, np.ndarray] = {}
    for kind in KINDS:
        counts = [None if op is None else getattr(op, kind) for op in ops]
        values = np.full(len(ops), np.nan)
        unknown = np.zeros(len(ops), dtype=bool)
        symbolic: list[tuple[int, Count]] = []  # (node, its count in dims)
        for node, count in enumerate(counts):
            if count is None:
                continue
            value = count.value
            if value is not None:
                values[node] = value
            elif count.unknown:
                unknown[node] = True
            else:
                symbolic.append((node, count))
        node_values[kind] = values
        numbers = np.where(np.isnan(values), 0.0, values)
        sums = np.bincount(pair_group, weights=numbers[pair_node], minlength=model.n_groups)
        missing = np.bincount(pair_group, weights=unknown[pair_node], minlength=model.n_groups).astype(np.int64)
        formulas: dict[int, Count] = {}
        if symbolic and chains is None:
            chains = _chains(model)
        for node, count in symbolic:  # sums in dims: worked as counts, only for the ops that have them
            for group in chains[int(model.node_group[node])] if chains is not None else ():
                formulas[group] = formulas.get(group, ZERO) + count
        exact = float(numbers.sum()) < 2**53  # float sums are exact below 2^53; past it, summed as integers
        for group in range(model.n_groups):
            known = Count.of(int(sums[group])) if exact else _exact_sum(counts, pair_node[pair_group == group])
            groups[group][kind] = Sum(known + formulas.get(group, ZERO), int(missing[group]))
        model_total = Count.of(int(numbers.sum())) if exact else _exact_sum(counts, np.flatnonzero(~np.isnan(values)))
        formula = total(count for _, count in symbolic)
        whole[kind] = Sum(model_total + formula, int(unknown.sum()))
    found = ModelMetrics(bound, ops, groups, whole, node_values)
    for kind in KINDS:
        found.group_values[kind] = np.asarray([float(g[kind].count) for g in groups])
    model.metrics_cache = (key, found)
    model.node_values.update(found.node_values)  # the colour modes read them there
    model.group_values.update(found.group_values)
    return found


def _memberships(model: GraphModel) -> tuple[np.ndarray, np.ndarray]:
    """(node, group) for every node and each group that holds it, at any depth: what group sums add up."""
    nodes, groups = [], []
    at = model.node_group.astype(np.int64)
    every = np.arange(model.n_nodes)
    while True:
        inside = at != ROOT
        if not inside.any():
            break
        nodes.append(every[inside])
        groups.append(at[inside])
        at = np.where(inside, model.group_parent[np.where(inside, at, 0)], ROOT)
    if not nodes:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(nodes), np.concatenate(groups).astype(np.int64)


def _chains(model: GraphModel) -> dict[int, list[int]]:
    """Group → itself and its enclosing groups (ROOT → none), for the sums worked as counts."""
    found: dict[int, list[int]] = {ROOT: []}
    for group in range(model.n_groups):
        found[group] = model.ancestors(group)
    return found


def _exact_sum(counts: list[Count | None], nodes: np.ndarray) -> Count:
    total = 0
    for node in nodes.tolist():
        count = counts[node]
        value = count.value if count is not None else None
        total += value or 0
    return Count.of(total)


def _bound(op: OpCounts, dims: dict[str, int]) -> OpCounts:
    if not dims:
        return op
    return OpCounts(op.params.bind(dims), op.macs.bind(dims), op.activation_bytes.bind(dims), op.rule)


def breakdown(model: GraphModel, metrics: ModelMetrics, kind: str = "macs",
              limit: int = LISTED_GROUPS) -> list[tuple[int, Sum]]:  # fmt: skip
    """The groups a review lists, largest first: from the top, through every group that holds nearly all of its
    parent's count alone (`model` › `transformer`), down to the level where the model splits (`h.0` … `h.11`);
    a stack or chunk the view made stands for its members."""
    level = _children(model, ROOT)
    while True:
        if len(level) == 1 and _children(model, level[0]):
            level = _children(model, level[0])
            continue
        sums = [metrics.groups[g][kind].count.value for g in level]
        known = [value for value in sums if value is not None]
        total = sum(known)
        biggest = max(range(len(level)), key=lambda k: sums[k] or 0) if level else -1
        if biggest >= 0 and total and (sums[biggest] or 0) >= 0.9 * total and _children(model, level[biggest]):
            level = _children(model, level[biggest])
            continue
        break
    ranked = sorted(level, key=lambda g: -(metrics.groups[g][kind].count.value or 0))
    return [(g, metrics.groups[g][kind]) for g in ranked[:limit]]


def _children(model: GraphModel, group: int) -> list[int]:
    """A group's child groups, a stack or chunk replaced by its members."""
    found = []
    for child in np.flatnonzero(model.group_parent == group).tolist():
        if model.group_kind[child] in DISPLAY_KINDS:
            found += _children(model, child)
        else:
            found.append(child)
    return found


def short_count(count: Count) -> str:
    """A number as a reviewer reads it (`4.09 G`, `25.6 M`, `512`), a formula as it is."""
    value = count.value
    if count.unknown:
        return "unknown"
    if value is None:
        return count.text()
    for size, unit in ((10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g} {unit}"
    return str(value)


def counted_json(count: Count | Sum) -> dict[str, object]:
    """One count as `graph --json` and `info --json` give it (explorer.contracts.Counted)."""
    if isinstance(count, Sum):
        found = counted_json(count.count)
        return {**found, "unknown_ops": count.unknown_ops}
    if count.unknown:
        return {"value": None, "formula": "unknown", "why": count.unknown}
    return {"value": count.value, "formula": count.text()}


def op_json(op: OpCounts) -> dict[str, object]:
    return {kind: counted_json(getattr(op, kind)) for kind in KINDS}


def group_json(metrics: ModelMetrics, group: int) -> dict[str, object]:
    sums = metrics.groups[group]
    return {**{kind: counted_json(sums[kind]) for kind in KINDS}, "share": metrics.share("macs", sums["macs"].count)}


def model_json(model: GraphModel, metrics: ModelMetrics) -> dict[str, object]:
    """The totals and the top groups (explorer.contracts.ModelMetrics)."""
    return {
        "dims": metrics.dims,
        "totals": {kind: counted_json(metrics.model[kind]) for kind in KINDS},
        "top_groups": [{"label": model.group_label[g], "path": model.group_path(g), "metrics": group_json(metrics, g)}
                       for g, _ in breakdown(model, metrics)],  # fmt: skip
    }


def summary_lines(model: GraphModel, metrics: ModelMetrics) -> list[str]:
    """`info`'s lines: each total, then the top groups with their share of the multiply-accumulates."""
    bound = ", ".join(f"{name}={size}" for name, size in metrics.dims.items())
    said = {"params": "parameters read by ops"}  # the summary's own `parameters` line counts every initializer
    lines = [f"  {said.get(kind, TITLES[kind])}: {metrics.model[kind].text()}" for kind in KINDS]
    if bound:
        lines.append(f"  dims bound: {bound}")
    top = breakdown(model, metrics)
    if top:
        lines.append("  top groups by multiply-accumulates:")
        for group, found in top:
            share = metrics.share("macs", found.count)
            part = f"{share:.1%} of MACs" if share is not None else "share unknown"
            lines.append(f"    {model.group_label[group]}: {found.text()}, {part}")
    return lines


def _raw_counts(model: GraphModel, counter: OpCounter) -> list[OpCounts | None]:
    """The counter's counts, no dim bound, kept per stamp (the dims' check and the metrics read them both)."""
    stamp = counter.stamp()
    if model.raw_counts_cache is None or model.raw_counts_cache[0] != stamp:
        model.raw_counts_cache = (stamp, counter.counts())
    return model.raw_counts_cache[1]


def dim_names(model: GraphModel) -> list[str]:
    """The symbolic dims the model's counts are written in, sorted (what `--dims` may bind)."""
    counter = model.op_counter
    if counter is None:
        return []
    found: set[str] = set()
    for op in _raw_counts(model, counter):
        if op is not None:
            for kind in KINDS:
                found |= getattr(op, kind).symbols
    return sorted(found)


def unknown_dims(model: GraphModel, dims: Mapping[str, int], declared: Iterable[str] = ()) -> str | None:
    """Why `dims` cannot be bound, in words (a name that is none of the model's dims nor a part of one, like
    `seq` of `batch*seq`), with the model's dims listed; None when every name is one. `declared`: the dims its
    inputs declare (bound before inference, they are in no count)."""
    names = sorted(set(dim_names(model)).union(declared))
    known = set(names).union(*(parts(name) for name in names))
    strangers = [name for name in dims if name not in known]
    if not strangers:
        return None
    listed = ", ".join(names) if names else "none: its counts are numbers already"
    return f"this model has no dim named {', '.join(map(repr, strangers))}; its dims: {listed}"


def parse_dims(text: str) -> dict[str, int]:
    """`batch=1,seq=2048` → {"batch": 1, "seq": 2048}; ValueError naming what is wrong."""
    found: dict[str, int] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        name, equals, size = part.partition("=")
        if not equals or not name.strip() or not size.strip().isdigit() or int(size) <= 0:
            raise ValueError(f"expected NAME=SIZE with a positive whole size, got {part!r}")
        found[name.strip()] = int(size)
    return found


def op_rows(model: GraphModel, node: int) -> list[tuple[str, str]] | None:
    """The details' rows for one op (None for a node that is not one, or a format that counts nothing)."""
    metrics = metrics_of(model)
    op = metrics.ops[node] if metrics is not None else None
    if metrics is None or op is None:
        return None
    rows = [(TITLES[kind], _count_text(getattr(op, kind), metrics, kind)) for kind in KINDS]
    return [*rows, ("rule", op.rule)]


def group_rows(model: GraphModel, group: int) -> list[tuple[str, str]] | None:
    """The details' rows for a group: each sum, with its share of the model."""
    metrics = metrics_of(model)
    if metrics is None:
        return None
    sums = metrics.groups[group]
    return [(TITLES[kind], _count_text(sums[kind].count, metrics, kind, sums[kind].unknown_ops)) for kind in KINDS]


def _count_text(count: Count, metrics: ModelMetrics, kind: str, unknown_ops: int = 0) -> str:
    if count.unknown:
        return f"unknown: {count.unknown}"
    text = Sum(count, unknown_ops).text()
    exact = count.text()
    if count.value is not None and short_count(count) != exact:
        text += f" ({exact})"
    share = metrics.share(kind, count)
    return text + (f", {share:.1%} of the model" if share is not None and kind != "activation_bytes" else "")
