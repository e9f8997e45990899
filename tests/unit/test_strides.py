"""Strided-tensor placement, checked against values worked out by hand (the arithmetic is in each test)."""

from __future__ import annotations

import numpy as np

from explorer.formats.ark.layout import check_tensor, layout_of
from explorer.formats.ark.model import ArkBuffer, ArkTensor
from explorer.tensors.stride_map import DATA, OTHER, PAD, plane_grid
from explorer.tensors.strides import run_starts, touches


def tensor(tid, shape, strides=None, offsets=None, padded=None, dtype="FP16", buffer=0) -> ArkTensor:
    return ArkTensor(
        id=tid,
        dtype=dtype,
        shape=tuple(shape),
        strides=tuple(strides or padded or shape),
        offsets=tuple(offsets or [0] * len(shape)),
        padded_shape=tuple(padded or shape),
        buffer=ArkBuffer(buffer),
    )


def test_column_slice_of_a_row_major_region():
    # FP16 [4, 64] at columns 64..127 of a [4, 128] region (the spec's example):
    # pitches [128, 1]; first = 2 × (0×128 + 64) = 128; last element (3, 127) = 3×128 + 127 = 511 → end = 1024;
    # data = 2 × 256 = 512 B in 4 runs of 64 elements (128 B); region = 2 × 512 = 1024 B.
    layout = layout_of(tensor(10, (4, 64), strides=(4, 128), offsets=(0, 64)))
    assert (layout.first_byte, layout.end_byte, layout.bytes) == (128, 1024, 512)
    assert (layout.runs, layout.run_bytes, layout.padding_bytes, layout.region_bytes) == (4, 128, 0, 1024)
    assert layout.pitches == (128, 1)
    assert layout.first_byte_formula() == "2 × (0×128 + 64×1) = 128"
    assert run_starts(layout).tolist() == [128, 384, 640, 896]


def test_padded_reduction_output():
    # FP16 [4, 1] padded to [4, 8] in a [4, 8] region: data at column 0 of each row.
    # first 0; last (3, 0) = 24 → end = 2 × 25 = 50; data 8 B in 4 runs of 2 B; padding = 2 × (32 − 4) = 56 B.
    layout = layout_of(tensor(11, (4, 1), padded=(4, 8)))
    assert (layout.first_byte, layout.end_byte, layout.bytes, layout.runs, layout.padding_bytes) == (0, 50, 8, 4, 56)


def test_full_tensor_is_one_run_and_large_shapes_are_instant():
    # [1, 512, 11008] FP16, dense: one run of 2 × 512 × 11008 = 11,272,192 bytes.
    layout = layout_of(tensor(5, (1, 512, 11008)))
    assert (layout.first_byte, layout.end_byte, layout.runs, layout.run_bytes) == (0, 11272192, 1, 11272192)
    # the same data in a [1, 512, 11024] region: 512 runs of 22,016 B, 2 × 512 × 16 = 16,384 B of padding when
    # PaddedShape covers the region; last element (0, 511, 11007) = 511×11024 + 11007 = 5,644,271 → end 11,288,544.
    padded = layout_of(tensor(17, (1, 512, 11008), padded=(1, 512, 11024)))
    assert (padded.runs, padded.run_bytes, padded.padding_bytes, padded.end_byte) == (512, 22016, 16384, 11288544)


def test_four_dimensional_view_and_one_dimensional_tensor():
    # [2, 4, 16, 16] at offset 16 of the last dim in a [2, 4, 16, 32] region: pitches [2048, 512, 32, 1];
    # first = 2 × 16 = 32; last (1, 3, 15, 31) = 2048 + 1536 + 480 + 31 = 4095 → end 8192; 2×4×16 = 128 runs.
    layout = layout_of(tensor(19, (2, 4, 16, 16), strides=(2, 4, 16, 32), offsets=(0, 0, 0, 16)))
    assert (layout.pitches, layout.first_byte, layout.end_byte, layout.runs) == ((2048, 512, 32, 1), 32, 8192, 128)
    # FP32 [10] at offset 3 of a [16] region: bytes 12..52, one run.
    flat = layout_of(tensor(1, (10,), strides=(16,), offsets=(3,), dtype="FP32"))
    assert (flat.first_byte, flat.end_byte, flat.runs, flat.bytes) == (12, 52, 1, 40)


def test_inner_full_rows_merge_into_longer_runs():
    # rows 1..2 of a [4, 8] region, all columns: rows are contiguous, so one run of 2 × 8 elements = 32 B at byte 16.
    layout = layout_of(tensor(1, (2, 8), strides=(4, 8), offsets=(1, 0)))
    assert (layout.runs, layout.run_bytes, layout.first_byte, layout.end_byte) == (1, 32, 16, 48)
    # [2, 1, 4] in [2, 3, 4] at middle row 1: each outer index gives one run of 4 elements
    mid = layout_of(tensor(2, (2, 1, 4), strides=(2, 3, 4), offsets=(0, 1, 0)))
    assert (mid.runs, mid.run_bytes) == (2, 8)
    assert run_starts(mid).tolist() == [8, 32]  # 2 × (0×12 + 1×4), 2 × (1×12 + 1×4)


def test_aliases_need_shared_bytes_not_just_overlapping_spans():
    region = (4, 128)
    left = layout_of(tensor(1, (4, 64), strides=region))  # columns 0..63
    right = layout_of(tensor(2, (4, 64), strides=region, offsets=(0, 64)))  # columns 64..127
    window = layout_of(tensor(3, (4, 32), strides=region, offsets=(0, 48)))  # columns 48..79
    # left and right interleave row by row: their byte spans overlap (0..880 and 128..1024) but no byte is shared
    assert left.first_byte < right.end_byte and right.first_byte < left.end_byte
    assert not touches(left, right)
    assert touches(left, window) and touches(right, window)


def test_aliases_across_element_sizes():
    # INT8 [4] at bytes 6..9 of the same buffer as FP32 [4] (bytes 0..15): shared bytes 6..9
    small = layout_of(tensor(1, (4,), strides=(16,), offsets=(6,), dtype="INT8"))
    big = layout_of(tensor(2, (4,), dtype="FP32"))
    assert (small.first_byte, small.end_byte) == (6, 10)
    assert touches(small, big)
    # INT8 at bytes 16..19 only touches the FP32 tensor's end: no shared byte
    after = layout_of(tensor(3, (4,), strides=(32,), offsets=(16,), dtype="INT8"))
    assert not touches(after, big)


def test_invariants_are_named():
    faults = check_tensor(tensor(1, (4, 9), strides=(4, 8), offsets=(0, 0), padded=(4, 8)))
    assert any("Shape[1] = 9 exceeds PaddedShape[1] = 8" in f for f in faults)
    faults = check_tensor(tensor(1, (4, 8), strides=(4, 8), offsets=(0, 1)))
    assert faults == ["Offsets[1] + PaddedShape[1] = 1 + 8 = 9 exceeds Strides[1] = 8"]
    assert "same length" in check_tensor(ArkTensor(1, "FP16", (4,), (4, 4), (0,), (4,), ArkBuffer(0)))[0]
    assert any("1 to 4" in f for f in check_tensor(tensor(1, (1, 1, 1, 1, 1))))
    assert any("unknown DataType" in f for f in check_tensor(tensor(1, (4,), dtype="FP8")))
    assert any("negative" in f for f in check_tensor(tensor(1, (4,), strides=(8,), offsets=(-1,))))
    assert layout_of(tensor(1, (4,), dtype="FP8")) is None


def test_plane_grid_marks_data_padding_and_other_tensors():
    # the tensor: FP16 [2, 3] padded to [2, 4] at column 1 of a [3, 6] region; another tensor covers row 2.
    main = layout_of(tensor(1, (2, 3), strides=(3, 6), offsets=(0, 1), padded=(2, 4)))
    other = layout_of(tensor(2, (1, 6), strides=(3, 6), offsets=(2, 0)))
    grid = plane_grid(main, [other], (), max_rows=10, max_cols=10)
    assert (grid.row_block, grid.col_block) == (1, 1)
    expected = np.zeros((3, 6), dtype=np.uint8)
    expected[0:2, 1:4] |= DATA
    expected[0:2, 1:5] |= PAD
    expected[2, :] |= OTHER
    assert grid.codes.tolist() == expected.tolist()


def test_plane_grid_blocks_and_other_region_shapes():
    # a [1, 64, 192] view: cells of 2 × 3 elements at most 32 rows × 64 columns; the other tensor has another
    # region shape ([64, 192] flattened as [12288]) covering elements 0..191 (row 0) only.
    main = layout_of(tensor(1, (1, 64, 96), strides=(1, 64, 192), offsets=(0, 0, 48)))
    other = layout_of(tensor(2, (192,), strides=(12288,)))
    grid = plane_grid(main, [other], (0,), max_rows=32, max_cols=64)
    assert (grid.codes.shape, grid.row_block, grid.col_block, grid.exact) == ((32, 64), 2, 3, True)
    assert (grid.codes[0] & OTHER).all() and not (grid.codes[1:] & OTHER).any()
    assert (grid.codes[:, 16:48] & DATA).all() and not (grid.codes[:, :16] & DATA).any()
