"""Array helpers the core shares.

`distinct` exists because numpy 2.4's `np.unique` without `return_*` arguments goes through a hash table that is
50-100x slower than sorting on the integer columns of a big schedule (294,000 transfer ids: 0.09-0.15 s
against 0.002 s, measured on the 16-core benchmark file); it also sits under `np.intersect1d`.
"""

from __future__ import annotations

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
