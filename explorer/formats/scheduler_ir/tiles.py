"""Which tiles a workload has (its `tile_info` names them `tile_num_0`, `tile_num_1`, ...), read again from the
file when an assembly or trace is joined: an instruction naming a tile its workload does not have is located
(issue #75). Only the keys are decoded; what each tile holds stays raw bytes."""

from __future__ import annotations

import re

import msgspec

TILE_KEY = re.compile(r"tile_num_(\d{1,9})")


class _TileWorkload(msgspec.Struct, gc=False):
    tile_info: dict[str, msgspec.Raw] | None = None


_decoder = msgspec.json.Decoder(_TileWorkload)


def tiles_of(raw: bytes | bytearray) -> frozenset[int] | None:
    """The tile numbers a workload's `tile_info` names; None when the workload has no `tile_info` object (or its
    record does not read), so that nothing is checked against it."""
    try:
        info = _decoder.decode(raw).tile_info
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        return None
    if info is None:
        return None
    return frozenset(int(found.group(1)) for key in info if (found := TILE_KEY.fullmatch(key)))
