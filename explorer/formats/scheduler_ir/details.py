"""The details panel's sections for a schedule's items: the summary, a core, a workload with its companions'
views of it, its L2 and WL0 entries, its maps, the DRAM section."""

from __future__ import annotations

from typing import Any, Protocol

import msgspec
import numpy as np

from explorer.companions import companions_of
from explorer.document import Document, Section
from explorer.formats.scheduler_ir.codes import BUFFER_TYPES, LAYER_TYPES, WL_SOURCES
from explorer.formats.scheduler_ir.roles import object_entries
from explorer.formatting import box, human, human_bytes, number, plural
from explorer.models.schedule import Schedule
from explorer.schedule.buffer_view import tensor_residency


class ViewParts(Protocol):
    """What the details read of the schedule view (the view is one; named here, the two modules need not import
    each other)."""

    document: Document | None
    s: Schedule

    def analysis(self) -> Any: ...
    def raw(self, row: int) -> dict: ...


class ScheduleDetails:
    """What `describe` shows of each kind of ref (`describe_by_kind` finds `_describe_<kind>` here)."""

    def __init__(self, view: ViewParts) -> None:
        self.view = view
        self.s = view.s

    def _describe_summary(self) -> list[Section]:
        doc = self.view.document
        rows = [(k.replace("_", " "), human(v, k)) for k, v in (doc.summary if doc else {}).items()]
        sections = [Section("Schedule", ("property", "value"), rows)]
        analysis = self.view.analysis()
        if analysis:
            per_core = analysis.timeline.per_core
            sections.append(
                Section(
                    "Cores",
                    ("core", "mesh", "workloads", "busy", "ends at", "idle"),
                    [
                        (
                            c,
                            "x{}, y{}".format(*self.s.mesh_position(c)),
                            v["workloads"],
                            number(v["busy"]),
                            number(v["end"]),
                            number(v["idle"]),
                        )
                        for c, v in per_core.items()
                    ],
                )
            )
        return sections

    def _describe_dram(self) -> list[Section]:
        return self._describe_summary()[:1]

    def _describe_core(self, core: int) -> list[Section]:
        s = self.s
        rows = s.core_rows(core)
        x, y = s.mesh_position(core)
        props = [
            ("core", core),
            ("mesh position", f"x{x}, y{y}"),
            ("workloads", len(rows)),
            ("busy time", number(float(s.wl_time[rows.start : rows.stop].sum()))),
        ]
        analysis = self.view.analysis()
        if analysis and len(rows):
            used = analysis.l2_bytes[rows.start : rows.stop]
            peak = int(used.argmax())
            props += [
                ("ends at", number(analysis.timeline.per_core[core]["end"])),
                ("idle", number(analysis.timeline.per_core[core]["idle"])),
                ("peak L2", f"{human_bytes(int(used[peak]))} at workload {int(s.wl_id[rows.start + peak])}"),
            ]
        return [Section(f"Core {core}", ("property", "value"), props)]

    def _describe_chunk(self, core: int, lo: int, hi: int) -> list[Section]:
        return self._describe_core(core)

    def _companion_sections(self, row: int) -> list[Section]:
        """With the pipeline's companions joined: the estimate against the measurement, the workload's
        instructions (trace, else assembly) and its frontend layer."""
        document = self.view.document
        companions = companions_of(document) if document is not None else None
        if companions is None or not companions.documents:
            return []
        s = self.s
        sections: list[Section] = []
        measured = companions.measured
        if measured is not None and measured.instructions[row] > 0:
            span = float(measured.end[row] - measured.start[row])
            estimate = float(s.wl_time[row])
            rows = [
                ("estimated (cycles)", number(estimate)),
                ("measured (cycles)", f"{number(span)} ({number(measured.start[row])} → {number(measured.end[row])})"),
                ("difference", f"{span - estimate:+,.0f} cycles"),
                ("measured / estimated", f"{span / estimate:.2f}×" if estimate else "—"),
                ("measured over", measured.basis),
                ("instructions joined", f"{int(measured.instructions[row]):,}"),
            ]
            first_start, last_end = measured.first_start, measured.last_end
            if first_start is not None and last_end is not None and (first_start[row], last_end[row]) != (
                measured.start[row],
                measured.end[row],
            ):  # the whole span too, when set-up ran outside the work
                whole = float(last_end[row] - first_start[row])
                rows.append(("with set-up (cycles)", f"{number(whole)} ({number(first_start[row])} → "
                             f"{number(last_end[row])})"))  # fmt: skip
            sections.append(Section("Estimate vs measured", ("property", "value"), rows))
            mine = (s.wl_layer == s.wl_layer[row]) & (measured.instructions > 0)
            layer_span = float(np.nansum(measured.end[mine] - measured.start[mine]))
            layer_estimate = float(s.wl_time[mine].sum())
            name = s.layers[s.wl_layer[row]]
            sections.append(Section(f"Layer {name}: estimate vs measured", ("property", "value"), [
                ("workloads joined", f"{int(mine.sum()):,}"),
                ("estimated (cycles)", number(layer_estimate)),
                ("measured (cycles)", number(layer_span)),
                ("difference", f"{layer_span - layer_estimate:+,.0f} cycles"),
                ("measured / estimated", f"{layer_span / layer_estimate:.2f}×" if layer_estimate else "—"),
            ]))  # fmt: skip
        for kind in ("trace", "asm"):
            other = companions.documents.get(kind)
            if other is None or kind in companions.refused:
                continue
            table = other.view.instructions()
            if table is None:
                continue
            mine = np.flatnonzero(table.workload == int(s.wl_id[row]))[:200].tolist()
            instructions = []
            for k in mine:
                when = (f"{int(table.start[k]):,} → {int(table.end[k]):,}"
                        if table.start is not None and table.end is not None else "")  # fmt: skip
                instructions.append((table.name[k], table.unit[k], int(table.line[k]), when))
            title = f"Instructions ({kind})"
            sections.append(Section(title, ("instruction", "unit", "line", "start → end"), instructions))
            break
        frontend = companions.documents.get("frontend")
        if frontend is not None and "frontend" not in companions.refused:
            names = frontend.view.layer_names()
            layer = s.layers[s.wl_layer[row]]
            if layer in names:
                found = frontend.describe(("layer", names.index(layer)))
                sections += [Section(f"Frontend: {part.title}", part.columns, part.rows) for part in found[:2]]
        return sections

    def _describe_workload(self, row: int) -> list[Section]:
        s = self.s
        raw = self.view.raw(row)
        props: list[tuple[str, Any]] = [
            ("core", int(s.wl_core[row])),
            ("workload_id", int(s.wl_id[row])),
            ("index in file", int(s.wl_pos[row])),
            ("layer", s.layers[s.wl_layer[row]]),
            ("layer type", LAYER_TYPES[s.wl_type[row]]),
            ("time", number(s.wl_time[row])),
            ("ofmap size", human_bytes(int(s.wl_ofmap_size[row]))),
            ("workload box", box(*(raw.get("workload") or [None, None])[:2])),
            ("tile padding (t b l r)", _fmt(raw.get("tile_padding_tblr"))),
            ("ring regions", ", ".join(f"{lo:#x}-{hi:#x}" for lo, hi in raw.get("ring_buffer_info") or [])),
        ]
        analysis = self.view.analysis()
        if analysis:
            t = analysis.timeline
            props += [
                ("start → end (dependencies)", f"{number(t.start[row])} → {number(t.end[row])}"),
                ("start → end (sequential)", f"{number(t.start_sequential[row])} → {number(t.end_sequential[row])}"),
                ("L2 in use", human_bytes(int(analysis.l2_bytes[row]))),
                ("on critical path", "yes" if row in set(t.critical_path) else "no"),
            ]
            producers = analysis.deps.producers_of(row).tolist()
            consumers = analysis.deps.consumers_of(row).tolist()
            props += [
                ("producers", ", ".join(s.wl_label(r) for r in producers[:8]) or "—"),
                ("consumers", ", ".join(s.wl_label(r) for r in consumers[:8]) or "—"),
            ]
        sections = [Section(f"Workload {s.wl_label(row)}", ("property", "value"), props)]
        sections += self._companion_sections(row)
        inputs = [
            (
                "ifmap",
                ids_text(r.get("transfer_id")),
                box(r.get("lower"), r.get("upper")),
                r.get("size"),
                r.get("bitwidth"),
                r.get("align"),
            )
            for r in object_entries(raw.get("ifmap"))
        ]
        if isinstance(raw.get("weight"), dict):
            w = raw["weight"]
            inputs.append(
                ("weight", ids_text(w.get("transfer_id")), box(w.get("lower"), w.get("upper")), w.get("size"), "", "")
            )
        sections.append(Section("Inputs", ("kind", "transfers", "box", "bytes", "bits", "align"), inputs))
        sections.append(
            Section(
                "Ofmaps",
                ("transfer", "box", "bytes", "destinations"),
                [
                    (
                        o.get("transfer_id"),
                        box(o.get("lower"), o.get("upper")),
                        o.get("size"),
                        destinations_text(o.get("destination")),
                    )
                    for o in object_entries(raw.get("ofmap"))
                ],
            )
        )
        sections += self._describe_buffer(row) + self._describe_wl0(row)
        tiles = raw.get("tile_info") or {}
        if isinstance(tiles, dict) and tiles:
            sections.append(
                Section(
                    "Tiles",
                    ("tile", "ofmap box", "pred time", "cut", "loop", "mini tile"),
                    [
                        (
                            name,
                            box(t.get("ofmap_lower"), t.get("ofmap_upper")),
                            number(t.get("single_tile_time_pred", 0)),
                            t.get("cut_mode", ""),
                            t.get("loop_order", ""),
                            _fmt(t.get("out_mini_tile", "")),
                        )
                        for name, t in tiles.items()
                        if isinstance(t, dict)
                    ],
                )
            )
        return sections

    def _describe_buffer(self, row: int) -> list[Section]:
        s = self.s
        lo, hi = int(s.buf_ptr[row]), int(s.buf_ptr[row + 1])
        rows = [
            (
                int(s.buf_tensor[e]),
                BUFFER_TYPES[s.buf_type[e]],
                f"{int(s.buf_addr[e]):#x}",
                f"{int(s.buf_addr[e] + s.buf_size[e]):#x}",
                int(s.buf_size[e]),
                {1: "yes", 0: "no"}.get(int(s.buf_new[e]), ""),
                "yes" if s.buf_cur[e] else "",
            )
            for e in range(lo, hi)
        ]
        return [
            Section(
                f"L2 snapshot before {s.wl_label(row)}",
                ("tensor", "type", "start", "end", "bytes", "new", "current input"),
                rows,
            )
        ]

    def _describe_wl0(self, row: int) -> list[Section]:
        s = self.s
        lo, hi = int(s.w0_ptr[row]), int(s.w0_ptr[row + 1])
        rows = [
            (
                int(s.w0_pos[e]),
                f"{int(s.w0_addr[e]):#x}",
                f"{int(s.w0_addr[e] + s.w0_size[e]):#x}",
                int(s.w0_size[e]),
                WL_SOURCES[s.w0_src[e]],
                int(s.w0_tid[e]),
                s.layers[s.w0_layer[e]] if s.w0_layer[e] >= 0 else "",
            )
            for e in range(lo, hi)
        ]
        return [
            Section(
                f"{s.wl0_key} before {s.wl_label(row)}",
                ("entry", "start", "end", "bytes", "source", "transfer", "layer"),
                rows,
            )
        ]

    def _describe_buffer_entry(self, row: int, e: int) -> list[Section]:
        s = self.s
        entry = object_entries(self.view.raw(row).get("buffer"), keep_positions=True)[int(s.buf_pos[e])]
        tensor = int(s.buf_tensor[e])
        residency = tensor_residency(s, int(s.wl_core[row]), tensor)
        life = ""
        if residency is not None:
            first, last, snapshots = residency
            life = f"workloads {int(s.wl_id[first])}–{int(s.wl_id[last])} ({plural(snapshots, 'snapshot')})"
        props = [
            ("tensor", tensor),
            ("type", entry.get("type")),
            ("address", f"{int(s.buf_addr[e]):#x}"),
            ("end", f"{int(s.buf_addr[e] + s.buf_size[e]):#x}"),
            ("size", human_bytes(int(s.buf_size[e]))),
            ("box", box(entry.get("lower"), entry.get("upper"))),
            ("layer", entry.get("layer_name", "")),
            ("tensor order", entry.get("tensor_order")),
            ("newly added", human(entry.get("newly_added"))),
            ("current input", human(entry.get("cur_wl_ifmap"))),
            ("transfers", ids_text(entry.get("transfer_id"))),
            ("resident in", life),
        ]
        sources = [
            (
                src.get("type"),
                "DRAM" if src.get("core_id") == -1 else src.get("core_id"),  # -1 is DRAM, not a core
                src.get("layer_name", ""),
                src.get("transfer_id"),
                src.get("size"),
                box(src.get("lower"), src.get("upper")),
            )
            for src in entry.get("source") or []
            if isinstance(src, dict)
        ]
        return [
            Section(f"Tensor {tensor} in {s.wl_label(row)}", ("property", "value"), props),
            Section("Sources", ("type", "core", "layer", "transfer", "bytes", "box"), sources),
        ]

    def _describe_wl0_entry(self, row: int, e: int) -> list[Section]:
        entry = object_entries(self.view.raw(row).get(self.s.wl0_key), keep_positions=True)[int(self.s.w0_pos[e])]
        rows = [(k, _fmt(v)) for k, v in entry.items()]
        return [Section(f"{self.s.wl0_key} entry", ("property", "value"), rows)]

    def _describe_ifmap(self, row: int, k: int) -> list[Section]:
        ifmap = object_entries(self.view.raw(row).get("ifmap"), keep_positions=True)[k]
        rows = [(key, _fmt(v)) for key, v in ifmap.items()]
        return [Section(f"ifmap[{k}] of {self.s.wl_label(row)}", ("property", "value"), rows)]

    def _describe_ofmap(self, row: int, k: int) -> list[Section]:
        ofmap = object_entries(self.view.raw(row).get("ofmap"), keep_positions=True)[k]
        props = [(key, _fmt(v)) for key, v in ofmap.items() if key != "destination"]
        dests = [(d.get("type"), d.get("core_id"), d.get("workload_id", "")) for d in ofmap.get("destination") or []]
        return [
            Section(f"ofmap[{k}] of {self.s.wl_label(row)}", ("property", "value"), props),
            Section("Destinations", ("type", "core", "workload"), dests),
        ]

    def _describe_weight(self, row: int) -> list[Section]:
        return [
            Section(
                f"weight of {self.s.wl_label(row)}",
                ("property", "value"),
                [(key, _fmt(v)) for key, v in (self.view.raw(row).get("weight") or {}).items()],
            )
        ]

    def _dram(self) -> dict:
        return decode_plain(self.s.dram_raw) if self.s.dram_raw is not None else {}

    def _describe_dram_in(self, k: int) -> list[Section]:
        s = self.s
        entry = object_entries(self._dram().get("in"), keep_positions=True)[int(s.din_pos[k])]
        return [
            Section(
                f"DRAM write {entry.get('transfer_id')}",
                ("property", "value"),
                [(key, _fmt(v)) for key, v in entry.items()],
            )
        ]

    def _describe_dram_out(self, k: int) -> list[Section]:
        s = self.s
        entry = object_entries(self._dram().get("out"), keep_positions=True)[int(s.dout_pos[k])]
        props = [(key, _fmt(v)) for key, v in entry.items() if key != "destination"]
        dests = [
            (d.get("core_id"), d.get("workload_id"), d.get("layer_name", "")) for d in entry.get("destination") or []
        ]
        return [
            Section(f"DRAM read {entry.get('transfer_id')}", ("property", "value"), props),
            Section("Destinations", ("core", "workload", "layer"), dests),
        ]


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, float):
        return number(value)
    if isinstance(value, dict):
        return msgspec.json.encode(value).decode()[:120]
    return str(value)


def decode_plain(raw: Any) -> dict:
    """Details are decoded lazily from raw bytes the fast path skipped: they may still be broken."""
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as error:
        return {"_unreadable": f"{type(error).__name__}: {error}"}
    return value if isinstance(value, dict) else {"_unreadable": "not an object"}


def ids_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def destinations_text(dests: Any) -> str:
    parts = []
    for d in dests or []:
        if not isinstance(d, dict):
            continue
        parts.append("DRAM" if d.get("type") == "DRAM" else f"core {d.get('core_id')} wl {d.get('workload_id')}")
    return ", ".join(parts) or "—"
