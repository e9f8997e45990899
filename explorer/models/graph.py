"""The neutral graph's data: `GraphModel`'s columns (nodes, edges, nested groups) and the queries every reader of
it needs (topological order, node counts per group).

Kept apart from the builder (explorer.graph.builder) and the shaping steps (explorer.graph.shaping) so that the layout,
the colour modes and the exports read a model without importing how one is made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from explorer.formatting import visible
from explorer.models.count import OpCounter
from explorer.models.ref import Ref


class Deferred(tuple):
    """Arguments for a column's resolver: the value is computed from them on first read."""

    __slots__ = ()


# computes a deferred detail or text value from the arguments its `Deferred` carries
Resolver = Callable[..., object]


class LazyText:
    """A column of strings some of which are computed on first read (a `Deferred` in their place, handed to
    the column's resolver): a node's type text costs a protobuf walk, and only the boxes on screen need it."""

    __slots__ = ("_values", "_resolve", "_computed")

    def __init__(self, values: list[Any], resolve: Resolver | None = None) -> None:
        self._values = values
        self._resolve = resolve
        self._computed: dict[int, Deferred] = {}  # index → what a computed value was computed from

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, index: int) -> str:
        value = self._values[index]
        if isinstance(value, Deferred):
            self._computed[index] = value
            value = self._values[index] = visible(str(self._resolve(*value))) if self._resolve else ""
        return visible(value) if value is not None else ""

    def __getstate__(self) -> tuple[list[Any], Resolver | None]:
        """Kept as first built: a computed value read what the document knew then (a type before shape
        inference), and is computed again from what it knows when read back."""
        values = list(self._values)
        for index, deferred in list(self._computed.items()):
            values[index] = deferred
        return values, self._resolve

    def __setstate__(self, state: tuple[list[Any], Resolver | None]) -> None:
        self._values, self._resolve = state
        self._computed = {}

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self._values)))


CHUNK = 400  # most drawn members (nodes and child groups) a group shows directly; more are split into chunks
ROOT = -1  # the group id of the top level
READING_PATH = 8  # drawn nodes from the first input whose groups the first screen opens first
# ops that stand for a graph's own values: never folded as constants, never moved into their readers' group
VALUE_OPS = frozenset({"input", "output", "block input"})


SectionRows = tuple[str, tuple[str, ...], list]  # a details table: title, column names, rows


class ItemDetails(Protocol):
    """What the graph knows of an item, asked with the model (explorer.graph.item_details is the one)."""

    def group_sections(self, model: GraphModel, group: int) -> list[SectionRows]: ...
    def group_links(self, model: GraphModel, group: int) -> list[tuple[str, Ref]]: ...
    def extra_sections(self, model: GraphModel, ref: Ref, preview: Callable[[Ref], str]) -> list[SectionRows]: ...


@dataclass
class GraphModel:
    """Columns, one entry per node / edge / group. Node and group ids are list indices."""

    node_label: list[str]
    node_op: list[str]
    node_group: np.ndarray  # group id per node, ROOT for the top level
    node_detail: LazyText  # one line: type and shape of the output, or what the node computes
    node_ref: list[Ref | None]  # the tree ref of the node, so selection is shared with the tree
    node_constant: np.ndarray  # bool: folds into its consumers unless constants are shown (closed under build)
    edge_src: np.ndarray
    edge_dst: np.ndarray
    edge_label: list[str]  # the value carried (its name), "" when unknown
    group_label: list[str]
    group_parent: np.ndarray  # parent group id, ROOT for top-level groups
    group_ref: list[Ref | None]
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
    # per node: folded as shape plumbing (computed from `Shape`/`Size` outputs and small constants alone), a
    # subset of node_constant: its reader says `shape ← 4 ops` instead of a weight's shape
    node_shape_only: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # role_of(node, value name) → (the input's position, its formal name such as "W" or "B", "" unknown)
    role_of: Callable[[int, str], tuple[int, str]] | None = None
    # what the graph adds to an item's details (explorer.graph.item_details), handed over by the builder
    item_details: ItemDetails | None = None
    # attributes_of(node) → a text equal exactly when two nodes' attributes are (names and values), where the
    # format has them: two blocks whose ops differ in one attribute are never stacked (explorer.graph.stacks)
    attributes_of: Callable[[int], str] | None = None
    # per node: the lane it runs on (a schedule workload's core), -1 for none; an opened group whose members all
    # have lanes lays them out as a grid, one row per lane
    node_lane: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # the user's per-node data sets (explorer.graph.node_data), by mode name; their columns are in
    # node_values / group_values under the same name
    data_sets: dict[str, Any] = field(default_factory=dict)
    # whether a node's detail is its output's type (a model's ops), so an edge label can say `x : float32[2, 8]`;
    # a schedule's workload detail is its time, which an edge label must not repeat as the type of what flows
    detail_is_type: bool = True
    # per group: the node that owns it (an If's branch, a Loop's body, a while_loop's block), -1 for none. A
    # closed owned group is drawn beside its owner with a dotted link, and the values it captures go into the
    # owner (explorer.graph.layout.visible_graph)
    group_owner: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # the format's counter of its ops' parameters, multiply-accumulates and bytes (explorer.graph.metrics), and
    # the last counts worked out with it: ((dims, its stamp), ModelMetrics)
    op_counter: OpCounter | None = None
    metrics_cache: tuple[Any, Any] | None = None
    raw_counts_cache: tuple[Any, Any] | None = None  # (the counter's stamp, its counts with no dim bound)
    metric_dims: dict[str, int] = field(default_factory=dict)  # the symbolic dims the user bound (--dims)
    _ref_to_node: dict[Any, int] | None = None
    _group_depth: np.ndarray | None = None
    _inputs: tuple[np.ndarray, np.ndarray] | None = None
    _outputs: tuple[np.ndarray, np.ndarray] | None = None
    _usual_dtype: str | None = None
    _heights: np.ndarray | None = None
    _reading_start: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Kept without the user's per-node data sets: read again from their files each session, they are never
        part of what the file becomes."""
        state = self.__dict__.copy()
        user = set(self.data_sets)
        if user:
            state["data_sets"] = {}
            state["node_values"] = {k: v for k, v in self.node_values.items() if k not in user}
            state["group_values"] = {k: v for k, v in self.group_values.items() if k not in user}
        return state

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

    def descendants(self, group: int) -> set[int]:
        """The groups inside `group` at any depth (not `group` itself)."""
        found: set[int] = set()
        frontier = [group]
        while frontier:
            children = np.flatnonzero(np.isin(self.group_parent, frontier)).tolist()
            found.update(children)
            frontier = children
        return found

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


def path_heights(n: int, src: np.ndarray, dst: np.ndarray, along: np.ndarray) -> np.ndarray:
    """Per node: the most edges on a path from it on, following only edges that go forward in `along` (a
    topological rank, a row on screen); the latest sources first, so each one's readers are final when it is."""
    forward = along[src] < along[dst]
    src, dst = src[forward], dst[forward]
    order = np.argsort(-along[src], kind="stable")
    height = [0] * n
    for s, d in zip(src[order].tolist(), dst[order].tolist(), strict=True):
        if height[d] + 1 > height[s]:
            height[s] = height[d] + 1
    return np.asarray(height, dtype=np.int64)


def successors_csr(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[list[int], list[int]]:
    """CSR of the edges by source (self-loops dropped): targets[ptr[v]:ptr[v + 1]] are v's successors."""
    keep = src != dst
    s, d = src[keep], dst[keep]
    order = np.argsort(s, kind="stable")
    return d[order].tolist(), np.searchsorted(s[order], np.arange(n + 1)).tolist()


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


def strongest_inside(model: GraphModel, node_rank: np.ndarray) -> np.ndarray:
    """Per group: the highest rank among the nodes it holds at any depth, -1 for none (a node's rank < 0: not
    counted); what a closed group shows of its members' marks (a problem's severity, a comparison's status)."""
    best = np.full(model.n_groups, -1, dtype=np.int64)
    counted = (model.node_group >= 0) & (node_rank >= 0)
    np.maximum.at(best, model.node_group[counted], node_rank[counted])
    parents = model.group_parent
    for g in np.argsort(-model.group_depth(), kind="stable").tolist():  # deepest first: push up to the parent
        parent = int(parents[g])
        if parent != ROOT and best[g] > best[parent]:
            best[parent] = best[g]
    return best


def first_nodes(model: GraphModel) -> np.ndarray:
    """Per group: its earliest node in topological order among the nodes directly in it, -1 for none (how a
    closed layer is found again: by a node inside it)."""
    first = np.full(model.n_groups, -1, dtype=np.int64)
    order = np.argsort(model.topo_rank, kind="stable")[::-1]  # the earliest assigned last: it wins
    order = order[model.node_group[order] >= 0]
    first[model.node_group[order]] = order
    return first
