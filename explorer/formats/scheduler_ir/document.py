"""The scheduler IR as a Document: its tree, its details tables, search and navigation targets.

Pure data for the views: every function returns plain values. Children are built lazily and workloads are
grouped in chunks so a core with 10^5 workloads opens instantly.
"""

from __future__ import annotations

import contextlib
import functools
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

from explorer import worker_pool
from explorer.document import (
    CHUNK,
    Document,
    DocumentView,
    Item,
    Meta,
    Section,
    chunk_start,
    chunked_items,
    describe_by_kind,
)
from explorer.errors import Problem
from explorer.file_spans import FileChanged
from explorer.formats.scheduler_ir.checks import transfer_problems
from explorer.formats.scheduler_ir.codes import BUFFER_TYPES, DRAM_OUT_TYPES, LAYER_TYPES, WL_SOURCES, vocabulary
from explorer.formats.scheduler_ir.details import ScheduleDetails, decode_plain, destinations_text, ids_text
from explorer.formats.scheduler_ir.roles import Role, object_entries, roles_at, roles_of
from explorer.formats.scheduler_ir.summary import schedule_summary
from explorer.formats.scheduler_ir.tiles import tiles_of
from explorer.formatting import compact, human_bytes, number, plural
from explorer.models.graph import GraphModel
from explorer.models.ref import Ref
from explorer.models.schedule import Schedule
from explorer.schedule.buffer_view import row_of_entry
from explorer.schedule.refs import WORKLOAD_PART_KINDS
from explorer.schedule.timeline import PendingTimeline

BATCH_LAYERS_READ, BATCH_ROWS_READ = 4, 64  # the batch is read from the first layers' workloads, on every core
ROLE_PREFETCH_MIN_ROWS = 256  # fewer workloads are read here in less time than a worker's round trip

def build_document(path: Path, s: Schedule, problems: list[Problem]) -> Document:
    view = ScheduleView(s)
    return Document(
        meta=Meta(
            format="scheduler-ir",
            source=path,
            producer="Gemini scheduler",
            extra={"xlen": s.xlen, "ylen": s.ylen, "buffersize": s.buffersize, "wl_buffer": s.wl0_key},
        ),
        tree=view.tree(path.name),
        view=view,
        vocabulary=vocabulary(s.wl0_key),
        problems=problems,
        schedule=s,
        is_schedule=True,
    )


class ScheduleView(DocumentView):
    # the roles read (what the incidents name) are the file's own: kept with the document; its graph is not (a
    # 168,000-box graph would make every second open read it, `info`'s too; the TUI builds it in the background)
    SESSION_STATE = {"_decoded": dict, "_role_jobs": dict, "_graph_cache": lambda: None}

    def derived_state(self) -> tuple:
        return len(self._roles), len(self._role_answers)

    def __init__(self, s: Schedule) -> None:
        self.s = s
        self.details = ScheduleDetails(self)  # what `describe` shows of each kind of ref
        self._decoded: dict[int, dict] = {}
        self._file_changed = ""  # set when a read found the file other than it was loaded: every panel says so
        self._roles: dict[int, list] = {}  # per row: its L2 entries' (type, layer, first source), for entry_role
        self._role_jobs: dict[int, tuple[list[int], Future]] = {}  # core → (rows, their roles read by a worker)
        self._role_answers: dict[int, list] = {}  # what the role jobs read, per row

    def graph_size_hint(self) -> int:
        return len(self.s.layers) + self.s.n_workloads  # layers open into their workloads: both are nodes

    def draws_graph(self) -> bool:
        return True

    def build_graph(self) -> GraphModel | None:
        """Layers that open into workloads (needs the analysis: it finds the data flowing between them)."""
        from explorer.formats.scheduler_ir.graph_model import schedule_graph

        return schedule_graph(self)

    def timeline_checks(self, document: Document, timeline: PendingTimeline) -> list[Problem]:
        """The transfers' checks (and DRAM pairs'). A first core alone would miss every producer on the other
        cores: a partial document has none."""
        return [] if document.partial else transfer_problems(self.s, lambda: timeline.result().cycle_rows)

    def overlaps_found(self, document: Document, rows: list[int]) -> None:
        if document.read_ahead and not document.partial:
            self.prefetch_roles(rows)  # read while the checks go on, for the incidents

    def analyzed(self, document: Document) -> None:
        """The schedule's own checks on top of the neutral ones, and its summary."""
        analysis = document.analysed()
        document.problems = document.problems + analysis.timeline_problems + analysis.problems
        document.summary = schedule_summary(self.s, analysis)
        summary = document.summary
        document.headline = (
            f"{plural(summary['cores'], 'core')} · {plural(summary['workloads'], 'workload')} · "
            f"{plural(summary['layers'], 'layer')} │ makespan {compact(summary['makespan'])} "
            f"(seq {compact(summary['makespan_sequential'])}) │ peak L2 "
            f"{human_bytes(summary['peak_l2_bytes'])}/{human_bytes(summary['buffer_size'])}"
        )

    # ---- tree -------------------------------------------------------------------------------------------
    def tree(self, name: str) -> Item:
        s = self.s
        children = [
            Item("summary", "Summary", ("summary",)),
            Item(
                "dram",
                f"DRAM  ({s.din_tid.size} writes, {s.dout_tid.size} reads)",
                ("dram",),
                expand=self._dram_children,
            ),
        ]
        for core in s.core_ids.tolist():
            rows = s.core_rows(core)
            x, y = s.mesh_position(core)
            children.append(
                Item(
                    "core",
                    f"core {core}  (x{x}, y{y})  · {len(rows)} workloads",
                    ("core", core),
                    expand=functools.partial(self._core_children, core),
                )
            )
        return Item("file", name, ("summary",), children=children)

    def _core_children(self, core: int) -> list[Item]:
        rows = self.s.core_rows(core)
        return chunked_items(
            rows.start, rows.stop, self._workload_item, "workloads", lambda lo: self._chunk_ref(core, lo)
        )

    def _chunk_ref(self, core: int, lo: int) -> tuple:
        return ("chunk", core, lo, min(lo + CHUNK, self.s.core_rows(core).stop))

    def workload_label(self, row: int) -> str:
        s = self.s
        return (
            f"#{int(s.wl_id[row])} {s.layers[s.wl_layer[row]]}  {LAYER_TYPES[s.wl_type[row]]}  {number(s.wl_time[row])}"
        )

    def _workload_item(self, row: int) -> Item:
        return Item(
            "workload", self.workload_label(row), ("workload", row), expand=lambda: self._workload_children(row)
        )

    def _workload_children(self, row: int) -> list[Item]:
        s = self.s
        raw = self.raw(row)
        items: list[Item] = []
        for k, ref in enumerate(object_entries(raw.get("ifmap"))):
            items.append(
                Item(
                    "ifmap",
                    f"ifmap[{k}]  transfer {ids_text(ref.get('transfer_id'))}  {human_bytes(ref.get('size', 0))}",
                    ("ifmap", row, k),
                )
            )
        for k, ref in enumerate(object_entries(raw.get("ofmap"))):
            items.append(
                Item(
                    "ofmap",
                    f"ofmap[{k}]  transfer {ref.get('transfer_id')}  → {destinations_text(ref.get('destination'))}",
                    ("ofmap", row, k),
                )
            )
        if isinstance(raw.get("weight"), dict):
            items.append(
                Item(
                    "weight",
                    f"weight  transfer {ids_text(raw['weight'].get('transfer_id'))}  "
                    f"{human_bytes(raw['weight'].get('size', 0))}",
                    ("weight", row),
                )
            )
        lo, hi = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1])
        used = int(s.buf_size[lo:hi].sum())
        items.append(
            Item(
                "buffer",
                f"L2 buffer  {hi - lo} entries, {human_bytes(used)}",
                ("buffer", row),
                expand=lambda: [self._buffer_item(row, e) for e in range(lo, hi)],
            )
        )
        w_lo, w_hi = int(s.w0_ptr[row]), int(s.w0_ptr[row + 1])
        items.append(
            Item(
                "wl0",
                f"{s.wl0_key}  {w_hi - w_lo} entries",
                ("wl0", row),
                expand=lambda: [self._wl0_item(row, e) for e in range(w_lo, w_hi)],
            )
        )
        return items

    def _buffer_item(self, row: int, e: int) -> Item:
        s = self.s
        flag = " new" if s.buf_new[e] == 1 else ""
        flag += " cur" if s.buf_cur[e] else ""
        return Item(
            "buffer-entry",
            f"tensor {int(s.buf_tensor[e])}  {BUFFER_TYPES[s.buf_type[e]]}  "
            f"{int(s.buf_addr[e]):#x}+{human_bytes(int(s.buf_size[e]))}{flag}",
            ("buffer-entry", row, e),
        )

    def _wl0_item(self, row: int, e: int) -> Item:
        s = self.s
        return Item(
            "wl0-entry",
            f"{int(s.w0_addr[e]):#x}+{int(s.w0_size[e])}  {WL_SOURCES[s.w0_src[e]]}  transfer {int(s.w0_tid[e])}",
            ("wl0-entry", row, e),
        )

    def _dram_children(self) -> list[Item]:
        s = self.s
        writes = [
            Item("dram-in", f"write {int(t)} ← core {int(c)} wl {int(w)}", ("dram-in", k))
            for k, (t, c, w) in enumerate(zip(s.din_tid, s.din_core, s.din_wl, strict=True))
        ]
        reads = [
            Item("dram-out", f"read {int(t)}  {DRAM_OUT_TYPES[ty]}  {human_bytes(int(sz))}", ("dram-out", k))
            for k, (t, ty, sz) in enumerate(zip(s.dout_tid, s.dout_type, s.dout_size, strict=True))
        ]
        return [
            Item("dram-list", f"in (writes to DRAM)  {len(writes)}", ("dram",), children=writes),
            Item("dram-list", f"out (reads from DRAM)  {len(reads)}", ("dram",), children=reads),
        ]

    # ---- navigation -------------------------------------------------------------------------------------
    def ancestors(self, ref: Ref) -> list[Ref]:
        """Refs from the top of the tree down to `ref`, so a view can expand its way there."""
        if not isinstance(ref, tuple) or not ref:
            return []
        kind = ref[0]
        if kind in ("dram-in", "dram-out"):
            return [("dram",), ref]
        if kind == "core":
            return [ref]
        if kind in WORKLOAD_PART_KINDS:
            row = ref[1]
            core = int(self.s.wl_core[row])
            path: list[Any] = [("core", core)]
            rows = self.s.core_rows(core)
            if len(rows) > CHUNK:
                path.append(self._chunk_ref(core, chunk_start(row, rows.start)))
            path.append(("workload", row))
            if kind == "buffer-entry":
                path.append(("buffer", row))
            elif kind == "wl0-entry":
                path.append(("wl0", row))
            if kind != "workload":
                path.append(ref)
            return path
        return [ref]

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        """A workload's producers and consumers on any core (the dependency analysis)."""
        if not isinstance(ref, tuple) or not ref or ref[0] != "workload" or self.analysis() is None:
            return []
        deps = self.analysis().deps
        row = ref[1]
        found = [(f"← {self.s.wl_label(int(p))}", ("workload", int(p))) for p in deps.producers_of(row)]
        return found + [(f"→ {self.s.wl_label(int(c))}", ("workload", int(c))) for c in deps.consumers_of(row)]

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        """The tree ref a problem points at: its workload when it names one, else its DRAM entry."""
        s = self.s
        if "core" in refs and "workload_id" in refs:
            row = s.row_of(int(refs["core"]), int(refs["workload_id"]))
            if row is not None:
                return ("workload", row)
        tid = refs.get("transfer_id")
        if tid is not None:
            for k in np.flatnonzero(s.din_tid == tid).tolist():
                return ("dram-in", k)
            for k in np.flatnonzero(s.dout_tid == tid).tolist():
                return ("dram-out", k)
        return None

    def search(self, text: str, limit: int = 200) -> list[tuple[str, Any]]:
        """Workloads by id or layer name, tensors by id, transfers by id."""
        s = self.s
        text = text.strip()
        hits: list[tuple[str, Any]] = []
        if not text:
            return hits
        if text.lstrip("#").isdigit():
            value = int(text.lstrip("#"))
            for row in np.flatnonzero(s.wl_id == value)[:limit].tolist():
                hits.append((f"workload core {int(s.wl_core[row])} {self.workload_label(row)}", ("workload", row)))
            for e in np.flatnonzero(s.buf_tensor == value)[:1].tolist():
                row = row_of_entry(s, e)
                hits.append((f"tensor {value} first resident at {s.wl_label(row)}", ("buffer-entry", row, e)))
            for k in np.flatnonzero(s.of_tid == value)[:1].tolist():
                row = int(s.of_row[k])
                hits.append((f"transfer {value}: ofmap of {s.wl_label(row)}", ("workload", row)))
            for k in np.flatnonzero(s.din_tid == value).tolist():
                hits.append((f"transfer {value}: DRAM write", ("dram-in", k)))
            for k in np.flatnonzero(s.dout_tid == value).tolist():
                hits.append((f"transfer {value}: DRAM read", ("dram-out", k)))
            return hits[:limit]
        needle = text.lower()
        layers = [i for i, name in enumerate(s.layers) if needle in name.lower()]
        for row in np.flatnonzero(np.isin(s.wl_layer, layers))[:limit].tolist():
            hits.append((f"core {int(s.wl_core[row])} {self.workload_label(row)}", ("workload", row)))
        return hits

    # ---- details ----------------------------------------------------------------------------------------
    def entry_role(self, row: int, entry: int) -> str:
        """What an L2 entry is, in words: its type, layer and where its data comes from. Only the snapshot's
        entries are decoded (typed, other keys skipped), once per row: incidents ask for thousands."""
        entries = self._role_entries(row)
        pos = int(self.s.buf_pos[entry])
        if pos >= len(entries):
            return ""
        kind, layer, source = entries[pos]
        where = ""
        if source is not None:
            if source.type == "DRAM":
                where = "read from DRAM"
            elif source.core_id is not None:
                where = f"from core {source.core_id}" + (f" ({source.layer_name})" if source.layer_name else "")
        return " ".join(str(part) for part in (kind, f"of {layer}" if layer else "", where) if part)

    def _role_entries(self, row: int) -> list[Role]:
        cached = self._roles.get(row)
        if cached is None:
            cached = self._prefetched_roles(row)
        if cached is not None:
            return cached
        try:
            cached = roles_of(self.s.workload_raw(row))
        except FileChanged:  # roles are a courtesy: without the file's bytes, none are named
            return []
        if len(self._roles) > 4096:
            self._roles.clear()
        self._roles[row] = cached
        return cached

    def prefetch_roles(self, rows: list[int]) -> None:
        """Start reading these workloads' roles in worker processes, a job per core, when workers are already
        running (a big file): incidents ask for thousands, one read each, and ask after the remaining checks."""
        pool = worker_pool.running_pool()
        if pool is None or len(rows) < ROLE_PREFETCH_MIN_ROWS:
            return
        s = self.s
        by_core: dict[int, list[int]] = {}
        for row in sorted(rows):
            by_core.setdefault(int(s.wl_core[row]), []).append(row)
        spans = s.core_raw
        if spans is None:
            return
        for core, core_rows in by_core.items():
            positions = s.wl_pos[core_rows].tolist()
            job = pool.submit(roles_at, str(spans.path), spans.stamp, spans.spans[core], positions)
            self._role_jobs[core] = (core_rows, job)

    def _prefetched_roles(self, row: int) -> list[Role] | None:
        job = self._role_jobs.pop(int(self.s.wl_core[row]), None)
        if job is not None:
            rows, future = job
            with contextlib.suppress(Exception):  # a worker died, or the file changed: rows are read here instead
                self._role_answers.update(zip(rows, future.result(), strict=True))
        return self._role_answers.get(row)

    def batch_size(self) -> int | None:
        """The samples a layer's workloads cover together (`workload: [[b0, ...], [b1, ...]]`): a schedule may
        split a layer's batch across its workloads (four workloads of samples 0, 1, 2 and 3 are batch 4, not
        1), on any core. Read from the first layers' workloads (a few dozen decoded, whatever the file's size);
        None when none says."""
        s = self.s
        widest = 0
        for layer in list(dict.fromkeys(s.wl_layer[: min(s.n_workloads, 32)].tolist()))[:BATCH_LAYERS_READ]:
            first, last = None, None
            for row in np.flatnonzero(s.wl_layer == layer)[:BATCH_ROWS_READ].tolist():
                box: Any = self.raw(row).get("workload")
                try:
                    b0, b1 = int(box[0][0]), int(box[1][0])
                except (TypeError, ValueError, IndexError, KeyError):
                    continue
                first = b0 if first is None else min(first, b0)
                last = b1 if last is None else max(last, b1)
            if first is not None and last is not None:
                widest = max(widest, last - first + 1)
        return widest or None

    def workload_tiles(self, row: int) -> frozenset[int] | None:
        try:
            return tiles_of(self.s.workload_raw(row))
        except FileChanged:
            return None

    def raw(self, row: int) -> dict:
        """The whole workload as JSON values, decoded on first use (and kept for the next look)."""
        cached = self._decoded.get(row)
        if cached is None:
            try:
                cached = decode_plain(self.s.workload_raw(row))
            except FileChanged as error:  # said where the workload's fields would be, not raised into a view
                self._file_changed = error.message
                return {"(not available)": error.message}
            if len(self._decoded) > 256:
                self._decoded.clear()
            self._decoded[row] = cached
        return cached

    def describe(self, ref: Ref) -> list[Section]:
        """The item's sections; once the file has changed on disk, a first section saying so, and the
        sections that needed the file's bytes (now empty) left out instead of shown blank."""
        sections = describe_by_kind(self.details, ref)
        if not self._file_changed:
            return sections
        notice = Section("File changed on disk", ("property", "value"), [
            ("note", self._file_changed),
            ("shown", "what the load kept (times, buffers, links); fields read from the file are not available"),
        ])  # fmt: skip
        return [notice, *(section for section in sections if section.rows)]

    def analysis(self) -> Any:
        return self.document.schedule_analysis if self.document else None
