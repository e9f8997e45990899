"""Overlaps confirmed or cleared on what ran (issue #75): an overlap incident says whether an instruction of the
joined assembly or trace wrote into the overlapping bytes during the incident's workloads (while both tensors
were live there), or that none did.

What an instruction writes is its destination's range where its size is settled (`InstructionTable.
l2_destination_size`, `wl0_destination_size`: loads, convolutions, vector ops), else its first byte alone:
"touched" is certain, "not touched" says that no range, and no first byte where the size is not known, meets the
overlap; the verdict says which it was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.document import Document, InstructionTable
from explorer.formatting import plural
from explorer.schedule.incidents import Incident

MAX_NAMED = 20  # instructions named per incident; the rest are counted


@dataclass(frozen=True)
class Writes:
    """The joined instructions that write a memory: their schedule rows and destination bytes."""

    companion: str  # "asm" or "trace": the file they are read from
    table: InstructionTable
    rows: np.ndarray
    l2: np.ndarray
    wl0: np.ndarray
    l2_size: np.ndarray  # bytes written from `l2`, -1 where not known
    wl0_size: np.ndarray  # WL0 units written from `wl0`, -1 where not known


def joined_writes(document: Document) -> Writes | None:
    """The trace's instructions (measured times), else the assembly's; None when neither is joined or either
    names no destination."""
    from explorer.companions import joined_instructions, rows_of

    tables = joined_instructions(document)
    for kind in ("trace", "asm"):
        table = tables.get(kind)
        if table is None or table.l2_destination is None:
            continue
        none = np.full(len(table.name), -1, dtype=np.int64)
        wl0 = table.wl0_destination if table.wl0_destination is not None else none
        size = table.l2_destination_size if table.l2_destination_size is not None else none
        wl0_size = table.wl0_destination_size if table.wl0_destination_size is not None else none
        return Writes(kind, table, rows_of(document, table), table.l2_destination, wl0, size, wl0_size)
    return None


def confirm_incidents(document: Document, incidents: list[Incident]) -> None:
    """Set each incident's `touched` (see `touched_by`) when an assembly or trace is joined."""
    writes = joined_writes(document) if incidents else None
    if writes is None:
        return
    for incident in incidents:
        incident.touched = touched_by(document, incident, writes)


def touched_by(document: Document, incident: Incident, writes: Writes) -> dict[str, Any]:
    """`{"instructions": [...], "more": n, "checked": m, "basis": ...}`: the instructions of the incident's
    workloads whose destination lies in its overlapping ranges (line, name, workload, address, and the measured
    start and end from a trace), and how many of those workloads' instructions name a destination there."""
    s = document.scheduled()
    first, last = s.row_of(incident.core, incident.first_workload), s.row_of(incident.core, incident.last_workload)
    in_l2 = incident.code == "l2-overlap"
    destination = writes.l2 if in_l2 else writes.wl0
    sizes = writes.l2_size if in_l2 else writes.wl0_size
    span = np.maximum(sizes, 1)
    if first is None or last is None:
        in_span = np.zeros(destination.size, dtype=bool)
    else:
        in_span = (writes.rows >= min(first, last)) & (writes.rows <= max(first, last)) & (destination >= 0)
    inside = np.zeros(destination.size, dtype=bool)
    for lo, hi in incident.ranges:
        inside |= (destination < hi) & (destination + span > lo)
    sized = int((in_span & (sizes >= 0)).sum())
    checked = int(in_span.sum())
    basis = "byte ranges" if sized and sized == checked else "byte ranges where known, else first byte" if sized \
        else "first byte"  # fmt: skip
    hits = np.flatnonzero(in_span & inside)
    table = writes.table
    named = []
    for k in hits[:MAX_NAMED].tolist():
        found: dict[str, Any] = {"line": int(table.line[k]), "name": table.name[k],
                                 "workload": int(table.workload[k]), "address": int(destination[k])}  # fmt: skip
        if table.start is not None and table.end is not None:
            found["start"], found["end"] = float(table.start[k]), float(table.end[k])
        named.append(found)
    return {"companion": writes.companion, "instructions": named, "more": max(int(hits.size) - MAX_NAMED, 0),
            "checked": checked, "basis": basis}  # fmt: skip


def touched_words(touched: dict[str, Any] | None) -> str:
    """The incident's verdict in words, for `check` and the details ("" when nothing is joined)."""
    if touched is None:
        return ""
    named, more, checked = touched["instructions"], touched["more"], touched["checked"]
    if named:
        listed = ", ".join(f"{t['name']} (line {t['line']}{_when(t)}) at {t['address']:#x}" for t in named[:5])
        rest = len(named) - 5 + more
        return (f"touched by {listed}{f' and {rest} more' if rest > 0 else ''} "
                f"(the {touched['companion']})")  # fmt: skip
    if not checked:
        return f"not known: no instruction of these workloads in the {touched['companion']} names a destination"
    return (f"not touched: no instruction of these workloads in the {touched['companion']} writes in the "
            f"overlapping bytes ({plural(checked, 'instruction')} checked, {BASIS_WORDS[touched['basis']]})")


BASIS_WORDS = {  # how the instructions' writes were compared with the overlap, for the verdict
    "first byte": "by the first byte each writes: their sizes are not settled",
    "byte ranges": "by the bytes each writes",
    "byte ranges where known, else first byte": "by the bytes each writes where its size is settled, else its first",
}


def _when(touched: dict[str, Any]) -> str:
    return f", cycles {touched['start']:,.0f}–{touched['end']:,.0f}" if "start" in touched else ""
