"""A schedule as Chrome Trace Event JSON, for Perfetto and chrome://tracing.

One process; each lane (core) is a thread named by its label. Each block (workload) is a complete ("X") slice
with its layer, kind and ids as args; a transfer from one lane to another is a flow ("s" → "f") from the
producing slice to the consuming one; bytes in use of the document's memory (L2) per lane are counter ("C")
tracks. Times are the explorer's dependency-aware timeline in the document's time unit, written as the
format's microseconds (1 unit = 1 µs on screen). The words come from the document's vocabulary.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from explorer.document import Capability, Document

PID = 1


def trace_events(document: Document) -> dict[str, Any]:
    s = document.schedule
    if not document.offers(Capability.TIMELINE) or s is None or document.schedule_analysis is None:
        raise ValueError(f"a trace needs a timeline, and this {document.meta.format} file has none")
    words = document.vocabulary
    analysis = document.schedule_analysis
    timeline = analysis.timeline
    start, end = timeline.start, timeline.end
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": PID, "args": {"name": f"{document.meta.source.name} schedule"}},
    ]
    for index, core in enumerate(s.core_ids.tolist()):
        events.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": core, "args": {"name": s.core_label(core)}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": core, "args": {"sort_index": index}})
    cores, ids, layers, types = s.wl_core.tolist(), s.wl_id.tolist(), s.wl_layer.tolist(), s.wl_type.tolist()
    scheduled = np.isfinite(start) & np.isfinite(end)
    for row in np.flatnonzero(scheduled).tolist():
        events.append(
            {
                "name": s.layers[layers[row]],
                "cat": words.block_kind(types[row]),
                "ph": "X",
                "pid": PID,
                "tid": cores[row],
                "ts": float(start[row]),
                "dur": float(max(end[row] - start[row], 0.0)),
                "args": {
                    f"{words.block}_id": ids[row],
                    "layer": s.layers[layers[row]],
                    "type": words.block_kind(types[row]),
                    words.lane: cores[row],
                    "row": row,
                },
            }
        )
    deps = analysis.deps
    flow = 0
    for producer, consumer, tid, via_dram in zip(
        deps.producer.tolist(), deps.consumer.tolist(), deps.tid.tolist(), deps.via_dram.tolist(), strict=True
    ):
        if via_dram or cores[producer] == cores[consumer] or not (scheduled[producer] and scheduled[consumer]):
            continue
        flow += 1
        # "s" sits inside the producing slice, "f" binds to the slice that encloses its time ("bp": "e")
        what = f"transfer {tid}" if tid >= 0 else "dependency"
        shared = {"name": what, "cat": "transfer" if tid >= 0 else "dependency", "pid": PID, "id": flow}
        events.append({**shared, "ph": "s", "tid": cores[producer], "ts": float(start[producer])})
        events.append({**shared, "ph": "f", "bp": "e", "tid": cores[consumer], "ts": float(start[consumer])})
    used = analysis.l2_bytes.tolist()
    has_memory = bool(words.memory)  # an instruction trace has no address space: no counter track
    for row in np.flatnonzero(scheduled).tolist() if has_memory else []:
        events.append(
            {
                "name": f"{words.memory} bytes {s.core_label(cores[row])}",
                "ph": "C",
                "pid": PID,
                "ts": float(start[row]),
                "args": {"bytes": int(used[row])},
            }
        )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "source": str(document.meta.source),
            "format": document.meta.format,
            "time_unit": f"{words.time_unit or 'steps'} as µs",
        },
    }
