"""The multi-core Gemini scheduler IR (`*_stschedule.json`): per-core workloads, DRAM transfers, L2 and WL0
snapshots. Read into the neutral columnar `explorer.models.schedule.Schedule`, so the timeline and buffer views
draw it."""

from __future__ import annotations

import re
from pathlib import Path

from explorer.format import JSON_NESTING_LIMIT, Format, lazy

_SNIFF = re.compile(rb'^\s*\{\s*"(-1|\d+|buffersize|top_batch_cut|xlen|ylen)"\s*:')


# A schedule's own words: a JSON object of numbered arrays that has none of them is something else
_OWN_KEYS = re.compile(rb'"(workload_id|layer_name|buffersize|xlen|ylen|top_batch_cut|transfer_id)"\s*:')


def match(path: Path, head: bytes) -> bool:
    if path.name.endswith("stschedule.json"):
        return True
    return bool(_SNIFF.match(head)) and bool(_OWN_KEYS.search(head))


LIMITS = (  # the README's Limits section lists these (tested)
    (
        "memory: refused before reading when 1.75× the file's size (plus 200 MiB) passes the memory available "
        "(`IR_EXPLORER_MEMORY_GUARD=off` overrides)"
    ),
    JSON_NESTING_LIMIT,
    "numbers: a buffer entry whose address or size passes ±2^61 is dropped (every end address and span then fits "
    "in 64 bits)",
    "problems: 10,000 listed per code, the rest counted",
    (
        "hostile content: problems stop growing at the cap while decoding, so a file of tiny broken records needs "
        "at most about 40× its size (measured: 10 MB of `1,1,…` workloads peak at 402 MB, 15 MB of `{}` at 408 MB); "
        "the 1.75× above is for real files, and where even an object every 3 bytes might not fit, its JSON objects "
        "(96 bytes each) and array elements are counted first: what the cores keep (32 bytes an element once "
        "decoded) and each core while it is decoded (110 bytes an element: one workload's list of millions of "
        "transfers), a big file's cores each where a worker decodes it, the file's total projected from the cores "
        "done"
    ),
)

FORMATS = (
    Format(
        name="scheduler-ir",
        title="Gemini scheduler IR",
        endings=("stschedule.json", ".json"),
        match=match,
        load=lazy("explorer.formats.scheduler_ir.reader", "load"),
        preview=lazy("explorer.formats.scheduler_ir.preview", "previews"),
        prepare=lazy("explorer.formats.scheduler_ir.early", "prepare"),
        write_samples=lazy("explorer.formats.scheduler_ir.samples", "write_samples"),
        limits=LIMITS,
        cacheable=True,
    ),
)
