"""Find every pair of intervals that intersect within the same group, by sorting and sweeping.

Sorting by (group, start) and keeping a running maximum of ends per group finds every interval that overlaps
an earlier one in O(n log n); only those few are then paired by scanning back. A million entries take well
under a second; all-pairs would take hours.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from explorer.arrays import lexsort

CANDIDATES_PER_BATCH = 1 << 20  # (suspect, earlier interval) pairs tested at once: bounds the memory


class OverlapPair(NamedTuple):
    """A tuple, not a frozen dataclass: a schedule with thousands of overlaps makes one per pair, and a frozen
    dataclass's __init__ cost 1-2 µs each."""

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
    order = index[lexsort((lo[index], group[index]))]
    g, l_, h = group[order], lo[order], hi[order]
    # Segmented running max of ends: shift every group above the previous one so maxima cannot leak.
    span = int(max(h.max() - min(l_.min(), 0), 1)) + 1
    group_rank = np.cumsum(np.r_[0, g[1:] != g[:-1]])
    shifted_end = h - l_.min() + group_rank * span
    running = np.maximum.accumulate(shifted_end)
    previous_max = np.r_[np.iinfo(np.int64).min, running[:-1]]
    shifted_start = l_ - l_.min() + group_rank * span
    suspects = np.flatnonzero(previous_max > shifted_start)
    # Each suspect is paired with the earlier intervals of its group that end after it starts. The candidates are
    # tested in batches of whole suspects, with numpy, in the order a scan back from each suspect meets them.
    new_group = np.r_[True, g[1:] != g[:-1]]
    group_first = np.flatnonzero(new_group)[np.cumsum(new_group) - 1]
    behind = suspects - group_first[suspects]  # earlier intervals of the suspect's group
    ends = np.cumsum(behind)
    pairs: list[OverlapPair] = []
    first = 0
    while first < suspects.size:
        room = ends[first] - behind[first] + CANDIDATES_PER_BATCH
        last = max(int(np.searchsorted(ends, room, side="right")), first + 1)
        counts = behind[first:last]
        i = np.repeat(suspects[first:last], counts)
        j = i - 1 - (np.arange(i.size) - np.repeat(np.cumsum(counts) - counts, counts))  # i-1, i-2, ... back
        keep = (h[j] > l_[i]) & (owner[order[j]] != owner[order[i]])
        i, j = i[keep], j[keep]
        found = zip(g[i].tolist(), order[j].tolist(), order[i].tolist(), l_[i].tolist(),
                    np.minimum(h[i], h[j]).tolist(), strict=True)  # fmt: skip
        for group_, a, b, lo_, hi_ in found:
            pairs.append(OverlapPair(group_, a, b, lo_, hi_))
            if len(pairs) >= limit:
                return pairs, True
        first = last
    return pairs, False
