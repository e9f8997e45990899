"""Stacks of alike blocks: consecutive sibling scopes of the same structure, each reading the one before (a
decoder's 80 layers), become one group, `layers.0–79 × 80 LlamaDecoderLayer`, whose members are the blocks;
closed it is one box with the values flowing through, opened its blocks are closed boxes, each of which opens as
before.

Alike means the same thing at every level: the same ops in the same order, the same sub-scopes by name, the same
edges inside, the same folded weights' shapes and, where the format gives them (`GraphModel.attributes_of`), the
same attributes, and the same module class. A stack never hides a difference, and never a cycle: a run of blocks
that an op outside it reads from and feeds back into is not stacked.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from explorer.graph.shaping import add_group
from explorer.models.graph import ROOT, GraphModel, successors_csr

MIN_STACK = 3  # alike consecutive blocks a stack needs: two side by side cost less than an Enter
STACK_KINDS = frozenset({"scope"})  # what may be stacked: name scopes and modules, not subgraphs or functions
_NUMBERED = re.compile(r"^(.*?)(\d+)$")
_MADE_UP = re.compile(r"unk__\d+")


def add_stacks(model: GraphModel) -> None:
    """Put every run of MIN_STACK or more alike consecutive sibling scopes into a stack group (kind "stack")."""
    if model.n_groups < MIN_STACK or model.cyclic or model.edge_src.size == 0:
        return
    eligible = [kind in STACK_KINDS and not unit for kind, unit in zip(model.group_kind, model.group_unit.tolist(),
                                                                      strict=True)]  # fmt: skip
    siblings: dict[int, list[int]] = {}
    for g, parent in enumerate(model.group_parent.tolist()):
        if eligible[g]:
            siblings.setdefault(parent, []).append(g)
    if not any(len(kids) >= MIN_STACK - 1 for kids in siblings.values()):
        return
    nodes = _nodes_by_group(model)
    drawn = ~model.node_constant
    rank = model.topo_rank
    shape, units = _Shape(model, nodes), _Units(model)
    runs = []
    for kids in siblings.values():
        if len(kids) < MIN_STACK - 1:
            continue
        first = {g: int(rank[shown].min()) for g in kids if (shown := [v for v in nodes[g] if drawn[v]])}
        ordered = sorted(first, key=lambda g: (first[g], g))
        run: list[int] = []
        for g in ordered:
            if run and shape.alike(g, run[0]) and _feeds(model, nodes[run[-1]], nodes[g]):
                run.append(g)
                continue
            runs += _with_first_block(model, run, ordered, nodes, shape, units)
            run = [g]
        runs += _with_first_block(model, run, ordered, nodes, shape, units)
    for run in runs:
        _make_stack(model, run)
    if runs:
        model._group_depth = None


def _feeds(model: GraphModel, before: list[int], after: list[int]) -> bool:
    """Whether a block reads what the one before it computes: a stack is a chain the values flow through, not
    alike branches side by side (an attention's query, key and value)."""
    later = set(after)  # from the block's last nodes back: its output is read first, so this ends early
    return any(int(r) in later for node in reversed(before) for r in model.readers(node).tolist())


def _nodes_by_group(model: GraphModel) -> list[list[int]]:
    """Per group: its nodes at any depth, in the model's topological order."""
    found: list[list[int]] = [[] for _ in range(model.n_groups)]
    parents = model.group_parent.tolist()
    for node in np.argsort(model.topo_rank, kind="stable").tolist():
        g = int(model.node_group[node])
        while g != ROOT:
            found[g].append(node)
            g = parents[g]
    return found


class _Shape:
    """What makes two blocks alike: a quick key (class, node and sub-scope counts), then the ops in order, and
    only where those agree, a digest of every op, sub-scope, edge, folded weight's shape and attribute inside
    (reading every attribute is what costs: blocks that differ mostly differ in their ops already).

    A copy of a constant (an `Identity` of a weight) is not part of a block's structure: TorchScript writes one
    weight for all the equal ones (every LayerNorm's ones and zeros) and gives each later reader an `Identity`
    copy, so layer 0 reads the weight where layer 1 reads a copy of it."""

    def __init__(self, model: GraphModel, nodes: list[list[int]]) -> None:
        self.model, self.nodes = model, nodes
        self.children = np.bincount(model.group_parent[model.group_parent >= 0], minlength=model.n_groups)
        self.copies = constant_copies(model)
        self._full: dict[int, bytes] = {}
        self._ops: dict[int, bytes] = {}

    def members(self, group: int) -> list[int]:
        copies = self.copies
        return [node for node in self.nodes[group] if not copies[node]]

    def quick(self, group: int) -> tuple:
        model = self.model
        return (model.group_detail[group] if group < len(model.group_detail) else "", len(self.members(group)),
                int(self.children[group]))  # fmt: skip

    def ops(self, group: int) -> bytes:
        found = self._ops.get(group)
        if found is None:
            ops = self.model.node_op
            text = "\0".join(ops[node] for node in self.members(group))
            found = self._ops[group] = hashlib.blake2b(text.encode(), digest_size=16).digest()
        return found

    def alike(self, group: int, other: int) -> bool:
        return (self.quick(group) == self.quick(other) and self.ops(group) == self.ops(other)
                and self.full(group) == self.full(other))  # fmt: skip

    def forget(self, group: int) -> None:
        """Its members changed: work its digests out again."""
        self._ops.pop(group, None)
        self._full.pop(group, None)

    def full(self, group: int) -> bytes:
        found = self._full.get(group)
        if found is None:
            found = self._full[group] = self._digest(group)
        return found

    def _digest(self, group: int) -> bytes:
        model = self.model
        members = self.members(group)
        position = {node: k for k, node in enumerate(members)}
        attributes = model.attributes_of
        parts: list[object] = []
        weights = model.node_constant & ~model.node_shape_only
        for node in members:
            # a weight's shape (a layer of another width is another block); shape inference's made-up dims
            # (`unk__41`) differ from layer to layer and say nothing
            shape = _MADE_UP.sub("?", model.node_detail[node]) if weights[node] else ""
            parts.append((model.node_op[node], self._path(node, group), bool(model.node_constant[node]), shape,
                          attributes(node) if attributes is not None else ""))  # fmt: skip
            for e in model.in_edges(node).tolist():
                source = position.get(int(model.edge_src[e]))
                if source is not None:
                    parts.append((source, position[node]))
        return hashlib.blake2b(repr(parts).encode(), digest_size=16).digest()

    def _path(self, node: int, group: int) -> tuple[str, ...]:
        """The sub-scopes between `group` and the node, by name (`attn`, `mlp`): the same in every layer."""
        model, labels = self.model, []
        g = int(model.node_group[node])
        while g != group and g != ROOT:
            labels.append(model.group_label[g])
            g = int(model.group_parent[g])
        return tuple(reversed(labels))


def constant_copies(model: GraphModel) -> np.ndarray:
    """Per node: whether it is an `Identity` whose input is a constant (a copy of a weight)."""
    copies = np.zeros(model.n_nodes, dtype=bool)
    for node in np.flatnonzero(model.node_constant).tolist():
        if model.node_op[node] == "Identity":
            sources = model.edge_src[model.in_edges(node)]
            copies[node] = sources.size > 0 and bool(model.node_constant[sources].all())
    return copies


def _with_first_block(model: GraphModel, run: list[int], ordered: list[int], nodes: list[list[int]], shape: _Shape,
                      units: _Units) -> list[list[int]]:  # fmt: skip
    """The run as `_acyclic_runs` gives it, with the block before it at its head when that block differs from the
    run's only by ops every later block reads: an exporter puts what every layer shares (a mask's `Where`, its
    `Concat`s) in the first layer's scope, which kept GPT-2's `h.0` out of `h.1–11 × 11`. Those ops are moved
    to the blocks' parent (drawn beside the stack, where they are read from) and the block joins the stack; when
    it would still differ, nothing moves."""
    at = ordered.index(run[0]) if run else 0
    if len(run) >= MIN_STACK - 1 and at > 0:
        head = ordered[at - 1]
        shared = _shared_with(model, nodes, head, run)
        if shared:
            parent = int(model.group_parent[head])
            before = model.node_group[shared].copy()
            model.node_group[shared] = parent
            units.forget(parent)
            moved = set(shared)
            changed = [g for g in _within(model, head) if moved.intersection(nodes[g])]
            kept = {g: nodes[g] for g in changed}
            for g in changed:
                nodes[g] = [node for node in nodes[g] if node not in moved]
                shape.forget(g)
            joined = [head, *run]
            if shape.alike(head, run[0]) and _feeds(model, nodes[head], nodes[run[0]]) and \
                    _acyclic_runs(model, joined, units):
                return [joined]
            model.node_group[shared] = before
            units.forget(parent)
            for g, members in kept.items():
                nodes[g] = members
                shape.forget(g)
    return _acyclic_runs(model, run, units)


def _within(model: GraphModel, group: int) -> list[int]:
    """`group` and the groups inside it, at any depth."""
    parents = model.group_parent.tolist()
    found = []
    for g in range(model.n_groups):
        above = g
        while above != ROOT and above != group:
            above = parents[above]
        if above == group:
            found.append(g)
    return found


def _shared_with(model: GraphModel, nodes: list[list[int]], head: int, run: list[int]) -> list[int]:
    """The nodes of block `head` that two or more blocks of `run` read, and those of its nodes that feed only
    them (the constants and the chain they are computed from)."""
    later = [set(nodes[g]) for g in run]
    shared: set[int] = set()
    for node in nodes[head]:
        readers = model.readers(node).tolist()
        if sum(1 for block in later if any(r in block for r in readers)) >= 2:
            shared.add(node)
    grew = bool(shared)
    while grew:
        grew = False
        for node in reversed(nodes[head]):
            if node not in shared and (readers := model.readers(node).tolist()) and \
                    all(r in shared for r in readers):  # fmt: skip
                shared.add(node)
                grew = True
    return [node for node in nodes[head] if node in shared]


def _acyclic_runs(model: GraphModel, run: list[int], units: _Units) -> list[list[int]]:
    """The run as one stack when it is long enough and its box would close no cycle (see `_Units`); otherwise
    none."""
    if len(run) < MIN_STACK:
        return []
    return [] if units.closes_a_cycle(int(model.group_parent[run[0]]), run) else [run]


class _Units:
    """What a stack's box could close a cycle through: with its parent and the parent's ancestors open and every
    other group closed (the most a view can merge: opening a group only splits a box), each node is drawn as
    itself or as the outermost closed group holding it. A stack closes a cycle when one of those boxes is
    reached from the stack and reaches it back: a block between two alike ones, merged into one box."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        self._of_parent: dict[int, np.ndarray] = {}
        self._ancestors: np.ndarray | None = None  # [depth, group]: its ancestor there (itself at its own), else -1

    def forget(self, parent: int) -> None:
        """Nodes moved under `parent`: work its units out again."""
        self._of_parent.pop(parent, None)

    def closes_a_cycle(self, parent: int, run: list[int]) -> bool:
        model = self.model
        n = model.n_nodes
        unit = self._of_parent.get(parent)
        if unit is None:
            unit = self._of_parent[parent] = self._units(parent)
        stack = n + model.n_groups  # one id for the whole run
        merged = np.where(np.isin(unit, [n + g for g in run]), stack, unit)
        u, v = merged[model.edge_src], merged[model.edge_dst]
        keep = u != v
        u, v = u[keep], v[keep]
        targets, ptr = successors_csr(stack + 1, u, v)
        frontier, seen = [stack], {stack}
        while frontier:
            here = frontier.pop()
            for t in targets[ptr[here] : ptr[here + 1]]:
                if t == stack and here != stack:
                    return True
                if t not in seen:
                    seen.add(t)
                    frontier.append(t)
        return False

    def _units(self, parent: int) -> np.ndarray:
        """Per node: the id it is drawn as (node id, or n + the outermost closed group holding it). Numpy over the
        groups' ancestor table, depth by depth: a Python walk of every group per parent cost 8 ms a parent, 9 s on
        a 50,000-op model of 1,100 module scopes."""
        model = self.model
        n = model.n_nodes
        path = model.ancestors(parent) if parent != ROOT else []
        outermost = np.full(model.n_groups, -1, dtype=np.int64)  # per group: its outermost closed ancestor
        following = np.ones(model.n_groups, dtype=bool)  # groups whose ancestors so far are the open path's
        for depth, row in enumerate(self._ancestor_table()):
            if depth < len(path):
                leaving = following & (row >= 0) & (row != path[depth])
                outermost[leaving] = row[leaving]
                following &= row == path[depth]
            else:  # inside `parent`: the ancestor just below it is the outermost closed one
                below = following & (row >= 0)
                outermost[below] = row[below]
                break
        groups = model.node_group
        closed = np.append(outermost, -1)[groups]  # ROOT reads the appended -1
        return np.where(closed >= 0, n + closed, np.arange(n))

    def _ancestor_table(self) -> np.ndarray:
        """Each group's ancestor at each depth (the groups do not change while stacks are sought)."""
        if self._ancestors is None:
            model = self.model
            count = model.n_groups
            depth = model.group_depth()
            table = np.full((int(depth.max()) + 1 if count else 1, count), -1, dtype=np.int64)
            current, level = np.arange(count, dtype=np.int64), depth.astype(np.int64).copy()
            alive = current >= 0
            while alive.any():
                at = np.flatnonzero(alive)
                table[level[at], at] = current[at]
                current[at] = model.group_parent[current[at]]
                level[at] -= 1
                alive = current != ROOT
            self._ancestors = table
        return self._ancestors


def _make_stack(model: GraphModel, run: list[int]) -> None:
    class_name = model.group_detail[run[0]] if run[0] < len(model.group_detail) else ""
    stack = len(model.group_label)
    add_group(model, stack_label([model.group_label[g] for g in run]), int(model.group_parent[run[0]]), "stack",
              f"× {len(run)} {class_name}".rstrip())  # fmt: skip
    model.group_parent[run] = stack


def stack_label(labels: list[str]) -> str:
    """`layers.0–79` for `layers.0` … `layers.79` (one name and consecutive numbers), else `first – last`."""
    found = [_NUMBERED.match(label) for label in labels]
    if all(found):
        prefixes = {m.group(1) for m in found if m}
        numbers = [int(m.group(2)) for m in found if m]
        if len(prefixes) == 1 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            return f"{prefixes.pop()}{numbers[0]}–{numbers[-1]}"
    return f"{labels[0]} – {labels[-1]}"
