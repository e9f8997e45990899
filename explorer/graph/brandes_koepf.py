"""Positions across the layers by Brandes and Köpf ("Fast and Simple Horizontal Coordinate Assignment", 2001),
the placement dagre, ELK and OGDF use: each vertex is aligned with a median neighbour into vertical blocks, so a
long edge's chain of dummies (and a run of ops each reading the one above) is one straight line; the blocks are
packed as tightly as their order allows; four such alignments (towards the layer above or below, packed from the
left or the right) are balanced into one.

Inner segments (both ends dummies: the middle of a long edge) win conflicts: an edge crossing one is not
aligned, so long edges stay straight rather than the short ones around them. Sizes differ per box: blocks are
separated by half of each neighbour's size plus the gap, as dagre does; coordinates here are box centres.
"""

from __future__ import annotations

Layers = list[list[int]]  # per layer, its vertices in order across


def place(
    layers: Layers, up: list[list[int]], down: list[list[int]], size: list[int], gap: int, dummy: list[bool]
) -> list[float]:
    """Each vertex's centre across the layers (vertices not in `layers` get 0)."""
    total = len(size)
    conflicts = type1_conflicts(layers, up, dummy)
    runs: list[tuple[list[float], bool]] = []
    for downwards in (True, False):
        ordered = layers if downwards else layers[::-1]
        neighbours = up if downwards else down
        for from_left in (True, False):
            sweep = ordered if from_left else [layer[::-1] for layer in ordered]
            root = align(sweep, neighbours, conflicts, total)
            xs = compact(sweep, root, size, gap)
            runs.append((xs if from_left else [-x for x in xs], from_left))
    return balance(runs, layers, size)


def type1_conflicts(layers: Layers, up: list[list[int]], dummy: list[bool]) -> set[tuple[int, int]]:
    """Segments (upper, lower) that cross an inner segment and are not inner themselves: they yield to it."""
    conflicts: set[tuple[int, int]] = set()
    position = _positions(layers)
    for above, layer in zip(layers, layers[1:], strict=False):
        k0, scanned = 0, 0
        last = len(layer) - 1
        for index, v in enumerate(layer):
            inner_above = next((u for u in up[v] if dummy[u]), None) if dummy[v] else None
            if inner_above is None and index != last:
                continue
            k1 = position[inner_above] if inner_above is not None else len(above)
            for w in layer[scanned : index + 1]:
                for u in up[w]:
                    if (position[u] < k0 or position[u] > k1) and not (dummy[u] and dummy[w]):
                        conflicts.add((u, w))
            scanned, k0 = index + 1, k1
    return conflicts


def align(layers: Layers, neighbours: list[list[int]], conflicts: set[tuple[int, int]], total: int) -> list[int]:
    """Each vertex's block root: walking the layers in sweep order, a vertex joins the block of its median
    neighbour in the layer before (the left median first), unless that segment yields to an inner one or an
    earlier vertex of its layer was aligned further across (blocks would cross)."""
    root = list(range(total))
    position = _positions(layers)
    for layer in layers:
        reached = -1
        for v in layer:
            near = sorted((w for w in neighbours[v] if w in position), key=position.__getitem__)
            if not near:
                continue
            for w in dict.fromkeys((near[(len(near) - 1) // 2], near[len(near) // 2])):
                if root[v] != v:
                    break
                if position[w] <= reached or _conflict(conflicts, v, w):
                    continue
                root[v] = root[w]
                reached = position[w]
    return root


def _conflict(conflicts: set[tuple[int, int]], a: int, b: int) -> bool:
    return (a, b) in conflicts or (b, a) in conflicts


def compact(layers: Layers, root: list[int], size: list[int], gap: int) -> list[float]:
    """Block coordinates: each block as far towards the sweep's start as the blocks before it in every layer
    allow, then pushed towards the ones after it while that leaves no separation short (dagre's two sweeps
    over the block graph, which mends the original's class shifting)."""
    after: dict[int, dict[int, float]] = {}
    before: dict[int, dict[int, float]] = {}
    blocks: dict[int, None] = {}
    for layer in layers:
        previous = None
        for v in layer:
            b = root[v]
            blocks.setdefault(b, None)
            if previous is not None:
                a = root[previous]
                separation = (size[previous] + size[v]) / 2 + gap
                if separation > after.setdefault(a, {}).get(b, float("-inf")):
                    after[a][b] = separation
                    before.setdefault(b, {})[a] = separation
            previous = v
    order = _topological(list(blocks), before, after)
    x: dict[int, float] = {}
    for b in order:
        x[b] = max((x[a] + s for a, s in before.get(b, {}).items()), default=0.0)
    for b in reversed(order):
        limit = min((x[c] - s for c, s in after.get(b, {}).items()), default=None)
        if limit is not None:
            x[b] = max(x[b], limit)
    xs = [0.0] * len(size)
    for layer in layers:
        for v in layer:
            xs[v] = x[root[v]]
    return xs


Gaps = dict[int, dict[int, float]]  # block → the blocks beside it → the separation between them


def _topological(blocks: list[int], before: Gaps, after: Gaps) -> list[int]:
    waiting = {b: len(before.get(b, ())) for b in blocks}
    ready = [b for b in blocks if waiting[b] == 0]
    order = []
    while ready:
        b = ready.pop()
        order.append(b)
        for c in after.get(b, ()):
            waiting[c] -= 1
            if waiting[c] == 0:
                ready.append(c)
    if len(order) != len(blocks):  # cannot happen for a valid alignment; never lose a block if it does
        seen = set(order)
        order += [b for b in blocks if b not in seen]
    return order


def balance(runs: list[tuple[list[float], bool]], layers: Layers, size: list[int]) -> list[float]:
    """The four alignments moved onto the narrowest one (left-packed ones by their left edge, right-packed ones
    by their right edge), then each vertex at the mean of its two middle candidates."""
    placed = [v for layer in layers for v in layer]
    if not placed:
        return [0.0] * len(size)

    def extent(xs: list[float]) -> tuple[float, float]:
        return min(xs[v] - size[v] / 2 for v in placed), max(xs[v] + size[v] / 2 for v in placed)

    extents = [extent(xs) for xs, _ in runs]
    narrowest = min(range(len(runs)), key=lambda k: extents[k][1] - extents[k][0])
    lo, hi = extents[narrowest]
    moved = []
    for (xs, from_left), (run_lo, run_hi) in zip(runs, extents, strict=True):
        delta = lo - run_lo if from_left else hi - run_hi
        moved.append([x + delta for x in xs])
    out = [0.0] * len(size)
    for v in placed:
        candidates = sorted(xs[v] for xs in moved)
        out[v] = (candidates[1] + candidates[2]) / 2
    return out


def _positions(layers: Layers) -> dict[int, int]:
    return {v: index for layer in layers for index, v in enumerate(layer)}
