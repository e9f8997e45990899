"""explorer.arrays stands in for np.unique and np.intersect1d (slow in numpy 2.4): same values, same dtypes; and
Schedule.rows_of, which finds rows through sorted ids instead of a dict over every row."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.arrays import common, distinct, lexsort


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


def test_rows_of_workload_ids_are_found_per_core_first_row_first():
    """Schedule.row_of / rows_of (each core's ids sorted once): the first row of an id that repeats on a core,
    None or -1 for an id or a core that is not there, and the many-at-once answer equal to one-by-one."""
    from explorer.models.schedule_parts import Lanes, assemble

    cores = np.array([0, 0, 0, 0, 3, 3, 3])
    ids = np.array([7, 2, 7, 5, 2, 9, 1])
    s = assemble(Lanes(["L"], cores, ids, np.zeros(7, np.int32), np.zeros(7, np.int8), np.ones(7)))
    assert [s.row_of(0, 7), s.row_of(0, 2), s.row_of(3, 2), s.row_of(3, 1)] == [0, 1, 4, 6]
    assert s.row_of(0, 9) is None and s.row_of(1, 2) is None and s.row_of(3, 100) is None
    asked_cores, asked_ids = [3, 0, 1, 0, 3, 0], [9, 7, 2, 3, 2, 5]
    one_by_one = [s.row_of(c, i) for c, i in zip(asked_cores, asked_ids, strict=True)]
    assert s.rows_of(asked_cores, asked_ids).tolist() == [-1 if r is None else r for r in one_by_one]
    assert s.rows_of([], []).tolist() == []


def test_a_schedule_made_from_another_with_other_ids_finds_its_own_rows():
    """dataclasses.replace shares the row index field: the copy must not answer with the original's rows, and
    the original keeps answering with its own after the copy built one."""
    import dataclasses

    from explorer.models.schedule_parts import Lanes, assemble

    s = assemble(Lanes(["L"], np.array([0, 0, 0]), np.array([4, 5, 6]), np.zeros(3, np.int32),
                       np.zeros(3, np.int8), np.ones(3)))  # fmt: skip
    assert s.row_of(0, 5) == 1  # the original's index is built
    renumbered = dataclasses.replace(s, wl_id=np.array([6, 4, 5]))
    assert [renumbered.row_of(0, 5), renumbered.row_of(0, 6)] == [2, 0]
    assert renumbered.rows_of([0, 0], [4, 7]).tolist() == [1, -1]
    assert [s.row_of(0, 5), s.row_of(0, 6)] == [1, 2]


def test_the_code_uses_distinct_where_numpy_would_hash():
    """Plain np.unique (no return_* arguments) and np.intersect1d go through numpy 2.4's slow hash table: the
    core and the widgets use explorer.arrays instead (ARCHITECTURE.md says so)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    slow = re.compile(r"np\.intersect1d\(|np\.unique\((?![^\n]*return_)")
    found = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("explorer", "widgets")
        for path in sorted((root / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if slow.search(line) and path.name != "arrays.py"
    ]
    assert found == []


@pytest.mark.parametrize("size", [0, 1, 2, 50, 3000])
def test_lexsort_is_what_numpy_gives(size):
    """The packed sort against np.lexsort: ties, negative keys, booleans, unsigned keys, and ranges too wide to
    pack (the fallback)."""
    rng = np.random.default_rng(size)
    small = rng.integers(-5, 5, size)
    wide = rng.integers(-(2**40), 2**40, size)
    flags = rng.integers(0, 2, size).astype(bool)
    unsigned = rng.integers(0, 7, size).astype(np.uint32)
    huge = rng.integers(0, 3, size).astype(np.uint64) + np.uint64(2**63)
    for keys in [
        (small,),
        (small, flags),
        (wide, small),
        (small, wide, flags),  # 2^41 · 10 · 2 fits
        (wide, wide[::-1].copy(), small),  # 2^82: too wide, sorted key by key
        (unsigned, small),
        (huge, small),
        (small.astype(np.int8), unsigned.astype(np.uint8)),
    ]:
        assert lexsort(keys).tolist() == np.lexsort(keys).tolist()
