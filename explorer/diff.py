"""What changed between two files of the same format: two schedules, or two models.

Schedules: per-core workload counts, layers added and removed, makespan and peak-L2 deltas (B minus A), the
workloads (matched by core and workload id) added, removed, with another layer or whose duration changed most,
per-layer time deltas, transfers read and written (by id, and transfers whose endpoints moved), L2 and WL0
placements, and problems and overlap incidents introduced and fixed. The bulk comparisons (placements,
transfers) are multiset differences by one sort over both files. Models: op-type counts, nodes
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
    buffer_changes = _buffer_changes(sa, sb)
    transfer_changes = _transfer_changes(sa, sb)
    endpoint_changes = _endpoint_changes(sa, sb)
    problem_changes = _problem_changes(a, b)
    incident_changes = _incident_changes(a, b)
    keys_a = list(zip(sa.wl_core.tolist(), sa.wl_id.tolist(), strict=True))
    added = sorted(set(rows_b) - set(keys_a))
    removed = [key for key in keys_a if key not in rows_b]
    summary["workloads_added"] = len(added)
    summary["workloads_removed"] = len(removed)
    summary["transfers_changed"] = len(transfer_changes)
    summary["transfer_endpoints_changed"] = len(endpoint_changes)
    summary["placements_changed"] = len(buffer_changes)
    summary["problems_introduced"] = sum(1 for c in problem_changes if c["kind"] == "problem-introduced")
    summary["problems_fixed"] = sum(1 for c in problem_changes if c["kind"] == "problem-fixed")
    summary["incidents_introduced"] = sum(1 for c in incident_changes if c["kind"] == "incident-introduced")
    summary["incidents_fixed"] = sum(1 for c in incident_changes if c["kind"] == "incident-fixed")
    layer_deltas = _layer_time_deltas(sa, sb)
    summary["layers_time_changed"] = len(layer_deltas)
    changes += [{"kind": "workload-added", "core": core, "workload_id": wl} for core, wl in added]
    changes += [{"kind": "workload-removed", "core": core, "workload_id": wl} for core, wl in removed]
    for r, key in enumerate(keys_a):
        row_b = rows_b.get(key)
        if row_b is not None and sa.layers[sa.wl_layer[r]] != sb.layers[sb.wl_layer[row_b]]:
            changes.append({"kind": "layer-changed", "core": key[0], "workload_id": key[1],
                            "a": sa.layers[sa.wl_layer[r]], "b": sb.layers[sb.wl_layer[row_b]]})  # fmt: skip
    changes += layer_deltas[:TOP_CHANGES]
    changes += transfer_changes[:TOP_CHANGES] + endpoint_changes[:TOP_CHANGES] + buffer_changes[:TOP_CHANGES]
    changes += incident_changes[:TOP_CHANGES] + problem_changes[:TOP_CHANGES]
    return summary, changes


def multiset_changes(a: list[np.ndarray], b: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows (one int column per key part) that B has more of than A, or fewer: (keys, count delta, first index).

    One lexsort over both tables and a segmented count, so 10^6 placements compare in well under a second;
    `keys` is (changed rows × columns), `delta` > 0 where B has more, `first` is the row's index in A + B."""
    n_a = a[0].size
    columns = [np.concatenate([x, y]).astype(np.int64) for x, y in zip(a, b, strict=True)]
    total = columns[0].size
    if total == 0:
        return np.zeros((0, len(columns)), dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.lexsort(columns[::-1])
    sorted_columns = [c[order] for c in columns]
    new_group = np.zeros(total, dtype=bool)
    new_group[0] = True
    for c in sorted_columns:
        new_group[1:] |= c[1:] != c[:-1]
    group = np.cumsum(new_group) - 1
    side = np.where(order < n_a, -1, 1)
    delta = np.bincount(group, weights=side).astype(np.int64)
    starts = np.flatnonzero(new_group)
    changed = np.flatnonzero(delta != 0)
    keys = np.stack([c[starts[changed]] for c in sorted_columns], axis=1)
    return keys, delta[changed], order[starts[changed]]


def _common_workloads(sa: Any, sb: Any) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the rows whose (core, workload) exists in both files: placements of added or removed
    workloads are reported as the workload, not as every tensor in it."""
    key_a = set(zip(sa.wl_core.tolist(), sa.wl_id.tolist(), strict=True))
    key_b = set(zip(sb.wl_core.tolist(), sb.wl_id.tolist(), strict=True))
    both = key_a & key_b
    in_a = np.array([k in both for k in zip(sa.wl_core.tolist(), sa.wl_id.tolist(), strict=True)], dtype=bool)
    in_b = np.array([k in both for k in zip(sb.wl_core.tolist(), sb.wl_id.tolist(), strict=True)], dtype=bool)
    return in_a, in_b


def _placements(s: Any, side: bool) -> tuple[np.ndarray, ...]:
    """(row, id, address, size) of every L2 (or WL0) placement, the row of the snapshot it is in."""
    if side:
        ptr, ident, address, size = s.w0_ptr, s.w0_tid, s.w0_addr, s.w0_size
    else:
        ptr, ident, address, size = s.buf_ptr, s.buf_tensor, s.buf_addr, s.buf_size
    row = np.repeat(np.arange(s.n_workloads), np.diff(ptr))
    return row, ident, address, size


def _buffer_changes(sa: Any, sb: Any) -> list[dict[str, Any]]:
    """Placements added or removed in each workload's L2 and WL0 snapshots (id, address, size), for the
    workloads both files have; in workload order."""
    in_a, in_b = _common_workloads(sa, sb)
    found = []
    for side, name, what in ((False, "l2", "tensor"), (True, "wl0", "transfer")):
        row_a, *rest_a = _placements(sa, side)
        row_b, *rest_b = _placements(sb, side)
        keep_a, keep_b = in_a[row_a], in_b[row_b]
        columns_a = [sa.wl_core[row_a[keep_a]], sa.wl_id[row_a[keep_a]], *(c[keep_a] for c in rest_a)]
        columns_b = [sb.wl_core[row_b[keep_b]], sb.wl_id[row_b[keep_b]], *(c[keep_b] for c in rest_b)]
        keys, delta, _ = multiset_changes(columns_a, columns_b)
        for (core, wl, ident, address, size), count in zip(keys.tolist(), delta.tolist(), strict=True):
            found.append({"kind": f"{name}-placement-{'added' if count > 0 else 'removed'}", "core": core,
                          "workload_id": wl, what: ident, "address": address, "size": size,
                          "count": abs(count)})  # fmt: skip
    found.sort(key=lambda c: (c["core"], c["workload_id"], c["kind"]))
    return found


def _transfer_changes(sa: Any, sb: Any) -> list[dict[str, Any]]:
    """Transfer ids each core's workloads read or write, added or removed."""

    def columns(s: Any) -> list[np.ndarray]:
        consumer = np.repeat(np.arange(s.n_workloads), np.diff(s.in_ptr))
        rows = np.concatenate([consumer, s.of_row]).astype(np.int64)
        direction = np.concatenate([np.zeros(consumer.size), np.ones(s.of_row.size)]).astype(np.int64)
        tids = np.concatenate([s.in_tid, s.of_tid]).astype(np.int64)
        return [s.wl_core[rows], s.wl_id[rows], direction, tids]

    keys, delta, _ = multiset_changes(columns(sa), columns(sb))
    changes = []
    for (core, wl, direction, tid), count in zip(keys.tolist(), delta.tolist(), strict=True):
        changes.append({"kind": "transfer-added" if count > 0 else "transfer-removed",
                        "direction": "writes" if direction else "reads", "core": core, "workload_id": wl,
                        "transfer": tid})  # fmt: skip
    changes.sort(key=lambda c: (c["kind"] != "transfer-added", c["direction"], c["core"], c["workload_id"]))
    return changes


def _endpoints(s: Any) -> dict[int, tuple[tuple, tuple]]:
    """Transfer id → (writers, readers) as sorted (core, workload) tuples: where each transfer goes."""
    consumer = np.repeat(np.arange(s.n_workloads), np.diff(s.in_ptr))
    found: dict[int, tuple[set, set]] = {}
    for row, tid in zip(s.of_row.tolist(), s.of_tid.tolist(), strict=True):
        found.setdefault(int(tid), (set(), set()))[0].add((int(s.wl_core[row]), int(s.wl_id[row])))
    for row, tid in zip(consumer.tolist(), s.in_tid.tolist(), strict=True):
        found.setdefault(int(tid), (set(), set()))[1].add((int(s.wl_core[row]), int(s.wl_id[row])))
    return {tid: (tuple(sorted(w)), tuple(sorted(r))) for tid, (w, r) in found.items()}


def _endpoint_changes(sa: Any, sb: Any) -> list[dict[str, Any]]:
    """Transfers both files have whose writer or readers differ: the same id, other endpoints."""
    ends_a, ends_b = _endpoints(sa), _endpoints(sb)
    changes = []
    for tid in sorted(set(ends_a) & set(ends_b)):
        if ends_a[tid] != ends_b[tid]:
            (wa, ra), (wb, rb) = ends_a[tid], ends_b[tid]
            changes.append({"kind": "transfer-endpoints", "transfer": tid, "a": _said(wa, ra), "b": _said(wb, rb)})
    return changes


def _said(writers: tuple, readers: tuple) -> str:
    def side(pairs: tuple) -> str:
        return ", ".join(f"c{c} wl {w}" for c, w in pairs[:4]) + (" …" if len(pairs) > 4 else "") or "DRAM"

    return f"{side(writers)} → {side(readers)}"


def _layer_time_deltas(sa: Any, sb: Any) -> list[dict[str, Any]]:
    """Per layer name: the sum of its workloads' times in A and B, the layers that changed, largest first."""

    def per_layer(s: Any) -> dict[str, float]:
        sums = np.bincount(s.wl_layer, weights=s.wl_time, minlength=len(s.layers))
        return {name: float(v) for name, v in zip(s.layers, sums.tolist(), strict=False) if v}

    ta, tb = per_layer(sa), per_layer(sb)
    found = [{"kind": "layer-time", "layer": name, "a": ta.get(name, 0.0), "b": tb.get(name, 0.0),
              "delta": tb.get(name, 0.0) - ta.get(name, 0.0)}
             for name in sorted(set(ta) | set(tb)) if ta.get(name, 0.0) != tb.get(name, 0.0)]  # fmt: skip
    found.sort(key=lambda c: -abs(c["delta"]))
    return found


def _incident_changes(a: Document, b: Document) -> list[dict[str, Any]]:
    """Overlap incidents one file has and the other not (matched by code, core and misplaced tensor)."""
    from explorer.analysis.incidents import incidents_of

    def keyed(document: Document) -> dict[tuple, Any]:
        return {(i.code, i.core, i.introduced_by): i for i in incidents_of(document)}

    before, after = keyed(a), keyed(b)
    changes = [{"kind": "incident-introduced", "code": i.code, "core": i.core, "workload_id": i.first_workload,
                "message": i.line()} for k, i in after.items() if k not in before]  # fmt: skip
    changes += [{"kind": "incident-fixed", "code": i.code, "core": i.core, "workload_id": i.first_workload,
                 "message": i.line()} for k, i in before.items() if k not in after]  # fmt: skip
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
    lines = summary_lines(result)
    if result["changes"]:
        lines.append("changes:")
    lines += [f"  {line}" for line in change_lines(result)]
    return lines


def summary_lines(result: dict[str, Any]) -> list[str]:
    from explorer.formatting import human

    lines = [f"{result['a']}  →  {result['b']}  ({result['format']})"]
    for key, value in result["summary"].items():
        lines.append(f"  {key.replace('_', ' ')}: {human(value, key)}")
    return lines


def change_lines(result: dict[str, Any]) -> list[str]:
    from explorer.formatting import human

    lines = []
    for change in result["changes"]:
        rest = ", ".join(f"{k.replace('_', ' ')} {human(v, k)}" for k, v in change.items() if k != "kind")
        lines.append(f"{change['kind']:<13} {rest}")
    return lines


def change_target(change: dict[str, Any]) -> tuple[str, Any] | None:
    """Where a change can be seen: ("a" or "b", (core, workload_id)) for a workload's change (B for what only B
    has), ("a"/"b", layer name) for a layer's; None for the rest."""
    kind = change["kind"]
    side = "b" if kind.endswith("-added") or kind.endswith("-introduced") or kind == "layer-added" else "a"
    if "core" in change and "workload_id" in change:
        return side, (int(change["core"]), int(change["workload_id"]))
    if "layer" in change:
        return side, str(change["layer"])
    return None
