"""The graph executor's memory plan: storage ids, their sizes and lifetimes over node order, and the peak.

TVM's planner gives every entry (a node output) a `storage_id`; entries that share one share memory. Here:
- a storage id's size is its largest entry (dtype bytes × ∏ shape);
- it is live from the first node that produces one of its entries to the last node that reads one of them
  (an output listed in `heads` stays live to the end; an entry nobody reads is live at its own node only);
- the live bytes at node k are the sizes of the storage ids live at k; the peak is their maximum.
The graph executor allocates every storage id for the whole run (`allocated_bytes`); the live curve shows how
much of that is needed at each step.

`plan_schedule` lays the storage ids side by side in one address space and turns each module's tvm_op nodes
into "workloads" of a scheduler-IR `Schedule`, so the same buffer-occupancy widget draws the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer.formats.tvm_mlf.graph import Graph

if TYPE_CHECKING:  # imported where it is built: reading a bundle without a plan never loads the schedule wing
    from explorer.models.schedule import Schedule


@dataclass(frozen=True, slots=True)
class StorageId:
    sid: int
    size: int  # bytes of its largest entry
    start: int  # node index where it becomes live
    end: int  # last node index where it is live
    entries: tuple[int, ...]  # entry ids sharing it
    role: str  # "input", "param", "output" or "intermediate"


@dataclass(frozen=True)
class StoragePlan:
    storage: dict[int, StorageId]
    live_bytes: np.ndarray  # bytes live at each node index
    peak_bytes: int
    peak_node: int
    allocated_bytes: int  # the sum of all storage id sizes: what the executor allocates

    def live_at(self, node: int) -> list[int]:
        return [s.sid for s in self.storage.values() if s.start <= node <= s.end]


def storage_plan(graph: Graph, param_names: set[str] | frozenset[str] = frozenset()) -> StoragePlan:
    count = len(graph.nodes)
    last_read: dict[int, int] = {}
    for node in graph.nodes:
        for nid, index in node.inputs:
            eid = graph.entry_id(nid, index)
            if eid is not None:
                last_read[eid] = max(last_read.get(eid, -1), node.nid)
    heads = {graph.entry_id(nid, index) for nid, index in graph.heads}
    by_sid: dict[int, list] = {}
    for entry in graph.entries:
        if entry.storage_id >= 0:
            by_sid.setdefault(entry.storage_id, []).append(entry)
    storage = {}
    for sid, entries in sorted(by_sid.items()):
        start = min(e.nid for e in entries)
        end = max(count - 1 if e.eid in heads else max(last_read.get(e.eid, e.nid), e.nid) for e in entries)
        storage[sid] = StorageId(
            sid=sid,
            size=max(e.nbytes for e in entries),
            start=start,
            end=end,
            entries=tuple(e.eid for e in entries),
            role=_role(graph, entries, heads, param_names),
        )
    live = np.zeros(count, dtype=np.int64)
    for s in storage.values():
        live[s.start : s.end + 1] += s.size
    peak_node = int(np.argmax(live)) if count else -1
    return StoragePlan(
        storage=storage,
        live_bytes=live,
        peak_bytes=int(live[peak_node]) if count else 0,
        peak_node=peak_node,
        allocated_bytes=sum(s.size for s in storage.values()),
    )


def _role(graph: Graph, entries: list, heads: set, param_names: set[str] | frozenset[str]) -> str:
    """ "output" when it holds a graph output, else what its first entry is: input, param or intermediate."""
    if any(e.eid in heads for e in entries):
        return "output"
    first = graph.nodes[min(entries, key=lambda e: e.nid).nid]
    if first.op == "null":
        return "param" if first.name in param_names else "input"
    return "intermediate"


# ---- the plan drawn by the scheduler views -------------------------------------------------------------------


MAX_SNAPSHOT_ENTRIES = 5_000_000


def plan_schedule(modules: list[tuple[str, Graph, StoragePlan]]) -> tuple[Schedule, dict[int, list[int]]]:
    """A one-core-per-module `Schedule` whose workloads are the tvm_op nodes (duration 1, so time = node order)
    and whose L2 snapshots are the storage ids live at each node. Returns it and, per core, the node id of
    each workload row. Storage ids sit side by side from address 0 in id order: a layout for drawing, not
    TVM's own offsets (the graph executor allocates each storage id separately)."""
    from explorer.models.schedule_parts import AddressSpace, Lanes, assemble

    rows_nid: dict[int, list[int]] = {}
    cols: dict[str, list] = {k: [] for k in ("core", "id", "layer", "time", "buf_ptr")}
    buf: dict[str, list] = {k: [] for k in ("tensor", "addr", "size", "type", "new")}
    layers: list[str] = []
    layer_index: dict[str, int] = {}
    capacity = 0
    for core, (_, graph, plan) in enumerate(modules):
        offsets, address = {}, 0
        for sid in sorted(plan.storage):
            offsets[sid] = address
            address += plan.storage[sid].size
        capacity = max(capacity, address)
        rows_nid[core] = []
        written = {nid: {graph.entries[graph.row_ptr[nid] + i].storage_id
                         for i in range(graph.row_ptr[nid + 1] - graph.row_ptr[nid])
                         if graph.row_ptr[nid] + i < len(graph.entries)}
                   for nid in range(len(graph.nodes))}  # fmt: skip
        starts: dict[int, list[int]] = {}
        for sid, info in plan.storage.items():
            starts.setdefault(info.start, []).append(sid)
        live: set[int] = set()
        for node in graph.nodes:  # a sweep over node order: storage ids enter at their start, leave after their end
            live.update(starts.get(node.nid, ()))
            live = {sid for sid in live if plan.storage[sid].end >= node.nid}
            if node.op != "tvm_op":
                continue
            rows_nid[core].append(node.nid)
            name = node.func_name or node.name
            cols["core"].append(core)
            cols["id"].append(node.nid)
            if name not in layer_index:
                layer_index[name] = len(layers)
                layers.append(name)
            cols["layer"].append(layer_index[name])
            cols["time"].append(1.0)
            cols["buf_ptr"].append(len(buf["tensor"]))
            if len(buf["tensor"]) + len(live) > MAX_SNAPSHOT_ENTRIES:
                continue  # a pathological plan: the rows stay, their snapshots stop (the table view still has all)
            for sid in sorted(live):
                s = plan.storage[sid]
                buf["tensor"].append(sid)
                buf["addr"].append(offsets[sid])
                buf["size"].append(s.size)
                kind = 2 if sid in written[node.nid] else 1 if s.role == "param" else 0  # ofmap / weight / ifmap
                buf["type"].append(kind)
                buf["new"].append(1 if s.start == node.nid or sid in written[node.nid] else 0)
    n, m = len(cols["id"]), len(buf["tensor"])
    buf_ptr = np.array([*cols["buf_ptr"], m], dtype=np.int64)
    lanes = Lanes(
        layers,
        wl_core=np.array(cols["core"], dtype=np.int64),
        wl_id=np.array(cols["id"], dtype=np.int64),
        wl_layer=np.array(cols["layer"], dtype=np.int64),
        wl_type=np.zeros(n, dtype=np.int64),
        wl_time=np.array(cols["time"], dtype=np.float64),
        core_ids=np.arange(len(modules), dtype=np.int64),
    )
    storage = AddressSpace(
        buffersize=capacity,
        buf_ptr=buf_ptr,
        buf_tensor=np.array(buf["tensor"], dtype=np.int64),
        buf_addr=np.array(buf["addr"], dtype=np.int64),
        buf_size=np.array(buf["size"], dtype=np.int64),
        buf_type=np.array(buf["type"], dtype=np.int64),
        buf_new=np.array(buf["new"], dtype=np.int64),
        buf_cur=np.zeros(m, dtype=bool),
        buf_pos=np.arange(m, dtype=np.int64) - np.repeat(buf_ptr[:-1], np.diff(buf_ptr)),
    )
    schedule = assemble(lanes, address_space=storage)
    return schedule, rows_nid
