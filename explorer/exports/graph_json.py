"""`ir-explorer graph FILE --json`: the graph view's layout as JSON, in terminal cells (a public output: the
README documents its keys). Item ids are "n<node>" for nodes and "g<group>" for groups; a unit group (a
schedule's layer, which opens into its workloads) is listed with the nodes while it is closed."""

from __future__ import annotations

from typing import Any

import numpy as np

from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import FULL
from explorer.graph.metrics import ModelMetrics, group_json, model_json, op_json
from explorer.graph.node_data import MODE_PREFIX
from explorer.graph.picture import Layout
from explorer.graph.session import GraphSession
from explorer.graph.visible import expand_all
from explorer.models.graph import ROOT, GraphModel


def expansion(model: GraphModel, expand: str) -> set[int]:
    """ "all": every group open; "none": only the top level; "auto": what the graph view opens with."""
    if expand == "all":
        return expand_all(model)
    if expand == "none":
        return set()
    return initial_expansion(model)


class UnknownGroup(ValueError):
    """--open/--only named no group of the graph: the message lists some that exist."""


def resolve_group(model: GraphModel, spec: str) -> int:
    """A group by its `graph --json` id (`g12`) or by its path of labels (`layers/layers.7`, or the view's
    `layers › layers.7`); a stack in the way may be named or left out (`layers.7` in `layers.0–79`)."""
    if spec[:1] == "g" and spec[1:].isdigit() and int(spec[1:]) < model.n_groups:
        return int(spec[1:])
    wanted = [part.strip() for part in spec.replace("›", "/").split("/") if part.strip()]
    for g in range(model.n_groups):
        path = model.ancestors(g)
        if [model.group_label[a] for a in path] == wanted:
            return g
        if [model.group_label[a] for a in path if model.group_kind[a] != "stack"] == wanted:
            return g
    known = ", ".join(f"g{g} ({model.group_path(g).replace(' › ', '/')})" for g in range(min(model.n_groups, 8)))
    raise UnknownGroup(f"no group {spec!r} in this graph (ids g0…g{model.n_groups - 1}: {known}…)")


def opened_layout(model: GraphModel, expand: str, opens: list[int], direction: str = "TB", level: int = FULL,
                  constants: bool = False) -> tuple[Layout, set[int]]:  # fmt: skip
    """The layout the view shows after Enter opened `opens` one after the other from `expand`'s screen (the
    graph session the view drives: each step keeps the picture of the one before)."""
    session = GraphSession(model, expansion(model, expand), constants, level, direction)
    for group in opens:
        session.open_path(group)
    layout = session.layout
    assert layout is not None
    return layout, session.expanded


def _stacked(model: GraphModel, group: int) -> dict[str, object]:
    """A scope's module class and a stack's count of blocks (and their class), for `graph --json`."""
    kind = model.group_kind[group]
    if kind == "stack":  # its blocks are its children, all of one class
        blocks = np.flatnonzero(model.group_parent == group)
        class_name = model.group_detail[int(blocks[0])] if blocks.size else ""
        return {"stacked": int(blocks.size), "module_class": class_name or None}
    detail = model.group_detail[group] if group < len(model.group_detail) else ""
    return {"module_class": detail or None} if kind == "scope" else {}


def item_key(layout: Layout, item: int) -> str:
    kind = "g" if layout.visible.item_kind[item] == 1 else "n"
    return f"{kind}{int(layout.visible.item_id[item])}"


def graph_json(
    model: GraphModel, expand: str = "auto", direction: str = "TB", level: int = FULL, constants: bool = False,
    opens: list[int] | None = None, metrics: ModelMetrics | None = None,
) -> dict[str, Any]:
    """The layout of what the view shows for `expand`; every op node is listed under every expansion (counts
    equal the file's): a folded constant with `folded_into` and no box, unless `constants` lays them out as
    boxes (the view's `i`); a node inside a closed group with `inside` (that group's id) and no box. Every edge
    carries its drawn route (`points`)."""
    layout, expanded = opened_layout(model, expand, opens or [], direction, level, constants)
    visible = layout.visible
    nodes = []
    box_of_group: dict[int, dict[str, int | None]] = {}
    for item in range(visible.n_items):
        box: dict[str, int | None] = {"x": int(layout.x[item]), "y": int(layout.y[item]),
                                      "w": int(layout.w[item]), "h": int(layout.h[item])}  # fmt: skip
        ident = int(visible.item_id[item])
        if visible.item_kind[item] == 1:
            box_of_group[ident] = box
            if not model.group_unit[ident]:
                continue
            # a closed unit group is a node (a schedule's layer): listed with the nodes, under its own id
            parent = int(model.group_parent[ident])
            nodes.append({"id": f"g{ident}", "label": model.group_label[ident], "op": model.group_op[ident],
                          "group": f"g{parent}" if parent != ROOT else None, **box,
                          **_annotations(model.group_values, model, ident)})  # fmt: skip
            continue
        group = int(model.node_group[ident])
        nodes.append({"id": f"n{ident}", "label": model.node_label[ident], "op": model.node_op[ident],
                      "group": f"g{group}" if group != ROOT else None, **box,
                      **_annotations(model.node_values, model, ident)})  # fmt: skip
    # every op node of the file is listed whatever the expansion: a node inside a closed group carries the id of
    # the closed group whose box holds it ("inside") and no box
    item_of = visible.node_item
    drawn_elsewhere = item_of >= 0
    drawn_elsewhere[drawn_elsewhere] = visible.item_kind[item_of[drawn_elsewhere]] == 1  # its closed group's box
    for node in np.flatnonzero(drawn_elsewhere).tolist():
        group = int(model.node_group[node])
        nodes.append({"id": f"n{node}", "label": model.node_label[node], "op": model.node_op[node],
                      "group": f"g{group}" if group != ROOT else None, "x": None, "y": None, "w": 0, "h": 0,
                      "inside": item_key(layout, int(item_of[node]))})  # fmt: skip
    folded_ids = []
    if not constants:  # folded constants: listed, drawn in their reader's box
        for node in np.flatnonzero(model.node_constant & (visible.node_item < 0)).tolist():
            into = int(model.node_folded_into[node])
            item = int(visible.node_item[into]) if into >= 0 else -1
            group = int(model.node_group[node])
            entry = {"id": f"n{node}", "label": model.node_label[node], "op": model.node_op[node],
                     "group": f"g{group}" if group != ROOT else None, "x": None, "y": None, "w": 0, "h": 0}  # fmt: skip
            if item >= 0:
                entry["folded_into"] = item_key(layout, item)
            if model.node_shape_only[node]:
                entry["shape_plumbing"] = True
            nodes.append(entry)
            folded_ids.append(node)
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
                       "parent": f"g{parent}" if parent != ROOT else None, **_stacked(model, g),
                       "expanded": g in expanded, **box, **_annotations(model.group_values, model, g)})  # fmt: skip
    edges = [{"source": item_key(layout, e.source), "target": item_key(layout, e.target),
              "kind": "owner" if e.owner else e.kind, "count": e.count, "points": _points(layout, e)}
             for e in layout.edges]  # fmt: skip
    if folded_ids:  # the edges out of folded constants: each into the box it is drawn in, marked
        folded = np.zeros(model.n_nodes, dtype=bool)
        folded[folded_ids] = True
        out = np.flatnonzero(folded[model.edge_src])
        pairs: dict[tuple[str, str], int] = {}
        for e in out.tolist():
            target = int(model.edge_dst[e])
            item = int(visible.node_item[target])
            key = (f"n{int(model.edge_src[e])}", item_key(layout, item) if item >= 0 else f"n{target}")
            pairs[key] = pairs.get(key, 0) + 1
        edges += [{"source": a, "target": b, "kind": "folded", "count": c, "folded": True, "points": []}
                  for (a, b), c in pairs.items()]  # fmt: skip
    found = {
        "direction": direction,
        "width": layout.width,
        "height": layout.height,
        "back_edges": layout.back_edges,
        "dangling": [{"target": item_key(layout, item), "value": name} for item, name in visible.dangling],
        "nodes": nodes,
        "edges": edges,
        "groups": groups,
    }
    if metrics is not None:
        _add_metrics(found, model, metrics)
    return found


def _add_metrics(found: dict[str, Any], model: GraphModel, metrics: ModelMetrics) -> None:
    """Each op's counts, each group's sums and share, the model's totals and top groups (issue #57)."""
    for entry in found["nodes"]:
        if entry["id"].startswith("n"):
            op = metrics.ops[int(entry["id"][1:])]
            if op is not None:
                entry["metrics"] = op_json(op)
    for group, entry in enumerate(found["groups"]):
        entry["metrics"] = group_json(metrics, group)
    found["metrics"] = model_json(model, metrics)


def _points(layout: Layout, edge: Any) -> list[list[int]]:
    """An edge's drawn route in cells, as the TUI and the SVG draw it: a routed edge's polyline; a stub, back
    or bundled edge's own short piece (one cell out of its source box, where its label starts)."""
    if edge.points:
        return [[int(x), int(y)] for x, y in edge.points]
    x, y = int(layout.x[edge.source]), int(layout.y[edge.source])
    w, h = int(layout.w[edge.source]), int(layout.h[edge.source])
    if layout.direction == "TB":
        return [[x, y + h], [x, y + h + 1]]
    return [[x + w, y], [x + w + 1, y]]


PROBLEM_NAMES = {2.0: "error", 1.0: "warning"}


def _annotations(columns: dict[str, Any], model: GraphModel, ident: int) -> dict[str, Any]:
    """A box's "problem" (its worst) and "data" (each per-node data set's value, by the set's name), when it has
    them (the output contract writes null for the others)."""
    found: dict[str, Any] = {}
    marks = columns.get("problems")
    if marks is not None and ident < len(marks) and float(marks[ident]) in PROBLEM_NAMES:
        found["problem"] = PROBLEM_NAMES[float(marks[ident])]
    data = {}
    for name in model.data_sets:
        column = columns.get(name)
        if column is not None and ident < len(column) and np.isfinite(column[ident]):
            data[name.removeprefix(MODE_PREFIX)] = float(column[ident])
    if data:
        found["data"] = data
    return found
