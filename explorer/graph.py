"""The neutral graph every format's document can offer (Capability.GRAPH): nodes, edges and nested groups.

Formats build it with `GraphBuilder` (ONNX nodes and subgraphs, Core ML ops and blocks, ARK nodes, TVM graph
nodes, schedule layers); the graph view, `ir-explorer graph`, the SVG screenshot and the HTML figure all read
it through `explorer.analysis.graph_layout`. Hierarchy comes first: name scopes (`/model/layers.0/attn/MatMul`
→ model › layers.0 › attn) and subgraphs/blocks are groups, and a group with more direct members than CHUNK
gets synthetic chunk groups in topological order, so no level ever shows thousands of boxes at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Deferred(tuple):
    """Arguments for a column's resolver: the value is computed from them on first read."""

    __slots__ = ()


class LazyText:
    """A column of strings some of which are computed on first read (a `Deferred` in their place, handed to
    the column's resolver): a node's type text costs a protobuf walk, and only the boxes on screen need it."""

    __slots__ = ("_values", "_resolve")

    def __init__(self, values: list[Any], resolve: Any = None) -> None:
        self._values = values
        self._resolve = resolve

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, index: int) -> str:
        value = self._values[index]
        if isinstance(value, Deferred):
            value = self._values[index] = str(self._resolve(*value)) if self._resolve else ""
        return value if value is not None else ""

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self._values)))


CHUNK = 400  # most members (nodes and child groups) a group shows directly; more are split into chunk groups
ROOT = -1  # the group id of the top level


@dataclass
class GraphModel:
    """Columns, one entry per node / edge / group. Node and group ids are list indices."""

    node_label: list[str]
    node_op: list[str]
    node_group: np.ndarray  # group id per node, ROOT for the top level
    node_detail: LazyText  # one line: type and shape of the output, or what the node computes
    node_ref: list[Any]  # the tree ref of the node, so selection is shared with the tree
    node_constant: np.ndarray  # bool: folds into its consumers unless constants are shown
    edge_src: np.ndarray
    edge_dst: np.ndarray
    edge_label: list[str]  # the value carried (its name), "" when unknown
    group_label: list[str]
    group_parent: np.ndarray  # parent group id, ROOT for top-level groups
    group_ref: list[Any]
    group_kind: list[str]  # "scope", "subgraph", "block", "module", "chunk", "layer"...
    # A unit group is drawn as a node while closed (a schedule layer that opens into its workloads per core):
    # `graph --json` lists it among the nodes, and "expand all" leaves it closed. Its op, detail and colour
    # values stand in for a node's.
    group_unit: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    group_op: list[str] = field(default_factory=list)
    group_detail: list[str] = field(default_factory=list)
    group_values: dict[str, Any] = field(default_factory=dict)
    dangling: list[tuple[int, str]] = field(default_factory=list)  # (consumer node, value nobody produces)
    # Extra per-node values for the colour modes: name → list (str categories) or np.ndarray (numbers)
    node_values: dict[str, Any] = field(default_factory=dict)
    edge_detail: dict[int, str] = field(default_factory=dict)  # edge → type/shape text, filled on demand
    topo_rank: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    cyclic: bool = False
    _ref_to_node: dict[Any, int] | None = None
    _group_depth: np.ndarray | None = None

    @property
    def ref_to_node(self) -> dict[Any, int]:
        """tree ref → node, built the first time the tree and the graph meet."""
        if self._ref_to_node is None:
            self._ref_to_node = {ref: i for i, ref in enumerate(self.node_ref) if ref is not None}
        return self._ref_to_node

    @property
    def n_nodes(self) -> int:
        return len(self.node_label)

    @property
    def n_groups(self) -> int:
        return len(self.group_label)

    def group_depth(self) -> np.ndarray:
        if self._group_depth is None:  # chunk groups are created after the groups they hold: walk up, memoised
            depth = np.full(self.n_groups, -1, dtype=np.int64)
            parents = self.group_parent.tolist()
            for g in range(self.n_groups):
                chain = []
                while g != ROOT and depth[g] < 0:
                    chain.append(g)
                    g = parents[g]
                base = -1 if g == ROOT else int(depth[g])
                for member in reversed(chain):
                    base += 1
                    depth[member] = base
            self._group_depth = depth
        return self._group_depth

    def ancestors(self, group: int) -> list[int]:
        """Groups from the top down to `group` (inclusive); empty for ROOT."""
        chain = []
        while group != ROOT:
            chain.append(group)
            group = int(self.group_parent[group])
        return chain[::-1]

    def group_path(self, group: int) -> str:
        return " › ".join(self.group_label[g] for g in self.ancestors(group))

    def top_groups(self) -> list[int]:
        return [g for g in range(self.n_groups) if self.group_parent[g] == ROOT]


class GraphBuilder:
    """What a format calls to describe its graph; `build()` adds topological ranks and chunk groups."""

    def __init__(self, resolve: Any = None) -> None:
        """`resolve(*args)` computes the detail or text value given as `Deferred(args)`, when first read."""
        self.resolve = resolve
        self.labels: list[str] = []
        self.ops: list[str] = []
        self.groups: list[int] = []
        self.details: list[str] = []
        self.refs: list[Any] = []
        self.constants: list[bool] = []
        self.src: list[int] = []
        self.dst: list[int] = []
        self.edge_labels: list[str] = []
        self.group_labels: list[str] = []
        self.group_parents: list[int] = []
        self.group_refs: list[Any] = []
        self.group_kinds: list[str] = []
        self.group_units: list[bool] = []
        self.group_ops: list[str] = []
        self.group_details: list[str] = []
        self.group_value_columns: dict[str, list[Any]] = {}
        self.dangling: list[tuple[int, str]] = []
        self.values: dict[str, list[Any]] = {}
        self._scopes: dict[tuple[int, str], int] = {}

    def group(
        self,
        label: str,
        parent: int = ROOT,
        *,
        kind: str = "scope",
        ref: Any = None,
        unit: bool = False,
        op: str = "",
        detail: str = "",
        **values: Any,
    ) -> int:
        """A group; with `unit=True`, one that is drawn as a node (op, detail, colour values) until opened."""
        self.group_labels.append(label)
        self.group_parents.append(parent)
        self.group_refs.append(ref)
        self.group_kinds.append(kind)
        self.group_units.append(unit)
        self.group_ops.append(op)
        self.group_details.append(detail)
        g = len(self.group_labels) - 1
        for key, value in values.items():
            self.group_value_columns.setdefault(key, [None] * g).append(value)
        for column in self.group_value_columns.values():
            if len(column) <= g:
                column.append(None)
        return g

    def scope(self, name: str, parent: int = ROOT) -> int:
        """The group of a name's scope: `/model/layers.0/attn/MatMul` → model › layers.0 › attn (created once).
        A name without '/' stays in `parent`."""
        parts = [p for p in name.split("/") if p][:-1]
        group = parent
        for part in parts:
            key = (group, part)
            found = self._scopes.get(key)
            if found is None:
                found = self._scopes[key] = self.group(part, group, kind="scope")
            group = found
        return group

    def node(
        self,
        label: str,
        op: str,
        *,
        group: int = ROOT,
        detail: str = "",
        ref: Any = None,
        constant: bool = False,
        **values: Any,
    ) -> int:
        self.labels.append(label)
        self.ops.append(op)
        self.groups.append(group)
        self.details.append(detail)
        self.refs.append(ref)
        self.constants.append(constant)
        n = len(self.labels) - 1
        for key, value in values.items():
            column = self.values.get(key)
            if column is None:
                column = self.values[key] = [None] * n
            column.append(value)
        if len(values) < len(self.values):  # keep every column one entry per node
            for key, column in self.values.items():
                if key not in values:
                    column.append(None)
        return n

    def add_nodes(
        self,
        labels: list[str],
        ops: list[str],
        groups: list[int],
        details: list[Any],
        refs: list[Any],
        **values: list[Any],
    ) -> int:
        """Many nodes at once (columns of equal length), for big graphs; returns the first new node's id."""
        first = len(self.labels)
        count = len(labels)
        self.labels += labels
        self.ops += ops
        self.groups += groups
        self.details += details
        self.refs += refs
        self.constants += [False] * count
        for key in set(self.values) | set(values):
            column = self.values.setdefault(key, [None] * first)
            column += values.get(key) or [None] * count
        return first

    def scopes(self, names: list[str], parent: int = ROOT) -> list[int]:
        """The scope group of each name (see `scope`), computed once per distinct scope."""
        prefixes = [name.rpartition("/")[0] for name in names]
        found = {prefix: self.scope(prefix + "/_", parent) for prefix in set(prefixes)}
        return [found[prefix] for prefix in prefixes]

    def edge(self, source: int, target: int, label: str = "") -> None:
        self.src.append(source)
        self.dst.append(target)
        self.edge_labels.append(label)

    def build(self) -> GraphModel:
        n = len(self.labels)
        for column in self.values.values():  # columns started late or missing values at the end
            column.extend([None] * (n - len(column)))
        src = np.asarray(self.src, dtype=np.int64)
        dst = np.asarray(self.dst, dtype=np.int64)
        model = GraphModel(
            node_label=self.labels,
            node_op=self.ops,
            node_group=np.asarray(self.groups, dtype=np.int64),
            node_detail=LazyText(self.details, self.resolve),
            node_ref=self.refs,
            node_constant=np.asarray(self.constants, dtype=bool),
            edge_src=src,
            edge_dst=dst,
            edge_label=self.edge_labels,
            group_label=self.group_labels,
            group_parent=np.asarray(self.group_parents, dtype=np.int64),
            group_ref=self.group_refs,
            group_kind=self.group_kinds,
            dangling=self.dangling,
            node_values={k: _value_column(v, self.resolve) for k, v in self.values.items()},
            group_unit=np.asarray(self.group_units, dtype=bool),
            group_op=self.group_ops,
            group_detail=self.group_details,
            group_values={k: _value_column(v, self.resolve) for k, v in self.group_value_columns.items()},
        )
        model.topo_rank, model.cyclic = topological_rank(n, src, dst)
        _collapse_single_scopes(model)
        _add_chunks(model)
        return model


def _value_column(values: list[Any], resolve: Any) -> Any:
    if values and all(isinstance(v, int | float) or v is None for v in values):
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    return LazyText(values, resolve)


def topological_rank(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, bool]:
    """Each node's position in a topological order (Kahn, ties by id); nodes on cycles follow in id order."""
    rank = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return rank, False
    if src.size == 0 or bool((src < dst).all()):  # already in order (ONNX requires it of its nodes)
        return np.arange(n, dtype=np.int64), False
    keep = src != dst
    s, d = src[keep], dst[keep]
    indegree = np.bincount(d, minlength=n)
    order = np.argsort(s, kind="stable")
    s_sorted, d_sorted = s[order], d[order]
    ptr = np.searchsorted(s_sorted, np.arange(n + 1))
    targets = d_sorted.tolist()
    ptr_list = ptr.tolist()
    degree = indegree.tolist()
    ready = np.flatnonzero(indegree == 0).tolist()
    position = 0
    rank_list = [-1] * n
    head = 0
    while head < len(ready):
        node = ready[head]
        head += 1
        rank_list[node] = position
        position += 1
        for k in range(ptr_list[node], ptr_list[node + 1]):
            t = targets[k]
            degree[t] -= 1
            if degree[t] == 0:
                ready.append(t)
    rank = np.asarray(rank_list, dtype=np.int64)
    cyclic = position < n
    if cyclic:
        left = np.flatnonzero(rank < 0)
        rank[left] = position + np.arange(left.size)
    return rank, cyclic


def _collapse_single_scopes(model: GraphModel) -> None:
    """A scope group whose only member is one node (`/model/Conv` → model › Conv) adds a click and shows
    nothing: such singleton scopes lose that node to their parent. Kept: groups with two or more members."""
    if model.n_groups == 0:
        return
    members = np.bincount(model.node_group[model.node_group >= 0], minlength=model.n_groups)
    child_groups = np.bincount(model.group_parent[model.group_parent >= 0], minlength=model.n_groups)
    lonely = (members == 1) & (child_groups == 0) & np.asarray([k == "scope" for k in model.group_kind], dtype=bool)
    if not lonely.any():
        return
    moved = lonely[np.maximum(model.node_group, 0)] & (model.node_group >= 0)
    model.node_group[moved] = model.group_parent[model.node_group[moved]]
    _drop_groups(model, np.flatnonzero(~lonely))


def _drop_groups(model: GraphModel, kept: np.ndarray) -> None:
    new_id = np.full(model.n_groups, ROOT, dtype=np.int64)
    new_id[kept] = np.arange(kept.size)
    parents = model.group_parent[kept]
    model.group_parent = np.where(parents >= 0, new_id[np.maximum(parents, 0)], ROOT)
    model.group_label = [model.group_label[g] for g in kept.tolist()]
    model.group_ref = [model.group_ref[g] for g in kept.tolist()]
    model.group_kind = [model.group_kind[g] for g in kept.tolist()]
    model.group_unit = model.group_unit[kept]
    model.group_op = [model.group_op[g] for g in kept.tolist()]
    model.group_detail = [model.group_detail[g] for g in kept.tolist()]
    model.group_values = {
        k: (v[kept] if isinstance(v, np.ndarray) else LazyText([v[g] for g in kept.tolist()]))
        for k, v in model.group_values.items()
    }
    model.node_group = np.where(model.node_group >= 0, new_id[np.maximum(model.node_group, 0)], ROOT)
    model._group_depth = None


def _add_chunks(model: GraphModel) -> None:
    """Split every group (and the top level) with more than CHUNK direct members into chunk groups of
    consecutive members in topological order; repeat while a level is still too wide."""
    for _ in range(4):  # CHUNK**4 members is far beyond any real graph
        counts: dict[int, int] = {}
        for g in model.node_group.tolist():
            counts[g] = counts.get(g, 0) + 1
        for g in model.group_parent.tolist():
            counts[g] = counts.get(g, 0) + 1
        wide = [g for g, c in counts.items() if c > CHUNK]
        if not wide:
            return
        for group in wide:
            _chunk_group(model, group)


def _chunk_group(model: GraphModel, group: int) -> None:
    nodes = np.flatnonzero(model.node_group == group)
    subgroups = np.flatnonzero(model.group_parent == group)
    # a member's place in topological order: a node's rank, a group's smallest member rank
    group_rank = _group_min_rank(model)
    keys = np.concatenate([model.topo_rank[nodes], group_rank[subgroups]])
    kinds = np.concatenate([np.zeros(nodes.size, dtype=np.int64), np.ones(subgroups.size, dtype=np.int64)])
    ids = np.concatenate([nodes, subgroups])
    order = np.argsort(keys, kind="stable")
    kinds, ids = kinds[order], ids[order]
    total = ids.size
    for lo in range(0, total, CHUNK):
        hi = min(lo + CHUNK, total)
        chunk = len(model.group_label)
        model.group_label.append(f"{'nodes' if (kinds[lo:hi] == 0).all() else 'members'} {lo}–{hi - 1}")
        model.group_ref.append(None)
        model.group_kind.append("chunk")
        model.group_unit = np.append(model.group_unit, False)
        model.group_op.append("")
        model.group_detail.append("")
        for key, column in model.group_values.items():
            model.group_values[key] = (
                np.append(column, np.nan) if isinstance(column, np.ndarray) else LazyText([*column, ""])
            )
        model.group_parent = np.append(model.group_parent, group)
        part_nodes = ids[lo:hi][kinds[lo:hi] == 0]
        part_groups = ids[lo:hi][kinds[lo:hi] == 1]
        model.node_group[part_nodes] = chunk
        model.group_parent[part_groups] = chunk
    model._group_depth = None


def _group_min_rank(model: GraphModel) -> np.ndarray:
    """The smallest topological rank of the nodes inside each group (at any depth)."""
    big = np.iinfo(np.int64).max
    best = np.full(model.n_groups, big, dtype=np.int64)
    grouped = model.node_group >= 0
    np.minimum.at(best, model.node_group[grouped], model.topo_rank[grouped])
    depth = model.group_depth()
    for g in np.argsort(-depth, kind="stable").tolist():  # deepest first: push minima up to the parents
        parent = int(model.group_parent[g])
        if parent != ROOT and best[g] < best[parent]:
            best[parent] = best[g]
    return best


def count_nodes(model: GraphModel) -> np.ndarray:
    """How many nodes each group holds at any depth."""
    counts = np.zeros(model.n_groups, dtype=np.int64)
    grouped = model.node_group >= 0
    np.add.at(counts, model.node_group[grouped], 1)
    depth = model.group_depth()
    for g in np.argsort(-depth, kind="stable").tolist():
        parent = int(model.group_parent[g])
        if parent != ROOT:
            counts[parent] += counts[g]
    return counts


def search_nodes(model: GraphModel, text: str, limit: int = 10_000) -> list[int]:
    """Nodes whose name or op type contains `text` (case-insensitive), in topological order."""
    text = text.strip().lower()
    if not text:
        return []
    found = [n for n, (label, op) in enumerate(zip(model.node_label, model.node_op, strict=True))
             if text in label.lower() or text in op.lower()]  # fmt: skip
    found.sort(key=lambda n: int(model.topo_rank[n]))
    return found[:limit]
