"""Find every pair of intervals that intersect within the same group, by sorting and sweeping.

Sorted by (group, start), interval j shares bytes with exactly the intervals that follow it up to the first one
starting at or after its end: its partners are one contiguous run, whose end `reach[j]` is one binary search.
So the pairs are counted exactly in O(n log n) whatever their number, and listed in output-sensitive time: the
sweep keeps only the intervals still open (the active set), never scans back over closed ones. A million
entries take well under a second; a snapshot of 64,000 entries on the same bytes (2 billion pairs) is counted,
and its first pairs listed, in a fraction of one.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from explorer.arrays import lexsort

CANDIDATES_PER_BATCH = 1 << 20  # (earlier, later) interval pairs tested at once: bounds the memory
CANDIDATES_PER_INTERVAL = 64  # pairs of one owner (never listed) tested before the sweep stops: bounds the time


class OverlapPair(NamedTuple):
    """A tuple, not a frozen dataclass: a schedule with thousands of overlaps makes one per pair, and a frozen
    dataclass's __init__ cost 1-2 µs each."""

    group: int
    a: int  # interval indices (into the caller's arrays), a < b in sweep order
    b: int
    lo: int  # the shared byte range [lo, hi)
    hi: int


class _Sweep(NamedTuple):
    order: np.ndarray  # the caller's indices, sorted by (group, start)
    lo: np.ndarray  # in that order
    hi: np.ndarray
    reach: np.ndarray  # per interval, the first later one that starts at or after its end (or in another group)


def _sweep(keys: tuple[np.ndarray, ...], lo: np.ndarray, hi: np.ndarray, index: np.ndarray) -> _Sweep:
    """The non-empty intervals `index` sorted by (keys..., start), with each one's reach. Groups are told apart
    by shifting each above the previous one, so a reach never runs into the next group."""
    order = index[lexsort((lo[index], *(key[index] for key in reversed(keys))))]
    l_, h = lo[order], hi[order]
    if order.size == 0:
        return _Sweep(order, l_, h, order)
    new = np.zeros(order.size, dtype=bool)
    new[0] = True
    for key in keys:
        k = key[order]
        new[1:] |= k[1:] != k[:-1]
    base = int(min(l_.min(), 0))
    span = int(h.max()) - base + 1
    rank = np.cumsum(new) - 1
    shifted_start = (l_ - base) + rank * span
    shifted_end = (h - base) + rank * span
    reach = np.searchsorted(shifted_start, shifted_end, side="left")
    return _Sweep(order, l_, h, reach)


def _raw_count(keys: tuple[np.ndarray, ...], lo: np.ndarray, hi: np.ndarray, index: np.ndarray) -> int:
    sweep = _sweep(keys, lo, hi, index)
    return int((sweep.reach - np.arange(sweep.order.size) - 1).sum())


def count_overlapping_pairs(group: np.ndarray, lo: np.ndarray, hi: np.ndarray, owner: np.ndarray) -> int:
    """How many pairs `overlapping_pairs` would list without a limit: all pairs of a group, less those of one
    owner. Exact, in O(n log n), however many there are."""
    index = np.flatnonzero(hi > lo)
    if index.size < 2:
        return 0
    return _raw_count((group,), lo, hi, index) - _raw_count((group, owner), lo, hi, index)


def overlapping_pairs(
    group: np.ndarray, lo: np.ndarray, hi: np.ndarray, owner: np.ndarray, limit: int = 100_000
) -> tuple[list[OverlapPair], bool]:
    """Pairs of intervals of different `owner` that share bytes within one group; (pairs, truncated).

    The pairs come in sweep order: by the later interval, then scanning back from it. Empty intervals never
    overlap. Intervals of the same owner (the two halves of a wrapped tensor, or a tensor listed twice) are not
    paired with each other; past CANDIDATES_PER_INTERVAL such pairs per interval the sweep stops, and
    `truncated` says whether pairs were left unlisted (count them with `count_overlapping_pairs`).
    """
    index = np.flatnonzero(hi > lo)
    if index.size < 2:
        return [], False
    sweep = _sweep((group,), lo, hi, index)
    order, l_, h, reach = sweep
    g = group[order]
    own = owner[order]
    n = order.size
    position = np.arange(n)
    # per later interval i, how many earlier ones are still open at its start (its candidates)
    open_at = position - np.searchsorted(np.sort(reach), position, side="right")
    ends = np.cumsum(open_at)
    budget = max(CANDIDATES_PER_INTERVAL * n, CANDIDATES_PER_BATCH)
    pairs: list[OverlapPair] = []
    active = np.zeros(0, dtype=np.int64)  # the earlier intervals still open at the window's first interval
    first = 0
    scanned = 0
    while first < n:
        room = (ends[first] - open_at[first]) + CANDIDATES_PER_BATCH
        last = max(int(np.searchsorted(ends, room, side="right")), first + 1)
        window = np.arange(first, last)
        earlier = np.concatenate([active, window])
        start = np.maximum(earlier + 1, first)
        stop = np.minimum(reach[earlier], last)
        counts = np.maximum(stop - start, 0)
        j = np.repeat(earlier, counts)
        i = np.repeat(start, counts) + (np.arange(j.size) - np.repeat(np.cumsum(counts) - counts, counts))
        scanned += j.size
        sequence = np.lexsort((-j, i))  # by the later interval, then scanning back
        i, j = i[sequence], j[sequence]
        keep = own[j] != own[i]
        i, j = i[keep][: limit - len(pairs)], j[keep][: limit - len(pairs)]  # only what is listed becomes Python
        found = zip(g[i].tolist(), order[j].tolist(), order[i].tolist(), l_[i].tolist(),
                    np.minimum(h[i], h[j]).tolist(), strict=True)  # fmt: skip
        for group_, a, b, lo_, hi_ in found:
            pairs.append(OverlapPair(group_, a, b, lo_, hi_))
            if len(pairs) >= limit:
                return pairs, True
        active = earlier[reach[earlier] > last]
        first = last
        if scanned > budget and first < n:  # pairs of one owner by the billion: counted, not walked
            return pairs, count_overlapping_pairs(group, lo, hi, owner) > len(pairs)
    return pairs, False
