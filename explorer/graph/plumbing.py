"""A steering input's plumbing folded into one box: the ops that read only an attention mask, a position id, a
timestep or a cache (and each other) until their result meets the model's data. Exporters spell a mask's
arithmetic out in ops (`Reshape → Cast → GatherND → And → ...`) beside the embedding; drawn open it took the first
screen's room from the model (issue #74, item 6). Folded, it is one closed group per scope, opened on Enter."""

from __future__ import annotations

import functools

import numpy as np

from explorer.arrays import distinct
from explorer.graph.shaping import add_group, input_tier, lowest_common_group
from explorer.models.graph import GraphModel

PLUMBING = "plumbing"
MIN_FOLDED = 2  # a single op is its own box already


def fold_side_plumbing(model: GraphModel) -> None:
    """Group, per scope, the drawn ops that depend on steering inputs only (input_tier 2); scopes inside a stack
    are left alone (their blocks were found alike as they are)."""
    n = model.n_nodes
    drawn = ~model.node_constant
    sides = [v for v in range(n) if drawn[v] and model.node_op[v] == "input" and input_tier(model, v) == 2]
    if not sides or model.cyclic:
        return
    source = np.zeros(n, dtype=np.int64)  # per node: a bit per steering input it depends on
    for bit, v in enumerate(sides[:62]):
        source[v] = 1 << bit
    plumbing = np.zeros(n, dtype=bool)
    producers: list[list[int]] = [[] for _ in range(n)]
    for src, dst in zip(model.edge_src.tolist(), model.edge_dst.tolist(), strict=True):
        if drawn[src]:
            producers[dst].append(src)
    in_order = np.argsort(model.topo_rank, kind="stable").tolist()
    for v in in_order:
        if not drawn[v] or model.node_op[v] in ("input", "output") or not producers[v]:
            continue
        if _embedding_lookup(model, v):
            continue  # ids turned into vectors: the model's data (a decoder's token embedding and all it feeds)
        if all(plumbing[p] or source[p] and model.node_op[p] == "input" for p in producers[v]):
            plumbing[v] = True
            for p in producers[v]:
                source[v] |= source[p]
    in_order = [v for v in in_order if plumbing[v]]
    unit_group, scope_of = _units(model, plumbing, drawn)
    _lift_shared(model, scope_of, unit_group, in_order, drawn)
    for scope in sorted(set(scope_of.values())):
        if any(model.group_kind[g] == "stack" for g in model.ancestors(scope)):
            continue
        members = np.asarray([v for v, s in scope_of.items() if s == scope], dtype=np.int64)
        if members.size >= MIN_FOLDED:
            _fold(model, members, scope, unit_group, source, sides, drawn)
    model._group_depth = None


def _embedding_lookup(model: GraphModel, node: int) -> bool:
    """A Gather from a weight table (its data input a folded constant that is not a shape's arithmetic)."""
    if model.node_op[node] != "Gather":
        return False
    edges = model.in_edges(node)
    if not edges.size:
        return False
    table = int(model.edge_src[edges[0]])
    return bool(model.node_constant[table]) and not bool(model.node_shape_only[table])


def _units(model: GraphModel, plumbing: np.ndarray, drawn: np.ndarray) -> tuple[dict[int, int], dict[int, int]]:
    """Per plumbing node: the outermost module around it that holds plumbing alone (a UNet's `time_proj` and
    `time_embedding`), which folds whole with its parent's plumbing, and the scope it folds in: that module's
    parent, else the node's own group. ({node: module}, {node: scope})"""
    holds_other = np.zeros(model.n_groups, dtype=bool)  # a group holding a drawn node that is not plumbing
    for g in distinct(model.node_group[drawn & ~plumbing & (model.node_group >= 0)]).tolist():
        while g >= 0 and not holds_other[g]:  # up to the first group marked already: each group once
            holds_other[g] = True
            g = int(model.group_parent[g])
    unit_group: dict[int, int] = {}
    scope_of: dict[int, int] = {}
    for v in np.flatnonzero(plumbing).tolist():
        chain = model.ancestors(int(model.node_group[v]))  # outermost first
        whole = next((g for g in chain if not holds_other[g] and model.group_kind[g] == "scope"), None)
        if whole is None:
            scope_of[v] = int(model.node_group[v])
        else:
            unit_group[v] = whole
            scope_of[v] = int(model.group_parent[whole])
    return unit_group, scope_of


def _lift_shared(model: GraphModel, scope_of: dict[int, int], unit_group: dict[int, int], in_order: list[int],
                 drawn: np.ndarray) -> None:  # fmt: skip
    """A plumbing node read outside its scope folds in the innermost scope holding its readers too: TorchScript
    computes a UNet's `SiLU(temb)` once, in the first resnet's scope, for every resnet of every block, and folded
    there it tied down_blocks.0 to every later block (the ordering then threw the down blocks from side to side).
    Readers first (reverse order), so a chain read elsewhere rises whole; a whole-plumbing module's nodes share one
    scope (the module moves as one), which may lift its producers again: repeated until nothing moves. Then each
    node's scope holds its readers' scopes, so a path between two nodes of one scope's box never leaves it (a
    box that read from and fed a group beside it would be a cycle between closed boxes)."""
    readers = {v: [r for r in model.readers(v).tolist() if drawn[r]] for v in in_order}
    by_unit: dict[int, list[int]] = {}
    for v, module in unit_group.items():
        by_unit.setdefault(module, []).append(v)
    parents, depth = model.group_parent.tolist(), model.group_depth().tolist()

    def innermost_common(scopes: list[int]) -> int:
        return functools.reduce(lambda a, b: lowest_common_group(a, b, parents, depth), scopes)

    moved = True
    while moved:  # scopes only move outwards: at most the groups' depth rounds
        before = dict(scope_of)
        for v in reversed(in_order):
            scope_of[v] = innermost_common([scope_of[v], *(scope_of.get(r, int(model.node_group[r]))
                                                           for r in readers[v])])  # fmt: skip
        for nodes in by_unit.values():
            common = innermost_common([scope_of[v] for v in nodes])
            for v in nodes:
                scope_of[v] = common
        moved = scope_of != before


def _fold(model: GraphModel, members: np.ndarray, scope: int, unit_group: dict[int, int], source: np.ndarray,
          sides: list[int], drawn: np.ndarray) -> None:  # fmt: skip
    """One closed group of `members` in `scope`, named after the steering inputs they read: the members in the
    scope itself move in, and the whole-plumbing modules they lie in move in as they are."""
    groups = model.node_group
    bits = int(np.bitwise_or.reduce(source[members]))
    names = [model.node_label[v] for bit, v in enumerate(sides[:62]) if bits >> bit & 1]
    label = f"{' + '.join(names)} plumbing"
    add_group(model, label, scope, PLUMBING, f"{len(members)} ops that read only {', '.join(names)}")
    folded = len(model.group_label) - 1
    direct = np.asarray([v for v in members.tolist() if v not in unit_group], dtype=np.int64)
    carried = np.flatnonzero(~drawn & (groups == scope) & np.isin(model.node_folded_into, direct))
    model.node_group[direct] = folded
    model.node_group[carried] = folded  # their folded constants go with them
    for module in {unit_group[v] for v in members.tolist() if v in unit_group}:
        model.group_parent[module] = folded

