"""Decoded workloads flattened into the columns of `explorer.models.schedule.Schedule`, a core at a time, with
C-level passes (`map` over attribute getters into `np.fromiter`): at 10^6 entries each Python-level step per
entry costs about a second. `CorePart` is one core's columns; `ScheduleBuilder` joins them file-wide."""

from __future__ import annotations

import dataclasses
import itertools
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.errors import Problem
from explorer.file_spans import FileSpans
from explorer.formats.scheduler_ir.checks import SNAPSHOT_COLUMNS, SnapshotFacts, joined_facts
from explorer.formats.scheduler_ir.codes import BUFFER_TYPES, DRAM_OUT_TYPES, LAYER_TYPES, WL_SOURCES
from explorer.formats.scheduler_ir.schema import BufferEntry, Dram, Workload
from explorer.models.schedule import Schedule
from explorer.models.schedule_parts import AddressSpace, DramTraffic, Lanes, Mesh, SideSpace, Transfers, assemble
from explorer.schedule.buffers import L2_COLUMNS, CoreL2, joined_l2

_get = operator.attrgetter


@dataclass(slots=True)
class CorePart:
    """One core decoded into columns, with what the file-wide build needs from it. Made in a worker process or in
    this one and added in core order, so the schedule does not depend on where it was made. Its `columns` number
    layers in `layers`' order (the core's own first appearances); `add_part` renumbers them file-wide."""

    core: int
    columns: dict[str, Any] | None  # None: the core has no valid workload
    layers: list[str]
    problems: list[Problem]
    saw_wl0: bool
    saw_wl1: bool
    l2: CoreL2 | None = None  # its L2 regions and overlaps, for the buffer size the decode was told
    snapshots: SnapshotFacts | None = None  # its tensors' moves and newly_added mismatches
    objects: tuple[int, int] | None = None  # its JSON (objects, array elements), when counted (`ensure_core_fits`)


def ptr_of(counts: Any) -> np.ndarray:
    """Child counts per parent → the CSR pointer array (0, then running totals)."""
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)


def _within(ptr: np.ndarray) -> np.ndarray:
    """Each child's index within its parent, from the CSR pointer array."""
    return np.arange(int(ptr[-1]), dtype=np.int64) - np.repeat(ptr[:-1], np.diff(ptr))


_LAYER_CODE = {name: i for i, name in enumerate(LAYER_TYPES)}


_BUFFER_CODE = {name: i for i, name in enumerate(BUFFER_TYPES)}


_SOURCE_CODE = {name: i for i, name in enumerate(WL_SOURCES)}


_DRAM_OUT_CODE = {name: i for i, name in enumerate(DRAM_OUT_TYPES)}


_NEWLY_ADDED_CODE = {None: -1, False: 0, True: 1}


def _flatten(lists: Any) -> list[Any]:
    return list(itertools.chain.from_iterable(lists))


def _lengths(lists: Any, count: int | None = None) -> np.ndarray:
    return np.fromiter(map(len, lists), np.int64, len(lists) if count is None else count)


def _field(items: list[Any], name: str, dtype: Any = np.int64, missing: int | None = None) -> np.ndarray:
    """One attribute of every item as a column; `missing` stands for None."""
    values = map(_get(name), items)
    if missing is not None:  # dict.get(value, value): the value itself unless it is None
        values = map({None: missing}.get, values, map(_get(name), items))
    return np.fromiter(values, dtype, len(items))


def _coded(items: list[Any], name: str, code: dict[Any, int]) -> np.ndarray:
    """One attribute of every item through `code` (a name → small integer), as an int8 column."""
    return np.fromiter(map(code.__getitem__, map(_get(name), items)), np.int8, len(items))


def _first_transfer(transfer_ids: list[int]) -> int:
    return transfer_ids[0] if transfer_ids else -1


def _inputs(wls: list[Workload]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per workload: the transfer ids of its ifmap refs, then its weight's; kind 0 for ifmap, 1 for weight.
    Returns (counts per workload, transfer ids, kinds)."""
    ref_lists = list(map(_get("ifmap"), wls))
    ref_tids = list(map(_get("transfer_id"), _flatten(ref_lists)))
    ifmap_tid = np.fromiter(itertools.chain.from_iterable(ref_tids), np.int64)
    per_ref = ptr_of(_lengths(ref_tids))
    ref_ptr = ptr_of(_lengths(ref_lists))
    ifmap_counts = per_ref[ref_ptr[1:]] - per_ref[ref_ptr[:-1]]
    weight_tids = [() if w is None else w.transfer_id for w in map(_get("weight"), wls)]
    weight_tid = np.fromiter(itertools.chain.from_iterable(weight_tids), np.int64)
    weight_counts = _lengths(weight_tids)
    counts = ifmap_counts + weight_counts
    ptr = ptr_of(counts)
    tid = np.empty(int(ptr[-1]), np.int64)
    kind = np.zeros(int(ptr[-1]), np.int8)
    ifmap_at = np.repeat(ptr[:-1], ifmap_counts) + _within(ptr_of(ifmap_counts))
    weight_at = np.repeat(ptr[:-1] + ifmap_counts, weight_counts) + _within(ptr_of(weight_counts))
    tid[ifmap_at] = ifmap_tid
    tid[weight_at] = weight_tid
    kind[weight_at] = 1
    return counts, tid, kind


class ScheduleBuilder:
    """Turns typed workloads into columns core by core, as each core is decoded, so only one core's typed
    objects are alive at a time (peak memory: the file, one core's Structs and the columns), then joins the
    cores' columns. Bulk comprehensions over a core's entries are several times faster than appending per
    workload."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []
        self.layers: dict[str, int] = {}  # layer name → id, in order of first appearance in the workloads
        self.spans: dict[int, tuple[int, int]] = {}  # core → where its array lies in the file
        self.dram_raw: bytes | bytearray | None = None
        self.core_order: list[int] = []
        self.dram_traffic = _dram_traffic(Dram(), {})
        self.saw_wl0 = False
        self.saw_wl1 = False
        self.l2_parts: list[CoreL2 | None] = []  # per part: what its decode found of its L2 snapshots
        self.snapshot_parts: list[SnapshotFacts | None] = []  # per part: its snapshot checks' findings

    def add_core(
        self, core: int, workloads: list[tuple[int, Workload, dict]], entries: list[list[BufferEntry]]
    ) -> None:
        if not workloads:
            return
        self.core_order.append(core)
        self.saw_wl0 = self.saw_wl0 or any(w.wl0_buffer is not None for _, w, _ in workloads)
        self.saw_wl1 = self.saw_wl1 or any(w.wl1_buffer is not None for _, w, _ in workloads)
        self.parts.append(self._columns(core, workloads, entries))

    def add_part(self, part: CorePart) -> None:
        """A core decoded apart (`decode_core_part`), its layers renumbered in the file's order of first
        appearance: parts added in core order give the ids a single pass over the cores would."""
        self.saw_wl0 = self.saw_wl0 or part.saw_wl0
        self.saw_wl1 = self.saw_wl1 or part.saw_wl1
        if part.columns is None:
            return
        ids = np.fromiter(map(self._layer_id, part.layers), np.int32, len(part.layers))
        part.columns["wl_layer"] = ids[part.columns["wl_layer"]]
        self.core_order.append(part.core)
        self.parts.append(part.columns)
        self.l2_parts.append(part.l2)
        self.snapshot_parts.append(part.snapshots)

    def _layer_id(self, name: str) -> int:
        return self.layers.setdefault(name, len(self.layers))

    def add_dram(self, dram: Dram, positions: dict[str, list[int]]) -> None:
        """The DRAM section's columns, made as soon as it is decoded: while the workers still decode the cores,
        not in the build after them, where one CPU waits."""
        self.dram_traffic = _dram_traffic(dram, positions)

    def _columns(
        self, core: int, workloads: list[tuple[int, Workload, dict]], buf_lists: list[list[BufferEntry]]
    ) -> dict[str, Any]:
        """One core's columns; child lists as counts (joined into pointers at the end) and row indices local.

        Every pass over entries is C-level (`map` over attrgetters into `np.fromiter`, `chain` to flatten): a
        Python loop or generator per entry cost about 3 µs an entry, most of the load time of a big file."""
        wls = list(map(operator.itemgetter(1), workloads))
        n = len(wls)
        damaged = [(index, dropped) for index, (_, _, dropped) in enumerate(workloads) if dropped]
        wl_lists = [w.wl0_buffer if w.wl0_buffer is not None else (w.wl1_buffer or []) for w in wls]
        wl_keys = ["wl0_buffer" if wls[index].wl0_buffer is not None else "wl1_buffer" for index, _ in damaged]

        def positions(name: str, counts: np.ndarray) -> np.ndarray:
            """File positions of the child entries: 0..k-1 per parent unless the loader dropped some."""
            ptr = ptr_of(counts)
            pos = _within(ptr)
            for (index, dropped_by_list), wl_key in zip(damaged, wl_keys, strict=True):
                dropped = dropped_by_list.get(wl_key if name == "wl" else name)  # "wl": wl0_buffer, else wl1_buffer
                if dropped is not None:
                    pos[ptr[index] : ptr[index + 1]] = dropped
            return pos.astype(np.int32)

        layer_names = list(map(_get("layer_name"), wls))
        for name in dict.fromkeys(layer_names):  # ids in order of first appearance
            self.layers.setdefault(name, len(self.layers))
        ring_lists = list(map(_get("ring_buffer_info"), wls))
        rings = _flatten(ring_lists)
        in_counts, in_tid, in_kind = _inputs(wls)
        of_lists = list(map(_get("ofmap"), wls))
        of_counts = _lengths(of_lists)
        ofmaps = _flatten(of_lists)
        dst_lists = list(map(_get("destination"), ofmaps))
        dests = _flatten(dst_lists)
        dst_dram = np.fromiter(map("DRAM".__eq__, map(_get("type"), dests)), bool, len(dests))
        buf_counts = _lengths(buf_lists)
        entries = _flatten(buf_lists)
        w0_counts = _lengths(wl_lists)
        w0 = _flatten(wl_lists)
        w0_names = list(map(_get("layer_name"), w0))
        w0_layer_names = list(dict.fromkeys(w0_names))  # the core's own, in order of first appearance
        return {
            "n": n,
            "wl_core": np.full(n, core, dtype=np.int32),
            "wl_pos": np.fromiter(map(operator.itemgetter(0), workloads), np.int32, n),
            "wl_id": _field(wls, "workload_id"),
            "wl_layer": np.fromiter(map(self.layers.__getitem__, layer_names), np.int32, n),
            "wl_type": _coded(wls, "layer_type", _LAYER_CODE),
            "wl_time": _field(wls, "time", np.float64),
            "wl_ofmap_size": _field(wls, "ofmap_size"),
            "ring_counts": _lengths(ring_lists),
            "ring_lo": np.fromiter(map(operator.itemgetter(0), rings), np.int64, len(rings)),
            "ring_hi": np.fromiter(map(operator.itemgetter(1), rings), np.int64, len(rings)),
            "in_counts": in_counts,
            "in_tid": in_tid,
            "in_kind": in_kind,
            "of_counts": of_counts,
            "of_tid": _field(ofmaps, "transfer_id"),
            "of_size": _field(ofmaps, "size"),
            "of_pos": positions("ofmap", of_counts),
            "dst_counts": _lengths(dst_lists),
            "dst_core": np.where(dst_dram, -1, _field(dests, "core_id", missing=-1)),
            "dst_wl": _field(dests, "workload_id", missing=-1),
            "dst_dram": dst_dram,
            "buf_counts": buf_counts,
            "buf_tensor": _field(entries, "tensor_id"),
            "buf_addr": _field(entries, "address"),
            "buf_size": _field(entries, "size"),
            "buf_type": _coded(entries, "type", _BUFFER_CODE),
            "buf_new": _coded(entries, "newly_added", _NEWLY_ADDED_CODE),
            "buf_cur": _field(entries, "cur_wl_ifmap", bool),
            "buf_pos": positions("buffer", buf_counts),
            "w0_counts": w0_counts,
            "w0_addr": _field(w0, "address"),
            "w0_size": _field(w0, "size"),
            "w0_src": _coded(w0, "source", _SOURCE_CODE),
            "w0_tid": np.fromiter(map(_first_transfer, map(_get("transfer_id"), w0)), np.int64, len(w0)),
            "w0_pos": positions("wl", w0_counts),
            # numbered file-wide in the build, after every workload's layer has its id
            "w0_layer": np.fromiter(
                map({name: i for i, name in enumerate(w0_layer_names)}.__getitem__, w0_names), np.int32, len(w0)
            ),
            "w0_layer_names": w0_layer_names,
        }

    @property
    def wl0_key(self) -> str:
        """The WL0 snapshots' key as the file names them: wl1_buffer only when no workload says wl0_buffer."""
        return "wl1_buffer" if self.saw_wl1 and not self.saw_wl0 else "wl0_buffer"

    def build(self, scalars: dict[str, int], core_raw: FileSpans) -> Schedule:
        parts = self.parts
        layers = self.layers

        def joined(key: str, dtype: Any = np.int64) -> np.ndarray:
            arrays = [part[key] for part in parts]
            return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)

        n = sum(part["n"] for part in parts)
        core_ids = np.asarray(self.core_order, dtype=np.int64)
        of_counts = joined("of_counts")
        w0_layer = self._w0_layers()  # before `layers` is listed: it adds the names only WL0 entries use
        lanes = Lanes(
            list(layers),
            wl_core=joined("wl_core", np.int32),
            wl_id=joined("wl_id"),
            wl_layer=joined("wl_layer", np.int32),
            wl_type=joined("wl_type", np.int8),
            wl_time=joined("wl_time", np.float64),
            wl_pos=joined("wl_pos", np.int32),
            wl_ofmap_size=joined("wl_ofmap_size"),
            core_raw=core_raw,
            core_ids=core_ids,
        )
        transfers = Transfers(
            ring_ptr=ptr_of(joined("ring_counts")),
            ring_lo=joined("ring_lo"),
            ring_hi=joined("ring_hi"),
            in_ptr=ptr_of(joined("in_counts")),
            in_tid=joined("in_tid"),
            in_kind=joined("in_kind", np.int8),
            of_row=np.repeat(np.arange(n, dtype=np.int64), of_counts),
            of_tid=joined("of_tid"),
            of_size=joined("of_size"),
            of_pos=joined("of_pos", np.int32),
            of_dst_ptr=ptr_of(joined("dst_counts")),
            dst_core=joined("dst_core"),
            dst_wl=joined("dst_wl"),
            dst_dram=joined("dst_dram", bool),
        )
        l2 = AddressSpace(
            buffersize=scalars["buffersize"],
            buf_ptr=ptr_of(joined("buf_counts")),
            buf_tensor=joined("buf_tensor"),
            buf_addr=joined("buf_addr"),
            buf_size=joined("buf_size"),
            buf_type=joined("buf_type", np.int8),
            buf_new=joined("buf_new", np.int8),
            buf_cur=joined("buf_cur", bool),
            buf_pos=joined("buf_pos", np.int32),
        )
        wl0 = SideSpace(
            wl0_key=self.wl0_key,
            w0_ptr=ptr_of(joined("w0_counts")),
            w0_addr=joined("w0_addr"),
            w0_size=joined("w0_size"),
            w0_src=joined("w0_src", np.int8),
            w0_tid=joined("w0_tid"),
            w0_pos=joined("w0_pos", np.int32),
            w0_layer=w0_layer,
        )
        schedule = assemble(
            lanes,
            mesh=Mesh(xlen=scalars["xlen"], ylen=scalars["ylen"], top_batch_cut=scalars["top_batch_cut"]),
            transfers=transfers,
            address_space=l2,
            side_space=wl0,
            dram=dataclasses.replace(self.dram_traffic, dram_raw=self.dram_raw),
        )
        schedule.keep_known("l2_known", self._l2_known(scalars["buffersize"]), L2_COLUMNS)
        schedule.keep_known("snapshots_known", self._snapshots_known(), SNAPSHOT_COLUMNS)
        return schedule

    def _entry_starts(self) -> list[int]:
        """Where each part's L2 entries start in the joined columns."""
        return ptr_of([int(part["buf_counts"].sum()) for part in self.parts])[:-1].tolist()

    def _snapshots_known(self) -> SnapshotFacts | None:
        """The parts' snapshot findings joined, when every part has them."""
        known = self.snapshot_parts
        if len(known) != len(self.parts) or not known or any(facts is None for facts in known):
            return None
        return joined_facts(known, self._entry_starts())  # type: ignore[arg-type]

    def _l2_known(self, buffersize: int) -> CoreL2 | None:
        """The parts' L2 answers joined, when every part has one for the file's buffer size."""
        known = self.l2_parts
        if len(known) != len(self.parts) or not known or any(k is None or k.buffersize != buffersize for k in known):
            return None
        rows = [part["n"] for part in self.parts]
        return joined_l2(known, self._entry_starts(), ptr_of(rows)[:-1].tolist())  # type: ignore[arg-type]

    def _w0_layers(self) -> np.ndarray:
        """The WL0 entries' layer ids (-1: none named). Each core numbered its own names; they are numbered
        file-wide here, after every workload's layer, in the order a pass over all the entries would."""
        pieces = [np.zeros(0, dtype=np.int32)]
        for part in self.parts:
            names = part["w0_layer_names"]
            ids = list(map(self.layers.get, names))  # most are workloads' layers: looked up without a call each
            if None in ids:  # a name no workload has, or none: numbered in order, one by one
                ids = list(map(self._w0_layer_id, names))
            pieces.append(np.array(ids, dtype=np.int32)[part["w0_layer"]])
        return np.concatenate(pieces)

    def _w0_layer_id(self, name: str | None) -> int:
        return -1 if name is None else self.layers.setdefault(name, len(self.layers))


def _dram_traffic(dram: Dram, positions: dict[str, list[int]]) -> DramTraffic:
    """The DRAM section as the schedule's din_*/dout_* columns; `positions` holds the file positions of the
    transfers kept when some were dropped."""
    din, dout = dram.in_, dram.out
    din_rel = list(map(_get("related_ofmap"), din))
    dout_rel = list(map(_get("related_ifmap"), dout))
    dout_dst_lists = list(map(_get("destination"), dout))
    dout_dsts = _flatten(dout_dst_lists)
    return DramTraffic(
        din_tid=_field(din, "transfer_id"),
        din_core=_field(din, "core_id"),
        din_wl=_field(din, "workload_id"),
        din_pos=np.asarray(positions.get("in", range(len(din))), dtype=np.int64),
        din_rel_ptr=ptr_of(_lengths(din_rel)),
        din_rel=np.fromiter(itertools.chain.from_iterable(din_rel), np.int64),
        dout_tid=_field(dout, "transfer_id"),
        dout_type=_coded(dout, "type", _DRAM_OUT_CODE),
        dout_size=_field(dout, "size"),
        dout_pos=np.asarray(positions.get("out", range(len(dout))), dtype=np.int64),
        dout_rel_ptr=ptr_of(_lengths(dout_rel)),
        dout_rel=np.fromiter(itertools.chain.from_iterable(dout_rel), np.int64),
        dout_dst_ptr=ptr_of(_lengths(dout_dst_lists)),
        dout_dst_core=_field(dout_dsts, "core_id", missing=-1),
        dout_dst_wl=_field(dout_dsts, "workload_id", missing=-1),
    )
