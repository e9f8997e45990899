"""Overlaps explained as incidents: one per misplaced tensor on one core, over the run of consecutive snapshots
that its collisions last, with every tensor it collides with.

The per-pair problems (`l2-overlap`, `wl0-overlap`: one per pair and snapshot) say what collides; an incident
says who caused it: the tensor that was newly added or moved (or, in WL0, first appeared) when the collision
began. Later snapshots where the same tensor still collides extend the incident instead of adding rows, so one
misplaced tensor that lands on four live tensors for three workloads is one incident, not twelve problems.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from explorer.arrays import distinct
from explorer.errors import Problem
from explorer.models.schedule import Schedule

if TYPE_CHECKING:
    from explorer.document import Document

OVERLAP_CODES = ("l2-overlap", "wl0-overlap")


@dataclass
class Incident:
    code: str
    core: int
    introduced_by: int  # the misplaced tensor (L2) or transfer (WL0) id
    tensor_ids: list[int]  # every id involved, the misplaced one first
    first_workload: int
    last_workload: int
    snapshots: int
    ranges: list[list[int]]  # merged overlapping byte ranges [lo, hi)
    roles: dict[int, str] = field(default_factory=dict)  # id → what it is (kind, layer, producer)
    pairs: int = 0  # per-pair problems behind it
    members: list[Problem] = field(default_factory=list, repr=False, compare=False)  # those problems themselves
    # L2 only, filled by `explorer.schedule.pressure.explain_incidents`: the pressure at the first workload, and
    # where the misplaced tensor would have fitted for its residency ({address, end, residency}) or how short
    context: dict[str, Any] | None = None
    suggestion: dict[str, Any] | None = None
    shortfall_bytes: int | None = None
    region: list[int] | None = None  # [lo, hi): the region the room was looked for in (the tensor's home)
    region_largest_free: int | None = None  # its largest block free in every snapshot of the residency
    # With an assembly or trace joined: the instructions that wrote into the overlap (explorer.schedule.touched)
    touched: dict[str, Any] | None = None

    @property
    def bytes(self) -> int:
        return sum(hi - lo for lo, hi in self.ranges)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code, "core": self.core, "introduced_by": self.introduced_by,
            "tensor_ids": self.tensor_ids, "first_workload": self.first_workload,
            "last_workload": self.last_workload, "snapshots": self.snapshots, "bytes": self.bytes,
            "ranges": self.ranges, "roles": {str(k): v for k, v in self.roles.items()}, "pairs": self.pairs,
        } | {
            name: value for name, value in (("context", self.context), ("suggestion", self.suggestion),
                                            ("shortfall_bytes", self.shortfall_bytes), ("region", self.region),
                                            ("region_largest_free", self.region_largest_free),
                                            ("touched", self.touched)) if value is not None
        }  # fmt: skip

    def region_words(self) -> str:
        return f"region {self.region[0]:#x}-{self.region[1]:#x}" if self.region is not None else "its region"

    def room_words(self) -> str:
        """Where the misplaced tensor would have fitted, or how short memory was (empty until explained)."""
        if self.suggestion is not None:
            first, last = self.suggestion["residency"]
            home = self.suggestion.get("home_workload")
            where = f"its address at workload {home}" if home is not None else f"in {self.region_words()}"
            return f"would fit at {self.suggestion['address']:#x} ({where}) for workloads {first}–{last}"
        if self.shortfall_bytes is not None:
            return f"no room: {self.shortfall_bytes:,} bytes short in {self.region_words()}"
        return ""

    def line(self) -> str:
        others = [t for t in self.tensor_ids if t != self.introduced_by]
        what = "tensor" if self.code == "l2-overlap" else "transfer"
        span = (f"workload {self.first_workload}" if self.first_workload == self.last_workload
                else f"workloads {self.first_workload}–{self.last_workload}")  # fmt: skip
        role = self.roles.get(self.introduced_by, "")
        if not others:  # two entries of the same transfer: a duplicate lying on itself
            return (f"core {self.core}: {what} {self.introduced_by}{f' ({role})' if role else ''} is placed twice and "
                    f"overlaps itself, {self.bytes:,} bytes, seen in {self.snapshots} snapshot"
                    f"{'s' if self.snapshots != 1 else ''} ({span}){self._room_suffix()}")  # fmt: skip
        return (f"core {self.core}: {what} {self.introduced_by}{f' ({role})' if role else ''} collides with "
                f"{len(others)} {what}{'s' if len(others) != 1 else ''} ({', '.join(map(str, others[:6]))}"
                f"{', …' if len(others) > 6 else ''}), {self.bytes:,} bytes, seen in {self.snapshots} "
                f"snapshot{'s' if self.snapshots != 1 else ''} ({span}){self._room_suffix()}")  # fmt: skip

    def _room_suffix(self) -> str:
        words = self.room_words()
        return f"; {words}" if words else ""


def find_incidents(
    s: Schedule,
    problems: list[Problem],
    entry_kinds: tuple[str, ...] = (),
    entry_role: Callable[[int, int], str] | None = None,
    *,
    with_roles: bool = True,
) -> list[Incident]:
    """The incidents behind the overlap problems. `entry_role(row, entry)` (the document view's) names a tensor
    in words; without it, the entry's kind says what it is. `with_roles=False` leaves the roles for
    `name_roles` to fill for the few incidents that will be shown (diff compares thousands)."""
    pairs = [p for p in problems if p.code in OVERLAP_CODES and "core" in p.refs and "range" in p.refs]
    found: list[Incident] = []
    for code in OVERLAP_CODES:
        mine = [p for p in pairs if p.code == code]
        if mine:
            found += _group(s, mine, code)
    found.sort(key=lambda i: (i.core, i.first_workload, i.introduced_by))
    if with_roles:
        name_roles(s, found, entry_kinds, entry_role)
    return found


def name_roles(
    s: Schedule, incidents: list[Incident], entry_kinds: tuple[str, ...] = (), entry_role: Callable | None = None
) -> None:
    """Fill each incident's `roles`: what every tensor involved is, in its first snapshot."""
    rows = s.rows_of([i.core for i in incidents], [i.first_workload for i in incidents]).tolist()
    entries = _Entries(s)
    for incident, row in zip(incidents, rows, strict=True):
        incident.roles = {
            t: _role(s, row, t, incident.code, entry_kinds, entry_role, entries) for t in incident.tensor_ids
        }


def _ids(p: Problem, code: str) -> tuple[int, int]:
    ids = p.refs.get("tensor_ids" if code == "l2-overlap" else "transfer_ids") or [-1, -1]
    return int(ids[0]), int(ids[1])


def _group(s: Schedule, pairs: list[Problem], code: str) -> list[Incident]:
    rows = s.rows_of([p.refs["core"] for p in pairs], [p.refs["workload_id"] for p in pairs])
    kept = np.flatnonzero(rows >= 0)
    ids = np.array([_ids(pairs[k], code) for k in kept.tolist()], dtype=np.int64).reshape(-1, 2)
    moved = _moved(s, code, rows[kept], ids)
    by_row: dict[int, list[tuple[int, int, list[int], Problem, bool, bool]]] = {}
    found = zip(kept.tolist(), rows[kept].tolist(), ids.tolist(), moved.tolist(), strict=True)
    for k, row, (a, b), (moved_a, moved_b) in found:
        p = pairs[k]
        by_row.setdefault(row, []).append((a, b, [int(v) for v in p.refs["range"]], p, moved_a, moved_b))
    incidents: list[Incident] = []
    last_row: dict[int, int] = {}  # id(incident) → the row it was last seen in
    open_by_core: dict[int, dict[int, Incident]] = {}
    for row in sorted(by_row):
        core, wid = int(s.wl_core[row]), int(s.wl_id[row])
        # incidents go on only through consecutive snapshots of their core
        running = {t: i for t, i in open_by_core.get(core, {}).items() if last_row[id(i)] == row - 1}
        touched: set[int] = set()
        for a, b, (lo, hi), problem, moved_a, moved_b in by_row[row]:
            culprit = _culprit(a, b, moved_a, moved_b, running)
            incident = running.get(culprit)
            if incident is None:
                incident = running[culprit] = Incident(code, core, culprit, [culprit], wid, wid, 0, [])
                incidents.append(incident)
            if culprit not in touched:
                incident.snapshots += 1
                incident.last_workload = wid
                last_row[id(incident)] = row
                touched.add(culprit)
            other = b if culprit == a else a
            if other not in incident.tensor_ids:
                incident.tensor_ids.append(other)
            incident.ranges.append([lo, hi])
            incident.pairs += 1
            incident.members.append(problem)
        open_by_core[core] = {t: i for t, i in running.items() if t in touched}
    for incident in incidents:
        incident.ranges = _merged(incident.ranges)
    return incidents


def _moved(s: Schedule, code: str, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """For each pair (rows[k]; ids[k, 0], ids[k, 1]): whether each id is newly placed in that row's snapshot:
    absent from it or from the snapshot before, said to be newly added, or at another address than before.
    One sort of the entries of the snapshots involved, instead of a dict entry per entry."""
    if code == "l2-overlap":
        ptr, column, address, new = s.buf_ptr, s.buf_tensor, s.buf_addr, s.buf_new
    else:  # WL0 entries have no newly_added
        ptr, column, address, new = s.w0_ptr, s.w0_tid, s.w0_addr, None
    asked_rows = np.repeat(rows, 2)
    asked_ids = ids.ravel()
    here = _first_entries(ptr, column, asked_rows, asked_ids)
    before = _first_entries(ptr, column, asked_rows - 1, asked_ids)  # the row before: -1 for row 0
    found = (here >= 0) & (before >= 0)
    moved = ~found
    moved[found] = address[here[found]] != address[before[found]]
    if new is not None:
        moved[here >= 0] |= new[here[here >= 0]] == 1
    return moved.reshape(-1, 2)


def _first_entries(ptr: np.ndarray, column: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The first entry (CSR `ptr` over `column`) holding ids[k] in row rows[k]'s snapshot; -1 where none, or
    where the row is not a row."""
    answer = np.full(rows.size, -1, dtype=np.int64)
    valid = (rows >= 0) & (rows < ptr.size - 1)
    snapshot_rows = distinct(rows[valid])
    counts = ptr[snapshot_rows + 1] - ptr[snapshot_rows]
    starts = np.repeat(ptr[snapshot_rows], counts)
    entries = starts + np.arange(starts.size) - np.repeat(np.cumsum(counts) - counts, counts)
    if entries.size == 0:
        return answer
    rank = np.repeat(np.arange(snapshot_rows.size), counts)  # each entry's row, ranked among the rows involved
    values, value_rank = np.unique(column[entries], return_inverse=True)
    keys = rank * values.size + value_rank.ravel()
    order = np.argsort(keys, kind="stable")  # equal keys keep entry order: the first entry comes first
    sorted_keys = keys[order]
    asked = np.flatnonzero(valid)
    row_rank = np.searchsorted(snapshot_rows, rows[asked])
    at_value = np.minimum(np.searchsorted(values, ids[asked]), values.size - 1)
    known = values[at_value] == ids[asked]
    wanted = row_rank * values.size + at_value
    at = np.minimum(np.searchsorted(sorted_keys, wanted), sorted_keys.size - 1)
    hit = known & (sorted_keys[at] == wanted)
    answer[asked[hit]] = entries[order[at[hit]]]
    return answer


def _culprit(a: int, b: int, moved_a: bool, moved_b: bool, running: dict) -> int:
    """Which of the two is misplaced: one already causing an incident on this core, else the one newly added or
    moved (absent from, or elsewhere in, the snapshot before), else the later id."""
    for t in (a, b):
        if t in running:
            return t
    if moved_a != moved_b:
        return a if moved_a else b
    return max(a, b)


def _merged(ranges: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


class _Entries:
    """Each snapshot's first entry of every id, found once per snapshot (incidents name thousands of ids)."""

    def __init__(self, s: Schedule) -> None:
        self.s = s
        self.found: dict[tuple[str, int], dict[int, int]] = {}

    def first(self, code: str, row: int, t: int) -> int | None:
        """The entry (an index into buf_* for L2, w0_* for WL0) of id `t` in `row`'s snapshot, or None."""
        ids = self.found.get((code, row))
        if ids is None:
            s = self.s
            ptr, column = (s.buf_ptr, s.buf_tensor) if code == "l2-overlap" else (s.w0_ptr, s.w0_tid)
            lo, hi = int(ptr[row]), int(ptr[row + 1])
            ids = self.found[(code, row)] = {}
            for entry, value in enumerate(column[lo:hi].tolist(), start=lo):
                ids.setdefault(value, entry)
        return ids.get(t)


def _role(s: Schedule, row: int, t: int, code: str, entry_kinds: tuple[str, ...],
          entry_role: Callable[[int, int], str] | None, entries: _Entries) -> str:  # fmt: skip
    """What a tensor (or transfer) is in the incident's first snapshot: the view's words, else its kind."""
    if row < 0:
        return ""
    entry = entries.first(code, row, t)
    if code == "l2-overlap":
        if entry is None:
            return ""
        said = entry_role(row, entry) if entry_role is not None else ""
        kind = int(s.buf_type[entry])
        return said or (entry_kinds[kind] if 0 <= kind < len(entry_kinds) else "")
    layer = int(s.w0_layer[entry]) if entry is not None else -1
    return f"weights of {s.layers[layer]}" if layer >= 0 else ""


def incidents_of(document: Document, *, with_roles: bool = True) -> list[Incident]:
    """The incidents of a loaded document (none without a schedule), named in its own words: what `check`, the
    HTML report and the problems panel all list. `with_roles=False` leaves the naming to `name_incident_roles`."""
    if document.schedule is None:
        return []
    words = document.vocabulary
    analysis = getattr(document, "schedule_analysis", None)
    overlaps = sum(1 for p in document.problems if p.code in OVERLAP_CODES)
    kept = analysis.cached.get("incidents") if analysis is not None else None
    if kept is not None and kept[0] == overlaps:  # worked out before, from the same overlaps (the cache keeps it)
        found = kept[1].found()
        if with_roles:
            name_incident_roles(document, found)
        return found
    found = find_incidents(
        document.schedule, document.problems, words.entry_kinds, document.view.entry_role, with_roles=with_roles
    )
    if analysis is not None:
        analysis.cached["incidents"] = (overlaps, KeptIncidents(found))
    return found


class KeptIncidents:
    """The incidents remembered on the analysis, as the derived-data cache keeps them: their fields packed in one
    msgpack string and their member problems in one flat list (the document's own objects, shared through the
    pickle), so a second open that lists no incidents (`info`) builds none of their objects; they are unpacked when
    first asked (`found`). Incidents whose fields msgpack cannot hold are kept as objects."""

    __slots__ = ("_found", "_packed")

    def __init__(self, found: list[Incident] | None, packed: tuple[bytes, list[Problem], list[int]] | None = None):
        self._found = found
        self._packed = packed

    def found(self) -> list[Incident]:
        if self._found is None and self._packed is not None:
            fields, members, counts = self._packed
            found, start = [], 0
            for row, count in zip(msgspec.msgpack.decode(fields), counts, strict=True):
                incident = object.__new__(Incident)  # (its fields set as they were kept, not passed through __init__)
                incident.__dict__.update(zip(_PACKED, row, strict=True))
                incident.members = members[start : start + count]
                found.append(incident)
                start += count
            self._found, self._packed = found, None
        return self._found or []

    def __reduce__(self) -> tuple[Any, tuple]:
        if self._packed is not None:  # read back and never asked: kept as it was read
            return KeptIncidents, (None, self._packed)
        found = self._found or []
        try:
            fields = msgspec.msgpack.encode([[getattr(i, name) for name in _PACKED] for i in found])
        except (TypeError, ValueError, OverflowError):  # (a value msgpack cannot hold: kept as objects)
            return KeptIncidents, (found, None)
        members = [problem for incident in found for problem in incident.members]
        return KeptIncidents, (None, (fields, members, [len(incident.members) for incident in found]))


_PACKED = [f.name for f in fields(Incident) if f.name != "members"]


def name_incident_roles(document: Document, incidents: list[Incident]) -> None:
    """Fill the incidents' roles in the document's own words (what `incidents_of` does unless told not to): the
    TUI shows a big file's incidents first and names them after, as the workloads they name are read again.
    Incidents named already (kept with the document from an earlier open) are not named again."""
    unnamed = [incident for incident in incidents if not incident.roles]
    if document.schedule is not None and unnamed:
        name_roles(document.schedule, unnamed, document.vocabulary.entry_kinds, document.view.entry_role)
        analysis = getattr(document, "schedule_analysis", None)
        if analysis is not None:  # worked out since: a cache entry written before is written again with them
            analysis.cached["incident roles"] = True
