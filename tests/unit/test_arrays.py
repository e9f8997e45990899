"""explorer.arrays stands in for np.unique and np.intersect1d (slow in numpy 2.4): same values, same dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.arrays import common, distinct


@pytest.mark.parametrize("size", [0, 1, 2, 7, 1000])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, bool])
def test_distinct_and_common_are_what_numpy_gives(size, dtype):
    rng = np.random.default_rng(size)
    a = rng.integers(-20, 20, size).astype(dtype)
    b = rng.integers(-20, 20, size // 2 + 1).astype(dtype)
    assert distinct(a).dtype == np.unique(a).dtype and distinct(a).tolist() == np.unique(a).tolist()
    assert common(a, b).dtype == np.intersect1d(a, b).dtype
    assert common(a, b).tolist() == np.intersect1d(a, b).tolist()


def test_distinct_does_not_change_its_input():
    values = np.array([3, 1, 3, 2])
    assert distinct(values).tolist() == [1, 2, 3] and values.tolist() == [3, 1, 3, 2]
