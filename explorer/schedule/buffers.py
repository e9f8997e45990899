"""L2 and WL0/WL1 buffer analyses: where each entry sits (ring regions wrap), overlaps, range and capacity.

Ring regions are `[start, end)` pairs from ``ring_buffer_info``; an entry that runs past its region's end
continues at the region's start. A workload without regions uses `[0, buffersize)` as one plain region.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.arrays import distinct
from explorer.errors import Problem
from explorer.models.schedule import Schedule, workload_label, workload_path
from explorer.schedule.dependencies import rows_of_children
from explorer.schedule.overlap import count_overlapping_pairs, overlapping_pairs

MAX_LISTED = 10_000


@dataclass(frozen=True)
class Placement:
    """Each L2 entry's byte pieces: one piece, or two when it wraps; `entry` indexes the buf_* columns."""

    entry: np.ndarray
    row: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    region_lo: np.ndarray  # per entry: the region it was placed in (-1 when none)
    region_hi: np.ndarray
    out_of_range: np.ndarray  # per entry
    too_big: np.ndarray  # per entry: larger than its region


def place_l2_entries(s: Schedule) -> Placement:
    known = _known_l2(s)
    if known is None:
        region_lo, region_hi = entry_regions(s.buf_ptr, s.buf_addr, s.ring_ptr, s.ring_lo, s.ring_hi, s.buffersize)
    else:  # the decode workers found each entry's region, core by core
        region_lo, region_hi = known.region_lo, known.region_hi
    return placed_pieces(s.buf_ptr, s.buf_addr, s.buf_size, s.ring_ptr, s.buffersize, region_lo, region_hi)


# The columns the L2 answers are worked out from (`Schedule.keep_known`)
L2_COLUMNS = ("buf_ptr", "buf_addr", "buf_size", "buf_tensor", "ring_ptr", "ring_lo", "ring_hi")


def _known_l2(s: Schedule) -> CoreL2 | None:
    """What the loader's workers found of the L2 snapshots, if it still holds for these columns and buffer size."""
    known = s.known("l2_known")
    return known if isinstance(known, CoreL2) and known.buffersize == s.buffersize else None


def entry_regions(
    buf_ptr: np.ndarray,
    address: np.ndarray,
    ring_ptr: np.ndarray,
    ring_lo: np.ndarray,
    ring_hi: np.ndarray,
    buffersize: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's region [lo, hi): the ring region of its workload that holds its address, [0, buffersize) for
    a workload without regions; -1 for both when none holds it."""
    n = address.size
    row = rows_of_children(buf_ptr)
    region_lo = np.full(n, -1, dtype=np.int64)
    region_hi = np.full(n, -1, dtype=np.int64)
    regions_per_row = np.diff(ring_ptr)
    no_regions = regions_per_row[row] == 0
    region_lo[no_regions] = 0
    region_hi[no_regions] = buffersize if buffersize > 0 else np.iinfo(np.int64).max // 4
    for k in range(int(regions_per_row.max()) if regions_per_row.size else 0):
        has = (regions_per_row[row] > k) & (region_lo < 0)
        index = ring_ptr[row[has]] + k
        lo_k, hi_k = ring_lo[index], ring_hi[index]
        inside = (address[has] >= lo_k) & (address[has] < hi_k)
        target = np.flatnonzero(has)[inside]
        region_lo[target] = lo_k[inside]
        region_hi[target] = hi_k[inside]
    return region_lo, region_hi


def placed_pieces(
    buf_ptr: np.ndarray,
    address: np.ndarray,
    size: np.ndarray,
    ring_ptr: np.ndarray,
    buffersize: int,
    region_lo: np.ndarray,
    region_hi: np.ndarray,
) -> Placement:
    """The entries' byte pieces in their regions (`entry_regions`), and which are out of range or too big."""
    n = address.size
    row = rows_of_children(buf_ptr)
    no_regions = np.diff(ring_ptr)[row] == 0
    placed = region_lo >= 0
    end = address + size
    out_of_range = ~placed | (address < 0)
    if buffersize > 0:
        out_of_range |= placed & ((region_hi > buffersize) | (region_lo < 0))
    too_big = placed & (size > region_hi - region_lo)
    # Only ring regions wrap; without them an entry past the end of L2 is simply out of range.
    out_of_range |= no_regions & (end > region_hi)
    wraps = placed & ~no_regions & (end > region_hi) & ~too_big
    plain = ~wraps
    first_hi = np.where(wraps, region_hi, end)
    second = np.flatnonzero(wraps)
    entries = np.concatenate([np.arange(n), second])
    return Placement(
        entry=entries,
        row=row[entries],
        lo=np.concatenate([address, region_lo[second]]),
        hi=np.concatenate([np.where(plain, end, first_hi), region_lo[second] + (end[second] - region_hi[second])]),
        region_lo=region_lo,
        region_hi=region_hi,
        out_of_range=out_of_range,
        too_big=too_big,
    )


@dataclass(frozen=True)
class L2Overlaps:
    """Pairs of L2 tensors that share bytes in one snapshot, in the order the sweep meets them (by row, then
    address): `found` holds a row per pair (workload row, entry a, entry b, 1 when either piece is the part that
    wraps, lo, hi)."""

    found: np.ndarray
    truncated: bool  # MAX_LISTED pairs were found: there may be more

    @property
    def rows(self) -> list[int]:
        """The workload rows whose snapshots overlap, sorted and distinct."""
        return distinct(self.found[:, 0]).tolist()


def find_l2_overlaps(placement: Placement, buf_tensor: np.ndarray) -> L2Overlaps:
    """Every pair of different tensors sharing bytes within a snapshot (pieces out of range are not placed)."""
    n = buf_tensor.size
    pieces = np.flatnonzero(~placement.out_of_range[placement.entry])
    pairs, truncated = overlapping_pairs(
        placement.row[pieces],
        placement.lo[pieces],
        placement.hi[pieces],
        buf_tensor[placement.entry[pieces]],
        limit=MAX_LISTED,
    )
    pairs_found = np.array(pairs, dtype=np.int64).reshape(-1, 5)  # group, a, b, lo, hi
    piece_a, piece_b = pieces[pairs_found[:, 1]], pieces[pairs_found[:, 2]]
    wrapped = (piece_a >= n) | (piece_b >= n)  # a piece past the entries: the wrapped part
    found = np.column_stack(
        [pairs_found[:, 0], placement.entry[piece_a], placement.entry[piece_b], wrapped, pairs_found[:, 3:]]
    ).astype(np.int64)
    return L2Overlaps(found, truncated)


@dataclass(frozen=True)
class CoreL2:
    """What a decode worker works out about one core's L2 snapshots, for the buffer size it was told, so that a
    big file's analysis only joins the cores' answers: each entry's region and the overlapping pairs, rows and
    entries numbered within the core."""

    buffersize: int
    region_lo: np.ndarray
    region_hi: np.ndarray
    overlaps: L2Overlaps


def core_l2(
    buf_ptr: np.ndarray,
    address: np.ndarray,
    size: np.ndarray,
    tensor: np.ndarray,
    ring_ptr: np.ndarray,
    ring_lo: np.ndarray,
    ring_hi: np.ndarray,
    buffersize: int,
) -> CoreL2:
    """`CoreL2` for one core's columns (the same steps `place_l2_entries` and `l2_problems` take)."""
    region_lo, region_hi = entry_regions(buf_ptr, address, ring_ptr, ring_lo, ring_hi, buffersize)
    placement = placed_pieces(buf_ptr, address, size, ring_ptr, buffersize, region_lo, region_hi)
    return CoreL2(buffersize, region_lo, region_hi, find_l2_overlaps(placement, tensor))


def joined_l2(cores: list[CoreL2], entry_starts: list[int], row_starts: list[int]) -> CoreL2 | None:
    """The cores' answers as one for the whole schedule (cores in row order, each starting at those entry and
    row numbers); None when they were worked out for different buffer sizes. The pairs found are those a sweep
    over the whole schedule finds: sorted by row, rows grouped by core, each core's list a prefix of its pairs."""
    if not cores or len({core.buffersize for core in cores}) > 1:
        return None
    found = []
    for core, entry_start, row_start in zip(cores, entry_starts, row_starts, strict=True):
        shifted = core.overlaps.found.copy()
        shifted[:, 0] += row_start
        shifted[:, 1:3] += entry_start
        found.append(shifted)
    pairs = np.concatenate(found)
    truncated = pairs.shape[0] >= MAX_LISTED or any(core.overlaps.truncated for core in cores)
    return CoreL2(
        cores[0].buffersize,
        np.concatenate([core.region_lo for core in cores]),
        np.concatenate([core.region_hi for core in cores]),
        L2Overlaps(pairs[:MAX_LISTED], truncated),
    )


def l2_bytes_per_workload(s: Schedule) -> np.ndarray:
    """Sum of entry sizes of each workload's snapshot (bytes resident before it starts)."""
    row = rows_of_children(s.buf_ptr)
    return np.bincount(row, weights=s.buf_size, minlength=s.n_workloads).astype(np.int64)


def wl0_bytes_per_workload(s: Schedule) -> np.ndarray:
    """Sum of the side memory's (WL0/WL1) entry sizes before each workload."""
    return np.bincount(rows_of_children(s.w0_ptr), weights=s.w0_size, minlength=s.n_workloads).astype(np.int64)


def moved_pieces(
    s: Schedule, entry: np.ndarray, lo: np.ndarray, hi: np.ndarray, second: np.ndarray, entries: np.ndarray,
    address: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """L2 pieces (entry, lo, hi, whether it is a wrapped second piece) with `entries` at `address` in one piece
    each: a relocation drawn before it is made (a suggestion never wraps)."""
    hit = np.isin(entry, entries)
    keep = ~hit | ~second
    entry, lo, hi, second, hit = entry[keep], lo[keep].copy(), hi[keep].copy(), second[keep], hit[keep]
    lo[hit] = address
    hi[hit] = address + s.buf_size[entry[hit]]
    return entry, lo, hi, second


def l2_problems(
    s: Schedule, placement: Placement | None = None, overlaps_found: Callable[[list[int]], None] | None = None
) -> list[Problem]:
    """`overlaps_found` hears the rows whose snapshots have overlaps (sorted, distinct) once they are found,
    before the problems are written."""
    placement = placement or place_l2_entries(s)
    problems: list[Problem] = []
    row_of_entry = rows_of_children(s.buf_ptr)

    def refs(row: int) -> dict:
        return {"core": int(s.wl_core[row]), "workload_id": int(s.wl_id[row])}

    def entry_path(e: int) -> str:
        return f"{s.wl_path(int(row_of_entry[e]))}.buffer[{int(s.buf_pos[e])}]"

    bad = np.flatnonzero(placement.out_of_range)
    for e in bad[:MAX_LISTED].tolist():
        row = int(row_of_entry[e])
        lo, hi = int(s.buf_addr[e]), int(s.buf_addr[e] + s.buf_size[e])
        problems.append(
            Problem(
                "error",
                "l2-out-of-range",
                f"{s.wl_label(row)}: tensor {int(s.buf_tensor[e])} at {lo:#x}-{hi:#x} is outside "
                f"{'every ring region' if placement.region_lo[e] < 0 else 'the L2 buffer'} "
                f"(buffersize {s.buffersize:#x})",
                entry_path(e) + ".address",
                {**refs(row), "tensor_ids": [int(s.buf_tensor[e])]},
            )
        )
    for e in np.flatnonzero(placement.too_big)[:MAX_LISTED].tolist():
        row = int(row_of_entry[e])
        problems.append(
            Problem(
                "error",
                "l2-over-capacity",
                f"{s.wl_label(row)}: tensor {int(s.buf_tensor[e])} ({int(s.buf_size[e])} bytes) is larger than its "
                f"ring region {int(placement.region_lo[e]):#x}-{int(placement.region_hi[e]):#x}",
                entry_path(e) + ".size",
                {**refs(row), "tensor_ids": [int(s.buf_tensor[e])]},
            )
        )
    if s.buffersize > 0:
        used = l2_bytes_per_workload(s)
        for row in np.flatnonzero(used > s.buffersize)[:MAX_LISTED].tolist():
            problems.append(
                Problem(
                    "error",
                    "l2-over-capacity",
                    f"{s.wl_label(row)}: the snapshot holds {int(used[row])} bytes, more than the "
                    f"{s.buffersize} bytes of L2",
                    s.wl_path(row) + ".buffer",
                    refs(row),
                )
            )

    problems += _entry_problems(s, row_of_entry, refs, entry_path)
    known = _known_l2(s)
    overlaps = known.overlaps if known is not None else find_l2_overlaps(placement, s.buf_tensor)
    if overlaps_found is not None and overlaps.found.size:
        overlaps_found(overlaps.rows)
    problems += _overlap_problems(s, overlaps.found, row_of_entry)
    if overlaps.truncated:
        pieces = np.flatnonzero(~placement.out_of_range[placement.entry])
        total = count_overlapping_pairs(placement.row[pieces], placement.lo[pieces], placement.hi[pieces],
                                        s.buf_tensor[placement.entry[pieces]])  # fmt: skip
        if total > len(overlaps.found):  # (a limit met exactly leaves nothing unlisted)
            problems.append(Problem("info", "l2-overlap-truncated", f"{total:,} L2 overlaps in all; the first "
                                    f"{len(overlaps.found):,} are listed"))  # fmt: skip
    return problems


def _overlap_problems(s: Schedule, found: np.ndarray, row_of_entry: np.ndarray) -> list[Problem]:
    """One `l2-overlap` per pair of tensors and snapshot (a wrapped tensor overlapping in both halves: one).
    What each message names is looked up for all pairs at once: one numpy lookup per pair and field cost a
    third of the checks' time on a file with 9,000 overlaps."""
    if not found.size:
        return []
    row, entry_a, entry_b = found[:, 0], found[:, 1], found[:, 2]
    tensor_a, tensor_b = s.buf_tensor[entry_a], s.buf_tensor[entry_b]
    later = np.maximum(entry_a, entry_b)
    path_row = row_of_entry[later]
    columns = (
        row, np.minimum(tensor_a, tensor_b), np.maximum(tensor_a, tensor_b), found[:, 4], found[:, 5],
        found[:, 3].astype(bool), s.wl_core[row], s.wl_id[row], s.wl_core[path_row], s.wl_pos[path_row],
        s.buf_pos[later],
    )  # fmt: skip
    problems: list[Problem] = []
    seen: set[tuple[int, int, int]] = set()
    for row_, ta, tb, lo, hi, wrapped, core, wid, path_core, path_pos, entry_pos in zip(
        *(column.tolist() for column in columns), strict=True
    ):
        if (row_, ta, tb) in seen:  # a wrapped tensor overlapping in both halves: one problem
            continue
        seen.add((row_, ta, tb))
        where = " (in the part that wraps past its ring region's end)" if wrapped else ""
        problems.append(
            Problem(
                "error",
                "l2-overlap",
                f"{workload_label(core, wid)}: tensors {ta} and {tb} overlap at bytes {lo:#x}-{hi:#x}{where}",
                f"{workload_path(path_core, path_pos)}.buffer[{entry_pos}]",
                {"core": core, "workload_id": wid, "tensor_ids": [ta, tb], "range": [lo, hi]},
            )
        )
    return problems


def _entry_problems(s: Schedule, row_of_entry: np.ndarray, refs: Callable[[int], dict],
                    entry_path: Callable[[int], str]) -> list[Problem]:  # fmt: skip
    """Entries that cannot be right whatever else holds: a tensor twice in one snapshot (at two addresses, or
    the same one), and tensors of zero bytes."""
    problems: list[Problem] = []
    n = s.buf_tensor.size
    if n:
        key = row_of_entry * (int(s.buf_tensor.max()) + 1 - min(int(s.buf_tensor.min()), 0)) + s.buf_tensor
        order = np.argsort(key, kind="stable")
        repeated = np.flatnonzero(key[order][1:] == key[order][:-1])
        for k in repeated[:MAX_LISTED].tolist():
            first, second = int(order[k]), int(order[k + 1])
            row = int(row_of_entry[second])
            tensor = int(s.buf_tensor[second])
            problems.append(Problem(
                "error", "l2-duplicate-tensor",
                f"{s.wl_label(row)}: tensor {tensor} is in the snapshot twice, at {int(s.buf_addr[first]):#x} "
                f"({int(s.buf_size[first])} bytes) and {int(s.buf_addr[second]):#x} ({int(s.buf_size[second])} bytes)",
                entry_path(second), {**refs(row), "tensor_ids": [tensor]},
            ))  # fmt: skip
    for e in np.flatnonzero(s.buf_size == 0)[:MAX_LISTED].tolist():
        row = int(row_of_entry[e])
        problems.append(Problem(
            "warning", "l2-zero-size", f"{s.wl_label(row)}: tensor {int(s.buf_tensor[e])} holds 0 bytes",
            entry_path(e) + ".size", {**refs(row), "tensor_ids": [int(s.buf_tensor[e])]},
        ))  # fmt: skip
    return problems


def wl0_problems(s: Schedule) -> list[Problem]:
    """WL0 (or WL1) entries of one snapshot that share bytes. Entries have no tensor id: name their transfers."""
    row = rows_of_children(s.w0_ptr)
    pairs, truncated = overlapping_pairs(
        row, s.w0_addr, s.w0_addr + s.w0_size, np.arange(s.w0_addr.size), limit=MAX_LISTED
    )
    name = s.wl0_key.split("_")[0].upper()
    problems = []
    for pair in pairs:
        r = pair.group
        a, b = sorted((pair.a, pair.b))

        def what(e: int) -> str:
            layer = s.layers[s.w0_layer[e]] if s.w0_layer[e] >= 0 else "?"
            return f"entry {int(s.w0_pos[e])} (transfer {int(s.w0_tid[e])}, {layer})"

        problems.append(
            Problem(
                "error",
                "wl0-overlap",
                f"{s.wl_label(r)}: {name} {what(a)} and {what(b)} overlap at bytes {pair.lo:#x}-{pair.hi:#x}",
                f"{s.wl_path(r)}.{s.wl0_key}[{int(s.w0_pos[b])}]",
                {
                    "core": int(s.wl_core[r]),
                    "workload_id": int(s.wl_id[r]),
                    "transfer_ids": [int(s.w0_tid[a]), int(s.w0_tid[b])],
                    "range": [pair.lo, pair.hi],
                },
            )
        )
    if truncated:
        total = count_overlapping_pairs(row, s.w0_addr, s.w0_addr + s.w0_size, np.arange(s.w0_addr.size))
        said = f"{total:,} {name} overlaps in all; the first {len(pairs):,} are listed"
        if total > len(pairs):
            problems.append(Problem("info", "wl0-overlap-truncated", said))
    return problems
