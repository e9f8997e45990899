"""A schedule with one misplaced tensor moved: the bytes of the input file with only that tensor's `address`
fields changed, for the snapshots of its residency (`rooms.residency`), so that an engineer can hand the
fixed schedule to the next tool and `check` proves the move (the incident gone, none added).

The input is read, never written: the copy is assembled from the file's bytes (each workload's span is known
from the load, `FileSpans.item_span`) with the few address values spliced in.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import numpy as np

from explorer.errors import LoadError
from explorer.file_spans import FileSpans, span_of
from explorer.models.schedule import Schedule
from explorer.schedule.buffers import Placement
from explorer.schedule.incidents import Incident
from explorer.schedule.rooms import ALIGNMENT, Residency, residency, room_for

_object = msgspec.json.Decoder(dict[str, msgspec.Raw])
_array = msgspec.json.Decoder(list[msgspec.Raw])


class RelocateRefused(LoadError):
    """The move asked for cannot be made: the reason in one line, nothing written."""


@dataclass(frozen=True)
class Move:
    stay: Residency
    address: int
    workloads: tuple[int, int]  # the residency as workload ids [first, last]


def plan_move(
    s: Schedule, placement: Placement, incidents: list[Incident], core: int, tensor: int, to: str,
    workload: int | None = None, *, force: bool = False,
) -> Move:  # fmt: skip
    """Which entries move where. The residency is the one around `workload`, else the tensor's first L2
    incident on the core, else its first snapshot there; `to` is an address (decimal or 0x…) or `suggested`.
    An address must lie inside a region of the core in every snapshot of the residency; one that is not
    8-aligned or that touches another entry's bytes there is refused unless `force`."""
    path = getattr(s.core_raw, "path", "")
    rows = s.core_rows(core)
    if len(rows) == 0:
        known = ", ".join(map(str, s.core_ids.tolist()[:16]))
        raise RelocateRefused(path, "", f"core {core} is not in the schedule (cores: {known})")
    if workload is None:
        workload = next((i.first_workload for i in incidents
                         if i.code == "l2-overlap" and i.core == core and i.introduced_by == tensor), None)  # fmt: skip
    if workload is None:
        lo, hi = int(s.buf_ptr[rows.start]), int(s.buf_ptr[rows.stop])
        holding = np.flatnonzero(s.buf_tensor[lo:hi] == tensor)
        if holding.size == 0:
            raise RelocateRefused(path, "", f"tensor {tensor} is in no snapshot of core {core}")
        workload = int(s.wl_id[int(np.searchsorted(s.buf_ptr, lo + int(holding[0]), side="right")) - 1])
    row = s.row_of(core, workload)
    stay = residency(s, placement, core, tensor, row) if row is not None else None
    if stay is None:
        raise RelocateRefused(path, "", f"tensor {tensor} is not in core {core}'s snapshot of workload {workload}")
    if to == "suggested":
        if stay.home_lo < 0:
            raise RelocateRefused(path, "", f"tensor {tensor} lies outside every region of core {core}: no region to "
                                            "look for room in (give --to an address)")  # fmt: skip
        room = room_for(s, placement, stay)
        if room.address is None:
            raise RelocateRefused(path, "", f"tensor {tensor} ({stay.size:,} bytes) fits nowhere in region "
                                            f"{stay.home_lo:#x}-{stay.home_hi:#x} for its residency: "
                                            f"{room.shortfall:,} bytes short")  # fmt: skip
        address = room.address
    else:
        try:
            address = int(to, 0)
        except ValueError:
            raise RelocateRefused(
                path, "", f"--to {to!r}: expected an address (like 744 or 0x2e8) or 'suggested'"
            ) from None
        _refuse_outside_regions(s, stay, address, path)
        if not force:
            _refuse_unsafe(s, placement, stay, address, path)
    return Move(stay, address, (int(s.wl_id[stay.first_row]), int(s.wl_id[stay.last_row])))


def _row_regions(s: Schedule, row: int) -> list[tuple[int, int]]:
    """The regions of one snapshot: its ring regions, else the whole L2 (unbounded when its size is unknown)."""
    lo, hi = (int(s.ring_ptr[row]), int(s.ring_ptr[row + 1])) if s.ring_ptr.size else (0, 0)
    if hi > lo:
        return list(zip(s.ring_lo[lo:hi].tolist(), s.ring_hi[lo:hi].tolist(), strict=True))
    return [(0, int(s.buffersize) if s.buffersize > 0 else 1 << 62)]


def _refuse_outside_regions(s: Schedule, stay: Residency, address: int, path: str) -> None:
    """The tensor must lie, unwrapped, inside one region of every snapshot of its residency."""
    end = address + stay.size
    for row in range(stay.first_row, stay.last_row + 1):
        regions = _row_regions(s, row)
        if not any(lo <= address and end <= hi for lo, hi in regions):
            listed = ", ".join(f"{lo:#x}-{hi:#x}" for lo, hi in regions[:6])
            raise RelocateRefused(path, "", f"--to {address:#x}: tensor {stay.tensor} ({stay.size:,} bytes) must lie "
                                            f"inside a region of core {stay.core} without wrapping (workload "
                                            f"{int(s.wl_id[row])}: {listed})")  # fmt: skip


def _refuse_unsafe(s: Schedule, placement: Placement, stay: Residency, address: int, path: str) -> None:
    """Refuse an address that is not 8-aligned or that touches another entry's bytes in a snapshot of the
    residency, saying which (the first by workload, then address)."""
    if address % ALIGNMENT:
        raise RelocateRefused(path, "", f"--to {address:#x} is not {ALIGNMENT}-aligned (--force to move it anyway)")
    end = address + stay.size
    lo_entry, hi_entry = int(s.buf_ptr[stay.first_row]), int(s.buf_ptr[stay.last_row + 1])
    mine = (placement.entry >= lo_entry) & (placement.entry < hi_entry)
    mine &= ~np.isin(placement.entry, stay.entries)
    hits = np.flatnonzero(mine & (placement.lo < end) & (placement.hi > address) & (placement.hi > placement.lo))
    if hits.size == 0:
        return
    first = hits[np.lexsort((placement.lo[hits], placement.row[hits]))[0]]
    entry, row = int(placement.entry[first]), int(placement.row[first])
    lo, hi = max(int(placement.lo[first]), address), min(int(placement.hi[first]), end)
    raise RelocateRefused(path, "", f"--to {address:#x}: tensor {stay.tensor} would collide with tensor "
                                    f"{int(s.buf_tensor[entry])} at workload {int(s.wl_id[row])} (bytes {lo:#x}-"
                                    f"{hi:#x}; {hits.size} collisions in workloads {int(s.wl_id[stay.first_row])}–"
                                    f"{int(s.wl_id[stay.last_row])}); --force to move it anyway")  # fmt: skip


def relocated_bytes(s: Schedule, move: Move) -> bytes:
    """The input file's bytes with the residency's entries at the new address; nothing else changed."""
    spans = s.core_raw
    if not isinstance(spans, FileSpans):
        raise RelocateRefused("", "", "this schedule's addresses are not fields of its file: it cannot be relocated")
    whole = spans.read(0, spans.stamp.size)  # read once: the workloads edited are found in these bytes
    if len(whole) != spans.stamp.size:
        raise RelocateRefused(spans.path, "", "the file is shorter than when it was opened: reopen it")
    edits: list[tuple[int, int, bytes]] = []
    row_of = np.searchsorted(s.buf_ptr, move.stay.entries, side="right") - 1
    for entry, row in zip(move.stay.entries.tolist(), row_of.tolist(), strict=True):
        offset, length = spans.item_span(int(s.wl_core[row]), int(s.wl_pos[row]))
        start, size = _address_span(bytes(whole[offset : offset + length]), int(s.buf_pos[entry]))
        edits.append((offset + start, offset + start + size, str(move.address).encode()))
    pieces: list[bytes | bytearray] = []
    at = 0
    for lo, hi, value in sorted(edits):
        pieces += [whole[at:lo], value]
        at = hi
    pieces.append(whole[at:])
    return b"".join(pieces)


def _address_span(workload: bytes, position: int) -> tuple[int, int]:
    """Where `buffer[position].address`'s value lies in one workload's JSON: (offset, length)."""
    fields = _object.decode(workload)
    buffer = fields["buffer"]
    entries = _array.decode(buffer)
    entry = entries[position]
    address = _object.decode(entry)["address"]
    base = span_of(buffer, workload)[0] + span_of(entry, buffer)[0]
    start, length = span_of(address, entry)
    return base + start, length


def summary(move: Move, tensor: int, core: int) -> str:
    first, last = move.workloads
    return (f"core {core}: tensor {tensor} moved from {move.stay.address:#x} to {move.address:#x} for workloads "
            f"{first}–{last} ({move.stay.entries.size} entries)")  # fmt: skip
