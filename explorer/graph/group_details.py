"""What the details panel says of a graph group that no tree item stands for (a name scope such as a torch
export's `layers.0`, a chunk of a long group): without it the panel went on describing the last box, while the
graph's status line named the group.

What Model Explorer's layer info says, and what a reader of a closed block asks next: where it sits, how much
it holds and of what ops, and which values cross its border (what it reads and what it gives). Pure over a
GraphModel; the document wraps the tables as details sections.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from explorer.formatting import plural
from explorer.models.graph import ROOT, GraphModel
from explorer.models.ref import Ref

SHOWN_OPS = 6  # op types named; the rest are counted
SHOWN_VALUES = 4  # crossing values named; the rest are counted
KIND_NAMES = {"scope": "name scope", "chunk": "part of a long group", "layer": "layer", "subgraph": "subgraph",
              "stack": "stack of alike blocks", "plumbing": "a steering input's plumbing (folded)"}  # fmt: skip


def inside(model: GraphModel, group: int) -> np.ndarray:
    """Per node: whether it sits in `group` at any depth."""
    return np.isin(model.node_group, [group, *model.descendants(group)])


def _folded_text(constants: int, shape_ops: int) -> str:
    """What a group folds besides its drawn nodes: ` (and 12 folded constants, 4 shape ops)`."""
    parts = [plural(constants, "folded constant")] if constants else []
    if shape_ops:
        parts.append(plural(shape_ops, "folded shape op"))
    return f" (and {', '.join(parts)})" if parts else ""


def group_sections(model: GraphModel, group: int) -> list[tuple[str, tuple[str, ...], list[tuple[str, str]]]]:
    """The group's table: its place, what it holds, the op types inside and the values crossing its border."""
    if not 0 <= group < model.n_groups:
        return []
    members = inside(model, group)
    drawn = members & ~model.node_constant
    shape_ops = int((members & model.node_shape_only).sum()) if model.node_shape_only.size else 0
    folded = int((members & model.node_constant).sum()) - shape_ops
    subgroups = int((model.group_parent == group).sum())
    ops = Counter(model.node_op[n] or "?" for n in np.flatnonzero(drawn).tolist())
    named = " · ".join(f"{op} {count}" for op, count in ops.most_common(SHOWN_OPS))
    if len(ops) > SHOWN_OPS:
        named += f" · {plural(len(ops) - SHOWN_OPS, 'more type')}"
    kind, parent = model.group_kind[group], int(model.group_parent[group])
    rows = [
        ("name", model.group_label[group]),
        ("in", model.group_path(parent) if parent != ROOT else "the top level"),
        ("kind", KIND_NAMES.get(kind, kind)),
        ("nodes", plural(int(drawn.sum()), "node") + _folded_text(folded, shape_ops)),
    ]
    if subgroups:
        rows.append(("groups", f"{subgroups:,} directly inside"))
    if named:
        rows.append(("ops", named))
    src_in, dst_in = members[model.edge_src], members[model.edge_dst]
    real = ~model.node_constant[model.edge_src]  # a folded weight is part of its box, not a value read
    for title, crossing in (("reads", ~src_in & dst_in & real), ("gives", src_in & ~dst_in)):
        names = list(dict.fromkeys(model.edge_label[e] or "(unnamed)" for e in np.flatnonzero(crossing).tolist()))
        if names:
            more = len(names) - SHOWN_VALUES
            shown = ", ".join(names[:SHOWN_VALUES]) + (f" +{more}" if more > 0 else "")
            rows.append((title, f"{plural(len(names), 'value')}: {shown}"))
    for name in model.data_sets:  # the user's per-node data, as a closed group shows it
        column = model.group_values.get(name)
        if isinstance(column, np.ndarray) and group < column.size and np.isfinite(column[group]):
            rows.append((f"{name} ({model.data_sets[name].aggregate})", f"{float(column[group]):g}"))
    return [(f"Group {model.group_label[group]}", ("property", "value"), rows)]


def group_links(model: GraphModel, group: int) -> list[tuple[str, Ref]]:
    """Where a group's values come from and go to, as a node's links are listed (key g): the producer of each
    value it reads from outside, then each reader outside of a value it gives; boxes without a tree item are
    left out (there is nowhere to go)."""
    if not 0 <= group < model.n_groups:
        return []
    members = inside(model, group)
    src, dst = model.edge_src, model.edge_dst
    found: dict[Ref, str] = {}
    real = ~model.node_constant[src]
    for edges, lead, end in ((np.flatnonzero(~members[src] & members[dst] & real), "in", src),
                             (np.flatnonzero(members[src] & ~members[dst]), "out", dst)):  # fmt: skip
        for e in edges.tolist():
            node = int(end[e])
            ref = model.node_ref[node]
            if ref is not None and ref not in found:
                found[ref] = f"{lead} {model.edge_label[e] or '(unnamed)'}: {model.node_label[node]}"
    return [(label, ref) for ref, label in found.items()]
