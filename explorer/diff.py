"""What changed between two files of the same format: two schedules, or two models.

Schedules: per-core workload counts, layers added and removed, makespan and peak-L2 deltas (B minus A), and
the workloads (matched by core and workload id) whose duration changed most. Models: op-type counts, nodes
added, removed and changed (matched by name), and parameter totals. Pure data: the CLI prints it, the TUI's
diff screen shows it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from explorer.document import Document

TOP_CHANGES = 25


class NotComparable(ValueError):
    """The two documents cannot be compared (different formats)."""


def diff_documents(a: Document, b: Document) -> dict[str, Any]:
    if a.meta.format != b.meta.format:
        raise NotComparable(f"cannot compare a {a.meta.format} file with a {b.meta.format} file")
    if a.is_schedule and a.schedule is not None and b.schedule is not None:
        summary, changes = _schedule_diff(a, b)
    else:
        summary, changes = _model_diff(a, b)
    return {
        "format": a.meta.format,
        "a": str(a.meta.source),
        "b": str(b.meta.source),
        "summary": summary,
        "changes": changes,
    }


def _schedule_diff(a: Document, b: Document) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    sa, sb = a.schedule, b.schedule
    ta, tb = a.schedule_analysis, b.schedule_analysis
    cores = sorted(set(sa.core_ids.tolist()) | set(sb.core_ids.tolist()))
    per_core = {str(c): [len(sa.core_rows(c)), len(sb.core_rows(c))] for c in cores}
    layers_a, layers_b = (
        set(sa.layers[i] for i in np.unique(sa.wl_layer)),
        set(sb.layers[i] for i in np.unique(sb.wl_layer)),
    )
    summary = {
        "workloads": [sa.n_workloads, sb.n_workloads],
        "workloads_per_core": per_core,
        "layers_added": sorted(layers_b - layers_a),
        "layers_removed": sorted(layers_a - layers_b),
        "makespan": [ta.timeline.makespan, tb.timeline.makespan],
        "makespan_delta": tb.timeline.makespan - ta.timeline.makespan,
        "peak_l2_bytes": [ta.peak_l2_bytes, tb.peak_l2_bytes],
        "peak_l2_delta": tb.peak_l2_bytes - ta.peak_l2_bytes,
    }
    changes: list[dict[str, Any]] = [{"kind": "layer-added", "layer": name} for name in summary["layers_added"]]
    changes += [{"kind": "layer-removed", "layer": name} for name in summary["layers_removed"]]
    rows_b = {(int(c), int(w)): r for r, (c, w) in enumerate(zip(sb.wl_core.tolist(), sb.wl_id.tolist(), strict=True))}
    durations = []
    for row_a, (core, wl) in enumerate(zip(sa.wl_core.tolist(), sa.wl_id.tolist(), strict=True)):
        row_b = rows_b.get((core, wl))
        if row_b is not None and sa.wl_time[row_a] != sb.wl_time[row_b]:
            durations.append((abs(sb.wl_time[row_b] - sa.wl_time[row_a]), core, wl, row_a, row_b))
    durations.sort(reverse=True)
    for _, core, wl, row_a, row_b in durations[:TOP_CHANGES]:
        changes.append(
            {
                "kind": "duration",
                "core": core,
                "workload_id": wl,
                "layer": sb.layers[sb.wl_layer[row_b]],
                "a": float(sa.wl_time[row_a]),
                "b": float(sb.wl_time[row_b]),
                "delta": float(sb.wl_time[row_b] - sa.wl_time[row_a]),
            }
        )
    summary["durations_changed"] = len(durations)
    buffer_changes = _buffer_changes(sa, sb, rows_b)
    transfer_changes = _transfer_changes(sa, sb)
    problem_changes = _problem_changes(a, b)
    keys_a = list(zip(sa.wl_core.tolist(), sa.wl_id.tolist(), strict=True))
    added = sorted(set(rows_b) - set(keys_a))
    removed = [key for key in keys_a if key not in rows_b]
    summary["workloads_added"] = len(added)
    summary["workloads_removed"] = len(removed)
    summary["transfers_changed"] = len(transfer_changes)
    summary["placements_changed"] = len(buffer_changes)
    summary["problems_introduced"] = sum(1 for c in problem_changes if c["kind"] == "problem-introduced")
    summary["problems_fixed"] = sum(1 for c in problem_changes if c["kind"] == "problem-fixed")
    changes += [{"kind": "workload-added", "core": core, "workload_id": wl} for core, wl in added]
    changes += [{"kind": "workload-removed", "core": core, "workload_id": wl} for core, wl in removed]
    for r, key in enumerate(keys_a):
        row_b = rows_b.get(key)
        if row_b is not None and sa.layers[sa.wl_layer[r]] != sb.layers[sb.wl_layer[row_b]]:
            changes.append({"kind": "layer-changed", "core": key[0], "workload_id": key[1],
                            "a": sa.layers[sa.wl_layer[r]], "b": sb.layers[sb.wl_layer[row_b]]})  # fmt: skip
    changes += transfer_changes[:TOP_CHANGES] + buffer_changes[:TOP_CHANGES] + problem_changes[:TOP_CHANGES]
    return summary, changes


def _snapshot(s: Any, row: int, side: bool) -> Counter:
    """One workload's L2 (or WL0) snapshot as a multiset of placements."""
    if side:
        lo, hi = int(s.w0_ptr[row]), int(s.w0_ptr[row + 1])
        return Counter(zip(s.w0_tid[lo:hi].tolist(), s.w0_addr[lo:hi].tolist(), s.w0_size[lo:hi].tolist(), strict=True))
    lo, hi = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1])
    return Counter(
        zip(s.buf_tensor[lo:hi].tolist(), s.buf_addr[lo:hi].tolist(), s.buf_size[lo:hi].tolist(), strict=True)
    )


def _buffer_changes(sa: Any, sb: Any, rows_b: dict) -> list[dict[str, Any]]:
    """Placements added or removed in each workload's L2 and WL0 snapshots (id, address, size)."""
    found = []
    for r in range(sa.n_workloads):
        key = (int(sa.wl_core[r]), int(sa.wl_id[r]))
        rb = rows_b.get(key)
        if rb is None:
            continue
        for side, name, what in ((False, "l2", "tensor"), (True, "wl0", "transfer")):
            before, after = _snapshot(sa, r, side), _snapshot(sb, rb, side)
            if before == after:
                continue
            for (ident, address, size), count in sorted((after - before).items()):
                found.append({"kind": f"{name}-placement-added", "core": key[0], "workload_id": key[1],
                              what: ident, "address": address, "size": size, "count": count})  # fmt: skip
            for (ident, address, size), count in sorted((before - after).items()):
                found.append({"kind": f"{name}-placement-removed", "core": key[0], "workload_id": key[1],
                              what: ident, "address": address, "size": size, "count": count})  # fmt: skip
    return found


def _transfer_changes(sa: Any, sb: Any) -> list[dict[str, Any]]:
    """Transfer ids each core's workloads read or write, added or removed."""

    def ids(s: Any) -> set[tuple[str, int, int, int]]:
        found = set()
        consumer = np.repeat(np.arange(s.n_workloads), np.diff(s.in_ptr))
        for row, tid in zip(consumer.tolist(), s.in_tid.tolist(), strict=True):
            found.add(("reads", int(s.wl_core[row]), int(s.wl_id[row]), int(tid)))
        for row, tid in zip(s.of_row.tolist(), s.of_tid.tolist(), strict=True):
            found.add(("writes", int(s.wl_core[row]), int(s.wl_id[row]), int(tid)))
        return found

    before, after = ids(sa), ids(sb)
    changes = [{"kind": "transfer-added", "direction": d, "core": c, "workload_id": w, "transfer": t}
               for d, c, w, t in sorted(after - before)]  # fmt: skip
    changes += [{"kind": "transfer-removed", "direction": d, "core": c, "workload_id": w, "transfer": t}
                for d, c, w, t in sorted(before - after)]  # fmt: skip
    return changes


def _problem_changes(a: Document, b: Document) -> list[dict[str, Any]]:
    """Errors and warnings one file has and the other not (matched by code, place and ids, not by wording)."""

    def keys(document: Document) -> dict[tuple, Any]:
        found = {}
        for p in document.problems:
            ids = tuple(p.refs.get("tensor_ids") or p.refs.get("transfer_ids") or ())
            ident = (p.code, p.refs.get("core"), p.refs.get("workload_id"), ids, p.refs.get("transfer_id"))
            found.setdefault(ident, p)
        return found

    before, after = keys(a), keys(b)
    changes = [{"kind": "problem-introduced", "code": p.code, "message": p.message} for k, p in after.items()
               if k not in before]  # fmt: skip
    changes += [{"kind": "problem-fixed", "code": p.code, "message": p.message} for k, p in before.items()
                if k not in after]  # fmt: skip
    return changes


def _model_diff(a: Document, b: Document) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    ops_a = Counter(a.summary.get("op_types") or a.summary.get("layer_types") or {})
    ops_b = Counter(b.summary.get("op_types") or b.summary.get("layer_types") or {})
    nodes_a, nodes_b = a.view.node_signatures(), b.view.node_signatures()
    added = sorted(set(nodes_b) - set(nodes_a))
    removed = sorted(set(nodes_a) - set(nodes_b))
    changed = sorted(name for name in set(nodes_a) & set(nodes_b) if nodes_a[name] != nodes_b[name])
    params_a, params_b = a.view.parameter_bytes_by_dtype(), b.view.parameter_bytes_by_dtype()
    summary = {
        "nodes": [len(nodes_a), len(nodes_b)],
        "nodes_added": len(added),
        "nodes_removed": len(removed),
        "nodes_changed": len(changed),
        "op_types_delta": {
            op: ops_b[op] - ops_a[op] for op in sorted(set(ops_a) | set(ops_b)) if ops_b[op] != ops_a[op]
        },
        "parameter_bytes": [sum(params_a.values()), sum(params_b.values())],
        "parameter_bytes_delta": sum(params_b.values()) - sum(params_a.values()),
    }
    changes: list[dict[str, Any]] = []
    changes += [{"kind": "node-added", "name": n, "op": nodes_b[n][0]} for n in added]
    changes += [{"kind": "node-removed", "name": n, "op": nodes_a[n][0]} for n in removed]
    for name in changed:
        op_a, op_b = nodes_a[name][0], nodes_b[name][0]
        changes.append(
            {
                "kind": "node-changed",
                "name": name,
                "op_a": op_a,
                "op_b": op_b,
                "what": "op type" if op_a != op_b else "inputs, outputs or attributes",
            }
        )
    for op, delta in summary["op_types_delta"].items():
        changes.append({"kind": "op-count", "op": op, "a": ops_a[op], "b": ops_b[op], "delta": delta})
    for dtype in sorted(set(params_a) | set(params_b)):
        if params_a.get(dtype, 0) != params_b.get(dtype, 0):
            changes.append(
                {
                    "kind": "parameters",
                    "dtype": dtype,
                    "a": params_a.get(dtype, 0),
                    "b": params_b.get(dtype, 0),
                    "delta": params_b.get(dtype, 0) - params_a.get(dtype, 0),
                }
            )
    return summary, changes


def diff_lines(result: dict[str, Any]) -> list[str]:
    """The diff as text: the summary, then one line per change."""
    from explorer.formatting import human

    lines = [f"{result['a']}  →  {result['b']}  ({result['format']})"]
    for key, value in result["summary"].items():
        lines.append(f"  {key.replace('_', ' ')}: {human(value, key)}")
    if result["changes"]:
        lines.append("changes:")
    for change in result["changes"]:
        rest = ", ".join(f"{k.replace('_', ' ')} {human(v, k)}" for k, v in change.items() if k != "kind")
        lines.append(f"  {change['kind']:<13} {rest}")
    return lines
