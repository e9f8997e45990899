"""Transfer-id integrity and snapshot consistency (format notes §3.5).

Errors break the data flow: an input nobody produces, two producers for one id, DRAM writes and reads that do
not pair up, dangling related_* links, dependency cycles. Warnings are soft facts that real schedules bend:
a consumer missing from a destination list, a tensor that moves, a stale newly_added flag, an id that is not
the array index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.arrays import common, distinct
from explorer.errors import Problem
from explorer.models.schedule import Schedule
from explorer.schedule.dependencies import first_ofmaps, lookup, rows_of_children, rows_present

MAX_PER_CODE = 10_000


class _Problems(list):
    """A problem list that caps each code, so a systematically broken file stays readable."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.unlisted: dict[str, int] = {}  # found past the cap by `first`, never made into problems

    def add(self, severity: str, code: str, message: str, location: str = "", **refs: object) -> None:
        count = self.counts.get(code, 0) + 1
        self.counts[code] = count
        if count <= MAX_PER_CODE:
            self.append(Problem(severity, code, message, location, dict(refs)))  # type: ignore[arg-type]

    def first(self, code: str, found: np.ndarray) -> np.ndarray:
        """The items of `found` still to be listed under `code`; the rest are only counted (a file whose 15 million
        inputs all resolve to nothing made a message for each: 200 s of `info`)."""
        room = max(MAX_PER_CODE - self.counts.get(code, 0), 0)
        if found.size > room:
            self.unlisted[code] = self.unlisted.get(code, 0) + int(found.size) - room
        return found[:room]


def transfer_problems(s: Schedule, cycle_rows: Callable[[], list[int]]) -> list[Problem]:
    """`cycle_rows` gives the rows the timeline's pass could not schedule; it is asked last, so that the
    other checks run while that pass may still be running elsewhere (`PendingTimeline`). Its problem keeps its
    place in the list, after the DRAM links."""
    out = _Problems()

    def wl_refs(row: int) -> dict:
        return {"core": int(s.wl_core[row]), "workload_id": int(s.wl_id[row])}

    # 1. Duplicate ofmap transfer ids, and ids used by both DRAM directions.
    order = np.argsort(s.of_tid, kind="stable")
    tids = s.of_tid[order]
    for k in out.first("duplicate-transfer-id", np.flatnonzero(tids[1:] == tids[:-1])).tolist():
        first, second = int(s.of_row[order[k]]), int(s.of_row[order[k + 1]])
        out.add(
            "error",
            "duplicate-transfer-id",
            f"transfer {int(tids[k])} is the ofmap of both {s.wl_label(first)} and {s.wl_label(second)}",
            f"{s.wl_path(second)}.ofmap[{int(s.of_pos[order[k + 1]])}].transfer_id",
            transfer_id=int(tids[k]),
            **wl_refs(second),
        )
    for tid in out.first("transfer-id-collision", common(s.din_tid, s.dout_tid)).tolist():
        out.add(
            "error",
            "transfer-id-collision",
            f"transfer {tid} is both a DRAM write (in) and a DRAM read (out)",
            '$["-1"]',
            transfer_id=tid,
        )

    # 2. Inputs that resolve to nothing.
    of_tids, first_ofmap = first_ofmaps(s)
    of_rows = s.of_row[first_ofmap]
    dram_order = np.argsort(s.dout_tid, kind="stable")
    dout_sorted = s.dout_tid[dram_order]
    consumer_rows = rows_of_children(s.in_ptr)
    # each input's producer: the index of its transfer among the ofmaps' and the DRAM reads' ids (-1: none),
    # looked up once for every check here (0.3 million inputs: each lookup is ~10 ms of the checks)
    of_hit, dram_hit = lookup(of_tids, s.in_tid), lookup(dout_sorted, s.in_tid)
    unresolved = (of_hit < 0) & (dram_hit < 0)
    for i in out.first("unresolved-transfer", np.flatnonzero(unresolved)).tolist():
        row = int(consumer_rows[i])
        kind = "weight" if s.in_kind[i] == 1 else "ifmap"
        out.add(
            "error",
            "unresolved-transfer",
            f"{s.wl_label(row)}: {kind} transfer {int(s.in_tid[i])} is produced by no ofmap and no DRAM read",
            f"{s.wl_path(row)}.{kind}",
            transfer_id=int(s.in_tid[i]),
            **wl_refs(row),
        )

    # 3. DRAM writes pair with ofmaps that have a DRAM destination, and vice versa.
    of_rows_all = rows_of_children(s.of_dst_ptr)  # ofmap index of each destination
    dram_ofmaps = distinct(of_rows_all[s.dst_dram])
    dram_dest_tids = np.sort(s.of_tid[dram_ofmaps])
    for k, tid in enumerate(s.din_tid.tolist()):
        location = f'$["-1"].in[{int(s.din_pos[k])}]'
        hit = lookup(of_tids, np.array([tid]))[0]
        if hit < 0 or lookup(dram_dest_tids, np.array([tid]))[0] < 0:
            out.add(
                "error",
                "dram-write-unmatched",
                f"DRAM write {tid} has no ofmap with transfer {tid} and a DRAM destination",
                location + ".transfer_id",
                transfer_id=tid,
            )
            continue
        row = int(of_rows[hit])
        if int(s.wl_core[row]) != int(s.din_core[k]) or int(s.wl_id[row]) != int(s.din_wl[k]):
            out.add(
                "error",
                "dram-write-unmatched",
                f"DRAM write {tid} names core {int(s.din_core[k])} workload {int(s.din_wl[k])}, "
                f"but its ofmap belongs to {s.wl_label(row)}",
                location,
                transfer_id=tid,
                **wl_refs(row),
            )
    din_sorted = np.sort(s.din_tid)
    for o in dram_ofmaps.tolist():
        tid = int(s.of_tid[o])
        if lookup(din_sorted, np.array([tid]))[0] < 0:
            row = int(s.of_row[o])
            out.add(
                "error",
                "dram-write-missing",
                f"{s.wl_label(row)}: ofmap transfer {tid} goes to DRAM but no DRAM write (in) has that id",
                f"{s.wl_path(row)}.ofmap[{int(s.of_pos[o])}]",
                transfer_id=tid,
                **wl_refs(row),
            )

    # 4. related_* links point at existing entries of the other direction.
    for owner, rel in zip(rows_of_children(s.dout_rel_ptr).tolist(), s.dout_rel.tolist(), strict=True):
        if lookup(din_sorted, np.array([rel]))[0] < 0:
            out.add(
                "error",
                "dangling-related",
                f"DRAM read {int(s.dout_tid[owner])} lists related_ifmap {rel}, which is no DRAM write",
                f'$["-1"].out[{int(s.dout_pos[owner])}].related_ifmap',
                transfer_id=int(s.dout_tid[owner]),
            )
    for owner, rel in zip(rows_of_children(s.din_rel_ptr).tolist(), s.din_rel.tolist(), strict=True):
        if lookup(dout_sorted, np.array([rel]))[0] < 0:
            out.add(
                "error",
                "dangling-related",
                f"DRAM write {int(s.din_tid[owner])} lists related_ofmap {rel}, which is no DRAM read",
                f'$["-1"].in[{int(s.din_pos[owner])}].related_ofmap',
                transfer_id=int(s.din_tid[owner]),
            )

    # 5. Cycles (found by the timeline's topological pass): placed here once it is known, at the end.
    cycles_at = len(out)

    # 6. Consumers missing from their producer's destination list (soft: batch-grouped schedules skip some).
    _destination_warnings(s, out, _Producers(of_hit, first_ofmap, of_rows, dram_hit, dram_order), consumer_rows)
    _snapshot_warnings(s, out)
    for row in out.first("workload-id-mismatch", np.flatnonzero(s.wl_id != s.wl_pos)).tolist():
        out.add(
            "warning",
            "workload-id-mismatch",
            f"core {int(s.wl_core[row])}: workload_id {int(s.wl_id[row])} stands at index {int(s.wl_pos[row])}",
            s.wl_path(row) + ".workload_id",
            **wl_refs(row),
        )
    cycle = cycle_rows()
    if cycle:
        shown = ", ".join(s.wl_label(r) for r in cycle[:6])
        more = f" and {len(cycle) - 6} more" if len(cycle) > 6 else ""
        first = cycle[0]
        message = f"{len(cycle)} workloads wait on each other and can never start: {shown}{more}"
        refs = {"rows": len(cycle), **wl_refs(first)}
        out.insert(cycles_at, Problem("error", "dependency-cycle", message, s.wl_path(first), refs))
    for code, listed in out.counts.items():
        count = listed + out.unlisted.get(code, 0)
        if count > MAX_PER_CODE:
            out.append(
                Problem("info", f"{code}-truncated", f"{count} {code} problems; the first {MAX_PER_CODE} are listed")
            )
    return list(out)


@dataclass(frozen=True)
class _Producers:
    """Each input's producer as `transfer_problems` looked it up: its index among the distinct ofmap transfer
    ids (-1: none) with the first ofmap and its row for each id, and its index among the DRAM reads' ids in
    `dram_order` (-1: none)."""

    of_hit: np.ndarray
    first_ofmap: np.ndarray
    of_rows: np.ndarray
    dram_hit: np.ndarray
    dram_order: np.ndarray


def _destination_warnings(s: Schedule, out: _Problems, found: _Producers, consumer_rows: np.ndarray) -> None:
    """An input whose producer (an ofmap, or a DRAM read) does not list the consumer among its destinations.
    Membership is tested for every input at once (`rows_present`): a set lookup per input took 0.3 s at 10^5."""
    hit, of_rows = found.of_hit, found.of_rows
    inputs = np.flatnonzero(hit >= 0)
    producer_ofmaps = found.first_ofmap[hit[inputs]]  # the first producer wins
    consumers = consumer_rows[inputs]
    for k in _unlisted(s, producer_ofmaps, consumers, s.of_dst_ptr, s.dst_core, s.dst_wl):
        i, consumer, producer_ofmap = int(inputs[k]), int(consumers[k]), int(producer_ofmaps[k])
        producer = int(of_rows[hit[i]])
        out.add(
            "warning",
            "destination-missing",
            f"{s.wl_label(consumer)} reads transfer {int(s.in_tid[i])}, but the producing ofmap of "
            f"{s.wl_label(producer)} does not list it as a destination",
            f"{s.wl_path(producer)}.ofmap[{int(s.of_pos[producer_ofmap])}].destination",
            transfer_id=int(s.in_tid[i]),
            core=int(s.wl_core[consumer]),
            workload_id=int(s.wl_id[consumer]),
        )
    dram_hit = found.dram_hit
    reading = np.flatnonzero(dram_hit >= 0)
    reads = found.dram_order[dram_hit[reading]]
    readers = consumer_rows[reading]
    for k in _unlisted(s, reads, readers, s.dout_dst_ptr, s.dout_dst_core, s.dout_dst_wl):
        i, consumer, read = int(reading[k]), int(readers[k]), int(reads[k])
        out.add(
            "warning",
            "destination-missing",
            f"{s.wl_label(consumer)} reads DRAM transfer {int(s.in_tid[i])}, which does not list it as a destination",
            f'$["-1"].out[{int(s.dout_pos[read])}].destination',
            transfer_id=int(s.in_tid[i]),
            core=int(s.wl_core[consumer]),
            workload_id=int(s.wl_id[consumer]),
        )


def _unlisted(s: Schedule, producers: np.ndarray, consumers: np.ndarray, dst_ptr: np.ndarray, dst_core: np.ndarray,
              dst_wl: np.ndarray) -> list[int]:  # fmt: skip
    """The positions k where workload row consumers[k] is not among the destinations (core, workload id) that
    producer record producers[k] lists (CSR `dst_ptr` over `dst_core`, `dst_wl`)."""
    listed = rows_present(
        (producers, s.wl_core[consumers], s.wl_id[consumers]), (rows_of_children(dst_ptr), dst_core, dst_wl)
    )
    return np.flatnonzero(~listed).tolist()


@dataclass(frozen=True)
class SnapshotFacts:
    """What the snapshot warnings report, as entry numbers: each tensor's first move on its core (the entries
    before and after it, ordered by core, tensor and row) and the entries whose newly_added disagrees with the
    previous snapshot of their core (ascending, with whether the tensor was in that snapshot). A big file's
    decode workers find them core by core (`core_snapshot_facts`), and the load joins them (`joined_facts`)."""

    moved: np.ndarray  # (k, 2): entry before, entry after
    mismatched: np.ndarray
    in_previous: np.ndarray


# The columns the facts are worked out from (`Schedule.keep_known`)
SNAPSHOT_COLUMNS = ("buf_ptr", "core_ptr", "wl_core", "buf_tensor", "buf_addr", "buf_size", "buf_new")


def snapshot_facts(
    buf_ptr: np.ndarray,
    core_ptr: np.ndarray,
    wl_core: np.ndarray,
    tensor_ids: np.ndarray,
    address: np.ndarray,
    size: np.ndarray,
    newly_added: np.ndarray,
) -> SnapshotFacts:
    """`SnapshotFacts` of a schedule's columns (or one core's: `core_ptr` [0, n], `wl_core` all alike)."""
    if tensor_ids.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return SnapshotFacts(empty.reshape(0, 2), empty, np.zeros(0, dtype=bool))
    n_workloads = buf_ptr.size - 1
    row = rows_of_children(buf_ptr)
    core = wl_core[row].astype(np.int64)
    low = int(tensor_ids.min())
    if (int(tensor_ids.max()) - low + 1) * max(n_workloads, 1) < 2**62:  # row·ids fits: no ranking pass
        tensor = tensor_ids.astype(np.int64) - low  # (np.unique's ranks took 0.08 s on 10^6 entries)
    else:  # ids spread too far apart for the keys below
        _, tensor = np.unique(tensor_ids, return_inverse=True)
    order = np.lexsort((row, tensor, core))
    same = (core[order][1:] == core[order][:-1]) & (tensor[order][1:] == tensor[order][:-1])
    moved = same & ((address[order][1:] != address[order][:-1]) | (size[order][1:] != size[order][:-1]))
    at = np.flatnonzero(moved)
    after = order[at + 1]
    first = np.ones(after.size, dtype=bool)
    first[1:] = (core[after][1:] != core[after][:-1]) | (tensor[after][1:] != tensor[after][:-1])
    pairs = np.column_stack([order[at], after])[first]  # a tensor's first move on its core only

    # newly_added must be true exactly when the tensor was not in the previous snapshot of the same core.
    n_tensors = int(tensor.max()) + 1
    keys = np.sort(row * n_tensors + tensor)
    first_of_core = np.zeros(n_workloads, dtype=bool)
    first_of_core[core_ptr[:-1][np.diff(core_ptr) > 0]] = True
    has_previous = ~first_of_core[row]
    in_previous = np.zeros(row.size, dtype=bool)
    in_previous[has_previous] = lookup(keys, (row[has_previous] - 1) * n_tensors + tensor[has_previous]) >= 0
    flagged = newly_added >= 0
    wrong = np.flatnonzero(flagged & has_previous & ((newly_added == 1) == in_previous))
    return SnapshotFacts(pairs.astype(np.int64), wrong, in_previous[wrong])


def core_snapshot_facts(
    buf_ptr: np.ndarray, tensor_ids: np.ndarray, address: np.ndarray, size: np.ndarray, newly_added: np.ndarray
) -> SnapshotFacts:
    """`snapshot_facts` of one core's columns, entries numbered within the core."""
    n = buf_ptr.size - 1
    core_ptr = np.array([0, n], dtype=np.int64)
    return snapshot_facts(buf_ptr, core_ptr, np.zeros(n, dtype=np.int64), tensor_ids, address, size, newly_added)


def joined_facts(cores: list[SnapshotFacts], entry_starts: list[int]) -> SnapshotFacts:
    """The cores' facts (in row order, each core's entries starting at those numbers) as the schedule's."""
    return SnapshotFacts(
        np.concatenate([facts.moved + start for facts, start in zip(cores, entry_starts, strict=True)]),
        np.concatenate([facts.mismatched + start for facts, start in zip(cores, entry_starts, strict=True)]),
        np.concatenate([facts.in_previous for facts in cores]),
    )


def _snapshot_warnings(s: Schedule, out: _Problems) -> None:
    """A tensor keeps its address and size for its whole life; newly_added matches the previous snapshot."""
    if s.buf_tensor.size == 0:
        return
    facts = s.known("snapshots_known")
    if not isinstance(facts, SnapshotFacts):
        facts = snapshot_facts(s.buf_ptr, s.core_ptr, s.wl_core, s.buf_tensor, s.buf_addr, s.buf_size, s.buf_new)
    row = rows_of_children(s.buf_ptr)
    for before, after in facts.moved.tolist():
        r = int(row[after])
        tensor = int(s.buf_tensor[after])
        out.add(
            "warning",
            "tensor-moved",
            f"{s.wl_label(r)}: tensor {tensor} changes from {int(s.buf_addr[before]):#x}+{int(s.buf_size[before])} "
            f"to {int(s.buf_addr[after]):#x}+{int(s.buf_size[after])} bytes",
            f"{s.wl_path(r)}.buffer[{int(s.buf_pos[after])}]",
            core=int(s.wl_core[r]),
            workload_id=int(s.wl_id[r]),
            tensor_ids=[tensor],
        )
    for e, was_there in zip(facts.mismatched.tolist(), facts.in_previous.tolist(), strict=True):
        r = int(row[e])
        expected = "false" if was_there else "true"
        out.add(
            "warning",
            "newly-added-mismatch",
            f"{s.wl_label(r)}: tensor {int(s.buf_tensor[e])} has newly_added "
            f"{'true' if s.buf_new[e] == 1 else 'false'}, but the previous snapshot says {expected}",
            f"{s.wl_path(r)}.buffer[{int(s.buf_pos[e])}].newly_added",
            core=int(s.wl_core[r]),
            workload_id=int(s.wl_id[r]),
            tensor_ids=[int(s.buf_tensor[e])],
        )
