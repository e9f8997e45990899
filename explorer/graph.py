"""The neutral graph every format's document can offer (Capability.GRAPH): nodes, edges and nested groups.

Formats build it with `GraphBuilder` (ONNX nodes and subgraphs, Core ML ops and blocks, ARK nodes, TVM graph
nodes, schedule layers); the graph view, `ir-explorer graph`, the SVG screenshot and the HTML figure all read
it through `explorer.analysis.graph_layout`. `build()` shapes it the way a reader sees a model:
- constants fold: what a format marks constant (initializers, `Constant` ops, parameters) and every op whose
  inputs are all constants, transitively (torch's `Identity` weights, `Unsqueeze`/`ConstantOfShape` chains),
  is drawn inside the box that reads it, not as a box of its own;
- groups follow the model: name scopes (`/model/layers.0/attn/MatMul` → model › layers.0 › attn) and
  subgraphs/blocks are groups, and a folded constant with no scope of its own joins the deepest group holding
  all its readers (a weight sits in the layer that uses it, not above the whole model); drawn ops keep the
  place the exporter gave them;
- a level with more than CHUNK drawn members gets chunk groups cut along the topological order of what it
  draws, so no level ever shows thousands of boxes at once and chunks never form a cycle of their own.
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


CHUNK = 400  # most drawn members (nodes and child groups) a group shows directly; more are split into chunks
ROOT = -1  # the group id of the top level
READING_PATH = 8  # drawn nodes from the first input whose groups the first screen opens first
# ops that stand for a graph's own values: never folded as constants, never moved into their readers' group
VALUE_OPS = frozenset({"input", "output", "block input"})


@dataclass
class GraphModel:
    """Columns, one entry per node / edge / group. Node and group ids are list indices."""

    node_label: list[str]
    node_op: list[str]
    node_group: np.ndarray  # group id per node, ROOT for the top level
    node_detail: LazyText  # one line: type and shape of the output, or what the node computes
    node_ref: list[Any]  # the tree ref of the node, so selection is shared with the tree
    node_constant: np.ndarray  # bool: folds into its consumers unless constants are shown (closed under build)
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
    # per node: the drawn node a folded constant is drawn in (its first reader in topological order, through
    # other constants), -1 for drawn nodes and constants nobody reads
    node_folded_into: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # role_of(node, value name) → (the input's position, its formal name such as "W" or "B", "" unknown)
    role_of: Any = None
    # per node: the lane it runs on (a schedule workload's core), -1 for none; an opened group whose members all
    # have lanes lays them out as a grid, one row per lane
    node_lane: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    _ref_to_node: dict[Any, int] | None = None
    _group_depth: np.ndarray | None = None
    _inputs: tuple[np.ndarray, np.ndarray] | None = None
    _outputs: tuple[np.ndarray, np.ndarray] | None = None
    _usual_dtype: str | None = None
    _heights: np.ndarray | None = None
    _reading_start: int | None = None

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

    def in_edges(self, node: int) -> np.ndarray:
        """The edges into a node, in the order the format added them (its inputs' order)."""
        if self._inputs is None:
            order = np.argsort(self.edge_dst, kind="stable")
            self._inputs = order, np.searchsorted(self.edge_dst[order], np.arange(self.n_nodes + 1))
        order, ptr = self._inputs
        return order[ptr[node] : ptr[node + 1]]

    def readers(self, node: int) -> np.ndarray:
        """The nodes a node's edges lead to, in the order the format added the edges."""
        if self._outputs is None:
            order = np.argsort(self.edge_src, kind="stable")
            self._outputs = self.edge_dst[order], np.searchsorted(self.edge_src[order], np.arange(self.n_nodes + 1))
        targets, ptr = self._outputs
        return targets[ptr[node] : ptr[node + 1]]

    def folded_inputs(self, node: int) -> list[tuple[int, int, str]]:
        """The constants a drawn node reads directly, as (edge, constant node, role), in the order of the node's
        inputs where the format knows it: what its box folds."""
        found = []
        for e in self.in_edges(node).tolist():
            source = int(self.edge_src[e])
            if self.node_constant[source] and source != node:
                slot, role = self.role_of(node, self.edge_label[e]) if self.role_of is not None else (0, "")
                found.append((slot, e, source, role or ""))
        found.sort(key=lambda f: (f[0], f[1]))
        return [(e, source, role) for _, e, source, role in found]

    def constant_chain(self, node: int, limit: int = 64) -> list[int]:
        """A folded constant and the constants it is computed from (breadth first, at most `limit`): what the
        details panel lists under a folded input."""
        seen, frontier = [node], [node]
        while frontier and len(seen) < limit:
            nxt = []
            for n in frontier:
                for e in self.in_edges(n).tolist():
                    source = int(self.edge_src[e])
                    if self.node_constant[source] and source not in seen and len(seen) < limit:
                        seen.append(source)
                        nxt.append(source)
            frontier = nxt
        return seen


class GraphBuilder:
    """What a format calls to describe its graph; `build()` adds topological ranks and chunk groups."""

    def __init__(self, resolve: Any = None, role_of: Any = None) -> None:
        """`resolve(*args)` computes the detail or text value given as `Deferred(args)`, when first read;
        `role_of(node, value name)` places and names the input of a node that reads a value (GraphModel.role_of)."""
        self.resolve = resolve
        self.role_of = role_of
        self.labels: list[str] = []
        self.ops: list[str] = []
        self.groups: list[int] = []
        self.details: list[str] = []
        self.refs: list[Any] = []
        self.constants: list[bool] = []
        self.lanes: list[int] = []
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
        self._roles: dict[tuple[int, str], tuple[int, str]] = {}  # (target, value) → (slot, role), from edge()

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
        lane: int = -1,
        **values: Any,
    ) -> int:
        self.lanes.append(lane)
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
        constants: list[bool] | None = None,
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
        self.constants += constants if constants is not None else [False] * count
        self.lanes += [-1] * count
        for key in set(self.values) | set(values):
            column = self.values.setdefault(key, [None] * first)
            column += values.get(key) or [None] * count
        return first

    def scopes(self, names: list[str], parent: int = ROOT) -> list[int]:
        """The scope group of each name (see `scope`), computed once per distinct scope."""
        prefixes = [name.rpartition("/")[0] for name in names]
        # dict.fromkeys, not set(): groups are numbered in the order their names first appear, under any hash seed
        found = {prefix: self.scope(prefix + "/_", parent) for prefix in dict.fromkeys(prefixes)}
        return [found[prefix] for prefix in prefixes]

    def edge(self, source: int, target: int, label: str = "", role: str = "", slot: int = 0) -> None:
        """An edge carrying the value `label`; `role`/`slot` name and place the target's input that reads it
        (GraphModel.role_of), for formats that know them while they add edges."""
        self.src.append(source)
        self.dst.append(target)
        self.edge_labels.append(label)
        if role:
            self._roles[(target, label)] = (slot, role)

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
        model.role_of = self.role_of
        model.node_lane = np.asarray(self.lanes, dtype=np.int64)
        if model.role_of is None and self._roles:
            roles = self._roles
            model.role_of = lambda node, value: roles.get((node, value), (0, ""))
        model.topo_rank, model.cyclic = topological_rank(n, src, dst)
        fold_constants(model)
        adopt_unscoped(model)
        _collapse_single_scopes(model)
        _add_chunks(model)
        reading_start(model)  # worked out here: a big graph is built in the background, its first screen is not
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


def _successors(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[list[int], list[int]]:
    """CSR of the edges by source (self-loops dropped): targets[ptr[v]:ptr[v + 1]] are v's successors."""
    keep = src != dst
    s, d = src[keep], dst[keep]
    order = np.argsort(s, kind="stable")
    return d[order].tolist(), np.searchsorted(s[order], np.arange(n + 1)).tolist()


def _value_ops(model: GraphModel) -> np.ndarray:
    return np.fromiter(map(VALUE_OPS.__contains__, model.node_op), dtype=bool, count=model.n_nodes)


def fold_constants(model: GraphModel) -> None:
    """Close `node_constant` over the graph and say where each folded constant is drawn.

    An op whose every input is a constant is a constant too (a worklist over the constants' readers: a chain of
    10,000 folds without recursion); an op reading a graph input, a value nobody produces or anything computed
    from them is never folded. A folded constant is drawn in its first reader in topological order that is
    drawn, reached through other constants."""
    n = model.n_nodes
    constant = model.node_constant.copy()
    model.node_folded_into = np.full(n, -1, dtype=np.int64)
    if n == 0 or model.edge_src.size == 0:
        return
    src, dst = model.edge_src, model.edge_dst
    keep = src != dst
    indegree = np.bincount(dst[keep], minlength=n)
    waiting = (indegree - np.bincount(dst[keep & constant[src]], minlength=n)).tolist()
    blocked = _value_ops(model) | constant
    for node, _ in model.dangling:
        blocked[node] = True
    targets, ptr = _successors(n, src, dst)
    work = np.flatnonzero((indegree > 0) & (np.asarray(waiting) == 0) & ~blocked).tolist()
    for node in work:
        constant[node] = True
    blocked_list = blocked.tolist()
    head = 0
    while head < len(work):
        node = work[head]
        head += 1
        for k in range(ptr[node], ptr[node + 1]):
            t = targets[k]
            waiting[t] -= 1
            if waiting[t] == 0 and not blocked_list[t] and not constant[t]:
                constant[t] = True
                work.append(t)
    model.node_constant = constant
    # where each constant is drawn: readers first (reverse topological order), the earliest drawn one
    rank = model.topo_rank.tolist()
    into = model.node_folded_into.tolist()
    is_constant = constant.tolist()
    for c in sorted(np.flatnonzero(constant).tolist(), key=lambda v: -rank[v]):
        best = -1
        for k in range(ptr[c], ptr[c + 1]):
            t = targets[k]
            drawn = into[t] if is_constant[t] else t
            if drawn >= 0 and (best < 0 or rank[drawn] < rank[best]):
                best = drawn
        into[c] = best
    model.node_folded_into = np.asarray(into, dtype=np.int64)


def _lowest_common_group(a: int, b: int, parents: list[int], depth: list[int]) -> int:
    while a != b:
        if a == ROOT or b == ROOT:
            return ROOT
        if depth[a] >= depth[b]:
            a = parents[a]
        else:
            b = parents[b]
    return a


def adopt_unscoped(model: GraphModel) -> None:
    """A folded constant with no name scope of its own (at the top level, or directly in a subgraph or block)
    whose readers all sit inside one scope joins the deepest scope group holding all of them: torch exports
    leave weights (`Identity_12`, `Constant_7`) at the top level while their readers are layers deep, and shown
    with `i` they would sit above the whole model. Readers are placed first (reverse topological order), so a
    constant chain follows its reader down. Ops that are drawn keep the place the exporter gave them (an
    embedding without a scope is not part of the first layer it feeds); nothing crosses into a subgraph or
    block."""
    if model.n_groups == 0 or model.edge_src.size == 0:
        return
    n = model.n_nodes
    is_scope = np.asarray([k == "scope" for k in model.group_kind], dtype=bool)
    group = model.node_group
    in_scope = np.where(group >= 0, is_scope[np.maximum(group, 0)], False)
    candidates = np.flatnonzero(~in_scope & model.node_constant)
    if candidates.size == 0:
        return
    targets, ptr = _successors(n, model.edge_src, model.edge_dst)
    parents = model.group_parent.tolist()
    depth = model.group_depth().tolist()
    scope_list = is_scope.tolist()
    groups = group.tolist()
    for node in candidates[np.argsort(-model.topo_rank[candidates], kind="stable")].tolist():
        here = groups[node]
        readers = targets[ptr[node] : ptr[node + 1]]
        if not readers:
            continue
        common = groups[readers[0]]
        for r in readers[1:]:
            common = _lowest_common_group(common, groups[r], parents, depth)
            if common in (here, ROOT):
                break
        if common in (here, ROOT):
            continue
        g, path_ok = common, True  # only scopes between where it is and where it goes
        while g != here:
            if g == ROOT or not scope_list[g]:
                path_ok = False
                break
            g = parents[g]
        if path_ok:
            groups[node] = common
    model.node_group = np.asarray(groups, dtype=np.int64)


def _collapse_single_scopes(model: GraphModel) -> None:
    """A scope group whose only drawn member is one node (`/model/Conv` → model › Conv, with its folded weights)
    adds a click and shows nothing: such singleton scopes give their members to their parent, repeatedly, so a
    scope left with one member after its children went goes too. Kept: groups with two or more drawn members."""
    for _ in range(64):
        if model.n_groups == 0:
            return
        drawn = (model.node_group >= 0) & ~model.node_constant
        members = np.bincount(model.node_group[drawn], minlength=model.n_groups)
        child_groups = np.bincount(model.group_parent[model.group_parent >= 0], minlength=model.n_groups)
        is_scope = np.asarray([k == "scope" for k in model.group_kind], dtype=bool)
        lonely = (members <= 1) & (child_groups == 0) & is_scope
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
    """Split every group (and the top level) with more than CHUNK drawn members into chunk groups; repeat while
    a level is still too wide."""
    for _ in range(4):  # CHUNK**4 members is far beyond any real graph
        drawn = ~model.node_constant
        size = model.n_groups + 1  # index 0 is the top level (ROOT), group g is g + 1
        counts = np.bincount(model.node_group[drawn] + 1, minlength=size)
        counts += np.bincount(model.group_parent + 1, minlength=size)
        wide = (np.flatnonzero(counts > CHUNK) - 1).tolist()
        if not wide:
            return
        for group in wide:
            _chunk_group(model, group)


def _member_of(model: GraphModel, group: int) -> np.ndarray:
    """Per node: which direct member of `group` holds it (node id, or n + child group id), -1 outside it."""
    n = model.n_nodes
    parents = model.group_parent.tolist()
    below: list[int] = [-1] * model.n_groups  # per group: the child of `group` it lies under, or -1
    for g in range(model.n_groups):
        chain, current = [], g
        while current != ROOT and current != group and below[current] == -1:
            chain.append(current)
            current = parents[current]
        if current == group and chain:
            top = chain[-1]
        elif current not in (ROOT, group):
            top = below[current]
        else:
            top = -1
        for member in chain:
            below[member] = top
    below_arr = np.append(np.asarray(below, dtype=np.int64), -1)  # ROOT reads the appended -1
    nodes = model.node_group
    member = np.where(nodes == group, np.arange(n), -1)
    under = below_arr[nodes]
    return np.where((member < 0) & (under >= 0), n + under, member)


def _chunk_group(model: GraphModel, group: int) -> None:
    """Chunks of at most CHUNK drawn members, consecutive in a topological order of the members themselves
    (a child group is one member), so chunks never form a cycle the members do not; folded constants go with
    the chunk of the node they are drawn in. A chunk is labelled by what it holds: its first and last member."""
    n = model.n_nodes
    member = _member_of(model, group)
    drawn = ~model.node_constant
    nodes = np.flatnonzero((model.node_group == group) & drawn)
    subgroups = np.flatnonzero(model.group_parent == group)
    ids = np.concatenate([nodes, n + subgroups])
    index = np.full(n + model.n_groups, -1, dtype=np.int64)
    index[ids] = np.arange(ids.size)
    best = np.full(ids.size, np.iinfo(np.int64).max, dtype=np.int64)
    inside = (member >= 0) & drawn
    np.minimum.at(best, index[member[inside]], model.topo_rank[inside])
    base = np.lexsort((np.arange(ids.size), best))  # members in the model's order first
    renumber = np.empty(ids.size, dtype=np.int64)
    renumber[base] = np.arange(ids.size)
    src, dst = model.edge_src, model.edge_dst
    both = (member[src] >= 0) & (member[dst] >= 0) & drawn[src] & drawn[dst]
    u, v = index[member[src[both]]], index[member[dst[both]]]
    rank, _ = topological_rank(ids.size, renumber[u], renumber[v])
    order = base[np.argsort(rank, kind="stable")]
    position = np.empty(ids.size, dtype=np.int64)
    position[order] = np.arange(ids.size)
    ordered = ids[order]
    chunk_of_member = position // CHUNK
    first_chunk = len(model.group_label)
    for lo in range(0, ordered.size, CHUNK):
        part = ordered[lo : lo + CHUNK]
        model.group_label.append(f"{_member_name(model, int(part[0]))} – {_member_name(model, int(part[-1]))}")
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
    model.node_group[nodes] = first_chunk + chunk_of_member[index[nodes]]
    model.group_parent[subgroups] = first_chunk + chunk_of_member[index[n + subgroups]]
    # folded constants directly in the group: with the chunk of the node they are drawn in
    folded = np.flatnonzero((model.node_group == group) & ~drawn)
    if folded.size:
        into = model.node_folded_into[folded]
        holder = np.where(into >= 0, member[np.maximum(into, 0)], -1)
        chunk = np.where(holder >= 0, chunk_of_member[np.maximum(index[np.maximum(holder, 0)], 0)], 0)
        model.node_group[folded] = first_chunk + chunk
    model._group_depth = None


def _member_name(model: GraphModel, member: int) -> str:
    """How a chunk's label names a member: a group by its label, a node by its op type."""
    n = model.n_nodes
    return model.group_label[member - n] if member >= n else (model.node_op[member] or model.node_label[member])


def reading_start(model: GraphModel) -> int:
    """Where a reader starts: among the inputs of the outermost graph (op "input"; a subgraph's or function's own
    inputs come after), the one that heads the longest path of drawn nodes (a model's data input, not its mask
    or a flag read once), the first in topological order among equals; without inputs, the first drawn node;
    -1 for an empty graph."""
    if model._reading_start is not None:
        return model._reading_start
    drawn = ~model.node_constant
    if not drawn.any():
        model._reading_start = -1
        return -1
    height = heights(model)
    inputs = np.flatnonzero(drawn & np.fromiter(map("input".__eq__, model.node_op), bool, model.n_nodes))
    pool = inputs if inputs.size else np.flatnonzero(drawn)
    if not inputs.size:
        model._reading_start = int(pool[np.argmin(model.topo_rank[pool])])
    else:
        depth = np.append(model.group_depth(), -1)[model.node_group[pool]]  # the top level (ROOT) reads -1
        model._reading_start = int(pool[np.lexsort((model.topo_rank[pool], -height[pool], depth))[0]])
    return model._reading_start


def reading_path(model: GraphModel, count: int = READING_PATH) -> list[int]:
    """The main path from the reading start: at each step the reader that heads the longest way on (the first
    in topological order among equals), so a residual branch or a shape computation does not pull it aside;
    `count` drawn nodes at most."""
    start = reading_start(model)
    if start < 0:
        return []
    height = heights(model)
    rank, constant = model.topo_rank, model.node_constant
    path, node = [start], start
    while len(path) < count:
        nxt = [t for t in model.readers(node).tolist() if not constant[t] and rank[t] > rank[node]]
        if not nxt:
            break
        node = min(nxt, key=lambda t: (-int(height[t]), int(rank[t]), t))
        path.append(node)
    return path


def heights(model: GraphModel) -> np.ndarray:
    """Per node: the most drawn nodes on a path from it on (edges that follow the topological order only),
    worked out once per model."""
    if model._heights is None:
        n = model.n_nodes
        keep = (model.topo_rank[model.edge_src] < model.topo_rank[model.edge_dst]) & ~model.node_constant[
            model.edge_dst] & ~model.node_constant[model.edge_src]  # fmt: skip
        src, dst = model.edge_src[keep], model.edge_dst[keep]
        by_source = np.lexsort((dst, -model.topo_rank[src]))  # sources latest first: their readers are final
        height = [0] * n
        for s, d in zip(src[by_source].tolist(), dst[by_source].tolist(), strict=True):
            if height[d] + 1 > height[s]:
                height[s] = height[d] + 1
        model._heights = np.asarray(height, dtype=np.int64)
    return model._heights


def count_nodes(model: GraphModel, drawn_only: bool = False) -> np.ndarray:
    """How many nodes each group holds at any depth (with `drawn_only`, folded constants not counted)."""
    counts = np.zeros(model.n_groups, dtype=np.int64)
    grouped = (model.node_group >= 0) & (~model.node_constant if drawn_only else True)
    np.add.at(counts, model.node_group[grouped], 1)
    depth = model.group_depth()
    for g in np.argsort(-depth, kind="stable").tolist():
        parent = int(model.group_parent[g])
        if parent != ROOT:
            counts[parent] += counts[g]
    return counts


def search_nodes(model: GraphModel, text: str, limit: int = 10_000) -> list[int]:
    """Nodes whose name or op type contains `text` (case-insensitive), and for each unit group (a schedule's
    layer, drawn as one box) whose label contains it, its first node: in topological order."""
    text = text.strip().lower()
    if not text:
        return []
    found = {n for n, (label, op) in enumerate(zip(model.node_label, model.node_op, strict=True))
             if text in label.lower() or text in op.lower()}  # fmt: skip
    units = [g for g in range(model.n_groups) if model.group_unit[g] and text in model.group_label[g].lower()]
    if units:
        first = np.full(model.n_groups, -1, dtype=np.int64)
        for n in np.argsort(model.topo_rank, kind="stable")[::-1].tolist():  # the earliest node wins
            g = int(model.node_group[n])
            if g >= 0:
                first[g] = n
        found.update(int(first[g]) for g in units if first[g] >= 0)
    return sorted(found, key=lambda n: int(model.topo_rank[n]))[:limit]


def matched_by_unit(model: GraphModel, node: int, text: str) -> int:
    """The unit group whose label made `node` a match of `text` (find then shows that box closed), or ROOT when
    the node matched by its own name or op."""
    text = text.strip().lower()
    if text in model.node_label[node].lower() or text in model.node_op[node].lower():
        return ROOT
    for g in model.ancestors(int(model.node_group[node])):
        if model.group_unit[g] and text in model.group_label[g].lower():
            return g
    return ROOT
