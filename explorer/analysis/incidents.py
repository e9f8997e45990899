"""Overlaps explained as incidents: one per misplaced tensor on one core, over the run of consecutive snapshots
that its collisions last, with every tensor it collides with.

The per-pair problems (`l2-overlap`, `wl0-overlap`: one per pair and snapshot) say what collides; an incident
says who caused it: the tensor that was newly added or moved (or, in WL0, first appeared) when the collision
began. Later snapshots where the same tensor still collides extend the incident instead of adding rows, so one
misplaced tensor that lands on four live tensors for three workloads is one incident, not twelve problems.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explorer.errors import Problem
from explorer.schedule import Schedule

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

    @property
    def bytes(self) -> int:
        return sum(hi - lo for lo, hi in self.ranges)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code, "core": self.core, "introduced_by": self.introduced_by,
            "tensor_ids": self.tensor_ids, "first_workload": self.first_workload,
            "last_workload": self.last_workload, "snapshots": self.snapshots, "bytes": self.bytes,
            "ranges": self.ranges, "roles": {str(k): v for k, v in self.roles.items()}, "pairs": self.pairs,
        }  # fmt: skip

    def line(self) -> str:
        others = [t for t in self.tensor_ids if t != self.introduced_by]
        what = "tensor" if self.code == "l2-overlap" else "transfer"
        span = (f"workload {self.first_workload}" if self.first_workload == self.last_workload
                else f"workloads {self.first_workload}–{self.last_workload}")  # fmt: skip
        role = self.roles.get(self.introduced_by, "")
        if not others:  # two entries of the same transfer: a duplicate lying on itself
            return (f"core {self.core}: {what} {self.introduced_by}{f' ({role})' if role else ''} is placed twice and "
                    f"overlaps itself, {self.bytes:,} bytes, seen in {self.snapshots} snapshot"
                    f"{'s' if self.snapshots != 1 else ''} ({span})")  # fmt: skip
        return (f"core {self.core}: {what} {self.introduced_by}{f' ({role})' if role else ''} collides with "
                f"{len(others)} {what}{'s' if len(others) != 1 else ''} ({', '.join(map(str, others[:6]))}"
                f"{', …' if len(others) > 6 else ''}), {self.bytes:,} bytes, seen in {self.snapshots} "
                f"snapshot{'s' if self.snapshots != 1 else ''} ({span})")  # fmt: skip


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
    rows = s.rows_of([p.refs["core"] for p in pairs], [p.refs["workload_id"] for p in pairs]).tolist()
    by_row: dict[int, list[tuple[int, int, list[int], Problem]]] = {}
    for p, row in zip(pairs, rows, strict=True):
        if row >= 0:
            a, b = _ids(p, code)
            by_row.setdefault(row, []).append((a, b, [int(v) for v in p.refs["range"]], p))
    placed = _placements(s, by_row, code)
    incidents: list[Incident] = []
    last_row: dict[int, int] = {}  # id(incident) → the row it was last seen in
    open_by_core: dict[int, dict[int, Incident]] = {}
    for row in sorted(by_row):
        core, wid = int(s.wl_core[row]), int(s.wl_id[row])
        # incidents go on only through consecutive snapshots of their core
        running = {t: i for t, i in open_by_core.get(core, {}).items() if last_row[id(i)] == row - 1}
        touched: set[int] = set()
        for a, b, (lo, hi), problem in by_row[row]:
            culprit = _culprit(a, b, row, running, placed)
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


def _placements(s: Schedule, by_row: dict, code: str) -> dict[tuple[int, int], tuple[int, bool]]:
    """(row, id) → (address, newly added) for the ids involved, in their snapshots and the ones before."""
    wanted = {(row, t) for row, items in by_row.items() for a, b, *_ in items for t in (a, b)}
    rows = {row for row, _ in wanted} | {row - 1 for row, _ in wanted if row > 0}
    found: dict[tuple[int, int], tuple[int, bool]] = {}
    for row in rows:
        if code == "l2-overlap":
            lo, hi = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1])
            ids, addr, new = s.buf_tensor[lo:hi].tolist(), s.buf_addr[lo:hi].tolist(), s.buf_new[lo:hi].tolist()
        else:
            lo, hi = int(s.w0_ptr[row]), int(s.w0_ptr[row + 1])
            ids, addr, new = s.w0_tid[lo:hi].tolist(), s.w0_addr[lo:hi].tolist(), [-1] * (hi - lo)
        for t, a, n in zip(ids, addr, new, strict=True):
            found.setdefault((row, int(t)), (int(a), n == 1))
    return found


def _culprit(a: int, b: int, row: int, running: dict, placed: dict) -> int:
    """Which of the two is misplaced: one already causing an incident on this core, else the one newly added or
    moved (absent from, or elsewhere in, the snapshot before), else the later id."""
    for t in (a, b):
        if t in running:
            return t

    def changed(t: int) -> bool:
        here = placed.get((row, t))
        before = placed.get((row - 1, t))
        return here is None or before is None or here[1] or here[0] != before[0]

    ca, cb = changed(a), changed(b)
    if ca != cb:
        return a if ca else b
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


def _role(s: Schedule, row: int, t: int, code: str, entry_kinds: tuple[str, ...], entry_role, entries: _Entries) -> str:
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


def incidents_of(document: Any, *, with_roles: bool = True) -> list[Incident]:
    """The incidents of a loaded document (none without a schedule), named in its own words: what `check`, the
    HTML report and the problems panel all list."""
    if document.schedule is None:
        return []
    words = document.vocabulary
    return find_incidents(
        document.schedule, document.problems, words.entry_kinds, document.view.entry_role, with_roles=with_roles
    )
