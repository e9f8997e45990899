"""Graph find: which nodes (and schedule layers drawn as one box) a text names."""

from __future__ import annotations

from explorer.models.graph import ROOT, GraphModel, first_nodes


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
        first = first_nodes(model)
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
