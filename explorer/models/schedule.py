"""The neutral lanes-and-snapshots table: numpy arrays, one row per block (workload) / entry / transfer.

Lanes (cores) hold blocks (workloads) with durations and dependencies through transfer ids; before each block
an address space (L2) holds entries (tensors) and a side space (WL0) more. The scheduler IR reads its files
into it, and TVM's storage plan derives one; the words for its parts come from the document's Vocabulary.

A 500 MB schedule holds about a million buffer-snapshot entries; as Python objects they would cost gigabytes
and seconds. As columns they cost tens of megabytes and every analysis is a vectorised pass.
Variable-length children (buffer entries of a workload, inputs, destinations) use CSR layout: rows
``ptr[i]:ptr[i+1]`` of the child arrays belong to parent ``i``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike

from explorer.arrays import distinct
from explorer.file_spans import FileSpans
from explorer.formatting import visible, visible_column

INPUT_KINDS = ("ifmap", "weight")  # in_kind codes: the entries a block reads through transfers
_ROW_INDEX_COLUMNS = ("wl_id", "core_ids", "core_ptr")  # what the per-core row index is built from
# buf_type codes: the role of an address-space entry (the dependency and overlap analyses use codes only)
ENTRY_INPUT, ENTRY_WEIGHT, ENTRY_OUTPUT = 0, 1, 2


class SchedulePart(StrEnum):
    """What a format's schedule has (explorer.models.schedule_parts builds each); the views ask for them."""

    LANES = "lanes"  # blocks on lanes, with durations: every schedule
    MESH = "mesh"  # the lanes placed on an xlen × ylen mesh (the mesh view)
    TRANSFERS = "transfers"  # what each block reads and writes, by transfer id (dependencies)
    ADDRESS_SPACE = "address space"  # entries live before each block (the buffers and memory views)
    SIDE_SPACE = "side space"  # a second, smaller space per block (WL0)
    DRAM = "dram"  # reads and writes of the off-chip memory


@dataclass
class Schedule:
    buffersize: int
    xlen: int
    ylen: int
    top_batch_cut: int
    wl0_key: str  # "wl0_buffer" or "wl1_buffer": shown as the file names it
    layers: list[str]
    core_ids: np.ndarray  # sorted core ids that have an array in the file
    core_ptr: np.ndarray  # workloads of core_ids[k] are rows core_ptr[k]:core_ptr[k+1]

    # one row per workload, cores in ascending order, file order within a core
    wl_core: np.ndarray
    wl_pos: np.ndarray  # index in the core's array in the file (stays right when records are dropped)
    wl_id: np.ndarray
    wl_layer: np.ndarray  # index into `layers`
    wl_type: np.ndarray  # block kind code: Vocabulary.block_kinds names it
    wl_time: np.ndarray  # float64 duration
    wl_ofmap_size: np.ndarray
    core_raw: FileSpans | None  # where each core's array lies in the file: details are read on demand

    ring_ptr: np.ndarray
    ring_lo: np.ndarray
    ring_hi: np.ndarray

    in_ptr: np.ndarray  # consumed transfer ids (ifmap entries then the weight)
    in_tid: np.ndarray
    in_kind: np.ndarray  # index into INPUT_KINDS

    of_row: np.ndarray  # one row per ofmap
    of_tid: np.ndarray
    of_size: np.ndarray
    of_pos: np.ndarray
    of_dst_ptr: np.ndarray
    dst_core: np.ndarray  # -1 for DRAM
    dst_wl: np.ndarray  # -1 when absent
    dst_dram: np.ndarray

    buf_ptr: np.ndarray  # buffer-snapshot entries per workload
    buf_tensor: np.ndarray
    buf_addr: np.ndarray
    buf_size: np.ndarray
    buf_type: np.ndarray  # ENTRY_INPUT / ENTRY_WEIGHT / ENTRY_OUTPUT: Vocabulary.entry_kinds names it
    buf_new: np.ndarray  # -1 absent, 0 false, 1 true
    buf_cur: np.ndarray  # cur_wl_ifmap present and true
    buf_pos: np.ndarray

    w0_ptr: np.ndarray  # WL0/WL1 entries per workload
    w0_addr: np.ndarray
    w0_size: np.ndarray
    w0_src: np.ndarray  # source code, named by the format
    w0_tid: np.ndarray  # first transfer id, -1 when none
    w0_pos: np.ndarray
    w0_layer: np.ndarray  # index into `layers`, -1 when absent

    din_tid: np.ndarray  # DRAM "in" (writes to DRAM)
    din_core: np.ndarray
    din_wl: np.ndarray
    din_pos: np.ndarray
    din_rel_ptr: np.ndarray
    din_rel: np.ndarray

    dout_tid: np.ndarray  # DRAM "out" (reads from DRAM)
    dout_type: np.ndarray
    dout_size: np.ndarray
    dout_pos: np.ndarray
    dout_rel_ptr: np.ndarray
    dout_rel: np.ndarray
    dout_dst_ptr: np.ndarray
    dout_dst_core: np.ndarray
    dout_dst_wl: np.ndarray

    dram_raw: bytes | bytearray | None = None  # the raw JSON of the "-1" section, for details
    # Other formats draw derived schedules with the same views (TVM: a module per core, a node per workload).
    core_names: dict[int, str] | None = None
    # Measured start of each block (a hardware trace): the timeline draws these instead of deriving starts.
    wl_start: np.ndarray | None = None
    # Dependencies known directly, not through transfers (rows: producer → consumer), e.g. a trace's wait bits.
    wl_dep_src: np.ndarray | None = None
    wl_dep_dst: np.ndarray | None = None
    # What the loader's workers worked out core by core, set with `keep_known` and read with `known`: the L2
    # regions and overlaps (explorer.schedule.buffers.CoreL2, joined) and the format's own snapshot checks'
    # findings (scheduler IR: checks.SnapshotFacts); None when the analysis works them out. Typed `object`: their
    # types live in the wings, which narrow what they read with isinstance.
    l2_known: object = None
    snapshots_known: object = None
    # the parts its format gave (explorer.models.schedule_parts.assemble); the columns of the others are empty
    parts: frozenset[SchedulePart] = frozenset(SchedulePart)
    # core → its workload ids sorted, with their rows: see `_core_index`
    _row_index: dict[int, tuple[np.ndarray, np.ndarray]] | None = field(default=None, repr=False)
    # field name → (column names, the arrays it was worked out from): see `known`
    _known_from: dict[str, tuple[tuple[str, ...], tuple[np.ndarray, ...]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:  # layer and core names from the file, shown inert by every view
        self.layers = visible_column(self.layers)
        if self.core_names:
            self.core_names = {core: visible(name) for core, name in self.core_names.items()}

    def keep_known(self, name: str, value: object, columns: tuple[str, ...]) -> None:
        """Set field `name` to what was worked out from these columns (by the loader, or a cache built on
        demand), remembering the very arrays."""
        setattr(self, name, value)
        arrays = tuple(getattr(self, column) for column in columns)
        self._known_from = {**self._known_from, name: (columns, arrays)}  # a new dict: copies share the old one

    def known(self, name: str) -> object:
        """Field `name`'s value while the columns it was worked out from are still this schedule's own arrays; a
        schedule made from this one with other columns (dataclasses.replace) gets None and works it out again."""
        value = getattr(self, name)
        columns, arrays = self._known_from.get(name, ((), ()))
        if value is None or not columns:
            return None
        return value if all(getattr(self, c) is a for c, a in zip(columns, arrays, strict=True)) else None

    def workload_raw(self, row: int) -> bytes | bytearray:
        """The raw JSON bytes of one workload, read again from the file (`explorer.file_spans.FileSpans`).
        Raises FileChanged (a LoadError) when the file is no longer what was loaded."""
        if self.core_raw is None:
            raise ValueError("this schedule was not read from a file of workloads")
        return self.core_raw.item(int(self.wl_core[row]), int(self.wl_pos[row]))

    def has(self, part: SchedulePart) -> bool:
        return part in self.parts

    @property
    def n_workloads(self) -> int:
        return int(self.wl_id.size)

    def core_rows(self, core: int) -> range:
        k = int(np.searchsorted(self.core_ids, core))
        if k >= self.core_ids.size or self.core_ids[k] != core:
            return range(0)
        return range(int(self.core_ptr[k]), int(self.core_ptr[k + 1]))

    def row_of(self, core: int, workload_id: int) -> int | None:
        """The row of (core, workload_id), or None; the first one when the id repeats on the core."""
        sorted_ids, rows_in_order = self._core_index(core)
        at = int(np.searchsorted(sorted_ids, workload_id))
        return int(rows_in_order[at]) if at < sorted_ids.size and sorted_ids[at] == workload_id else None

    def rows_of(self, cores: ArrayLike, workload_ids: ArrayLike) -> np.ndarray:
        """The rows of many (core, workload id) pairs at once (-1 where absent), through each core's ids sorted
        once and kept: a dict over every row took 0.08 s to build on a 168,000-workload schedule."""
        cores = np.asarray(cores, dtype=np.int64).ravel()
        wanted = np.asarray(workload_ids, dtype=np.int64).ravel()
        found = np.full(wanted.size, -1, dtype=np.int64)
        for core in distinct(cores).tolist():
            sorted_ids, rows_in_order = self._core_index(core)
            if sorted_ids.size == 0:
                continue
            mine = np.flatnonzero(cores == core)
            at = np.minimum(np.searchsorted(sorted_ids, wanted[mine]), sorted_ids.size - 1)
            found[mine] = np.where(sorted_ids[at] == wanted[mine], rows_in_order[at], -1)
        return found

    def _core_index(self, core: int) -> tuple[np.ndarray, np.ndarray]:
        """One core's workload ids sorted, with their rows; equal ids keep their order, so the first is found.
        The cache is kept with `keep_known`: a schedule made from this one with other workloads
        (dataclasses.replace shares the field) builds its own instead of answering with this one's rows."""
        cache = self.known("_row_index")
        if not isinstance(cache, dict):
            cache = {}
            self.keep_known("_row_index", cache, _ROW_INDEX_COLUMNS)
        index = cache.get(core)
        if index is None:
            rows = self.core_rows(core)
            ids = self.wl_id[rows.start : rows.stop].astype(np.int64)
            order = np.argsort(ids, kind="stable")
            index = cache[core] = (ids[order], order + rows.start)
        return index

    def mesh_position(self, core: int) -> tuple[int, int]:
        """(x, y) of a core in the xlen×ylen mesh, row-major as in the documented IR."""
        width = max(self.xlen, 1)
        return core % width, core // width

    def core_label(self, core: int) -> str:
        """How views name a core: its mesh position, or the name a derived schedule gives it."""
        if self.core_names and core in self.core_names:
            return self.core_names[core]
        x, y = self.mesh_position(core)
        return f"core {core} (x{x}, y{y})"

    def core_short(self, core: int) -> str:
        if self.core_names and core in self.core_names:
            return self.core_names[core]
        x, y = self.mesh_position(core)
        return f"c{core} ({x},{y})"

    def wl_path(self, row: int) -> str:
        return workload_path(int(self.wl_core[row]), int(self.wl_pos[row]))

    def wl_label(self, row: int) -> str:
        return workload_label(int(self.wl_core[row]), int(self.wl_id[row]))


def workload_path(core: int, position: int) -> str:
    """A workload's JSON path: `wl_path` for one row, or for many whose numbers were looked up at once."""
    return f'$["{core}"][{position}]'


def workload_label(core: int, workload_id: int) -> str:
    """How messages name a workload: `wl_label` for one row, or for many whose numbers were looked up at once."""
    return f"core {core} workload {workload_id}"
