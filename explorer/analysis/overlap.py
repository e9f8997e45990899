"""Find every pair of intervals that intersect within the same group, by sorting and sweeping.

Sorting by (group, start) and keeping a running maximum of ends per group finds every interval that overlaps
an earlier one in O(n log n); only those few are then paired by scanning back. A million entries take well
under a second; all-pairs would take hours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OverlapPair:
    group: int
    a: int  # interval indices (into the caller's arrays), a < b in sweep order
    b: int
    lo: int  # the shared byte range [lo, hi)
    hi: int


def overlapping_pairs(
    group: np.ndarray, lo: np.ndarray, hi: np.ndarray, owner: np.ndarray, limit: int = 100_000
) -> tuple[list[OverlapPair], bool]:
    """Pairs of intervals of different `owner` that share bytes within one group; (pairs, truncated).

    Empty intervals never overlap. Intervals of the same owner (the two halves of a wrapped tensor, or a
    tensor listed twice) are not paired with each other.
    """
    keep = hi > lo
    index = np.flatnonzero(keep)
    if index.size < 2:
        return [], False
    order = index[np.lexsort((lo[index], group[index]))]
    g, l_, h = group[order], lo[order], hi[order]
    # Segmented running max of ends: shift every group above the previous one so maxima cannot leak.
    span = int(max(h.max() - min(l_.min(), 0), 1)) + 1
    group_rank = np.cumsum(np.r_[0, g[1:] != g[:-1]])
    shifted_end = h - l_.min() + group_rank * span
    running = np.maximum.accumulate(shifted_end)
    previous_max = np.r_[np.iinfo(np.int64).min, running[:-1]]
    shifted_start = l_ - l_.min() + group_rank * span
    suspects = np.flatnonzero(previous_max > shifted_start)
    pairs: list[OverlapPair] = []
    truncated = False
    for i in suspects.tolist():
        j = i - 1
        while j >= 0 and g[j] == g[i]:
            if h[j] > l_[i] and owner[order[j]] != owner[order[i]]:
                pairs.append(OverlapPair(int(g[i]), int(order[j]), int(order[i]), int(l_[i]), int(min(h[i], h[j]))))
                if len(pairs) >= limit:
                    return pairs, True
            j -= 1
    return pairs, truncated
