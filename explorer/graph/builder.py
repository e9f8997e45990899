"""The neutral graph every format's document can offer (Capability.GRAPH): nodes, edges and nested groups.

Formats build it with `GraphBuilder` (ONNX nodes and subgraphs, Core ML ops and blocks, ARK nodes, TVM graph
nodes, schedule layers); the graph view, `ir-explorer graph`, the SVG screenshot and the HTML figure all read
it through `explorer.graph.layout`. `build()` shapes it the way a reader sees a model:
- constants fold: what a format marks constant (initializers, `Constant` ops, parameters) and every op whose
  inputs are all constants, transitively (torch's `Identity` weights, `Unsqueeze`/`ConstantOfShape` chains),
  is drawn inside the box that reads it, not as a box of its own;
- groups follow the model: name scopes (`/model/layers.0/attn/MatMul` → model › layers.0 › attn) and
  subgraphs/blocks are groups, and a folded constant with no scope of its own joins the deepest group holding
  all its readers (a weight sits in the layer that uses it, not above the whole model); drawn ops keep the
  place the exporter gave them;
- consecutive sibling scopes of the same structure (a decoder's layers) are stacked into one group
  (explorer.graph.stacks);
- a level with more than CHUNK drawn members gets chunk groups cut along the topological order of what it
  draws, so no level ever shows thousands of boxes at once and chunks never form a cycle of their own.

The model's columns live in explorer.models.graph, the shaping steps in explorer.graph.shaping; this module is
what a format calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from explorer.formatting import visible_column
from explorer.graph.item_details import ITEM_DETAILS
from explorer.graph.plumbing import fold_side_plumbing
from explorer.graph.shaping import (
    add_chunks,
    adopt_sandwiched,
    adopt_unscoped,
    collapse_single_scopes,
    fold_constants,
    reading_start,
    split_reentered_scopes,
)
from explorer.graph.stacks import add_stacks
from explorer.models.graph import ROOT, GraphModel, LazyText, Resolver, topological_rank
from explorer.models.ref import Ref


class GraphBuilder:
    """What a format calls to describe its graph; `build()` adds topological ranks and chunk groups."""

    def __init__(self, resolve: Resolver | None = None,
                 role_of: Callable[[int, str], tuple[int, str]] | None = None) -> None:  # fmt: skip
        """`resolve(*args)` computes the detail or text value given as `Deferred(args)`, when first read;
        `role_of(node, value name)` places and names the input of a node that reads a value (GraphModel.role_of)."""
        self.resolve = resolve
        self.role_of = role_of
        # node → its attributes as comparable text (GraphModel.attributes_of)
        self.attributes_of: Callable[[int], str] | None = None
        self.labels: list[str] = []
        self.ops: list[str] = []
        self.groups: list[int] = []
        self.details: list[str] = []
        self.refs: list[Ref | None] = []
        self.constants: list[bool] = []
        self.lanes: list[int] = []
        self.src: list[int] = []
        self.dst: list[int] = []
        self.edge_labels: list[str] = []
        self.group_labels: list[str] = []
        self.group_parents: list[int] = []
        self.group_refs: list[Ref | None] = []
        self.group_kinds: list[str] = []
        self.group_units: list[bool] = []
        self.group_ops: list[str] = []
        self.group_details: list[str] = []
        self.group_owners: dict[int, int] = {}  # group → the node that owns it (see `owned_by`)
        self.group_value_columns: dict[str, list[Any]] = {}
        self.dangling: list[tuple[int, str]] = []
        self.values: dict[str, list[Any]] = {}
        self._scopes: dict[tuple[int, str], int] = {}
        self._roles: dict[tuple[int, str], tuple[int, str]] = {}  # (target, value) → (slot, role), from edge()

    def group(
        self,
        label: str,
        parent: int = ROOT,
        *,
        kind: str = "scope",
        ref: Ref | None = None,
        unit: bool = False,
        op: str = "",
        detail: str = "",
        **values: Any,
    ) -> int:
        """A group; with `unit=True`, one that is drawn as a node (op, detail, colour values) until opened."""
        self.group_labels.append(label)
        self.group_parents.append(parent)
        self.group_refs.append(ref)
        self.group_kinds.append(kind)
        self.group_units.append(unit)
        self.group_ops.append(op)
        self.group_details.append(detail)
        g = len(self.group_labels) - 1
        for key, value in values.items():
            self.group_value_columns.setdefault(key, [None] * g).append(value)
        for column in self.group_value_columns.values():
            if len(column) <= g:
                column.append(None)
        return g

    def owned_by(self, group: int, node: int) -> None:
        """Say that `group` is a subgraph or block of the op `node` (an If's branch): drawn closed, it hangs
        off its owner by a dotted link instead of floating unconnected."""
        self.group_owners[group] = node

    def scope(self, name: str, parent: int = ROOT) -> int:
        """The group of a name's scope: `/model/layers.0/attn/MatMul` → model › layers.0 › attn (created once).
        A name without '/' stays in `parent`."""
        parts = [p for p in name.split("/") if p][:-1]
        group = parent
        for part in parts:
            key = (group, part)
            found = self._scopes.get(key)
            if found is None:
                found = self._scopes[key] = self.group(part, group, kind="scope")
            group = found
        return group

    def node(
        self,
        label: str,
        op: str,
        *,
        group: int = ROOT,
        detail: str = "",
        ref: Ref | None = None,
        constant: bool = False,
        lane: int = -1,
        **values: Any,
    ) -> int:
        self.lanes.append(lane)
        self.labels.append(label)
        self.ops.append(op)
        self.groups.append(group)
        self.details.append(detail)
        self.refs.append(ref)
        self.constants.append(constant)
        n = len(self.labels) - 1
        for key, value in values.items():
            column = self.values.get(key)
            if column is None:
                column = self.values[key] = [None] * n
            column.append(value)
        if len(values) < len(self.values):  # keep every column one entry per node
            for key, column in self.values.items():
                if key not in values:
                    column.append(None)
        return n

    def add_nodes(
        self,
        labels: list[str],
        ops: list[str],
        groups: list[int],
        details: list[Any],
        refs: list[Ref | None],
        constants: list[bool] | None = None,
        **values: list[Any],
    ) -> int:
        """Many nodes at once (columns of equal length), for big graphs; returns the first new node's id."""
        first = len(self.labels)
        count = len(labels)
        self.labels += labels
        self.ops += ops
        self.groups += groups
        self.details += details
        self.refs += refs
        self.constants += constants if constants is not None else [False] * count
        self.lanes += [-1] * count
        for key in set(self.values) | set(values):
            column = self.values.setdefault(key, [None] * first)
            column += values.get(key) or [None] * count
        return first

    def scopes(self, names: list[str], parent: int = ROOT) -> list[int]:
        """The scope group of each name (see `scope`), computed once per distinct scope."""
        prefixes = [name.rpartition("/")[0] for name in names]
        # dict.fromkeys, not set(): groups are numbered in the order their names first appear, under any hash seed
        found = {prefix: self.scope(prefix + "/_", parent) for prefix in dict.fromkeys(prefixes)}
        return [found[prefix] for prefix in prefixes]

    def edge(self, source: int, target: int, label: str = "", role: str = "", slot: int = 0) -> None:
        """An edge carrying the value `label`; `role`/`slot` name and place the target's input that reads it
        (GraphModel.role_of), for formats that know them while they add edges."""
        self.src.append(source)
        self.dst.append(target)
        self.edge_labels.append(label)
        if role:
            self._roles[(target, label)] = (slot, role)

    def build(self) -> GraphModel:
        n = len(self.labels)
        for column in self.values.values():  # columns started late or missing values at the end
            column.extend([None] * (n - len(column)))
        src = np.asarray(self.src, dtype=np.int64)
        dst = np.asarray(self.dst, dtype=np.int64)
        model = GraphModel(  # names made visible once here: no view can print a file's control characters
            node_label=visible_column(self.labels),
            node_op=visible_column(self.ops),
            node_group=np.asarray(self.groups, dtype=np.int64),
            node_detail=LazyText(self.details, self.resolve),
            node_ref=self.refs,
            node_constant=np.asarray(self.constants, dtype=bool),
            edge_src=src,
            edge_dst=dst,
            edge_label=visible_column(self.edge_labels),
            group_label=visible_column(self.group_labels),
            group_parent=np.asarray(self.group_parents, dtype=np.int64),
            group_ref=self.group_refs,
            group_kind=self.group_kinds,
            dangling=self.dangling,
            node_values={k: _value_column(v, self.resolve) for k, v in self.values.items()},
            group_unit=np.asarray(self.group_units, dtype=bool),
            group_op=visible_column(self.group_ops),
            group_detail=visible_column(self.group_details),
            group_values={k: _value_column(v, self.resolve) for k, v in self.group_value_columns.items()},
        )
        model.role_of = self.role_of
        model.item_details = ITEM_DETAILS
        model.attributes_of = self.attributes_of
        model.node_lane = np.asarray(self.lanes, dtype=np.int64)
        model.group_owner = np.full(len(self.group_labels), -1, dtype=np.int64)
        for group, node in self.group_owners.items():
            model.group_owner[group] = node
        if model.role_of is None and self._roles:
            model.role_of = _KnownRoles(self._roles)
        model.topo_rank, model.cyclic = topological_rank(n, src, dst)
        fold_constants(model)
        adopt_unscoped(model)
        adopt_sandwiched(model)
        split_reentered_scopes(model)
        collapse_single_scopes(model)
        add_stacks(model)
        fold_side_plumbing(model)
        add_chunks(model)
        reading_start(model)  # worked out here: a big graph is built in the background, its first screen is not
        return model


class _KnownRoles:
    """role_of from the roles the format gave with its edges (a class, not a closure: a kept graph pickles)."""

    def __init__(self, roles: dict[tuple[int, str], tuple[int, str]]) -> None:
        self.roles = roles

    def __call__(self, node: int, value: str) -> tuple[int, str]:
        return self.roles.get((node, value), (0, ""))


def _value_column(values: list[Any], resolve: Resolver | None) -> np.ndarray | LazyText:
    if values and all(isinstance(v, int | float) or v is None for v in values):
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    return LazyText(values, resolve)
