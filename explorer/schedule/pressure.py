"""Memory pressure: why L2 is full at its peak, and where a misplaced tensor would have fitted.

An overlap says two tensors share bytes; an allocator engineer asks next whether there was room. The numbers
here answer it (the README states each definition, and tests hold the code to them):

- live bytes of a snapshot: the sum of its entries' sizes; a core's peak is the largest, at the first workload
  that reaches it;
- high water: the largest end address of a placed piece on the core (entries outside every region are left out:
  `l2-out-of-range` names them); packing = peak ÷ high water (1.0: nothing tighter was possible);
- free blocks of a snapshot: each ring region (else the whole L2) minus the union of the pieces in it, a block
  never spanning a region boundary; fragmentation = 1 − largest free block ÷ total free bytes (0 when nothing
  is free);
- a misplaced tensor's residency: the run of consecutive snapshots of its core that hold it at the address it
  has where its incident starts; its home: the address its first entry has in the snapshot just before the
  residency (else just after) on the same core, when that differs, and the region holding it there (without
  such a neighbour, its own address's region); its suggestion: the home address when the tensor fits there
  without touching a byte of another entry in any snapshot of the residency, else the lowest multiple of 8
  inside the home region where it fits so (never wrapping); when there is none, its shortfall: its size − the
  largest block of that region free in all of them (counted from its first 8-aligned byte).

Everything per snapshot is one vectorised pass over the placed pieces (a sort by region and address); the
suggestions look only at the snapshots of each residency.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.arrays import distinct
from explorer.gc_pause import collector_paused
from explorer.models.schedule import Schedule
from explorer.schedule.buffers import Placement, wl0_bytes_per_workload
from explorer.schedule.free_space import SnapshotFree, ranges, snapshot_free
from explorer.schedule.incidents import Incident
from explorer.schedule.rooms import Room, residencies, room_for, rooms_in_batches

if TYPE_CHECKING:
    from explorer.document import Document

LARGEST_LISTED = 5  # live tensors an incident's context names


@dataclass(frozen=True)
class CorePressure:
    """One core's L2 pressure: what `info --json` lists under memory.l2.cores."""

    core: int
    capacity: int
    peak_bytes: int
    peak_workload: int
    high_water: int
    max_fragmentation: float
    max_fragmentation_workload: int
    live_at_peak: list[dict[str, Any]]

    @property
    def packing(self) -> float:
        """Peak ÷ high water: 1.0 when nothing tighter was possible (and when nothing is placed)."""
        return self.peak_bytes / self.high_water if self.high_water > 0 else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "capacity": self.capacity, "peak_bytes": self.peak_bytes, "peak_workload": self.peak_workload,
            "high_water": self.high_water, "packing": round(self.packing, 4),
            "live_at_peak": self.live_at_peak, "max_fragmentation": round(self.max_fragmentation, 4),
            "max_fragmentation_workload": self.max_fragmentation_workload,
        }  # fmt: skip


def core_pressure(
    s: Schedule,
    placement: Placement,
    free: SnapshotFree,
    entry_role: Callable[[int, int], str] | None = None,
    entry_kinds: tuple[str, ...] = (),
) -> list[CorePressure]:
    """Every core's peak, high water, packing and worst fragmentation; `entry_role(row, entry)` names the tensors
    live at the peak (else their entry kind does)."""
    placed = ~placement.out_of_range[placement.entry]
    piece_core = s.wl_core[placement.row[placed]] if placed.any() else np.zeros(0, dtype=np.int64)
    piece_hi = placement.hi[placed]
    fragmentation = free.fragmentation
    answer: list[CorePressure] = []
    for core in s.core_ids.tolist():
        rows = s.core_rows(int(core))
        if len(rows) == 0:
            continue
        live = free.live[rows.start : rows.stop]
        peak_row = rows.start + int(np.argmax(live))
        worst_row = rows.start + int(np.argmax(fragmentation[rows.start : rows.stop]))
        mine = piece_core == core
        high_water = int(piece_hi[mine].max()) if mine.any() else 0
        answer.append(
            CorePressure(
                core=int(core), capacity=int(s.buffersize), peak_bytes=int(free.live[peak_row]),
                peak_workload=int(s.wl_id[peak_row]), high_water=high_water,
                max_fragmentation=float(fragmentation[worst_row]),
                max_fragmentation_workload=int(s.wl_id[worst_row]),
                live_at_peak=live_tensors(s, peak_row, entry_role, entry_kinds),
            )
        )  # fmt: skip
    return answer


def live_tensors(
    s: Schedule,
    row: int,
    entry_role: Callable[[int, int], str] | None = None,
    entry_kinds: tuple[str, ...] = (),
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The entries of `row`'s snapshot, largest first (ties by tensor id): tensor_id, bytes, address, role."""
    lo, hi = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1])
    entries = np.arange(lo, hi)
    order = np.lexsort((s.buf_tensor[lo:hi], -s.buf_size[lo:hi]))
    chosen = entries[order][:limit] if limit is not None else entries[order]
    out = []
    for e in chosen.tolist():
        said = entry_role(row, e) if entry_role is not None else ""
        kind = int(s.buf_type[e])
        role = said or (entry_kinds[kind] if 0 <= kind < len(entry_kinds) else "")
        out.append({"tensor_id": int(s.buf_tensor[e]), "bytes": int(s.buf_size[e]), "address": int(s.buf_addr[e]),
                    "role": role})  # fmt: skip
    return out


def incident_contexts(
    s: Schedule, free: SnapshotFree, rows: np.ndarray, entry_kinds: tuple[str, ...] = ()
) -> dict[int, dict[str, Any]]:
    """The pressure at incidents' first snapshots, per row: capacity, live bytes, the largest free block and the
    five largest live tensors (their role is their entry kind: naming each in words reads its workload again, and
    a file holds thousands of incidents; the TUI's details name them when one is shown). Every row's entries are
    sorted in one lexsort (one per row took 0.3 s for 9,000 incidents)."""
    rows = distinct(np.asarray(rows, dtype=np.int64))
    group, entries = ranges(s.buf_ptr[rows], s.buf_ptr[rows + 1])
    order = np.lexsort((s.buf_tensor[entries], -s.buf_size[entries], group))
    group, entries = group[order], entries[order]
    rank = np.arange(group.size) - np.searchsorted(group, group)  # place within its row, largest first
    keep = rank < LARGEST_LISTED
    group, entries = group[keep], entries[keep]
    kinds = s.buf_type[entries].tolist()
    listed: list[list[dict[str, Any]]] = [[] for _ in range(rows.size)]
    for g, tensor, size, address, kind in zip(group.tolist(), s.buf_tensor[entries].tolist(),
                                              s.buf_size[entries].tolist(), s.buf_addr[entries].tolist(), kinds,
                                              strict=True):  # fmt: skip
        role = entry_kinds[kind] if 0 <= kind < len(entry_kinds) else ""
        listed[g].append({"tensor_id": tensor, "bytes": size, "address": address, "role": role})
    capacity = int(s.buffersize)
    return {
        row: {"capacity": capacity, "live_bytes": live, "largest_free_block": largest, "largest_live": listed[g]}
        for g, (row, live, largest) in enumerate(zip(rows.tolist(), free.live[rows].tolist(),
                                                     free.largest_free[rows].tolist(), strict=True))
    }  # fmt: skip


def _first_rows(s: Schedule, incidents: list[Incident]) -> np.ndarray:
    """The rows of the L2 incidents' first snapshots (the only ones their context measures)."""
    l2 = [i for i in incidents if i.code == "l2-overlap"]
    rows = s.rows_of([i.core for i in l2], [i.first_workload for i in l2])
    return rows[rows >= 0]


def explain_incidents(
    s: Schedule, placement: Placement, incidents: list[Incident], free: SnapshotFree, entry_kinds: tuple[str, ...] = ()
) -> dict[int, Room]:
    """Fill each L2 incident's context (from `free`, which must cover their first snapshots) and its suggestion
    or shortfall (WL0 incidents are left as they are); the rooms found, by id(incident)."""
    l2 = [i for i in incidents if i.code == "l2-overlap"]
    rows = s.rows_of([i.core for i in l2], [i.first_workload for i in l2]).tolist()
    asked = [(i, (i.core, i.introduced_by, row)) for i, row in zip(l2, rows, strict=True) if row >= 0]
    found = residencies(s, placement, [ask for _, ask in asked])
    contexts = incident_contexts(s, free, np.array([row for row in rows if row >= 0], dtype=np.int64), entry_kinds)
    stays = {id(incident): stay for (incident, _), stay in zip(asked, found, strict=True)}
    found_rooms = rooms_in_batches(s, placement, [stay for stay in found if stay is not None])
    rooms = {id(incident): room for incident, room in zip(
        [incident for (incident, _), stay in zip(asked, found, strict=True) if stay is not None], found_rooms,
        strict=True) if room is not None}  # fmt: skip
    for incident, row in zip(l2, rows, strict=True):
        if row < 0:
            continue
        incident.context = contexts[row]
        stay = stays.get(id(incident))
        room = rooms.get(id(incident))
        if stay is None or room is None:  # no residency, or past the search's budget: neither said
            continue
        span = [int(s.wl_id[stay.first_row]), int(s.wl_id[stay.last_row])]
        incident.region = room.region
        incident.region_largest_free = room.largest_free
        if room.address is not None:
            home = int(s.wl_id[stay.home_row]) if room.at_home and stay.home_row is not None else None
            incident.suggestion = {"address": room.address, "end": room.address + stay.size, "residency": span,
                                   "home_workload": home}  # fmt: skip
            incident.shortfall_bytes = None
        else:
            incident.suggestion = None
            incident.shortfall_bytes = room.shortfall
    return rooms


class Pressure:
    """A document's L2 pressure, worked out once when first asked for (`pressure_of`): the per-snapshot free
    space, the cores' numbers, and each incident's room on demand."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.schedule: Schedule = document.scheduled()
        self.placement: Placement = document.analysed().placement
        self.live: np.ndarray = document.analysed().l2_bytes  # per snapshot, worked out by the analysis
        self._free: SnapshotFree | None = None
        self._cores: list[CorePressure] | None = None
        self._by_core: dict[int, np.ndarray] = {}

    @property
    def free(self) -> SnapshotFree:
        """Every snapshot's free space (one sort of all the pieces: worked out when first asked for)."""
        if self._free is None:
            self._free = snapshot_free(self.schedule, self.placement, live=self.live)
        return self._free

    def core_fragmentation(self, core: int) -> np.ndarray:
        """Fragmentation of each snapshot of one core, in step order (its rows alone are measured unless every
        snapshot already was): the memory map's strip."""
        rows = self.schedule.core_rows(core)
        if self._free is not None:
            return self._free.fragmentation[rows.start : rows.stop]
        kept = self._by_core.get(core)
        if kept is None:
            wanted = np.arange(rows.start, rows.stop, dtype=np.int64)
            free = snapshot_free(self.schedule, self.placement, rows=wanted, live=self.live)
            kept = self._by_core[core] = free.fragmentation[rows.start : rows.stop]
        return kept

    def entry_role(self) -> Callable[[int, int], str] | None:
        """The document's words for an entry (what the incidents say), for the views that name a few."""
        return getattr(self.document.view, "entry_role", None)

    @property
    def cores(self) -> list[CorePressure]:
        """Each core's numbers; the tensors live at the peak are named by their entry kind (naming them in words
        reads each core's workloads again: a second on a 500 MB file; the TUI's peak list names them)."""
        if self._cores is None:
            words = self.document.vocabulary
            self._cores = core_pressure(self.schedule, self.placement, self.free, None, words.entry_kinds)
        return self._cores

    def explain(self, incidents: list[Incident]) -> dict[int, Room]:
        """Fill every L2 incident's context and suggestion or shortfall; the rooms found, by id(incident). The
        contexts are tens of thousands of small acyclic dicts: the cycle collector, left on, rescans the loaded
        document's objects several times while they are made."""
        words = self.document.vocabulary
        with collector_paused():
            free = self._free or snapshot_free(self.schedule, self.placement,
                                               rows=_first_rows(self.schedule, incidents), live=self.live)  # fmt: skip
            return explain_incidents(self.schedule, self.placement, incidents, free, words.entry_kinds)


def pressure_of(document: Document) -> Pressure | None:
    """The document's L2 pressure (kept on its analysis: worked out once); None without a schedule, or for one
    that has no memory to fill (a trace or an assembly: their lanes are units, not buffers)."""
    analysis = getattr(document, "schedule_analysis", None)
    if document.schedule is None or analysis is None or document.schedule.buf_ptr.size < 2:
        return None
    if not document.vocabulary.memory:
        return None
    kept = analysis.cached.get("pressure")
    if kept is None:
        kept = analysis.cached["pressure"] = Pressure(document)
    return kept


def explained_incidents(document: Document) -> list[Incident]:
    """The incidents `check`, the report and `query` list: each L2 one with its context and its suggestion or
    shortfall (the pressure is worked out only when there is an incident to explain)."""
    from explorer.schedule.incidents import incidents_of
    from explorer.schedule.touched import confirm_incidents

    found = incidents_of(document)
    pressure = pressure_of(document) if found else None
    if pressure is not None:
        pressure.explain(found)
    confirm_incidents(document, found)  # with an assembly or trace joined: touched by what ran, or not
    return found


def packing_text(packing: float) -> str:
    """Packing in words where it says more than its number: over 1 the tensors live at the peak hold more bytes
    than the span they sit in, which only overlapping tensors can (a planted overlap read 1.25 unexplained)."""
    return f"{packing:.2f}" + (" (over 1: tensors overlap)" if packing > 1.0 else "")


def worst_line(cores: dict[str, dict[str, Any]]) -> str:
    """The text `info`'s line: the core with the largest peak (from `info --json`'s memory.l2.cores), in words."""
    core, said = max(cores.items(), key=lambda item: (item[1]["peak_bytes"], -int(item[0])))
    capacity = said["capacity"]
    share = f" of {capacity:,} ({said['peak_bytes'] / capacity:.0%})" if capacity > 0 else ""
    return (f"core {core}, {said['peak_bytes']:,} bytes{share} at workload {said['peak_workload']} "
            f"({len(said['live_at_peak'])} tensors live); high water {said['high_water']:#x}, packing "
            f"{packing_text(said['packing'])}; fragmentation up to {said['max_fragmentation']:.2f} "
            f"(workload {said['max_fragmentation_workload']})")  # fmt: skip


NO_INCIDENT = "choose an overlap incident first to preview where its tensor fits"  # the views add their keys


def preview_room(document: Document, core: int, tensors: tuple[int, ...], row: int) -> tuple[Room | None, str]:
    """Where the selected incident's misplaced tensor (`tensors[0]`, as the views highlight it) would go, for
    the views' preview of `relocate`: the room found, or None and why in words."""
    pressure = pressure_of(document)
    if pressure is None or not tensors:
        return None, NO_INCIDENT
    s = pressure.schedule
    [stay] = residencies(s, pressure.placement, [(core, int(tensors[0]), row)])
    if stay is None:
        return None, f"tensor {tensors[0]} is not in this snapshot of {s.core_label(core)}: step to the overlap"
    room = room_for(s, pressure.placement, stay)
    if room.address is None:
        return None, (f"tensor {stay.tensor} fits nowhere in region {stay.home_lo:#x}-{stay.home_hi:#x} for workloads "
                      f"{int(s.wl_id[stay.first_row])}–{int(s.wl_id[stay.last_row])}: {room.shortfall:,} bytes "
                      "short")  # fmt: skip
    return room, ""


def preview_words(s: Schedule, room: Room) -> str:
    """The preview's mark, said in every view that draws it."""
    stay = room.residency
    return (f"PREVIEW · tensor {stay.tensor} → {room.address:#x} (was {stay.address:#x}) · workloads "
            f"{int(s.wl_id[stay.first_row])}–{int(s.wl_id[stay.last_row])} · nothing is written · v: off")  # fmt: skip


def side_memory_pressure(s: Schedule) -> dict[str, dict[str, Any]]:
    """WL0 (or WL1) per core, with the numbers that make sense there: its size is not in the file and its entries
    have no regions nor tensor ids, so there is no capacity, fragmentation or suggestion; the peak of live bytes,
    the high water and the packing are defined as for L2. Core id (as text) → numbers; cores without entries
    are left out."""
    if s.w0_size.size == 0:
        return {}
    live = wl0_bytes_per_workload(s)
    ends = np.where(s.w0_addr >= 0, s.w0_addr + s.w0_size, 0)
    out: dict[str, dict[str, Any]] = {}
    for core in s.core_ids.tolist():
        rows = s.core_rows(int(core))
        lo, hi = int(s.w0_ptr[rows.start]), int(s.w0_ptr[rows.stop])
        if len(rows) == 0 or hi <= lo:
            continue
        peak_row = rows.start + int(np.argmax(live[rows.start : rows.stop]))
        high_water = int(ends[lo:hi].max())
        peak = int(live[peak_row])
        out[str(core)] = {"peak_bytes": peak, "peak_workload": int(s.wl_id[peak_row]), "high_water": high_water,
                          "packing": round(peak / high_water, 4) if high_water > 0 else 1.0}  # fmt: skip
    return out
