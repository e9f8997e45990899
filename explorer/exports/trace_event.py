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

from explorer.companions import companions_of
from explorer.document import Capability, Document

PID, MEASURED_PID = 1, 2
FLOWS_BY_DEFAULT = 10_000  # cross-lane transfers drawn as arrows unless asked for all (--flows)


def trace_events(document: Document, flows: bool | None = None) -> dict[str, Any]:
    """The trace. `flows`: True draws every cross-lane transfer as an arrow, False none, None (the default) all
    of them when there are at most FLOWS_BY_DEFAULT (a 480 MB schedule's 649,728 arrows were 148 MB that no
    one could follow). A joined hardware trace is a second process, its lanes the measured spans."""
    s = document.schedule
    if not document.offers(Capability.TIMELINE) or s is None or document.schedule_analysis is None:
        raise ValueError(f"a trace needs a timeline, and this {document.meta.format} file has none")
    words = document.vocabulary
    analysis = document.analysed()
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
    wl_core = s.wl_core
    crossing = (~deps.via_dram.astype(bool)) & (wl_core[deps.producer] != wl_core[deps.consumer])
    crossing &= scheduled[deps.producer] & scheduled[deps.consumer]
    total_flows = int(np.count_nonzero(crossing))
    drawn = total_flows if flows or (flows is None and total_flows <= FLOWS_BY_DEFAULT) else 0
    chosen = np.flatnonzero(crossing) if drawn else np.zeros(0, dtype=np.int64)
    for flow, (producer, consumer, tid) in enumerate(zip(deps.producer[chosen].tolist(),
                                                         deps.consumer[chosen].tolist(), deps.tid[chosen].tolist(),
                                                         strict=True), start=1):  # fmt: skip
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
    measured = companions_of(document).measured
    if measured is not None:
        events += _measured_lanes(document, measured)
    other = {
        "source": str(document.meta.source),
        "format": document.meta.format,
        "time_unit": f"{words.time_unit or 'steps'} as µs",
        "flows": f"{drawn:,} of {total_flows:,} cross-{words.lane} transfers drawn"
        + ("" if drawn == total_flows else " (export with --flows to draw all)"),
    }
    if measured is not None:
        other["measured"] = f"{measured.source.name}: process {MEASURED_PID}, spans of {measured.basis}"
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}


def _measured_lanes(document: Document, measured: Any) -> list[dict[str, Any]]:
    """The hardware trace's spans per workload, one lane per core under a process of their own, so Perfetto shows
    the estimate and the measurement one above the other."""
    s = document.scheduled()
    words = document.vocabulary
    events: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": MEASURED_PID,
                                     "args": {"name": f"measured: {measured.source.name}"}}]  # fmt: skip
    for index, core in enumerate(s.core_ids.tolist()):
        events.append({"name": "thread_name", "ph": "M", "pid": MEASURED_PID, "tid": core,
                       "args": {"name": f"{s.core_label(core)} measured"}})  # fmt: skip
        events.append({"name": "thread_sort_index", "ph": "M", "pid": MEASURED_PID, "tid": core,
                       "args": {"sort_index": index}})  # fmt: skip
    known = np.isfinite(measured.start) & np.isfinite(measured.end)
    for row in np.flatnonzero(known).tolist():
        events.append({
            "name": s.layers[int(s.wl_layer[row])], "cat": "measured", "ph": "X", "pid": MEASURED_PID,
            "tid": int(s.wl_core[row]), "ts": float(measured.start[row]),
            "dur": float(max(measured.end[row] - measured.start[row], 0.0)),
            "args": {f"{words.block}_id": int(s.wl_id[row]), "instructions": int(measured.instructions[row]),
                     "row": row},
        })  # fmt: skip
    return events
