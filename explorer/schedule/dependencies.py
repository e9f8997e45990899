"""Who feeds whom in a schedule: producer→consumer edges between workloads, through transfer ids.

Shared by the timeline, the transfer checks and the views, so the rule lives in one place:
an input transfer id T of workload C depends on the workload whose ofmap has transfer id T; when T is a
DRAM read of a spilled tensor, C also depends on the producers of the DRAM writes it lists in
``related_ifmap`` (the data must reach DRAM before it can be read back).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.arrays import distinct, lexsort
from explorer.models.schedule import Schedule


def rows_of_children(ptr: np.ndarray) -> np.ndarray:
    """For CSR `ptr`, the parent index of every child row."""
    return np.repeat(np.arange(ptr.size - 1, dtype=np.int64), np.diff(ptr))


def lookup(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Index of each key in `sorted_keys`, or -1 where absent."""
    if sorted_keys.size == 0:
        return np.full(keys.shape, -1, dtype=np.int64)
    index = np.searchsorted(sorted_keys, keys)
    index = np.minimum(index, sorted_keys.size - 1)
    return np.where(sorted_keys[index] == keys, index, -1)


def rows_present(query: tuple[np.ndarray, ...], table: tuple[np.ndarray, ...]) -> np.ndarray:
    """For each row of `query` (columns of equal length), whether the same row is in `table`: one lexicographic
    sort of both instead of a set lookup per row."""
    count = len(query[0])
    columns = [
        np.concatenate([np.asarray(q, np.int64), np.asarray(t, np.int64)]) for q, t in zip(query, table, strict=True)
    ]
    if count == 0 or len(columns[0]) == count:
        return np.zeros(count, dtype=bool)
    order = lexsort(columns[::-1])
    starts = np.zeros(order.size, dtype=bool)
    starts[0] = True
    for column in columns:
        ordered = column[order]
        starts[1:] |= ordered[1:] != ordered[:-1]
    group = np.cumsum(starts) - 1
    from_table = order >= count
    has_table = np.zeros(int(group[-1]) + 1, dtype=bool)
    has_table[group[from_table]] = True
    present = np.empty(count, dtype=bool)
    present[order[~from_table]] = has_table[group[~from_table]]
    return present


@dataclass(frozen=True)
class Dependencies:
    consumer: np.ndarray  # workload row, one per edge
    producer: np.ndarray  # workload row
    tid: np.ndarray  # the consumer's input transfer id that creates the edge
    via_dram: np.ndarray  # True when the edge goes through a DRAM spill (related_ifmap)

    def producers_of(self, row: int) -> np.ndarray:
        return distinct(self.producer[self.consumer == row])

    def consumers_of(self, row: int) -> np.ndarray:
        return distinct(self.consumer[self.producer == row])


def ofmap_producer_index(s: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """(sorted ofmap transfer ids, producing workload row for each); the first producer wins on duplicates."""
    tids, ofmaps = first_ofmaps(s)
    return tids, s.of_row[ofmaps]


def first_ofmaps(s: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct ofmap transfer ids, the first ofmap in file order with each id)."""
    order = np.argsort(s.of_tid, kind="stable")
    tids = s.of_tid[order]
    first = np.ones(tids.size, dtype=bool)
    first[1:] = tids[1:] != tids[:-1]
    return tids[first], order[first]


def dependencies(s: Schedule) -> Dependencies:
    of_tids, of_rows = ofmap_producer_index(s)
    consumer_rows = rows_of_children(s.in_ptr)
    hit = lookup(of_tids, s.in_tid)
    direct = hit >= 0
    consumers = [consumer_rows[direct]]
    producers = [of_rows[hit[direct]]]
    tids = [s.in_tid[direct]]
    via = [np.zeros(int(direct.sum()), dtype=bool)]

    # Spills: input T is a DRAM read whose related_ifmap lists DRAM writes, each produced by some ofmap.
    order = np.argsort(s.dout_tid, kind="stable")
    dram_hit = lookup(s.dout_tid[order], s.in_tid[~direct])
    if dram_hit.size and (dram_hit >= 0).any():
        read_rows = np.where(dram_hit >= 0, order[np.maximum(dram_hit, 0)], -1)
        rel_hit = lookup(of_tids, s.dout_rel)  # producer index of every related_ifmap entry
        hits = np.flatnonzero(read_rows >= 0)
        reads = read_rows[hits]
        starts = s.dout_rel_ptr[reads]
        lengths = s.dout_rel_ptr[reads + 1] - starts
        owner = np.repeat(np.arange(hits.size), lengths)
        offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        producer_index = rel_hit[starts[owner] + offsets]
        ok = producer_index >= 0
        spill_inputs = hits[owner[ok]]
        consumers.append(consumer_rows[~direct][spill_inputs])
        producers.append(of_rows[producer_index[ok]])
        tids.append(s.in_tid[~direct][spill_inputs])
        via.append(np.ones(int(ok.sum()), dtype=bool))
    if s.wl_dep_src is not None and s.wl_dep_src.size and s.wl_dep_dst is not None:  # a trace's wait bits
        consumers.append(s.wl_dep_dst)
        producers.append(s.wl_dep_src)
        tids.append(np.full(s.wl_dep_src.size, -1, dtype=np.int64))
        via.append(np.zeros(s.wl_dep_src.size, dtype=bool))
    return Dependencies(
        consumer=np.concatenate(consumers).astype(np.int64),
        producer=np.concatenate(producers).astype(np.int64),
        tid=np.concatenate(tids).astype(np.int64),
        via_dram=np.concatenate(via),
    )
