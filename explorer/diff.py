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

from explorer.arrays import distinct
from explorer.document import Document
from explorer.models.schedule import Schedule

TOP_CHANGES = 25


class NotComparable(ValueError):
    """The two documents cannot be compared (different formats)."""


def diff_documents(a: Document, b: Document, limit: int | None = TOP_CHANGES, weights: bool = False,
                   as_written: bool = False) -> dict[str, Any]:  # fmt: skip
    """What changed from `a` to `b`. Changes are listed up to `limit` of each kind (None: all), for a schedule
    and a model alike; a model's weights by dtype, dims and bytes, and by their values' hashes with `weights`;
    with `as_written`, also what only shape inference or an attribute written at its default makes differ.
    `left_out` counts the rest by kind, so a reader knows the list is not the whole story."""
    if a.meta.format != b.meta.format:
        raise NotComparable(f"cannot compare {_article(a.meta.format)} file with {_article(b.meta.format)} file")
    left_out: dict[str, int] = {}
    if a.is_schedule and a.schedule is not None and b.schedule is not None:
        summary, changes = _schedule_diff(a, b, limit, left_out)
    elif a.offers("graph") and b.offers("graph"):  # the compare screen's matcher: both say the same
        summary, changes = _graph_diff(a, b, limit, left_out, as_written)
    else:
        summary, changes = _model_diff(a, b)
    settings = setting_changes(a, b)
    if settings:
        summary["settings_changed"] = len(settings)
        changes = [*settings, *changes]
    if not a.is_schedule:
        compared, changed_weights = weight_changes(a, b, weights)
        if compared:
            summary["weights_compared"] = compared
            summary["weights_changed"] = len(changed_weights)
            changes += _listed(changed_weights, limit, left_out)
    return {
        "format": a.meta.format,
        "a": str(a.meta.source),
        "b": str(b.meta.source),
        "summary": summary,
        "changes": changes,
        "left_out": left_out,
    }


def setting_changes(a: Document, b: Document) -> list[dict[str, Any]]:
    """Each setting (`DocumentView.settings`: an ARK plan's warps, tiles, task counts and ranges) that differs,
    or that only one file has. Two plans of one model have the same graph: these are what tell them apart."""
    ours, theirs = a.view.settings(), b.view.settings()
    return [{"kind": "setting-changed", "where": key, "a": ours.get(key, "(none)"), "b": theirs.get(key, "(none)")}
            for key in [*ours, *(k for k in theirs if k not in ours)] if ours.get(key) != theirs.get(key)]  # fmt: skip


def weight_changes(a: Document, b: Document, digests: bool) -> tuple[int, list[dict[str, Any]]]:
    """(how many weights of the same name were compared, each weight added, removed, or changed in dtype or dims,
    or in its values when `digests`): by name, as exporters keep a weight's name from export to export."""
    ours, theirs = a.view.weights(digests), b.view.weights(digests)
    changes: list[dict[str, Any]] = []
    for name, mine in ours.items():
        other = theirs.get(name)
        if other is None:
            changes.append({"kind": "weight-removed", "name": name, "dtype": mine.dtype, "dims": list(mine.dims)})
        elif (mine.dtype, mine.dims) != (other.dtype, other.dims):
            shapes = f"{mine.dtype} {list(mine.dims)}", f"{other.dtype} {list(other.dims)}"
            changes.append({"kind": "weight-changed", "name": name, "what": "shape", "a": shapes[0], "b": shapes[1]})
        elif mine.digest != other.digest:
            changes.append({"kind": "weight-changed", "name": name, "what": "values", "a": mine.digest,
                            "b": other.digest})  # fmt: skip
    changes += [{"kind": "weight-added", "name": name, "dtype": w.dtype, "dims": list(w.dims)}
                for name, w in theirs.items() if name not in ours]  # fmt: skip
    return sum(name in theirs for name in ours), changes


def _article(word: str) -> str:
    """ "an onnx", "a coreml": the article the format's name is read with."""
    return ("an " if word[:1].lower() in "aeio" else "a ") + word


def _listed(found: list[dict[str, Any]], limit: int | None, left_out: dict[str, int]) -> list[dict[str, Any]]:
    """The first `limit` changes; the others counted in `left_out` by kind."""
    if limit is None or len(found) <= limit:
        return found
    for change in found[limit:]:
        left_out[change["kind"]] = left_out.get(change["kind"], 0) + 1
    return found[:limit]


def _schedule_diff(
    a: Document, b: Document, limit: int | None, left_out: dict[str, int]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    sa, sb = a.scheduled(), b.scheduled()
    ta, tb = a.analysed(), b.analysed()
    cores = sorted(set(sa.core_ids.tolist()) | set(sb.core_ids.tolist()))
    per_core = {str(c): [len(sa.core_rows(c)), len(sb.core_rows(c))] for c in cores}
    layers_a, layers_b = (
        set(sa.layers[i] for i in distinct(sa.wl_layer)),
        set(sb.layers[i] for i in distinct(sb.wl_layer)),
    )
    summary: dict[str, Any] = {
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
    rows_a, rows_b = match_rows(sa, sb)  # the workloads both have, paired by core and workload id
    delta = sb.wl_time[rows_b] - sa.wl_time[rows_a]
    moved = np.flatnonzero(delta != 0)
    moved = moved[np.argsort(-np.abs(delta[moved]), kind="stable")]
    if limit is not None and moved.size > limit:
        left_out["duration"] = int(moved.size) - limit
    for k in (moved if limit is None else moved[:limit]).tolist():
        row_a, row_b = int(rows_a[k]), int(rows_b[k])
        changes.append(
            {
                "kind": "duration",
                "core": int(sa.wl_core[row_a]),
                "workload_id": int(sa.wl_id[row_a]),
                "layer": sb.layers[sb.wl_layer[row_b]],
                "a": float(sa.wl_time[row_a]),
                "b": float(sb.wl_time[row_b]),
                "delta": float(delta[k]),
            }
        )
    summary["durations_changed"] = int(moved.size)
    buffer_changes = _buffer_changes(sa, sb)
    transfer_changes, endpoint_changes = _transfer_changes(sa, sb, limit)
    problem_changes = _problem_changes(a, b)
    incident_changes = _incident_changes(a, b, limit)
    only_a = np.flatnonzero(~np.isin(np.arange(sa.n_workloads), rows_a, kind="table"))
    only_b = np.flatnonzero(~np.isin(np.arange(sb.n_workloads), rows_b, kind="table"))
    added = sorted(zip(sb.wl_core[only_b].tolist(), sb.wl_id[only_b].tolist(), strict=True))
    removed = list(zip(sa.wl_core[only_a].tolist(), sa.wl_id[only_a].tolist(), strict=True))
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
    names_a, names_b = np.asarray(sa.layers, dtype=object), np.asarray(sb.layers, dtype=object)
    renamed = np.flatnonzero(names_a[sa.wl_layer[rows_a]] != names_b[sb.wl_layer[rows_b]]) if rows_a.size else ()
    for k in list(renamed):
        row_a, row_b = int(rows_a[k]), int(rows_b[k])
        changes.append({"kind": "layer-changed", "core": int(sa.wl_core[row_a]), "workload_id": int(sa.wl_id[row_a]),
                        "a": sa.layers[sa.wl_layer[row_a]], "b": sb.layers[sb.wl_layer[row_b]]})  # fmt: skip
    for found in (layer_deltas, transfer_changes, endpoint_changes, buffer_changes, incident_changes,
                  problem_changes):  # fmt: skip
        changes += _listed(found, limit, left_out)
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


def _workload_keys(s: Schedule) -> np.ndarray:
    """One int64 per workload for (core, workload id), so two files' workloads match with a sort."""
    wl = s.wl_id.astype(np.int64)
    if wl.size and (wl.min() < -(2**39) or wl.max() >= 2**39):  # ids beyond any real file: ranks instead
        wl = np.unique(wl, return_inverse=True)[1].astype(np.int64)
    return (s.wl_core.astype(np.int64) << 40) + (wl + 2**39)


def match_rows(sa: Schedule, sb: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """(rows of A, rows of B) of the workloads both files have (by core and workload id), in A's order."""
    key_a, key_b = _workload_keys(sa), _workload_keys(sb)
    order_b = np.argsort(key_b, kind="stable")
    at = np.clip(np.searchsorted(key_b, key_a, sorter=order_b), 0, max(key_b.size - 1, 0))
    if not key_b.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    found = key_b[order_b[at]] == key_a
    return np.flatnonzero(found), order_b[at[found]]


def _placements(s: Schedule, side: bool) -> tuple[np.ndarray, ...]:
    """(row, id, address, size) of every L2 (or WL0) placement, the row of the snapshot it is in."""
    if side:
        ptr, ident, address, size = s.w0_ptr, s.w0_tid, s.w0_addr, s.w0_size
    else:
        ptr, ident, address, size = s.buf_ptr, s.buf_tensor, s.buf_addr, s.buf_size
    row = np.repeat(np.arange(s.n_workloads), np.diff(ptr))
    return row, ident, address, size


def _fingerprints(ptr: np.ndarray, columns: list[np.ndarray]) -> np.ndarray:
    """Per snapshot: an order-free sum of its placements' hashes (uint64, wrapping), to skip equal snapshots."""
    h = np.zeros(columns[0].size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k, column in enumerate(columns):
            h = h * np.uint64(0x9E3779B97F4A7C15) + (column.astype(np.uint64) + np.uint64(k + 1))
            h ^= h >> np.uint64(29)
        sums = np.concatenate([[np.uint64(0)], np.cumsum(h, dtype=np.uint64)])
        return sums[ptr[1:]] - sums[ptr[:-1]]


def _buffer_changes(sa: Schedule, sb: Schedule) -> list[dict[str, Any]]:
    """Placements added or removed in each workload's L2 and WL0 snapshots (id, address, size), for the
    workloads both files have; in workload order. Snapshots whose count and fingerprint agree are skipped
    before the exact comparison."""
    rows_a, rows_b = match_rows(sa, sb)
    found = []
    for side, name, what in ((False, "l2", "tensor"), (True, "wl0", "transfer")):
        row_a, *rest_a = _placements(sa, side)
        row_b, *rest_b = _placements(sb, side)
        ptr_a, ptr_b = (sa.w0_ptr, sb.w0_ptr) if side else (sa.buf_ptr, sb.buf_ptr)
        same = (np.diff(ptr_a)[rows_a] == np.diff(ptr_b)[rows_b]) & (
            _fingerprints(ptr_a, rest_a)[rows_a] == _fingerprints(ptr_b, rest_b)[rows_b]
        )
        differ_a = np.zeros(sa.n_workloads, dtype=bool)
        differ_b = np.zeros(sb.n_workloads, dtype=bool)
        differ_a[rows_a[~same]] = True
        differ_b[rows_b[~same]] = True
        keep_a, keep_b = differ_a[row_a], differ_b[row_b]
        columns_a = [sa.wl_core[row_a[keep_a]], sa.wl_id[row_a[keep_a]], *(c[keep_a] for c in rest_a)]
        columns_b = [sb.wl_core[row_b[keep_b]], sb.wl_id[row_b[keep_b]], *(c[keep_b] for c in rest_b)]
        keys, delta, _ = multiset_changes(columns_a, columns_b)
        for (core, wl, ident, address, size), count in zip(keys.tolist(), delta.tolist(), strict=True):
            found.append({"kind": f"{name}-placement-{'added' if count > 0 else 'removed'}", "core": core,
                          "workload_id": wl, what: ident, "address": address, "size": size,
                          "count": abs(count)})  # fmt: skip
    found.sort(key=lambda c: (c["core"], c["workload_id"], c["kind"]))
    return found


def _transfer_columns(s: Schedule) -> list[np.ndarray]:
    """(core, workload, direction (0 reads, 1 writes), transfer id) of every transfer a workload reads or writes."""
    consumer = np.repeat(np.arange(s.n_workloads), np.diff(s.in_ptr))
    rows = np.concatenate([consumer, s.of_row]).astype(np.int64)
    direction = np.concatenate([np.zeros(consumer.size), np.ones(s.of_row.size)]).astype(np.int64)
    tids = np.concatenate([s.in_tid, s.of_tid]).astype(np.int64)
    return [s.wl_core[rows].astype(np.int64), s.wl_id[rows], direction, tids]


def _transfer_changes(sa: Any, sb: Any, limit: int | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Transfer ids each core's workloads read or write, added or removed; and the transfers both files have
    whose endpoints differ (the same id, written or read by other workloads), all from one multiset difference."""
    columns_a, columns_b = _transfer_columns(sa), _transfer_columns(sb)
    keys, delta, _ = multiset_changes(columns_a, columns_b)
    changes = []
    for (core, wl, direction, tid), count in zip(keys.tolist(), delta.tolist(), strict=True):
        changes.append({"kind": "transfer-added" if count > 0 else "transfer-removed",
                        "direction": "writes" if direction else "reads", "core": core, "workload_id": wl,
                        "transfer": tid})  # fmt: skip
    changes.sort(key=lambda c: (c["kind"] != "transfer-added", c["direction"], c["core"], c["workload_id"]))
    moved = distinct(keys[:, 3]) if keys.size else np.zeros(0, dtype=np.int64)
    moved = moved[_present(moved, columns_a[3]) & _present(moved, columns_b[3])]
    endpoints: list[dict[str, Any]] = [{"kind": "transfer-endpoints", "transfer": int(tid)} for tid in moved.tolist()]
    shown = moved if limit is None else moved[:limit]
    for side, columns in (("a", columns_a), ("b", columns_b)):
        mine = np.flatnonzero(np.isin(columns[3], shown))
        ends: dict[int, tuple[list, list]] = {int(t): ([], []) for t in shown.tolist()}
        for i in mine[np.lexsort((columns[1][mine], columns[0][mine]))].tolist():
            ends[int(columns[3][i])][int(columns[2][i]) == 0].append((int(columns[0][i]), int(columns[1][i])))
        for change in endpoints[: shown.size]:
            writers, readers = ends[change["transfer"]]
            change[side] = _said(tuple(writers), tuple(readers))
    return changes, endpoints


def _present(values: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Which of a few `values` occur in a large array: one sort and a binary search each."""
    if not among.size:
        return np.zeros(values.size, dtype=bool)
    ordered = np.sort(among)
    at = np.clip(np.searchsorted(ordered, values), 0, ordered.size - 1)
    return ordered[at] == values


def _said(writers: tuple, readers: tuple) -> str:
    def side(pairs: tuple) -> str:
        return ", ".join(f"c{c} wl {w}" for c, w in pairs[:4]) + (" …" if len(pairs) > 4 else "") or "DRAM"

    return f"{side(writers)} → {side(readers)}"


def _layer_time_deltas(sa: Schedule, sb: Schedule) -> list[dict[str, Any]]:
    """Per layer name: the sum of its workloads' times in A and B, the layers that changed, largest first."""

    def per_layer(s: Schedule) -> dict[str, float]:
        sums = np.bincount(s.wl_layer, weights=s.wl_time, minlength=len(s.layers))
        return {name: float(v) for name, v in zip(s.layers, sums.tolist(), strict=False) if v}

    ta, tb = per_layer(sa), per_layer(sb)
    found: list[dict[str, Any]] = [
        {"kind": "layer-time", "layer": name, "a": ta.get(name, 0.0), "b": tb.get(name, 0.0),
         "delta": tb.get(name, 0.0) - ta.get(name, 0.0)}
        for name in sorted(set(ta) | set(tb)) if ta.get(name, 0.0) != tb.get(name, 0.0)]  # fmt: skip
    found.sort(key=lambda c: -abs(c["delta"]))
    return found


def _incident_changes(a: Document, b: Document, limit: int | None) -> list[dict[str, Any]]:
    """Overlap incidents one file has and the other not (matched by code, core and misplaced tensor)."""
    from explorer.schedule.incidents import incidents_of, name_roles

    def keyed(document: Document) -> dict[tuple, Any]:
        return {(i.code, i.core, i.introduced_by): i for i in incidents_of(document, with_roles=False)}

    before, after = keyed(a), keyed(b)
    changes = []
    for kind, mine, theirs, document in (("introduced", after, before, b), ("fixed", before, after, a)):
        changed = [i for k, i in mine.items() if k not in theirs]
        # named (roles from the file) only for the ones listed: thousands of incidents compare in a blink
        name_roles(document.scheduled(), changed if limit is None else changed[:limit], document.vocabulary.entry_kinds,
                   document.view.entry_role)  # fmt: skip
        changes += [{"kind": f"incident-{kind}", "code": i.code, "core": i.core, "workload_id": i.first_workload,
                     "message": i.line()} for i in changed]  # fmt: skip
    return changes


def _problem_changes(a: Document, b: Document) -> list[dict[str, Any]]:
    """Errors and warnings one file has and the other not (matched by code, place and ids, not by wording)."""

    def keys(document: Document) -> dict[tuple, Any]:
        found: dict[tuple, Any] = {}
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


def _nodes_summary(nodes: tuple[int, int], added: int, removed: int, changed: int, by_structure: int,
                   ops: tuple[Counter, Counter], params: tuple[dict, dict]) -> dict[str, Any]:  # fmt: skip
    """A model diff's summary (the `diff` contract's fields), however the nodes were matched."""
    ops_a, ops_b = ops
    params_a, params_b = params
    return {
        "nodes": list(nodes),
        "nodes_added": added,
        "nodes_removed": removed,
        "nodes_changed": changed,
        "nodes_matched_by_structure": by_structure,
        "op_types_delta": {op: ops_b[op] - ops_a[op] for op in sorted(set(ops_a) | set(ops_b))
                           if ops_b[op] != ops_a[op]},  # fmt: skip
        "parameter_bytes": [sum(params_a.values()), sum(params_b.values())],
        "parameter_bytes_delta": sum(params_b.values()) - sum(params_a.values()),
    }


def _graph_diff(
    a: Document, b: Document, limit: int | None, left_out: dict[str, int], as_written: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Two models through the matcher `--compare` uses (explorer.graph.match: by name, else by structure), so
    `diff` and the side-by-side screen find the same pairs, changes, removals and additions. Ops only: the
    graph's input, output and folded constant boxes are not nodes of the file's op list."""
    from explorer.graph.compare import compare_documents
    from explorer.graph.match import CHANGED, ONLY

    comparison = compare_documents(a, b, as_written)
    ga, gb, match = comparison.a, comparison.b, comparison.match
    ops_a, ops_b = comparison.ops("a"), comparison.ops("b")  # what the compare screen counts too
    changed = [n for n in ops_a if match.status_a[n] == CHANGED]
    removed = [n for n in ops_a if match.status_a[n] == ONLY]
    added = [n for n in ops_b if match.status_b[n] == ONLY]
    by_structure = [n for n in ops_a if match.a_to_b[n] >= 0 and match.by_structure[n]]
    count_a, count_b = Counter(ga.node_op[n] for n in ops_a), Counter(gb.node_op[n] for n in ops_b)
    params_a, params_b = a.view.parameter_bytes_by_dtype(), b.view.parameter_bytes_by_dtype()
    summary = _nodes_summary((len(ops_a), len(ops_b)), len(added), len(removed), len(changed), len(by_structure),
                             (count_a, count_b), (params_a, params_b))  # fmt: skip
    node_changes = []
    for n in changed:
        m = int(match.a_to_b[n])
        node_changes.append({"kind": "node-changed", "name": gb.node_label[m], "name_a": ga.node_label[n],
                             "op_a": ga.node_op[n], "op_b": gb.node_op[m], "what": match.what.get(n, ""),
                             "matched_by": "structure" if match.by_structure[n] else "name"})  # fmt: skip
    changes = _listed(node_changes, limit, left_out)
    changes += _listed([{"kind": "node-added", "name": gb.node_label[n], "op": gb.node_op[n]} for n in added],
                       limit, left_out)  # fmt: skip
    changes += _listed([{"kind": "node-removed", "name": ga.node_label[n], "op": ga.node_op[n]} for n in removed],
                       limit, left_out)  # fmt: skip
    for op, delta in summary["op_types_delta"].items():
        changes.append({"kind": "op-count", "op": op, "a": count_a[op], "b": count_b[op], "delta": delta})
    for dtype in sorted(set(params_a) | set(params_b)):
        before, after = params_a.get(dtype, 0), params_b.get(dtype, 0)
        if before != after:
            changes.append({"kind": "parameters", "dtype": dtype, "a": before, "b": after, "delta": after - before})
    return summary, changes


def _model_diff(a: Document, b: Document) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    ops_a = Counter(a.summary.get("op_types") or a.summary.get("layer_types") or {})
    ops_b = Counter(b.summary.get("op_types") or b.summary.get("layer_types") or {})
    nodes_a, nodes_b = a.view.node_signatures(), b.view.node_signatures()
    renamed = match_by_structure(nodes_a, nodes_b)  # two exports of one model name their nodes apart
    added = sorted(set(nodes_b) - set(nodes_a) - {name_b for _, name_b in renamed})
    removed = sorted(set(nodes_a) - set(nodes_b) - {name_a for name_a, _ in renamed})
    changed = sorted(name for name in set(nodes_a) & set(nodes_b) if nodes_a[name] != nodes_b[name])
    params_a, params_b = a.view.parameter_bytes_by_dtype(), b.view.parameter_bytes_by_dtype()
    summary = _nodes_summary((len(nodes_a), len(nodes_b)), len(added), len(removed), len(changed), len(renamed),
                             (ops_a, ops_b), (params_a, params_b))  # fmt: skip
    changes: list[dict[str, Any]] = []
    for name_a, name_b in renamed:  # the same place in the graph under another name: changed only if it differs
        if _attributes(nodes_a[name_a]) != _attributes(nodes_b[name_b]):
            changes.append({"kind": "node-changed", "name": name_b, "name_a": name_a, "op_a": nodes_a[name_a][0],
                            "op_b": nodes_b[name_b][0], "what": "attributes", "matched_by": "structure"})  # fmt: skip
    summary["nodes_changed"] += len(changes)
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
                "matched_by": "name",
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


def match_by_structure(
    nodes_a: dict[str, tuple[str, str]], nodes_b: dict[str, tuple[str, str]]
) -> list[tuple[str, str]]:
    """Pairs (name in A, name in B) of nodes each file names apart, matched by op type and position: the k-th
    such `Conv` of A (in graph order, which ONNX keeps topological) with the k-th of B. Two torch exports of
    one model (`/layer1/conv1/Conv` and `Conv_12`) then read as the same nodes, not all added and removed."""
    only_a = [name for name in nodes_a if name not in nodes_b]
    only_b = [name for name in nodes_b if name not in nodes_a]
    by_op: dict[str, list[str]] = {}
    for name in only_b:
        by_op.setdefault(nodes_b[name][0], []).append(name)
    taken: dict[str, int] = {}
    pairs = []
    for name in only_a:
        op = nodes_a[name][0]
        k = taken.get(op, 0)
        if k < len(by_op.get(op, ())):
            pairs.append((name, by_op[op][k]))
            taken[op] = k + 1
    return pairs


def _attributes(signature: tuple[str, str]) -> str:
    """The attribute names of a node signature (its value names differ between exports by nature)."""
    return signature[1].rpartition(" attrs ")[2]


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
        if _pair(value):  # A → B, as every other before/after line reads (was `workloads: 69, 69`)
            text = f"{human(value[0], key)} → {human(value[1], key)}"
        elif isinstance(value, dict) and value and all(_pair(v) for v in value.values()):  # per core
            text = ", ".join(f"core {k}: {human(v[0], key)} → {human(v[1], key)}" for k, v in value.items())
        else:
            text = human(value, key)
        lines.append(f"  {key.replace('_', ' ')}: {text}")
    if result.get("left_out"):
        counts = ", ".join(f"{count:,} {kind}" for kind, count in result["left_out"].items())
        lines.append(f"  and {counts} changes more than are listed (`diff --all` lists every change)")
    return lines


def _pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value)


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
