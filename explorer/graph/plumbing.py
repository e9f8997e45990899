"""A steering input's plumbing folded into one box: the ops that read only an attention mask, a position id, a
timestep or a cache (and each other) until their result meets the model's data. Exporters spell a mask's
arithmetic out in ops (`Reshape → Cast → GatherND → And → ...`) beside the embedding; drawn open it took the first
screen's room from the model (issue #74, item 6). Folded, it is one closed group per scope, opened on Enter."""

from __future__ import annotations

import numpy as np

from explorer.arrays import distinct
from explorer.graph.shaping import add_group, input_tier
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
    for v in np.argsort(model.topo_rank, kind="stable").tolist():
        if not drawn[v] or model.node_op[v] in ("input", "output") or not producers[v]:
            continue
        if all(plumbing[p] or source[p] and model.node_op[p] == "input" for p in producers[v]):
            plumbing[v] = True
            for p in producers[v]:
                source[v] |= source[p]
    groups = model.node_group
    for scope in distinct(groups[plumbing]).tolist():
        if any(model.group_kind[g] == "stack" for g in model.ancestors(scope)):
            continue
        members = np.flatnonzero(plumbing & (groups == scope))
        if members.size < MIN_FOLDED:
            continue
        bits = int(np.bitwise_or.reduce(source[members]))
        names = [model.node_label[v] for bit, v in enumerate(sides[:62]) if bits >> bit & 1]
        label = f"{' + '.join(names)} plumbing"
        add_group(model, label, scope, PLUMBING, f"{len(members)} ops that read only {', '.join(names)}")
        folded = len(model.group_label) - 1
        carried = np.flatnonzero(~drawn & (groups == scope) & np.isin(model.node_folded_into, members))
        model.node_group[members] = folded
        model.node_group[carried] = folded  # their folded constants go with them
    model._group_depth = None

