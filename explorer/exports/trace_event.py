"""A schedule as Chrome Trace Event JSON, for Perfetto and chrome://tracing.

One process; each core is a thread named by its mesh position. Each workload is a complete ("X") slice with
its layer, type and ids as args; a transfer from one core to another is a flow ("s" → "f") from the producing
slice to the consuming one; L2 bytes in use per core are counter ("C") tracks. Times are the explorer's
dependency-aware timeline, in cycles, written as the format's microseconds (1 cycle = 1 µs on screen).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from explorer.model import Document
from explorer.schedule import LAYER_TYPES

PID = 1


def trace_events(document: Document) -> dict[str, Any]:
    s = document.schedule
    if s is None:
        raise ValueError("trace export needs a schedule (scheduler IR or a TVM storage plan)")
    analysis = document.analysis["schedule"]
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
                "cat": LAYER_TYPES[types[row]] if types[row] < len(LAYER_TYPES) else "workload",
                "ph": "X",
                "pid": PID,
                "tid": cores[row],
                "ts": float(start[row]),
                "dur": float(max(end[row] - start[row], 0.0)),
                "args": {
                    "workload_id": ids[row],
                    "layer": s.layers[layers[row]],
                    "type": LAYER_TYPES[types[row]] if types[row] < len(LAYER_TYPES) else "?",
                    "core": cores[row],
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
        shared = {"name": f"transfer {tid}", "cat": "transfer", "pid": PID, "id": flow}
        events.append({**shared, "ph": "s", "tid": cores[producer], "ts": float(start[producer])})
        events.append({**shared, "ph": "f", "bp": "e", "tid": cores[consumer], "ts": float(start[consumer])})
    used = analysis.l2_bytes.tolist()
    for row in np.flatnonzero(scheduled).tolist():
        events.append(
            {
                "name": f"{s.memory_name} bytes {s.core_label(cores[row])}",
                "ph": "C",
                "pid": PID,
                "ts": float(start[row]),
                "args": {"bytes": int(used[row])},
            }
        )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"source": str(document.meta.source), "format": document.meta.format, "time_unit": "cycles as µs"},
    }
