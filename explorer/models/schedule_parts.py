"""The parts a schedule is made of, each given only by a format that has it: blocks on lanes (every schedule),
the lanes' places on a mesh, the transfers blocks read and write, the address space (L2) and the side space
(WL0) snapshotted before each block, and DRAM traffic. `assemble` joins what a format has into the one table the
analyses read (`Schedule`, columns of a part it lacks empty) and records which parts it had, so a view offers
itself only where its part is there (`Document.capabilities`): a TVM storage plan has lanes and an address
space, a hardware trace lanes only.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from explorer.arrays import distinct
from explorer.file_spans import FileSpans
from explorer.models.schedule import Schedule, SchedulePart


@dataclass(frozen=True)
class Lanes:
    """Blocks on lanes: rows grouped by lane, lanes in ascending order."""

    layers: list[str]
    wl_core: np.ndarray
    wl_id: np.ndarray
    wl_layer: np.ndarray  # index into `layers`
    wl_type: np.ndarray  # block kind code: Vocabulary.block_kinds names it
    wl_time: np.ndarray  # duration
    wl_pos: np.ndarray | None = None  # index in the lane's array in the file; the row when None
    wl_ofmap_size: np.ndarray | None = None
    core_raw: FileSpans | None = None  # where each lane's array lies in the file, for details read on demand
    core_names: dict[int, str] | None = None
    wl_start: np.ndarray | None = None  # measured starts (a trace): the timeline draws these
    dependencies: tuple[np.ndarray, np.ndarray] | None = None  # (producer rows, consumer rows) known directly
    core_ids: np.ndarray | None = None  # every lane, ascending, an empty one too; those holding blocks when None


@dataclass(frozen=True)
class Mesh:
    xlen: int
    ylen: int
    top_batch_cut: int = 1


@dataclass(frozen=True)
class Transfers:
    """Per block: its ring ranges, the transfer ids it consumes, and its ofmaps with their destinations (CSR)."""

    ring_ptr: np.ndarray
    ring_lo: np.ndarray
    ring_hi: np.ndarray
    in_ptr: np.ndarray
    in_tid: np.ndarray
    in_kind: np.ndarray
    of_row: np.ndarray
    of_tid: np.ndarray
    of_size: np.ndarray
    of_pos: np.ndarray
    of_dst_ptr: np.ndarray
    dst_core: np.ndarray
    dst_wl: np.ndarray
    dst_dram: np.ndarray

    @classmethod
    def none(cls, blocks: int) -> Transfers:
        per_block, empty = np.zeros(blocks + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return cls(per_block, empty, empty, per_block, empty, empty, empty, empty, empty, empty,
                   np.zeros(1, dtype=np.int64), empty, empty, np.zeros(0, dtype=bool))  # fmt: skip


@dataclass(frozen=True)
class AddressSpace:
    """The entries live before each block (CSR over blocks)."""

    buffersize: int
    buf_ptr: np.ndarray
    buf_tensor: np.ndarray
    buf_addr: np.ndarray
    buf_size: np.ndarray
    buf_type: np.ndarray  # ENTRY_INPUT / ENTRY_WEIGHT / ENTRY_OUTPUT
    buf_new: np.ndarray  # -1 absent, 0 false, 1 true
    buf_cur: np.ndarray
    buf_pos: np.ndarray

    @classmethod
    def none(cls, blocks: int) -> AddressSpace:
        empty = np.zeros(0, dtype=np.int64)
        return cls(0, np.zeros(blocks + 1, dtype=np.int64), empty, empty, empty, empty, empty,
                   np.zeros(0, dtype=bool), empty)  # fmt: skip


@dataclass(frozen=True)
class SideSpace:
    """A second space per block (WL0), as the file names it (`wl0_key`)."""

    wl0_key: str
    w0_ptr: np.ndarray
    w0_addr: np.ndarray
    w0_size: np.ndarray
    w0_src: np.ndarray
    w0_tid: np.ndarray
    w0_pos: np.ndarray
    w0_layer: np.ndarray

    @classmethod
    def none(cls, blocks: int) -> SideSpace:
        empty = np.zeros(0, dtype=np.int64)
        return cls("wl0_buffer", np.zeros(blocks + 1, dtype=np.int64), empty, empty, empty, empty, empty, empty)


@dataclass(frozen=True)
class DramTraffic:
    """Writes to DRAM (`din_*`) and reads from it (`dout_*`), with their relations (CSR)."""

    din_tid: np.ndarray
    din_core: np.ndarray
    din_wl: np.ndarray
    din_pos: np.ndarray
    din_rel_ptr: np.ndarray
    din_rel: np.ndarray
    dout_tid: np.ndarray
    dout_type: np.ndarray
    dout_size: np.ndarray
    dout_pos: np.ndarray
    dout_rel_ptr: np.ndarray
    dout_rel: np.ndarray
    dout_dst_ptr: np.ndarray
    dout_dst_core: np.ndarray
    dout_dst_wl: np.ndarray
    dram_raw: bytes | bytearray | None = None  # the file's own DRAM section, for details

    @classmethod
    def none(cls) -> DramTraffic:
        empty, one = np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
        return cls(empty, empty, empty, empty, one, empty, empty, empty, empty, empty, one, empty, one, empty, empty)


def columns_of(part: Lanes | Mesh | Transfers | AddressSpace | SideSpace | DramTraffic) -> dict[str, Any]:
    """A part's fields by name, as the schedule's columns are named."""
    return {f.name: getattr(part, f.name) for f in fields(part)}


def assemble(
    lanes: Lanes,
    *,
    mesh: Mesh | None = None,
    transfers: Transfers | None = None,
    address_space: AddressSpace | None = None,
    side_space: SideSpace | None = None,
    dram: DramTraffic | None = None,
) -> Schedule:
    """The schedule of the parts given; a lane without a mesh is a column of its own (x = its number, y = 0)."""
    n = int(lanes.wl_id.size)
    if lanes.core_ids is not None:
        core_ids = np.asarray(lanes.core_ids, dtype=np.int64)
    else:
        core_ids = distinct(lanes.wl_core).astype(np.int64) if n else np.zeros(0, dtype=np.int64)
    ends = np.searchsorted(lanes.wl_core, np.append(core_ids, np.iinfo(np.int64).max))
    given = {SchedulePart.LANES}
    for part, value in ((SchedulePart.MESH, mesh), (SchedulePart.TRANSFERS, transfers),
                        (SchedulePart.ADDRESS_SPACE, address_space), (SchedulePart.SIDE_SPACE, side_space),
                        (SchedulePart.DRAM, dram)):  # fmt: skip
        if value is not None:
            given.add(part)
    placed = mesh or Mesh(xlen=max(int(core_ids.size), 1), ylen=1)
    blocks = {name: value for name, value in columns_of(lanes).items() if name not in ("dependencies", "core_ids")}
    blocks["wl_pos"] = lanes.wl_pos if lanes.wl_pos is not None else np.arange(n, dtype=np.int64)
    blocks["wl_ofmap_size"] = lanes.wl_ofmap_size if lanes.wl_ofmap_size is not None else np.zeros(n, np.int64)
    blocks["wl_time"] = np.asarray(lanes.wl_time, dtype=np.float64)
    dependencies = lanes.dependencies
    return Schedule(
        **columns_of(placed),
        core_ids=core_ids,
        core_ptr=np.asarray(ends, dtype=np.int64),
        **blocks,
        **columns_of(transfers or Transfers.none(n)),
        **columns_of(address_space or AddressSpace.none(n)),
        **columns_of(side_space or SideSpace.none(n)),
        **columns_of(dram or DramTraffic.none()),
        wl_dep_src=dependencies[0] if dependencies else None,
        wl_dep_dst=dependencies[1] if dependencies else None,
        parts=frozenset(given),
    )
