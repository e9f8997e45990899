"""Problems on the graph: each box (and each closed group holding one) marked ✗ or ⚠ by the worst problem
it has, so a schedule's overlaps show on their layers and a model's bad nodes on their boxes (issue #33).

A problem reaches a node through the document's own lookup (`find_ref`, as the problems panel jumps), then the
graph's ref of that node; a buffer entry's problem lands on its workload. The marks are model columns
(`node_values["problems"]`, `group_values["problems"]`: 2 error, 1 warning, NaN none), so the "problems" colour
mode and the boxes' marks read one answer.
"""

from __future__ import annotations

import numpy as np

from explorer.document import Document
from explorer.models.graph import GraphModel, strongest_inside

SEVERITY_VALUE = {"error": 2.0, "warning": 1.0}
MARKS = {2.0: "✗ ", 1.0: "⚠ "}
MAX_LOOKED_UP = 20_000  # problems looked up (a systematically broken file lists 10,000 of a code)


def mark_problems(model: GraphModel, document: Document) -> int:
    """Set the problem columns of `model` from `document.problems`; returns how many nodes carry a mark."""
    marks = np.full(model.n_nodes, np.nan)
    lookup: dict = {}
    for problem in document.problems[:MAX_LOOKED_UP]:
        value = SEVERITY_VALUE.get(problem.severity)
        if value is None:
            continue
        lookup = lookup or model.ref_to_node  # built on the first problem: 40 ms on a 100,000-node model
        ref = document.find_ref({**problem.refs, "location": problem.location})
        node = lookup.get(ref)
        if node is None and isinstance(ref, tuple) and len(ref) >= 2 and isinstance(ref[1], int):
            node = lookup.get(("workload", ref[1]))  # a buffer entry's, an input's: its workload
        if node is not None and not marks[node] >= value:
            marks[node] = value
    worst = strongest_inside(model, np.nan_to_num(marks, nan=-1).astype(np.int64))  # a group: its worst inside
    groups = np.where(worst >= 0, worst, np.nan)
    model.node_values["problems"] = marks
    model.group_values["problems"] = groups
    return int((~np.isnan(marks)).sum())


DIFF_MARKS = {1.0: "Δ ", 2.0: "− ", 3.0: "+ "}  # a comparison's side: changed, removed (A), added (B)


def mark_of(model: GraphModel, kind: int, ident: int) -> str:
    """The mark a box's title starts with: "✗ " or "⚠ " for a problem, and on a comparison's side "Δ " (changed),
    "− " (only in A) or "+ " (only in B); "" for none."""
    marks = ""
    for name, table in (("problems", MARKS), ("diff", DIFF_MARKS)):
        column = model.group_values.get(name) if kind == 1 else model.node_values.get(name)
        if column is not None and ident < len(column):
            marks += table.get(float(column[ident]), "")
    return marks
