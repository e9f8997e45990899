"""What is visible of a GraphModel for a set of open groups: its items (nodes and closed groups), the edges
between them, what folds into what; and every group open (`expand_all`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.arrays import distinct
from explorer.graph.expansion import group_first_rank
from explorer.models.graph import ROOT, GraphModel


@dataclass
class VisibleGraph:
    """What the current expansion shows: items (nodes or collapsed groups) and the edges between them."""

    item_kind: np.ndarray  # 0 node, 1 group
    item_id: np.ndarray  # node id or group id
    node_item: np.ndarray  # item of each node: its own, its collapsed group's, or -1 (a folded constant)
    edge_src: np.ndarray  # item ids, one edge per distinct pair
    edge_dst: np.ndarray
    edge_count: np.ndarray  # model edges behind each item edge
    open_groups: list[int]  # expanded groups that have something visible (drawn as frames)
    folded: np.ndarray  # per item: constants folded into it
    dangling: list[tuple[int, str]]  # (item, value nobody produces)
    # per edge: an owner → closed branch link (an If and its closed then-branch), drawn dotted
    owner_link: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @property
    def n_items(self) -> int:
        return int(self.item_id.size)


def visible_graph(model: GraphModel, expanded: set[int], show_constants: bool = False) -> VisibleGraph:
    n = model.n_nodes
    closed_at = np.full(model.n_groups, -1, dtype=np.int64)  # the outermost collapsed group holding g, or -1
    depth = model.group_depth()
    for g in np.argsort(depth, kind="stable").tolist():
        parent = int(model.group_parent[g])
        outer = closed_at[parent] if parent != ROOT else -1
        closed_at[g] = outer if outer >= 0 else (-1 if g in expanded else g)
    groups = model.node_group
    closed_or_none = np.append(closed_at, -1)  # index -1 (ROOT) reads the appended "not hidden"
    hidden_by = closed_or_none[groups]
    key = np.where(hidden_by >= 0, n + hidden_by, np.arange(n))
    constants = model.node_constant & (hidden_by < 0) & (not show_constants)
    key = np.where(constants, -1, key)
    shown = distinct(key[key >= 0])
    item_of_key = {int(k): i for i, k in enumerate(shown.tolist())}
    lookup = np.full(n + model.n_groups, -1, dtype=np.int64)
    lookup[shown] = np.arange(shown.size)
    node_item = np.where(key >= 0, lookup[np.maximum(key, 0)], -1)
    del item_of_key
    src_item = node_item[model.edge_src] if model.edge_src.size else np.zeros(0, dtype=np.int64)
    dst_item = node_item[model.edge_dst] if model.edge_dst.size else np.zeros(0, dtype=np.int64)
    links = _owner_links(model, node_item, lookup, n)
    if links:  # a closed branch's captured values are read by its owner, which the branch hangs off
        dst_item = dst_item.copy()
        for owner_item, branch_item in links:
            dst_item[(dst_item == branch_item) & (src_item != branch_item)] = owner_item
    links += _open_owner_links(model, node_item, closed_at)
    folded = np.zeros(shown.size, dtype=np.int64)
    from_constant = (src_item < 0) & (dst_item >= 0)
    if from_constant.any():
        np.add.at(folded, dst_item[from_constant], 1)
    keep = (src_item >= 0) & (dst_item >= 0) & (src_item != dst_item)
    pairs = src_item[keep] * max(shown.size, 1) + dst_item[keep]
    link_pairs = np.asarray([a * max(shown.size, 1) + b for a, b in links], dtype=np.int64)
    unique, counts = np.unique(np.concatenate([pairs, link_pairs]), return_counts=True)
    open_groups = sorted(
        {int(g) for g in model.node_group[hidden_by < 0].tolist() if g >= 0}
        | _open_ancestors(model, expanded, closed_at)
    )
    dangling = [(int(node_item[node]), name) for node, name in model.dangling if node_item[node] >= 0]
    return VisibleGraph(
        item_kind=(shown >= n).astype(np.int64),
        item_id=np.where(shown >= n, shown - n, shown),
        node_item=node_item,
        edge_src=unique // max(shown.size, 1),
        edge_dst=unique % max(shown.size, 1),
        edge_count=counts,
        open_groups=open_groups,
        folded=folded,
        dangling=dangling,
        owner_link=np.isin(unique, link_pairs),
    )


def _owner_links(model: GraphModel, node_item: np.ndarray, lookup: np.ndarray, n: int) -> list[tuple[int, int]]:
    """(owner item, branch item) for every owned group drawn closed apart from its owner."""
    links = []
    for g in np.flatnonzero(model.group_owner >= 0).tolist() if model.group_owner.size else []:
        branch, owner = int(lookup[n + g]), int(node_item[model.group_owner[g]])
        if branch >= 0 and owner >= 0 and owner != branch:
            links.append((owner, branch))
    return links


def _open_owner_links(model: GraphModel, node_item: np.ndarray, closed_at: np.ndarray) -> list[tuple[int, int]]:
    """(owner item, first drawn member's item) for every owned group drawn open: the dotted link goes on to the
    body's first box, so the open frame still hangs below its owner (without it a Loop body opened into a frame
    at the top of the graph, above the Loop and its inputs, nothing saying whose body it was)."""
    owned = np.flatnonzero(model.group_owner >= 0).tolist() if model.group_owner.size else []
    opened = [g for g in owned if closed_at[g] < 0 and node_item[model.group_owner[g]] >= 0]
    if not opened:
        return []
    first_rank = group_first_rank(model)
    node_at_rank = np.argsort(model.topo_rank)  # topo_rank is a permutation of the nodes
    links = []
    for g in opened:
        if first_rank[g] < model.n_nodes:  # a drawn node inside (its box, or its closed subgroup's)
            owner, first = int(node_item[model.group_owner[g]]), int(node_item[node_at_rank[first_rank[g]]])
            if first >= 0 and first != owner:
                links.append((owner, first))
    return links


def _open_ancestors(model: GraphModel, expanded: set[int], closed_at: np.ndarray) -> set[int]:
    """Expanded groups whose members are all inside collapsed child groups still get a frame."""
    found = set()
    for g in expanded:
        if 0 <= g < model.n_groups and closed_at[g] < 0:
            parent = int(model.group_parent[g])
            if parent == ROOT or closed_at[parent] < 0:
                found.add(g)
    return found


def expand_all(model: GraphModel) -> set[int]:
    """Every group open, except unit groups (they stand for one node each, as a schedule's layers)."""
    return {g for g in range(model.n_groups) if not model.group_unit[g]}
