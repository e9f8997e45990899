"""The refs a schedule's items go by, shared by the formats that build schedules and the views that show them:
`("workload", row)` and the workload's parts (its maps, its weight, its buffers, its L2 and WL0 entries), each
naming its row first; an entry's ref names its entry next, `("buffer-entry", row, entry)`."""

from __future__ import annotations

from explorer.models.ref import Ref

ENTRY_MEMORY = {"buffer-entry": "l2", "wl0-entry": "wl0"}  # an entry's ref kind → the memory the entry is in
WORKLOAD_PART_KINDS = ("workload", "ifmap", "ofmap", "weight", "buffer", "wl0", *ENTRY_MEMORY)


def workload_row(ref: Ref) -> int | None:
    """The schedule row a ref is of (a workload's or one of its parts'), None for any other ref."""
    if isinstance(ref, tuple) and len(ref) >= 2 and ref[0] in WORKLOAD_PART_KINDS and isinstance(ref[1], int):
        return ref[1]
    return None


def entry_of(ref: Ref) -> tuple[int, int, str] | None:
    """(row, entry, memory) of an L2 or WL0 entry's ref, None for any other ref."""
    if isinstance(ref, tuple) and len(ref) == 3 and ref[0] in ENTRY_MEMORY:
        return ref[1], ref[2], ENTRY_MEMORY[ref[0]]
    return None


def entry_ref(row: int, entry: int, memory: str = "l2") -> tuple[str, int, int]:
    kind = next(kind for kind, where in ENTRY_MEMORY.items() if where == memory)
    return (kind, row, entry)
