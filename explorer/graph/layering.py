"""Layering, the first of Sugiyama's steps: elements in a topological order and their layers by longest path,
sources pulled down next to their first reader."""

from __future__ import annotations

import numpy as np

from explorer.models.graph import topological_rank


def order_and_layers(n: int, src: np.ndarray, dst: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, ...]:
    """Elements in a topological order (ties and cycles broken by `base`), their layers by longest path, and
    which edges point backwards in that order (they close a cycle)."""
    base_order = np.lexsort((np.arange(n), base))
    if src.size:
        renumber = np.empty(n, dtype=np.int64)
        renumber[base_order] = np.arange(n)
        rank, _ = topological_rank(n, renumber[src], renumber[dst])
        order = base_order[np.argsort(rank, kind="stable")]
    else:
        order = base_order
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    back = position[src] > position[dst]
    layer = longest_path_layers(n, np.where(back, dst, src), np.where(back, src, dst), order)
    return position, layer, back


def longest_path_layers(m: int, src: np.ndarray, dst: np.ndarray, order: np.ndarray) -> np.ndarray:
    layer = np.zeros(m, dtype=np.int64)
    if m == 0 or src.size == 0:
        return layer
    position = np.empty(m, dtype=np.int64)
    position[order] = np.arange(m)
    by_dst = np.argsort(position[dst], kind="stable")
    s_list, d_list = src[by_dst].tolist(), dst[by_dst].tolist()
    layers = layer.tolist()
    for s, d in zip(s_list, d_list, strict=True):  # edges in the order of their targets: sources are final
        if layers[s] + 1 > layers[d]:
            layers[d] = layers[s] + 1
    # sources (inputs, weights) sit right above their first reader instead of at the top
    has_in = np.zeros(m, dtype=bool)
    has_in[dst] = True
    first_reader = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    layer = np.asarray(layers, dtype=np.int64)
    np.minimum.at(first_reader, src, layer[dst])
    pull = ~has_in & (first_reader < np.iinfo(np.int64).max)
    layer[pull] = np.maximum(first_reader[pull] - 1, 0)
    return layer
