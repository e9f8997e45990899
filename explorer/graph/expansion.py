"""Which groups the graph opens on: the path from the first input to its first ops, then level by level within
a budget (the first screen)."""

from __future__ import annotations

import numpy as np

from explorer.graph.shaping import reading_path
from explorer.models.graph import ROOT, GraphModel

PATH_BUDGET = 600  # most drawn boxes the groups on the reading path may open to (a chunk is at most 400)


# groups the first screen leaves closed off the path
ON_DEMAND_KINDS = frozenset({"subgraph", "function", "stack", "plumbing"})


def initial_expansion(model: GraphModel, budget: int = 60) -> set[int]:
    """What opens first: the groups on the path from the first input to its first ops (outermost first, while
    the drawn boxes stay within PATH_BUDGET: the first ops must be on the first screen even when a group holds a
    whole chunk), then the other groups level by level in the model's order within `budget`; a small graph
    opens whole, a large one on its reading start. Control-flow bodies and local functions off that path stay
    closed (as Netron and Model Explorer show them on demand): opened, their frames stood between the first
    ops. A stack of alike blocks stays closed, on the path too."""
    if model.n_groups == 0:
        return set()
    drawn = ~model.node_constant
    direct = np.bincount(model.node_group[(model.node_group >= 0) & drawn], minlength=model.n_groups)
    children: dict[int, list[int]] = {}
    for g, parent in enumerate(model.group_parent.tolist()):
        children.setdefault(parent, []).append(g)
    first_rank = group_first_rank(model)
    for members in children.values():
        members.sort(key=lambda g: (int(first_rank[g]), g))
    visible = len(children.get(ROOT, [])) + int(((model.node_group == ROOT) & drawn).sum())
    expanded: set[int] = set()
    listed = list_items(model, children)
    beside_lists = {g for members in children.values() if any(h in listed for h in members) for g in members}
    small = int(drawn.sum()) + model.n_groups <= budget  # every box of it fits: it opens whole

    def opened_cost(g: int) -> int:
        return int(direct[g]) + len(children.get(g, [])) - 1

    for node in reading_path(model):  # the path's groups may open up to a chunk's worth of boxes
        for g in model.ancestors(int(model.node_group[node])):
            if g in expanded:
                continue
            if model.group_unit[g] or model.group_kind[g] == "stack" or g in listed or visible + opened_cost(g) > max(
                    budget, PATH_BUDGET):  # fmt: skip
                break  # a stack, or one block of a list, stays one box: the model's shape first, its blocks on Enter
            expanded.add(g)
            visible += opened_cost(g)
    frontier = list(children.get(ROOT, []))
    while frontier:
        g = frontier.pop(0)
        if model.group_unit[g] or (g not in expanded and model.group_kind[g] in ON_DEMAND_KINDS):
            continue  # a unit, a loop body, a function: opened when asked
        if g not in expanded:
            if g in listed and not small:
                continue  # a big model's blocks: its shape first, each block on Enter
            if not small and not children.get(g) and opened_cost(g) > 0:
                continue  # a big model's layer of several ops (a norm written out in primitives): one box
            if not small and g in beside_lists:
                continue  # a stage between block lists (a UNet's mid_block between its down and up blocks)
            together = listed.get(g, (g,))  # a small model's list opens all together or not at all
            cost = sum(opened_cost(h) for h in together if h not in expanded)
            if visible + cost > budget:
                continue
            expanded.update(together)
            visible += cost
        frontier += children.get(g, [])
    return expanded


def list_items(model: GraphModel, children: dict[int, list[int]]) -> dict[int, tuple[int, ...]]:
    """Per group that is one block of a module list (`down_blocks.0` beside `down_blocks.1`, `h.0` beside the stack
    `h.1–11`, or a list's only block, `attentions.0`): the list's blocks in that parent. The first screen takes a
    list in as the model's shape (Model Explorer opens on its layers): no block of it opens on the reading path,
    and only a model small enough to open whole opens its lists (each whole)."""
    found: dict[int, tuple[int, ...]] = {}
    for members in children.values():
        stems: dict[str, list[int]] = {}
        for g in members:
            stem, dot, index = model.group_label[g].rpartition(".")
            if dot and stem and index.isdigit() and model.group_kind[g] == "scope":
                stems.setdefault(stem, []).append(g)
        for alike in stems.values():
            found.update((g, tuple(alike)) for g in alike)
    return found


def group_first_rank(model: GraphModel) -> np.ndarray:
    """Per group: the smallest topological rank of a drawn node inside it (at any depth)."""
    best = np.full(model.n_groups, np.iinfo(np.int64).max, dtype=np.int64)
    inside = (model.node_group >= 0) & ~model.node_constant
    np.minimum.at(best, model.node_group[inside], model.topo_rank[inside])
    for g in np.argsort(-model.group_depth(), kind="stable").tolist():
        parent = int(model.group_parent[g])
        if parent != ROOT and best[g] < best[parent]:
            best[parent] = best[g]
    return best
