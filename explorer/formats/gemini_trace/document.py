"""The assembly or trace as a document: instructions per unit as timeline lanes (measured start and end for the
trace, file order for the assembly), the tree by unit, by workload and by layer, and every instruction's details.

Ref kinds: ("summary",), ("unit", u), ("by-workload",), ("wkl", w), ("by-layer",), ("slyr", l), and
("workload", row) for an instruction (row = its timeline row: the shared views select blocks by that ref).
"""

from __future__ import annotations

from functools import cached_property, partial
from pathlib import Path
from typing import Any

import numpy as np

from explorer.arrays import distinct
from explorer.document import (
    Document,
    DocumentView,
    InstructionTable,
    Item,
    Meta,
    Section,
    Vocabulary,
    chunked_items,
    describe_by_kind,
)
from explorer.formats.gemini_trace.lines import decode_links, decode_params
from explorer.formats.gemini_trace.operands import operands
from explorer.formats.gemini_trace.program import UNIT_TITLES, Program
from explorer.formatting import human
from explorer.models.ref import Ref
from explorer.models.schedule_parts import Lanes, assemble

BLOCK_KINDS = ("config", "operation")


def vocabulary(timed: bool) -> Vocabulary:
    return Vocabulary(
        lane="unit",
        block="instruction",
        time_label="time (cycles)" if timed else "instruction order",
        time_unit="cycles" if timed else "steps",
        block_kinds=BLOCK_KINDS,
        memory="",
        search_hint="instruction name and/or wkl N (workload), slyr N (layer), inst_idx N",
    )


def build_document(path: Path, program: Program) -> Document:
    view = TraceView(program)
    return Document(
        meta=Meta(format="gemini-trace" if program.timed else "gemini-asm", source=path, producer="Gemini compiler"),
        tree=view.tree(path.name),
        view=view,
        vocabulary=vocabulary(program.timed),
        problems=list(program.problems),
        summary=view.summary(),
        schedule=view.schedule,
        headline=view.headline(),
    )


def wait_edges(program: Program) -> tuple[np.ndarray, np.ndarray]:
    """Instruction k waits for each unit in its Prev_Insts: the latest earlier instruction of that unit."""
    last: dict[int, int] = {}
    index = {u: k for k, u in enumerate(program.units)}
    src: list[int] = []
    dst: list[int] = []
    for k, (unit, raw) in enumerate(zip(program.unit.tolist(), program.params, strict=True)):
        if b"Prev_Insts" in bytes(raw):
            for name in decode_links(raw).Prev_Insts:
                producer = last.get(index.get(name.upper(), -1))
                if producer is not None:
                    src.append(producer)
                    dst.append(k)
        last[unit] = k
    return np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)


def unit_links(program: Program) -> tuple[list[str], list[str]]:
    """Each instruction's Prev_Insts and Next_Insts as text ("LD,PE"; "" for none), for the instructions table."""
    before, after = [""] * program.n, [""] * program.n
    for k, raw in enumerate(program.params):
        if b"_Insts" in bytes(raw):
            links = decode_links(raw)
            before[k], after[k] = ",".join(links.Prev_Insts), ",".join(links.Next_Insts)
    return before, after


class TraceView(DocumentView):
    def __init__(self, program: Program) -> None:
        self.program = program
        p = program
        self.row_of = np.empty(p.n, dtype=np.int64)  # instruction → timeline row (rows grouped by unit)
        # row → instruction: grouped by unit, by start within a unit (the timeline draws each lane in time order)
        self.order = np.lexsort((p.start, p.unit))
        self.row_of[self.order] = np.arange(p.n)
        names = sorted(set(p.name))
        name_index = {name: k for k, name in enumerate(names)}
        kinds = np.fromiter(("_cfg" not in name for name in p.name), dtype=np.int64, count=p.n)
        src, dst = wait_edges(p)
        self.wait_src, self.wait_dst = src, dst
        o = self.order
        self.schedule = assemble(Lanes(
            names,
            wl_core=p.unit[o],
            wl_id=o.astype(np.int64),
            wl_layer=np.fromiter((name_index[p.name[k]] for k in o.tolist()), dtype=np.int64, count=p.n),
            wl_type=kinds[o],
            wl_time=(p.end - p.start)[o].astype(np.float64),
            core_names={u: f"{name} ({UNIT_TITLES.get(name, 'unit')})" for u, name in enumerate(p.units)},
            wl_start=p.start[o].astype(np.float64) if p.timed else None,
            dependencies=(self.row_of[src], self.row_of[dst]),
        ))

    @cached_property
    def table(self) -> InstructionTable:
        p = self.program
        units = [p.units[u] for u in p.unit.tolist()]
        # `*_cfg*` instructions configure a unit and `ct_*` ones are control: neither moves data nor computes
        setup = np.fromiter((u == "CT" or "_cfg" in n for u, n in zip(units, p.name, strict=True)), bool, p.n)
        found = operands(p)
        before, after = unit_links(p)
        return InstructionTable(
            name=p.name, unit=units, line=p.line, workload=p.wkl, layer_index=p.slyr,
            start=p.start if p.timed else None, end=p.end if p.timed else None, setup=setup,
            l2_destination=found.l2_destination, wl0_destination=found.wl0_destination,
            wl0_destination_size=found.wl0_destination_size,
            unreadable_destination=found.unreadable, l2_destination_size=found.l2_destination_size,
            l2_source=found.l2_source, l2_source_size=found.l2_source_size, unreadable_size=found.unreadable_size,
            destination_memory=found.destination_memory, source_memory=found.source_memory,
            tile=p.tile, inst_idx=p.inst_idx if p.timed else None, prev_units=before, next_units=after,
        )  # fmt: skip

    def instructions(self) -> InstructionTable:
        return self.table

    def instruction_at(self, ref: Ref) -> int | None:
        if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "workload" and isinstance(ref[1], int):
            return int(self.order[ref[1]]) if 0 <= ref[1] < self.order.size else None
        return None

    # ---- facts --------------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        return self.facts

    @cached_property
    def facts(self) -> dict[str, Any]:
        """Computed once: the tree's labels, the summary and the details all read them."""
        p = self.program
        prefixes: dict[str, int] = {}
        for prefix in p.prefix:
            prefixes[prefix] = prefixes.get(prefix, 0) + 1
        facts: dict[str, Any] = {
            "instructions": p.n,
            "units": dict(sorted(prefixes.items())),
            "lanes": {u: int((p.unit == k).sum()) for k, u in enumerate(p.units)},
            "workloads": int(distinct(p.wkl[p.wkl >= 0]).size),
            "layers": int(distinct(p.slyr[p.slyr >= 0]).size),
        }
        if p.timed:
            facts["span"] = int(p.end.max() - p.start.min()) if p.n else 0
            facts["first_start"] = int(p.start.min()) if p.n else 0
            facts["last_end"] = int(p.end.max()) if p.n else 0
            busy, idle, overlapping = {}, {}, {}
            from explorer.schedule.timeline import union_length

            for k, unit in enumerate(p.units):
                rows = np.flatnonzero(p.unit == k)
                starts, ends = p.start[rows], p.end[rows]
                busy[unit] = int(union_length(starts.astype(np.float64), ends.astype(np.float64)))
                idle[unit] = int(ends.max() - starts.min()) - busy[unit] if rows.size else 0  # gaps in its span
                order = np.argsort(starts, kind="stable")
                reach = np.maximum.accumulate(ends[order])
                overlapping[unit] = int((starts[order][1:] < reach[:-1]).sum())
            facts["busy"] = busy
            facts["idle"] = idle
            facts["overlapping"] = overlapping
        return facts

    def headline(self) -> str:
        p = self.program
        what = "trace" if p.timed else "assembly"
        span = f" · span {int(p.end.max() - p.start.min()):,} cycles" if p.timed and p.n else ""
        return f"{what} · {p.n:,} instructions on {len(p.units)} units{span}"

    # ---- tree ---------------------------------------------------------------------------------------------
    def tree(self, name: str) -> Item:
        p = self.program
        units = [
            Item("unit", f"{u} {UNIT_TITLES.get(u, '')} · {int((p.unit == k).sum()):,}", ("unit", k),
                 expand=partial(self._matching_items, p.unit, k))
            for k, u in enumerate(p.units)
        ]  # fmt: skip
        return Item("file", name, ("summary",), children=[
            Item("group", "Summary", ("summary",)),
            Item("group", f"Units ({len(p.units)})", ("units",), children=units),
            Item("group", f"By workload ({self.summary()['workloads']:,})", ("by-workload",),
                 expand=partial(self._key_items, "wkl", p.wkl, "workload")),
            Item("group", f"By layer ({self.summary()['layers']:,})", ("by-layer",),
                 expand=partial(self._key_items, "slyr", p.slyr, "layer")),
        ])  # fmt: skip

    def _key_items(self, kind: str, values: np.ndarray, word: str) -> list[Item]:
        keys = distinct(values[values >= 0]).tolist()
        return [
            Item(kind, f"{word} {key} · {int((values == key).sum()):,} instructions", (kind, key),
                 expand=partial(self._matching_items, values, key))
            for key in keys
        ]  # fmt: skip

    def _matching_items(self, values: np.ndarray, key: int) -> list[Item]:
        return self._instruction_items(np.flatnonzero(values == key))

    def _instruction_items(self, instructions: np.ndarray) -> list[Item]:
        rows = self.row_of[instructions].tolist()
        return chunked_items(0, len(rows), partial(self._row_item, rows), "instructions",
                             lambda lo: ("chunk", rows[lo]))  # fmt: skip

    def _row_item(self, rows: list[int], i: int) -> Item:
        return self._instruction_item(rows[i])

    def _instruction_item(self, row: int) -> Item:
        k = int(self.order[row])
        p = self.program
        when = f" @{int(p.start[k]):,}" if p.timed else ""
        return Item("workload", f"{p.name[k]} wkl {int(p.wkl[k])}{when}", ("workload", row))

    # ---- navigation ---------------------------------------------------------------------------------------
    def ancestors(self, ref: Ref) -> list[Ref]:
        if isinstance(ref, tuple) and ref and ref[0] == "workload":
            unit = int(self.program.unit[int(self.order[ref[1]])])
            return [("units",), ("unit", unit), ref]
        return [ref]

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        line = refs.get("line")
        if isinstance(line, int):
            hits = np.flatnonzero(self.program.line == line)
            if hits.size:
                return ("workload", int(self.row_of[int(hits[0])]))
        return None

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        if not (isinstance(ref, tuple) and ref and ref[0] == "workload"):
            return []
        k = int(self.order[ref[1]])
        p = self.program
        found = []
        for other in self.wait_src[self.wait_dst == k].tolist():
            found.append(
                (f"waits for {p.name[other]} (line {int(p.line[other])})", ("workload", int(self.row_of[other])))
            )
        for other in self.wait_dst[self.wait_src == k].tolist():
            found.append(
                (f"awaited by {p.name[other]} (line {int(p.line[other])})", ("workload", int(self.row_of[other])))
            )
        return found

    def search(self, text: str, limit: int = 200) -> list[tuple[str, Any]]:
        """A number (an inst_idx or a wkl), or words that must all hold: `wkl N`, `slyr N`, `inst_idx N` and parts
        of the name, so that a result's own label (`vp_self wkl 68 @2,024,865`) finds it again."""
        p = self.program
        if text.strip().isdigit():
            hits = np.flatnonzero((p.inst_idx == int(text)) | (p.wkl == int(text)))[:limit]
        else:
            columns = {"wkl": p.wkl, "slyr": p.slyr, "inst_idx": p.inst_idx}
            words, chosen, needles = text.strip().lower().split(), np.ones(p.n, dtype=bool), []
            k = 0
            while k < len(words):
                if words[k] in columns and k + 1 < len(words) and words[k + 1].lstrip("-").isdigit():
                    chosen &= columns[words[k]] == int(words[k + 1])
                    k += 2
                    continue
                if not words[k].startswith("@"):  # a trace label's start cycle
                    needles.append(words[k])
                k += 1
            if needles:
                chosen &= np.fromiter((all(n in name.lower() for n in needles) for name in p.name), bool, p.n)
            hits = np.flatnonzero(chosen)[:limit]
        return [(self._instruction_item(int(self.row_of[k])).label, ("workload", int(self.row_of[k])))
                for k in hits.tolist()]  # fmt: skip

    # ---- details ------------------------------------------------------------------------------------------
    def describe(self, ref: Ref) -> list[Section]:
        return describe_by_kind(self, ref)

    def _describe_summary(self) -> list[Section]:
        facts = self.summary()
        rows = [
            (key.replace("_", " "), human(value, key)) for key, value in facts.items() if not isinstance(value, dict)
        ]
        sections = [Section("Trace" if self.program.timed else "Assembly", ("property", "value"), rows)]
        lanes = facts["lanes"]
        unit_rows = []
        for unit, count in lanes.items():
            row = [unit, UNIT_TITLES.get(unit, ""), f"{count:,}"]
            if self.program.timed:
                row += [f"{facts['busy'][unit]:,}", f"{facts['idle'][unit]:,}", f"{facts['overlapping'][unit]:,}"]
            unit_rows.append(tuple(row))
        timed = ("busy cycles", "idle cycles", "overlapping") if self.program.timed else ()
        columns = ("unit", "does", "instructions", *timed)
        sections.append(Section("Units", columns, unit_rows))
        return sections

    def _describe_units(self) -> list[Section]:
        return self._describe_summary()[1:]

    def _describe_unit(self, k: int) -> list[Section]:
        return [s for s in self._describe_summary()[1:]]

    def _describe_by_workload(self) -> list[Section]:
        return [Section("Workloads", ("property", "value"), [("workloads", self.summary()["workloads"])])]

    def _describe_by_layer(self) -> list[Section]:
        return [Section("Layers", ("property", "value"), [("layers", self.summary()["layers"])])]

    def _describe_wkl(self, key: int) -> list[Section]:
        return self._describe_group(np.flatnonzero(self.program.wkl == key), f"Workload {key}")

    def _describe_slyr(self, key: int) -> list[Section]:
        return self._describe_group(np.flatnonzero(self.program.slyr == key), f"Layer {key} (slyr)")

    def _describe_group(self, rows: np.ndarray, title: str) -> list[Section]:
        p = self.program
        facts = [("instructions", f"{rows.size:,}")]
        if p.timed and rows.size:
            facts += [("first start", f"{int(p.start[rows].min()):,}"), ("last end", f"{int(p.end[rows].max()):,}"),
                      ("span (cycles)", f"{int(p.end[rows].max() - p.start[rows].min()):,}")]  # fmt: skip
        per_unit: dict[str, int] = {}
        for k in rows.tolist():
            per_unit[p.units[int(p.unit[k])]] = per_unit.get(p.units[int(p.unit[k])], 0) + 1
        facts.append(("per unit", ", ".join(f"{u} {c}" for u, c in per_unit.items())))
        return [Section(title, ("property", "value"), facts)]

    def _describe_chunk(self, row: int) -> list[Section]:
        return self._describe_workload(row)

    def _describe_workload(self, row: int) -> list[Section]:
        p = self.program
        k = int(self.order[row])
        unit = p.units[int(p.unit[k])]
        facts: list[tuple[str, Any]] = [
            ("instruction", p.name[k]),
            ("unit", f"{unit} ({UNIT_TITLES.get(unit, 'unknown unit')})"),
            ("line", str(int(p.line[k]))),  # ids, lines and parameters as the trace writes them: searchable
        ]
        if p.timed:
            start, end = int(p.start[k]), int(p.end[k])
            facts += [("inst_idx", str(int(p.inst_idx[k]))), ("start (cycles)", f"{start:,}"),
                      ("end (cycles)", f"{end:,}"), ("duration (cycles)", f"{end - start:,}")]  # fmt: skip
        else:
            facts.append(("position", f"{k:,} of {p.n:,}"))
        facts += [
            ("workload (wkl)", _absent(int(p.wkl[k]))),
            ("layer scheduled in (slyr)", _absent(int(p.slyr[k]))),
            ("layers served (clyr)", ", ".join(map(str, p.clyr[k])) or "none"),
            ("fusion layer (s_flyr)", _absent(int(p.s_flyr[k]))),
            ("fusion layers served (c_flyr)", ", ".join(map(str, p.c_flyr[k])) or "none"),
            ("tile", _absent(int(p.tile[k]))),
        ]
        sections = [Section("Instruction", ("property", "value"), facts)]
        try:
            params = decode_params(p.params[k])
        except Exception as error:  # a line kept by the fast path whose parameters are junk
            return [*sections, Section("Parameters", ("problem",), [(f"cannot be read: {error}",)])]
        rows = [(key, _plain(value)) for key, value in params.items()]
        sections.append(Section("Parameters", ("parameter", "value"), rows))
        return sections


# The instructions whose destination (`DTaddr`) is in L2, by the prefix of their name: loads from DRAM (activations,
# weights), the tensor engine, the vector processor and data transforms. A weight load into WL0 (`lw_`) may land in
# L2 or WL0 and a store (`sta_`) writes DRAM: not checked. The field is in bytes: measured on the real ResNet-34
# pipelines (README, "The plan against what ran").
def _absent(value: int) -> str:
    return "none" if value < 0 else str(value)


def _plain(value: Any) -> str:
    if isinstance(value, str) and value.startswith("<") and value.endswith(">"):  # an enum repr
        name, _, number = value[1:-1].partition(": ")
        return f"{name} ({number})"
    if isinstance(value, list):
        return "[" + ", ".join(_plain(v) for v in value) + "]" if value else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)  # an int as written: "[0, 8,191]" would read as three numbers
