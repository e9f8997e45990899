"""`ir-explorer graph FILE --json`: the graph view's layout as JSON, in terminal cells (a public output: the
README documents its keys). Item ids are "n<node>" for nodes and "g<group>" for groups; a unit group (a
schedule's layer, which opens into its workloads) is listed with the nodes while it is closed."""

from __future__ import annotations

from typing import Any

from explorer.analysis.graph_layout import FULL, Layout, expand_all, initial_expansion, layout_graph, visible_graph
from explorer.graph import ROOT, GraphModel


def expansion(model: GraphModel, expand: str) -> set[int]:
    """ "all": every group open; "none": only the top level; "auto": what the graph view opens with."""
    if expand == "all":
        return expand_all(model)
    if expand == "none":
        return set()
    return initial_expansion(model)


def item_key(layout: Layout, item: int) -> str:
    kind = "g" if layout.visible.item_kind[item] == 1 else "n"
    return f"{kind}{int(layout.visible.item_id[item])}"


def graph_json(model: GraphModel, expand: str = "auto", direction: str = "TB", level: int = FULL) -> dict[str, Any]:
    expanded = expansion(model, expand)
    # --expand all shows every node, constants and initializers included; otherwise they fold into readers
    layout = layout_graph(model, visible_graph(model, expanded, show_constants=expand == "all"), level, direction)
    visible = layout.visible
    nodes, box_of_group = [], {}
    for item in range(visible.n_items):
        box = {"x": int(layout.x[item]), "y": int(layout.y[item]), "w": int(layout.w[item]), "h": int(layout.h[item])}
        ident = int(visible.item_id[item])
        if visible.item_kind[item] == 1:
            box_of_group[ident] = box
            if not model.group_unit[ident]:
                continue
            # a closed unit group is a node (a schedule's layer): listed with the nodes, under its own id
            parent = int(model.group_parent[ident])
            nodes.append({"id": f"g{ident}", "label": model.group_label[ident], "op": model.group_op[ident],
                          "group": f"g{parent}" if parent != ROOT else None, **box})  # fmt: skip
            continue
        group = int(model.node_group[ident])
        nodes.append({"id": f"n{ident}", "label": model.node_label[ident], "op": model.node_op[ident],
                      "group": f"g{group}" if group != ROOT else None, **box})  # fmt: skip
    groups = []
    for g in range(model.n_groups):
        parent = int(model.group_parent[g])
        if g in box_of_group:
            box = box_of_group[g]
        elif g in layout.frames:
            x, y, w, h = layout.frames[g]
            box = {"x": x, "y": y, "w": w, "h": h}
        else:
            box = {"x": None, "y": None, "w": None, "h": None}  # inside a collapsed group: not drawn
        groups.append({"id": f"g{g}", "label": model.group_label[g], "kind": model.group_kind[g],
                       "parent": f"g{parent}" if parent != ROOT else None,
                       "expanded": g in expanded, **box})  # fmt: skip
    edges = [{"source": item_key(layout, e.source), "target": item_key(layout, e.target), "kind": e.kind,
              "count": e.count} for e in layout.edges]  # fmt: skip
    return {
        "direction": direction,
        "width": layout.width,
        "height": layout.height,
        "back_edges": layout.back_edges,
        "dangling": [{"target": item_key(layout, item), "value": name} for item, name in visible.dangling],
        "nodes": nodes,
        "edges": edges,
        "groups": groups,
    }
