"""Two documents' graphs prepared for side-by-side viewing: each side a copy of its graph (the documents' own
graphs stay as they are) with a "diff" column (0 same, 1 changed, 2 only in A, 3 only in B; a group holds the
most telling status of what it contains), the node matching, and the changes in reading order for `n`/`N`.

Two schedules compare their layers by name, with the time and L2 peak deltas (B − A) as colour modes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from explorer.document import Document
from explorer.graph.match import CHANGED, ONLY, SAME, GraphMatch, match_graphs
from explorer.graph.node_data import NodeDataSet, apply_node_data
from explorer.models.graph import VALUE_OPS, GraphModel, strongest_inside
from explorer.models.ref import Ref

REMOVED, ADDED = 2, 3  # the diff column's values for a side's ONLY


class NotComparableGraphs(ValueError):
    """The two files cannot be compared side by side (different formats, or one has no graph)."""


@dataclass
class Comparison:
    a: GraphModel  # annotated copies
    b: GraphModel
    match: GraphMatch
    changes: list[tuple[str, int]] = field(default_factory=list)  # ("a" | "b", node), in reading order

    def ops(self, side: str) -> list[int]:
        """The side's nodes that are ops of the file: not its input, output and folded constant boxes. What
        `diff` and this screen count, so both say the same numbers."""
        model = self.a if side == "a" else self.b
        return [n for n in range(model.n_nodes) if not model.node_constant[n] and model.node_op[n] not in VALUE_OPS]

    def summary(self) -> str:
        counts = self.match.counts(self.ops("a"), self.ops("b"))
        by_name, by_structure = counts["matched_by_name"], counts["matched_by_structure"]
        how = f"by name {by_name:,}, by structure {by_structure:,}"
        if counts["matched_in_layer"]:
            how = f"in their layers {counts['matched_in_layer']:,}, " + how
        return (f"{counts['changed']:,} changed, {counts['removed']:,} removed, {counts['added']:,} added · "
                f"matched {how}")  # fmt: skip

    def describe(self, side: str, node: int) -> str:
        """One line about a node of one side: its match, how it was matched, what changed."""
        match, here, there = self.match, (self.a if side == "a" else self.b), (self.b if side == "a" else self.a)
        other = int(match.a_to_b[node] if side == "a" else match.b_to_a[node])
        name = f"{here.node_label[node]} ({here.node_op[node]})"
        if other < 0:
            return f"{'removed' if side == 'a' else 'added'}: {name} is only in {side.upper()}"
        a_node = node if side == "a" else other
        how = match.how(a_node)
        what = match.what.get(a_node, "")
        said = f"changed: {what}" if what else "same"  # first: what a narrow terminal must still show
        # how it paired before the names: at 80 columns the names (long scoped paths) are what gives way
        return f"{said} · matched {how} · {name} ⇄ {there.node_label[other]} ({there.node_op[other]})"


def _attributes(document: Document, ref: Ref | None, as_written: bool) -> str:
    return document.view.node_attributes(ref, as_written) if ref is not None else ""


def compare_documents(a: Document, b: Document, as_written: bool = False) -> Comparison:
    """Raises NotComparableGraphs when the files differ in format or one of them has no graph. `as_written`:
    what only shape inference or an attribute written at its default makes differ counts as a change."""
    from explorer.document import Capability

    if a.meta.format != b.meta.format:
        raise NotComparableGraphs(f"cannot compare a {a.meta.format} file with a {b.meta.format} file side by side")
    for document in (a, b):
        if not document.offers(Capability.GRAPH):
            raise NotComparableGraphs(f"{document.meta.source.name} has no graph to compare")
    model_a, model_b = _copy(a.view.drawn_graph()), _copy(b.view.drawn_graph())
    match = match_graphs(model_a, model_b, lambda n: _attributes(a, model_a.node_ref[n], as_written),
                         lambda n: _attributes(b, model_b.node_ref[n], as_written), as_written)  # fmt: skip
    _mark(model_a, match.status_a, REMOVED)
    _mark(model_b, match.status_b, ADDED)
    if a.is_schedule:
        _layer_deltas(model_a, model_b)
    changes = [("a", n) for n in _in_order(model_a, np.flatnonzero(match.status_a > SAME))]  # changed, removed
    changes += [("b", n) for n in _in_order(model_b, np.flatnonzero(match.status_b == ONLY))]
    return Comparison(model_a, model_b, match, changes)


def _copy(model: GraphModel) -> GraphModel:
    """A copy whose value columns and data sets can be added to without touching the document's graph."""
    found = copy.copy(model)
    found.node_values = dict(model.node_values)
    found.group_values = dict(model.group_values)
    found.data_sets = dict(model.data_sets)
    return found


def _mark(model: GraphModel, status: np.ndarray, only: int) -> None:
    column = np.where(status == ONLY, only, status).astype(np.float64)
    column[status < 0] = np.nan
    model.node_values["diff"] = column
    # what a closed group shows: anything changed inside beats "same", and one side's own nodes beat both
    best = strongest_inside(model, status)  # ranked as the statuses are: SAME 0 < CHANGED 1 < ONLY 2
    model.group_values["diff"] = np.where(best >= 0, np.asarray([SAME, CHANGED, only], np.float64)[best.clip(0)],
                                          np.nan)  # fmt: skip


def _in_order(model: GraphModel, nodes: np.ndarray) -> list[int]:
    return nodes[np.argsort(model.topo_rank[nodes], kind="stable")].tolist()


def _layer_deltas(a: GraphModel, b: GraphModel) -> None:
    """Per layer (a schedule's unit groups, matched by name): B − A of time and L2 peak, on both sides, as
    diverging data sets; a layer on one side only has none."""
    units_a = {a.group_label[g]: g for g in range(a.n_groups) if a.group_unit[g]}
    units_b = {b.group_label[g]: g for g in range(b.n_groups) if b.group_unit[g]}
    for key, title in (("time", "time Δ"), ("l2_peak", "L2 peak Δ")):
        column_a, column_b = a.group_values.get(key), b.group_values.get(key)
        if not isinstance(column_a, np.ndarray) or not isinstance(column_b, np.ndarray):
            continue
        delta_a, delta_b = np.full(a.n_groups, np.nan), np.full(b.n_groups, np.nan)
        for name, g in units_a.items():
            h = units_b.get(name)
            if h is not None:
                delta_a[g] = delta_b[h] = float(column_b[h]) - float(column_a[g])
        for model, delta in ((a, delta_a), (b, delta_b)):
            data = NodeDataSet(f"data: {title}", "comparison", np.full(model.n_nodes, np.nan), delta,
                               keys=len(units_a), matched=int(np.isfinite(delta).sum()), centre=0.0)  # fmt: skip
            apply_node_data(model, data)
