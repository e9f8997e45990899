"""Two graphs side by side: which node of one is which node of the other, and what changed.

Nodes are matched by name first. Where names differ (another exporter, a renamed model) they are matched by
structure: each node gets a label from its op type and, round after round, the labels around it (its producers
and its readers, as Weisfeiler-Lehman colour refinement does); a label that only one node carries on each side
pairs them, and pairs grow along edges (a matched node's unmatched producers and readers of one op type pair
up in input order). What is left of one op type pairs in topological order when both sides have as many.
A matched pair is "changed" when its op, output type, attributes or folded weights differ.

Pure functions over the two GraphModels; the TUI's compare screen and `diff` read the result.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from explorer.graph.text import without_placeholders
from explorer.models.graph import GraphModel

SAME, CHANGED, ONLY = 0, 1, 2  # status of a node: matched and equal, matched and different, on one side only
STATUS_NAMES = {SAME: "same", CHANGED: "changed", ONLY: "only here"}
ROUNDS = 3  # label refinement rounds: enough context to tell repeated blocks' positions apart locally

Pairing = Callable[[int, int, bool], None]  # pair(a node, b node, by structure)


@dataclass
class GraphMatch:
    a_to_b: np.ndarray  # per node of A: its match in B, -1 for none (folded constants are not matched)
    b_to_a: np.ndarray
    by_structure: np.ndarray  # per node of A: matched although named apart
    status_a: np.ndarray  # per node of A: SAME, CHANGED or ONLY (removed); -1 for folded constants
    status_b: np.ndarray  # per node of B: SAME, CHANGED or ONLY (added)
    what: dict[int, str] = field(default_factory=dict)  # node of A → what changed
    # per node of A: paired inside its schedule layer of the same name, by order in it (a schedule's workloads)
    in_layer: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def how(self, a_node: int) -> str:
        """How a node of A was paired, in the words the compare screen prints."""
        if self.in_layer.size and self.in_layer[a_node]:
            return "in its layer, by order"
        return "by structure" if self.by_structure[a_node] else "by name"

    def counts(self, among_a: list[int] | None = None, among_b: list[int] | None = None) -> dict[str, int]:
        """The pairs, changes, removals and additions, over every node or over those named (a side's ops)."""
        in_layer = self.in_layer if self.in_layer.size else np.zeros(self.a_to_b.size, dtype=bool)
        a = np.zeros(self.a_to_b.size, dtype=bool)
        a[among_a if among_a is not None else slice(None)] = True
        b = np.zeros(self.b_to_a.size, dtype=bool)
        b[among_b if among_b is not None else slice(None)] = True
        matched = (self.a_to_b >= 0) & a
        return {
            "matched_by_name": int((matched & ~self.by_structure & ~in_layer).sum()),
            "matched_by_structure": int((matched & self.by_structure & ~in_layer).sum()),
            "matched_in_layer": int((matched & in_layer).sum()),
            "changed": int(((self.status_a == CHANGED) & a).sum()),
            "removed": int(((self.status_a == ONLY) & a).sum()),
            "added": int(((self.status_b == ONLY) & b).sum()),
        }


def match_graphs(
    a: GraphModel, b: GraphModel, attributes_a: Callable[[int], str] | None = None,
    attributes_b: Callable[[int], str] | None = None, as_written: bool = False,
) -> GraphMatch:  # fmt: skip
    """Match the drawn nodes of `a` and `b` (see the module's docstring); `attributes_x(node)` gives a node's
    attributes as comparable text (the format's; "" when it has none). `as_written`: a type that differs only
    where shape inference knew less on one side is a change too (else it is the same model)."""
    drawn_a, drawn_b = ~a.node_constant, ~b.node_constant
    a_to_b = np.full(a.n_nodes, -1, dtype=np.int64)
    b_to_a = np.full(b.n_nodes, -1, dtype=np.int64)
    structure = np.zeros(a.n_nodes, dtype=bool)

    def pair(x: int, y: int, by_structure: bool) -> None:
        a_to_b[x], b_to_a[y] = y, x
        structure[x] = by_structure

    # 0. schedules: a workload pairs only inside the layer of the same name, by its order there (two schedules
    # of one model number their workloads alike, so names alone would pair Conv_15's with Conv_12's)
    in_layer = _pair_in_layers(a, b, drawn_a, drawn_b, pair)
    # 1. by name (unique names on both sides)
    names_a = _unique(a.node_label, drawn_a & (a_to_b < 0))
    names_b = _unique(b.node_label, drawn_b & (b_to_a < 0))
    for name, x in names_a.items():  # one name on each side: the same node, its op changed or not
        y = names_b.get(name)
        if y is not None:
            pair(x, y, False)
    # 1b. by the weights folded into them, by name (unique on both sides): an embedding or a Q/K/V projection
    # keeps its parameter's name through any exporter, where its structure is the same as its siblings'
    held_a, held_b = _weight_names(a), _weight_names(b)
    weights_a = _unique(held_a, drawn_a & (a_to_b < 0) & _has_weights(held_a))
    weights_b = _unique(held_b, drawn_b & (b_to_a < 0) & _has_weights(held_b))
    for key, x in weights_a.items():
        y = weights_b.get(key)
        if y is not None and a.node_op[x] == b.node_op[y]:
            pair(x, y, True)
    _grow(a, b, a_to_b, b_to_a, pair)
    # 2. by structure: refined labels unique on both sides
    labels_a, labels_b = _refined_labels(a), _refined_labels(b)
    for _ in range(2):
        free_a = _unique(labels_a, drawn_a & (a_to_b < 0))
        free_b = _unique(labels_b, drawn_b & (b_to_a < 0))
        for label, x in free_a.items():
            y = free_b.get(label)
            if y is not None:
                pair(x, y, True)
        _grow(a, b, a_to_b, b_to_a, pair)
    # 3. what is left of one op type, in topological order, when both sides have as many
    left_a, left_b = _by_op(a, drawn_a & (a_to_b < 0)), _by_op(b, drawn_b & (b_to_a < 0))
    for op, xs in left_a.items():
        ys = left_b.get(op, [])
        if len(xs) == len(ys):
            for x, y in zip(xs, ys, strict=True):
                pair(x, y, True)
    # statuses
    status_a = np.where(drawn_a, ONLY, -1).astype(np.int64)
    status_b = np.where(drawn_b, ONLY, -1).astype(np.int64)
    what: dict[int, str] = {}
    attributes_a = attributes_a or (lambda node: "")
    attributes_b = attributes_b or (lambda node: "")
    for x in np.flatnonzero(a_to_b >= 0).tolist():
        y = int(a_to_b[x])
        differs = _differences(a, b, x, y, attributes_a(x), attributes_b(y), as_written)
        status_a[x] = status_b[y] = CHANGED if differs else SAME
        if differs:
            what[x] = differs
    return GraphMatch(a_to_b, b_to_a, structure, status_a, status_b, what, in_layer)


def _pair_in_layers(a: GraphModel, b: GraphModel, drawn_a: np.ndarray, drawn_b: np.ndarray,
                    pair: Pairing) -> np.ndarray:  # fmt: skip
    """Pair the members of unit groups (schedule layers) of the same name, in file order; per node of A, whether
    it was paired so. Nothing when either side has no unit groups (a model's graph)."""
    in_layer = np.zeros(a.n_nodes, dtype=bool)
    if not (a.group_unit.size and a.group_unit.any() and b.group_unit.size and b.group_unit.any()):
        return in_layer
    layers_b = {b.group_label[g]: g for g in np.flatnonzero(b.group_unit).tolist()}
    members_a, members_b = _members(a, drawn_a), _members(b, drawn_b)
    for g in np.flatnonzero(a.group_unit).tolist():
        h = layers_b.get(a.group_label[g])
        if h is None:
            continue
        for x, y in zip(members_a.get(g, []), members_b.get(h, []), strict=False):
            pair(x, y, False)
            in_layer[x] = True
    return in_layer


def _members(model: GraphModel, drawn: np.ndarray) -> dict[int, list[int]]:
    """Per group: its drawn member nodes, in file order."""
    found: dict[int, list[int]] = {}
    for n in np.flatnonzero(drawn & (model.node_group >= 0)).tolist():
        found.setdefault(int(model.node_group[n]), []).append(n)
    return found


def _unique(labels: Sequence[Hashable], mask: np.ndarray) -> dict[Hashable, int]:
    counts = Counter(labels[n] for n in np.flatnonzero(mask).tolist())
    return {labels[n]: n for n in np.flatnonzero(mask).tolist() if counts[labels[n]] == 1}


def _weight_names(model: GraphModel) -> list[tuple[str, ...]]:
    """Per node: the names of the weights folded into it, sorted (empty for none). Shape values are not weights:
    their names are the exporter's numbering (`val_12`), the same in two exports of different models."""
    shape_only = model.node_shape_only
    return [tuple(sorted(model.node_label[source] for _, source, _ in model.folded_inputs(n)
                         if not (shape_only.size and shape_only[source])))
            for n in range(model.n_nodes)]  # fmt: skip


def _has_weights(names: list[tuple[str, ...]]) -> np.ndarray:
    return np.fromiter((bool(found) for found in names), dtype=bool, count=len(names))


def _refined_labels(model: GraphModel) -> list[int]:
    """Per node: a label from its op and the shapes of the weights folded into it (an embedding's 512×128 table
    tells it from every other Gather, whatever the exporter named it), then, ROUNDS times over, the sorted
    labels of its producers and readers (drawn nodes only)."""
    drawn = ~model.node_constant
    labels = [hash((op, tuple(sorted(detail for _, detail in _folded(model, n))) if drawn[n] else ()))
              for n, op in enumerate(model.node_op)]  # fmt: skip
    keep = drawn[model.edge_src] & drawn[model.edge_dst]
    src, dst = model.edge_src[keep].tolist(), model.edge_dst[keep].tolist()
    producers: list[list[int]] = [[] for _ in range(model.n_nodes)]
    readers: list[list[int]] = [[] for _ in range(model.n_nodes)]
    for s, d in zip(src, dst, strict=True):
        producers[d].append(s)
        readers[s].append(d)
    for _ in range(ROUNDS):
        labels = [hash((labels[n], tuple(sorted(labels[p] for p in producers[n])),
                        tuple(sorted(labels[r] for r in readers[n])))) for n in range(model.n_nodes)]  # fmt: skip
    return labels


def _grow(a: GraphModel, b: GraphModel, a_to_b: np.ndarray, b_to_a: np.ndarray, pair: Pairing) -> None:
    """Pairs spread along edges: a matched pair's unmatched producers (in input order) and readers of the same
    op type pair up, one for one, when each side has exactly as many."""
    queue = np.flatnonzero(a_to_b >= 0).tolist()
    while queue:
        x = queue.pop()
        y = int(a_to_b[x])
        for near_a, near_b in ((_producers(a, x), _producers(b, y)), (a.readers(x).tolist(), b.readers(y).tolist())):
            free_a = _by_op_list(a, [n for n in near_a if a_to_b[n] < 0 and not a.node_constant[n]])
            free_b = _by_op_list(b, [n for n in near_b if b_to_a[n] < 0 and not b.node_constant[n]])
            for op, xs in free_a.items():
                ys = free_b.get(op, [])
                if len(xs) == len(ys):
                    for p, q in zip(xs, ys, strict=True):
                        if a_to_b[p] < 0 and b_to_a[q] < 0:
                            pair(p, q, True)
                            queue.append(p)


def _producers(model: GraphModel, node: int) -> list[int]:
    return [int(model.edge_src[e]) for e in model.in_edges(node).tolist()]


def _by_op_list(model: GraphModel, nodes: list[int]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for n in dict.fromkeys(nodes):
        found.setdefault(model.node_op[n], []).append(n)
    return found


def _by_op(model: GraphModel, mask: np.ndarray) -> dict[str, list[int]]:
    nodes = np.flatnonzero(mask)
    return _by_op_list(model, nodes[np.argsort(model.topo_rank[nodes], kind="stable")].tolist())


# ops whose inputs may come in either order: `Add(bias, x)` and `Add(x, bias)` are the same model (the two torch
# exporters write them so)
COMMUTATIVE = frozenset({"Add", "Mul", "Sum", "Max", "Min", "Mean", "And", "Or", "Xor", "Equal", "BitwiseAnd",
                         "BitwiseOr", "BitwiseXor"})  # fmt: skip


def _folded(model: GraphModel, node: int) -> list[tuple[str, str]]:
    """The weights folded into a node as (its input's role, their type); no role for a commutative op's."""
    anywhere = model.node_op[node] in COMMUTATIVE
    return sorted(("" if anywhere else role, model.node_detail[source])
                  for _, source, role in model.folded_inputs(node))  # fmt: skip


def _differences(a: GraphModel, b: GraphModel, x: int, y: int, attributes_x: str, attributes_y: str,
                 as_written: bool = False) -> str:  # fmt: skip
    """What differs between two matched nodes ("" when nothing does): op, output type, attributes, weights."""
    found = []
    if a.node_op[x] != b.node_op[y]:
        found.append(f"op {a.node_op[x]} → {b.node_op[y]}")
    inferred_only = a.detail_is_type and not as_written and same_but_inferred(a.node_detail[x], b.node_detail[y])
    if a.node_detail[x] != b.node_detail[y] and not inferred_only:
        word = "type" if a.detail_is_type else "time"  # a schedule's workload detail is its time
        found.append(f"{word} {without_placeholders(a.node_detail[x]) or '?'} → "
                     f"{without_placeholders(b.node_detail[y]) or '?'}")  # fmt: skip
    if attributes_x != attributes_y:
        names = _changed_attributes(attributes_x, attributes_y)
        found.append(f"attributes {names}" if names else "attributes")
    if _folded_differ(a, b, x, y, as_written):
        found.append("folded weights")
    return "; ".join(found)


def _folded_differ(a: GraphModel, b: GraphModel, x: int, y: int, as_written: bool) -> bool:
    """Whether two matched nodes fold different weights: as many, in the same roles, of the same types, a type
    unknown on one side (a constant an exporter left uncomputed, not inferred) counting as the same unless
    `as_written`."""
    folded_x, folded_y = _folded(a, x), _folded(b, y)
    if folded_x == folded_y:
        return False
    if as_written or not a.detail_is_type or len(folded_x) != len(folded_y):
        return True
    return any(role_x != role_y or not same_but_inferred(type_x, type_y)
               for (role_x, type_x), (role_y, type_y) in zip(folded_x, folded_y, strict=True))  # fmt: skip


_TYPE = re.compile(r"([A-Za-z0-9_]+)\[([^\]]*)\]")


def same_but_inferred(x: str, y: str) -> bool:
    """Two type texts that differ only where shape inference knew less on one side (`float32[batch, seq, 768]`
    against `float32[?, ?, 768]`, or no type at all): the same model, inferred differently; not a change. A
    different element type, rank or size is."""
    if x in ("", "?") or y in ("", "?"):  # no type known on one side
        return True
    left, right = _TYPE.findall(x), _TYPE.findall(y)
    if not left or len(left) != len(right):
        return False
    for (type_x, dims_x), (type_y, dims_y) in zip(left, right, strict=True):
        sizes_x, sizes_y = dims_x.split(","), dims_y.split(",")
        if type_x != type_y or len(sizes_x) != len(sizes_y):
            return False
        for size_x, size_y in zip(sizes_x, sizes_y, strict=True):
            size_x, size_y = size_x.strip(), size_y.strip()
            if size_x != size_y and size_x.isdigit() and size_y.isdigit():
                return False
    return True


def _changed_attributes(x: str, y: str) -> str:
    """The attribute names whose `name=digest` entries differ between two attribute texts."""
    left = dict(item.partition("=")[::2] for item in x.split(",") if item)
    right = dict(item.partition("=")[::2] for item in y.split(",") if item)
    return ", ".join(sorted(k for k in set(left) | set(right) if left.get(k) != right.get(k)))


def diff_column(model: GraphModel, status: np.ndarray) -> np.ndarray:
    """The "diff" colour column of one side: 0 same, 1 changed, 2 only on this side, NaN for folded."""
    return np.where(status >= 0, status, np.nan).astype(np.float64)
