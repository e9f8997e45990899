"""Array helpers the core shares.

`distinct` exists because numpy 2.4's `np.unique` without `return_*` arguments goes through a hash table that is
50-100x slower than sorting on the integer columns of a big schedule (294,000 transfer ids: 0.09-0.15 s
against 0.002 s, measured on the 16-core benchmark file); it also sits under `np.intersect1d`. `lexsort`
exists because `np.lexsort` sorts key by key: on the million L2 pieces of that file, sorting (row, address) took
0.045 s, and one stable sort of the two packed into one integer 0.010 s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of an integer or boolean array, sorted: what `np.unique(values)` returns, by sorting
    (NaNs would each count apart, so it is not for floats that may hold them)."""
    ordered = np.sort(np.asarray(values).ravel())
    if ordered.size < 2:
        return ordered
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


def common(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted values found in both arrays (what `np.intersect1d(a, b)` returns)."""
    both = np.concatenate([distinct(a), distinct(b)])
    both.sort(kind="stable")
    return both[:-1][both[1:] == both[:-1]]


def lexsort(keys: Sequence[np.ndarray]) -> np.ndarray:
    """What `np.lexsort(keys)` returns (the last key sorts first; ties keep their order) for integer or boolean
    keys, by one stable sort of the keys packed into one int64 when their ranges allow it."""
    columns = [np.asarray(key) for key in keys]
    size = columns[0].size if columns else 0
    if size < 2 or any(column.dtype.kind not in "biu" for column in columns):
        return np.lexsort(columns)
    packed = np.zeros(size, dtype=np.int64)
    room = 1
    for column in reversed(columns):  # the primary key first, then each lower key within its values
        low, high = int(column.min()), int(column.max())
        width = high - low + 1
        room *= width
        if room >= 2**62 or high >= 2**63:  # the packed key would not fit in an int64: sort key by key
            return np.lexsort(columns)
        packed *= width
        packed += column.astype(np.int64) - low
    return np.argsort(packed, kind="stable")
