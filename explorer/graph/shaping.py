"""How `GraphBuilder.build()` shapes a graph the way a reader sees a model (see explorer.graph.builder's docstring):
constants folded into their readers, unscoped constants adopted by their readers' group, single-member scopes
collapsed, big levels chunked along the topological order, and the reading start and main path worked out.

Each step is a function over the model's columns that fills or rewrites them in place.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from explorer.models.graph import (
    CHUNK,
    READING_PATH,
    ROOT,
    VALUE_OPS,
    GraphModel,
    LazyText,
    path_heights,
    successors_csr,
    topological_rank,
)


def _value_ops(model: GraphModel) -> np.ndarray:
    return np.fromiter(map(VALUE_OPS.__contains__, model.node_op), dtype=bool, count=model.n_nodes)


MAX_SANDWICH_DEPTH = 64  # scope levels an op sandwiched between two parts of a scope moves down, at most
# ops whose output is a value's shape, not its data: what an exporter's shape arithmetic starts from
SHAPE_SOURCES = frozenset({"Shape", "Size"})
# a constant above this many bytes is a weight, not an axis, an index or a shape: an op mixing a shape-derived value
# with one (a position embedding's Gather of `Range(seq)`) computes data and stays drawn
SHAPE_CONSTANT_BYTES = 256


def fold_constants(model: GraphModel) -> None:
    """Close `node_constant` over the graph and say where each folded constant is drawn.

    An op whose every input is a constant is a constant too (a worklist over the constants' readers: a chain of
    10,000 folds without recursion); an op reading a graph input, a value nobody produces or anything computed
    from them is never folded. Shape plumbing folds the same way (`node_shape_only`): a `Shape`/`Size` reads only
    its input's shape, so it and every op computed from shapes and small constants alone is folded too, unless it
    also reads a weight (SHAPE_CONSTANT_BYTES). A folded constant is drawn in its first reader in topological
    order that is drawn, reached through other constants."""
    n = model.n_nodes
    constant = model.node_constant.copy()
    model.node_folded_into = np.full(n, -1, dtype=np.int64)
    model.node_shape_only = np.zeros(n, dtype=bool)
    if n == 0 or model.edge_src.size == 0:
        return
    src, dst = model.edge_src, model.edge_dst
    keep = src != dst
    blocked = _value_ops(model) | constant
    for node, _ in model.dangling:
        blocked[node] = True
    shaped = np.fromiter(map(SHAPE_SOURCES.__contains__, model.node_op), dtype=bool, count=n) & ~blocked
    constant |= shaped
    blocked |= shaped
    parameter_bytes = model.node_values.get("parameter_bytes")
    heavy = np.zeros(n, dtype=bool)
    if isinstance(parameter_bytes, np.ndarray) and parameter_bytes.size == n:
        heavy = model.node_constant & (np.nan_to_num(parameter_bytes) > SHAPE_CONSTANT_BYTES)
    indegree = np.bincount(dst[keep], minlength=n)
    waiting = (indegree - np.bincount(dst[keep & constant[src]], minlength=n)).tolist()
    targets, ptr = successors_csr(n, src, dst)
    sources, source_ptr = successors_csr(n, dst, src)
    shaped_list, heavy_list = shaped.tolist(), heavy.tolist()

    def folds(node: int) -> bool:
        """Whether an op whose inputs are all folded folds too, noting what it carries (a shape, a weight)."""
        inputs = sources[source_ptr[node] : source_ptr[node + 1]]
        is_shaped = any(shaped_list[s] for s in inputs)
        is_heavy = any(heavy_list[s] for s in inputs)
        if is_shaped and is_heavy:
            return False
        shaped_list[node], heavy_list[node] = is_shaped, is_heavy
        return True

    work = [v for v in np.flatnonzero((indegree > 0) & (np.asarray(waiting) == 0) & ~blocked).tolist() if folds(v)]
    for node in work:
        constant[node] = True
    blocked_list = blocked.tolist()
    head = 0
    while head < len(work):
        node = work[head]
        head += 1
        for k in range(ptr[node], ptr[node + 1]):
            t = targets[k]
            waiting[t] -= 1
            if waiting[t] == 0 and not blocked_list[t] and not constant[t] and folds(t):
                constant[t] = True
                work.append(t)
    # shape plumbing only: folded shape sources and what folded from them
    model.node_shape_only = np.asarray(shaped_list, dtype=bool) & constant
    # where each constant is drawn: readers first (reverse topological order), the earliest drawn one. An op
    # computed from constants whose value reaches no drawn reader (an `Identity` of a constant that is a
    # branch's output, read only by the subgraph's end) would vanish if folded: it is drawn instead, and what
    # it reads folds into it.
    rank = model.topo_rank.tolist()
    into = model.node_folded_into.tolist()
    is_constant = constant.tolist()
    computed = indegree.tolist()
    for c in sorted(np.flatnonzero(constant).tolist(), key=lambda v: -rank[v]):
        best = -1
        for k in range(ptr[c], ptr[c + 1]):
            t = targets[k]
            drawn = into[t] if is_constant[t] else t
            if drawn >= 0 and (best < 0 or rank[drawn] < rank[best]):
                best = drawn
        if best < 0 and computed[c] and not model.node_constant[c]:
            is_constant[c] = False
            continue
        into[c] = best
    model.node_constant = np.asarray(is_constant, dtype=bool)
    model.node_shape_only &= model.node_constant
    model.node_folded_into = np.asarray(into, dtype=np.int64)


def lowest_common_group(a: int, b: int, parents: list[int], depth: list[int]) -> int:
    """The innermost group holding both `a` and `b` (ROOT when none does); `depth` as `group_depth` gives it."""
    while a != b:
        if a == ROOT or b == ROOT:
            return ROOT
        if depth[a] >= depth[b]:
            a = parents[a]
        else:
            b = parents[b]
    return a


def adopt_unscoped(model: GraphModel) -> None:
    """A folded constant with no name scope of its own (at the top level, or directly in a subgraph or block)
    whose readers all sit inside one scope joins the deepest scope group holding all of them: torch exports
    leave weights (`Identity_12`, `Constant_7`) at the top level while their readers are layers deep, and shown
    with `i` they would sit above the whole model. Readers are placed first (reverse topological order), so a
    constant chain follows its reader down. Ops that are drawn keep the place the exporter gave them (an
    embedding without a scope is not part of the first layer it feeds); nothing crosses into a subgraph or
    block."""
    if model.n_groups == 0 or model.edge_src.size == 0:
        return
    n = model.n_nodes
    is_scope = np.asarray([k == "scope" for k in model.group_kind], dtype=bool)
    group = model.node_group
    in_scope = np.where(group >= 0, is_scope[np.maximum(group, 0)], False)
    candidates = np.flatnonzero(~in_scope & model.node_constant)
    if candidates.size == 0:
        return
    targets, ptr = successors_csr(n, model.edge_src, model.edge_dst)
    parents = model.group_parent.tolist()
    depth = model.group_depth().tolist()
    scope_list = is_scope.tolist()
    groups = group.tolist()
    for node in candidates[np.argsort(-model.topo_rank[candidates], kind="stable")].tolist():
        here = groups[node]
        readers = targets[ptr[node] : ptr[node + 1]]
        if not readers:
            continue
        common = groups[readers[0]]
        for r in readers[1:]:
            common = lowest_common_group(common, groups[r], parents, depth)
            if common in (here, ROOT):
                break
        if common in (here, ROOT):
            continue
        g, path_ok = common, True  # only scopes between where it is and where it goes
        while g != here:
            if g == ROOT or not scope_list[g]:
                path_ok = False
                break
            g = parents[g]
        if path_ok:
            groups[node] = common
    model.node_group = np.asarray(groups, dtype=np.int64)


def adopt_sandwiched(model: GraphModel) -> None:
    """A drawn op that reads from a scope beside it and feeds back into that same scope joins it, as deep as the
    sandwich goes: torch's dynamo exporter puts GPT-2's qkv `Split` in the block while the `Linear` before it
    and the heads after it are in `attn`, and left there it closes a cycle between `attn`'s box and itself (drawn
    as an upward edge, and the walk's way on cut). Only between name scopes; constants follow their readers."""
    if model.n_groups == 0 or model.edge_src.size == 0:
        return
    n = model.n_nodes
    scope = [kind == "scope" for kind in model.group_kind]
    parents = model.group_parent.tolist()
    groups = model.node_group.tolist()
    folded = model.node_constant.tolist()
    keep = model.edge_src != model.edge_dst
    targets, ptr = successors_csr(n, model.edge_src[keep], model.edge_dst[keep])
    sources, source_ptr = successors_csr(n, model.edge_dst[keep], model.edge_src[keep])
    value_ops = _value_ops(model).tolist()
    order = np.argsort(model.topo_rank, kind="stable").tolist()

    def child_toward(here: int, other: int) -> int:
        """The scope directly inside `here` that holds group `other` (at any depth), else -2."""
        g = other
        for _ in range(MAX_SANDWICH_DEPTH):
            if g == ROOT:
                return -2
            parent = parents[g]
            if parent == here:
                return g if scope[g] else -2
            g = parent
        return -2

    src_all, dst_all = model.edge_src[keep], model.edge_dst[keep]
    for _ in range(MAX_SANDWICH_DEPTH):  # one level deeper a round
        moved = False
        column = np.asarray(groups, dtype=np.int64)
        crossing = column[src_all] != column[dst_all]  # an op whose edges all stay in its group is no sandwich
        bordering = np.zeros(n, dtype=bool)
        bordering[src_all[crossing]] = True
        bordering[dst_all[crossing]] = True
        near = bordering.tolist()
        for node in order:
            if folded[node] or value_ops[node] or not near[node]:
                continue
            here = groups[node]
            reads = {child_toward(here, groups[v]) for v in sources[source_ptr[node] : source_ptr[node + 1]]}
            reads.discard(-2)
            if not reads:
                continue
            feeds = {child_toward(here, groups[v]) for v in targets[ptr[node] : ptr[node + 1]]} & reads
            if len(feeds) == 1:
                groups[node] = feeds.pop()
                moved = True
                for v in (*targets[ptr[node] : ptr[node + 1]], *sources[source_ptr[node] : source_ptr[node + 1]]):
                    near[v] = True  # its neighbours now border it, later in this round too
        if not moved:
            break
    model.node_group = np.asarray(groups, dtype=np.int64)


def split_reentered_scopes(model: GraphModel) -> None:
    """A module called twice (diffusers' ResnetBlock2D applies one `nonlinearity` after each norm; torch's dynamo
    exporter gives both calls the one module path) is one scope whose ops the block's other ops run between: as
    one box it is both before and after them, an upward edge. A scope without sub-scopes that its own ops leave
    and come back to is cut into its unconnected runs of ops, each a group of its own: `nonlinearity`,
    `nonlinearity #2`, in the model's order."""
    if model.n_groups == 0 or model.edge_src.size == 0:
        return
    drawn = ~model.node_constant
    has_children = np.bincount(model.group_parent[model.group_parent >= 0], minlength=model.n_groups) > 0
    counts = np.bincount(model.node_group[(model.node_group >= 0) & drawn], minlength=model.n_groups)
    candidates = [g for g in np.flatnonzero((counts >= 2) & ~has_children).tolist() if model.group_kind[g] == "scope"]
    if not candidates:
        return
    rank = model.topo_rank
    members_of: dict[int, list[int]] = {g: [] for g in candidates}
    for node in np.flatnonzero(drawn & np.isin(model.node_group, candidates)).tolist():
        members_of[int(model.node_group[node])].append(node)
    for group, members in members_of.items():
        inside = set(members)
        if not _reentered(model, inside, max(int(rank[v]) for v in members)):
            continue
        runs = _connected_runs(model, members, inside)
        if len(runs) < 2:
            continue
        for k, run in enumerate(runs[1:], start=2):
            new = len(model.group_label)
            add_group(model, f"{model.group_label[group]} #{k}", int(model.group_parent[group]), "scope",
                       model.group_detail[group])  # fmt: skip
            moved = np.asarray(run, dtype=np.int64)
            model.node_group[moved] = new
            folded = np.flatnonzero((model.node_group == group) & np.isin(model.node_folded_into, moved))
            model.node_group[folded] = new  # a run's weights go with it
    model._group_depth = None


def _reentered(model: GraphModel, inside: set[int], last: int) -> bool:
    """Whether a path leaves these nodes and comes back to them (searched among the ops ranked before the last of
    them: a way back passes only there)."""
    rank = model.topo_rank
    frontier = [r for v in inside for r in model.readers(v).tolist() if r not in inside and rank[r] < last]
    seen = set(frontier)
    while frontier:
        node = frontier.pop()
        for r in model.readers(node).tolist():
            if r in inside:
                return True
            if r not in seen and rank[r] < last:
                seen.add(r)
                frontier.append(r)
    return False


def _connected_runs(model: GraphModel, members: list[int], inside: set[int]) -> list[list[int]]:
    """The members split where no edge among them joins them, each run in the model's order, first run first."""
    parent = {v: v for v in members}

    def root(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for v in members:
        for r in model.readers(v).tolist():
            if r in inside:
                parent[root(r)] = root(v)
    runs: dict[int, list[int]] = {}
    for v in sorted(members, key=lambda v: int(model.topo_rank[v])):
        runs.setdefault(root(v), []).append(v)
    return list(runs.values())


def add_group(model: GraphModel, label: str, parent: int, kind: str, detail: str = "") -> None:
    """Append a group to a built model's columns (its members are moved in by the caller)."""
    model.group_label.append(label)
    model.group_ref.append(None)
    model.group_kind.append(kind)
    model.group_unit = np.append(model.group_unit, False)
    model.group_op.append("")
    model.group_detail.append(detail)
    for key, column in model.group_values.items():
        model.group_values[key] = np.append(column, np.nan) if isinstance(column, np.ndarray) else LazyText(
            [*column, ""])  # fmt: skip
    model.group_parent = np.append(model.group_parent, parent)
    if model.group_owner.size:
        model.group_owner = np.append(model.group_owner, -1)


def collapse_single_scopes(model: GraphModel) -> None:
    """A scope group whose only drawn member is one node (`/model/Conv` → model › Conv, with its folded weights)
    adds a click and shows nothing: such singleton scopes give their members to their parent, repeatedly, so a
    scope left with one member after its children went goes too. Kept: groups with two or more drawn members."""
    for _ in range(64):
        if model.n_groups == 0:
            return
        drawn = (model.node_group >= 0) & ~model.node_constant
        members = np.bincount(model.node_group[drawn], minlength=model.n_groups)
        child_groups = np.bincount(model.group_parent[model.group_parent >= 0], minlength=model.n_groups)
        is_scope = np.asarray([k == "scope" for k in model.group_kind], dtype=bool)
        lonely = (members <= 1) & (child_groups == 0) & is_scope
        if not lonely.any():
            return
        moved = lonely[np.maximum(model.node_group, 0)] & (model.node_group >= 0)
        model.node_group[moved] = model.group_parent[model.node_group[moved]]
        _drop_groups(model, np.flatnonzero(~lonely))


def _drop_groups(model: GraphModel, kept: np.ndarray) -> None:
    new_id = np.full(model.n_groups, ROOT, dtype=np.int64)
    new_id[kept] = np.arange(kept.size)
    parents = model.group_parent[kept]
    model.group_parent = np.where(parents >= 0, new_id[np.maximum(parents, 0)], ROOT)
    model.group_label = [model.group_label[g] for g in kept.tolist()]
    model.group_ref = [model.group_ref[g] for g in kept.tolist()]
    model.group_kind = [model.group_kind[g] for g in kept.tolist()]
    model.group_unit = model.group_unit[kept]
    if model.group_owner.size:
        model.group_owner = model.group_owner[kept]
    model.group_op = [model.group_op[g] for g in kept.tolist()]
    model.group_detail = [model.group_detail[g] for g in kept.tolist()]
    model.group_values = {
        k: (v[kept] if isinstance(v, np.ndarray) else LazyText([v[g] for g in kept.tolist()]))
        for k, v in model.group_values.items()
    }
    model.node_group = np.where(model.node_group >= 0, new_id[np.maximum(model.node_group, 0)], ROOT)
    model._group_depth = None


def add_chunks(model: GraphModel) -> None:
    """Split every group (and the top level) with more than CHUNK drawn members into chunk groups; repeat while
    a level is still too wide."""
    for _ in range(4):  # CHUNK**4 members is far beyond any real graph
        drawn = ~model.node_constant
        size = model.n_groups + 1  # index 0 is the top level (ROOT), group g is g + 1
        counts = np.bincount(model.node_group[drawn] + 1, minlength=size)
        counts += np.bincount(model.group_parent + 1, minlength=size)
        wide = (np.flatnonzero(counts > CHUNK) - 1).tolist()
        if not wide:
            return
        for group in wide:
            _chunk_group(model, group)


def _member_of(model: GraphModel, group: int) -> np.ndarray:
    """Per node: which direct member of `group` holds it (node id, or n + child group id), -1 outside it."""
    n = model.n_nodes
    parents = model.group_parent.tolist()
    below: list[int] = [-1] * model.n_groups  # per group: the child of `group` it lies under, or -1
    for g in range(model.n_groups):
        chain, current = [], g
        while current != ROOT and current != group and below[current] == -1:
            chain.append(current)
            current = parents[current]
        if current == group and chain:
            top = chain[-1]
        elif current not in (ROOT, group):
            top = below[current]
        else:
            top = -1
        for member in chain:
            below[member] = top
    below_arr = np.append(np.asarray(below, dtype=np.int64), -1)  # ROOT reads the appended -1
    nodes = model.node_group
    own = np.where(nodes == group, np.arange(n), -1)
    under = below_arr[nodes]
    return np.where((own < 0) & (under >= 0), n + under, own)


def _chunk_group(model: GraphModel, group: int) -> None:
    """Chunks of at most CHUNK drawn members, consecutive in a topological order of the members themselves
    (a child group is one member), so chunks never form a cycle the members do not; folded constants go with
    the chunk of the node they are drawn in. A chunk is labelled by what it holds: its first and last member."""
    n = model.n_nodes
    member = _member_of(model, group)
    drawn = ~model.node_constant
    nodes = np.flatnonzero((model.node_group == group) & drawn)
    subgroups = np.flatnonzero(model.group_parent == group)
    ids = np.concatenate([nodes, n + subgroups])
    index = np.full(n + model.n_groups, -1, dtype=np.int64)
    index[ids] = np.arange(ids.size)
    best = np.full(ids.size, np.iinfo(np.int64).max, dtype=np.int64)
    inside = (member >= 0) & drawn
    np.minimum.at(best, index[member[inside]], model.topo_rank[inside])
    base = np.lexsort((np.arange(ids.size), best))  # members in the model's order first
    renumber = np.empty(ids.size, dtype=np.int64)
    renumber[base] = np.arange(ids.size)
    src, dst = model.edge_src, model.edge_dst
    both = (member[src] >= 0) & (member[dst] >= 0) & drawn[src] & drawn[dst]
    u, v = index[member[src[both]]], index[member[dst[both]]]
    rank, _ = topological_rank(ids.size, renumber[u], renumber[v])
    order = base[np.argsort(rank, kind="stable")]
    position = np.empty(ids.size, dtype=np.int64)
    position[order] = np.arange(ids.size)
    ordered = ids[order]
    chunk_of_member = position // CHUNK
    first_chunk = len(model.group_label)
    for lo in range(0, ordered.size, CHUNK):
        part = ordered[lo : lo + CHUNK]
        add_group(model, f"{_member_name(model, int(part[0]))} – {_member_name(model, int(part[-1]))}", group, "chunk")
    model.node_group[nodes] = first_chunk + chunk_of_member[index[nodes]]
    model.group_parent[subgroups] = first_chunk + chunk_of_member[index[n + subgroups]]
    # folded constants directly in the group: with the chunk of the node they are drawn in
    folded = np.flatnonzero((model.node_group == group) & ~drawn)
    if folded.size:
        into = model.node_folded_into[folded]
        holder = np.where(into >= 0, member[np.maximum(into, 0)], -1)
        chunk = np.where(holder >= 0, chunk_of_member[np.maximum(index[np.maximum(holder, 0)], 0)], 0)
        model.node_group[folded] = first_chunk + chunk
    model._group_depth = None


def _member_name(model: GraphModel, member: int) -> str:
    """How a chunk's label names a member: a group by its label, a node by its op type."""
    n = model.n_nodes
    return model.group_label[member - n] if member >= n else (model.node_op[member] or model.node_label[member])


def reading_start(model: GraphModel) -> int:
    """Where a reader starts: among the inputs of the outermost graph (op "input"; a subgraph's or function's own
    inputs come after), one named as data before any other and one that steers (`input_tier`) last, then the one
    that heads the longest path of drawn nodes (a model's data input, not a flag read once), the first in
    topological order among equals; without inputs, the first drawn node; -1 for an empty graph."""
    if model._reading_start is not None:
        return model._reading_start
    drawn = ~model.node_constant
    if not drawn.any():
        model._reading_start = -1
        return -1
    height = heights(model)
    inputs = np.flatnonzero(drawn & np.fromiter(map("input".__eq__, model.node_op), bool, model.n_nodes))
    pool = inputs if inputs.size else np.flatnonzero(drawn)
    if not inputs.size:
        model._reading_start = int(pool[np.argmin(model.topo_rank[pool])])
    else:
        depth = np.append(model.group_depth(), -1)[model.node_group[pool]]  # the top level (ROOT) reads -1
        tier = np.asarray([input_tier(model, int(node)) for node in pool.tolist()], dtype=np.int64)
        model._reading_start = int(pool[np.lexsort((model.topo_rank[pool], -height[pool], tier, depth))[0]])
    return model._reading_start


# The inputs that carry a model's data, by the names exporters give them (Hugging Face's, torch's), and the
# words of those that only steer it: a mask's arithmetic can head a longer path than the tokens do.
DATA_INPUTS = frozenset({"input_ids", "pixel_values", "sample", "input_features", "inputs_embeds", "input_values",
                         "tokens"})  # fmt: skip
SIDE_INPUT_WORDS = ("mask", "type_ids", "position_ids", "past_key", "cache", "timestep", "encoder_hidden_states",
                    "decoder_input_ids", "seq_len", "shape")  # fmt: skip
SHAPE_ONLY_READERS = frozenset({"Shape", "Size"})


def input_tier(model: GraphModel, node: int) -> int:
    """0 for an input named as data (`input_ids`, `pixel_values`, `sample`), 2 for one that steers (a mask, a type
    id, a position, a cache) or that only its shape is read of, 1 for any other: where reading starts, first."""
    name = model.node_label[node].lower()
    if name in DATA_INPUTS:
        return 0
    readers = model.readers(node).tolist()
    if any(word in name for word in SIDE_INPUT_WORDS) or (
        readers and all(model.node_op[r] in SHAPE_ONLY_READERS for r in readers)
    ):
        return 2
    return 1


def reading_path(model: GraphModel, count: int = READING_PATH) -> list[int]:
    """The main path from the reading start: at each step the reader that heads the longest way on (the first
    in topological order among equals), so a residual branch or a shape computation does not pull it aside;
    `count` drawn nodes at most."""
    return list(itertools.islice(walk_reading_path(model), count))


def walk_reading_path(model: GraphModel) -> Iterator[int]:
    """`reading_path`'s nodes one at a time, for a caller that stops when it has seen enough."""
    start = reading_start(model)
    if start < 0:
        return
    height = heights(model)
    rank, constant = model.topo_rank, model.node_constant
    node = start
    yield node
    while True:
        nxt = [t for t in model.readers(node).tolist() if not constant[t] and rank[t] > rank[node]]
        if not nxt:
            return
        node = min(nxt, key=lambda t: (-int(height[t]), int(rank[t]), t))
        yield node


def heights(model: GraphModel) -> np.ndarray:
    """Per node: the most drawn nodes on a path from it on (edges that follow the topological order only),
    worked out once per model."""
    if model._heights is None:
        drawn = ~model.node_constant[model.edge_src] & ~model.node_constant[model.edge_dst]
        model._heights = path_heights(model.n_nodes, model.edge_src[drawn], model.edge_dst[drawn], model.topo_rank)
    return model._heights
