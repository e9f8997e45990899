"""A schedule as the tables `query` and `export --parquet` give (issue #58): columns of numpy arrays built from
the loaded Schedule and its analysis, without copying what is already a column. Each table is built only when a
query names it, so a query of `workloads` on a big file never builds the millions of L2 rows.

The README lists every table, its columns and their units (`TABLES` is what it is checked against)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.arrays import distinct
from explorer.document import Document
from explorer.models.schedule import Schedule, SchedulePart
from explorer.schedule.buffers import entry_regions

Columns = dict[str, np.ndarray]
VARCHAR, DOUBLE, BOOLEAN, BIGINT = "VARCHAR", "DOUBLE", "BOOLEAN", "BIGINT"
MINUS_ONE = -1  # the arrays' "none": SQL reads it as NULL (explorer.schedule.query makes each table a view)


@dataclass(frozen=True)
class Column:
    """One column, declared once: what it means with its unit (the README's text), its SQL type (the same in every
    file: DuckDB would otherwise guess from each file's arrays, an all-None column having no type) and the value
    that stands for NULL in its array."""

    text: str
    sql: str = BIGINT
    null: int | None = None


FILE = Column("the schedule file", VARCHAR)


@dataclass(frozen=True)
class Table:
    """One table: what a row is, its columns, and the part of a schedule its rows come from (a trace's lanes have
    no L2: asked for `l2`, it says so rather than answer 0 rows)."""

    row: str
    columns: dict[str, Column]
    needs: SchedulePart = SchedulePart.LANES
    companions: str = ""  # its rows come from a joined companion: "instructions" (assembly or trace), "trace"


TABLES = {
    "workloads": Table("one workload (a block on a lane)", {
        "file": FILE,
        "core": Column("the lane's id"),
        "workload": Column("its workload id"),
        "layer": Column("its layer's name", VARCHAR),
        "kind": Column("its block kind, in the file's words", VARCHAR),
        "start": Column("start in the derived timeline (cycles)", DOUBLE),
        "end": Column("end in the derived timeline (cycles)", DOUBLE),
        "cycles": Column("its estimated duration (cycles)", DOUBLE),
        "measured_start": Column("first joined trace instruction's start (cycles; NULL without a trace)", DOUBLE),
        "measured_end": Column("last joined trace instruction's end (cycles; NULL without a trace)", DOUBLE),
        "measured_cycles": Column("measured_end - measured_start (cycles; NULL without a trace)", DOUBLE),
        "l2_bytes": Column("bytes of L2 in use before it (bytes)"),
        "ofmap_bytes": Column("its output's size (bytes)"),
    }),
    "l2": Table("one L2 entry of one workload's snapshot", {
        "file": FILE,
        "core": Column("the lane's id"),
        "workload": Column("the workload whose snapshot it is"),
        "tensor": Column("the tensor's id"),
        "address": Column("its first byte (bytes)"),
        "bytes": Column("its size (bytes)"),
        "role": Column("input, weight or output", VARCHAR),
        "new": Column("1 when newly added in this snapshot, 0 when not (NULL when "
                      "the file does not say)", null=MINUS_ONE),
        "region_start": Column("the first byte of the ring region holding it (bytes; NULL "
                               "when none does)", null=MINUS_ONE),
        "region_end": Column("one past the last byte of that region (bytes; NULL when none does)", null=MINUS_ONE),
    }, needs=SchedulePart.ADDRESS_SPACE),
    "wl0": Table("one WL0 (side memory) entry of one workload", {
        "file": FILE,
        "core": Column("the lane's id"),
        "workload": Column("its workload id"),
        "address": Column("its first unit (the file's WL0 unit: 64 bytes on the ResNet pipelines, README)"),
        "bytes": Column("its size (in that unit; the name kept for the queries written before)"),
        "source": Column("its source code, as the file gives it"),
        "transfer": Column("its first transfer id (NULL when none)", null=MINUS_ONE),
    }, needs=SchedulePart.SIDE_SPACE),
    "transfers": Table("one output of a workload sent to one destination (an output with "
                       "none: one row, its destination NULL), or one read from DRAM to a workload", {
        "file": FILE,
        "transfer": Column("the transfer id"),
        "core": Column("the producing lane (NULL for a read from DRAM)", null=MINUS_ONE),
        "workload": Column("the producing workload id (NULL for a read from DRAM)", null=MINUS_ONE),
        "bytes": Column("the size sent (bytes)"),
        "dst_core": Column("the consuming lane (NULL when written to DRAM or sent nowhere)", null=MINUS_ONE),
        "dst_workload": Column("the consuming workload id (NULL when none)", null=MINUS_ONE),
        "to_dram": Column("true when written to DRAM", BOOLEAN),
        "from_dram": Column("true when read from DRAM", BOOLEAN),
    }, needs=SchedulePart.TRANSFERS),
    "layers": Table("one layer", {
        "file": FILE,
        "layer": Column("its name", VARCHAR),
        "workloads": Column("its workloads"),
        "cores": Column("the lanes it runs on"),
        "cycles": Column("its workloads' estimated durations summed (cycles)", DOUBLE),
        "start": Column("its first workload's start (cycles)", DOUBLE),
        "end": Column("its last workload's end (cycles)", DOUBLE),
    }),
    "incidents": Table("one overlap incident (as `check` lists them)", {
        "file": FILE,
        "code": Column("l2-overlap or wl0-overlap", VARCHAR),
        "core": Column("the lane's id"),
        "tensor": Column("the misplaced tensor's id"),
        "first_workload": Column("the first snapshot's workload id"),
        "last_workload": Column("the last snapshot's workload id"),
        "snapshots": Column("snapshots it spans"),
        "bytes": Column("bytes overlapping (bytes)"),
        "suggested_address": Column("where it would fit (bytes; NULL when none)"),
        "shortfall_bytes": Column("how short the region was (bytes; NULL when it fits)"),
    }, needs=SchedulePart.ADDRESS_SPACE),
    "instructions": Table("one instruction of the joined assembly or trace", {
        "file": FILE,
        "companion": Column("asm or trace: the file it is read from", VARCHAR),
        "line": Column("its line in that file"),
        "inst_idx": Column("its index in the trace (inst_idx; NULL in an assembly)", null=MINUS_ONE),
        "name": Column("its name (`pe_conv`)", VARCHAR),
        "unit": Column("its unit (CT, LD, LW, PE, VP, DT, ST, SI, SO)", VARCHAR),
        "layer_index": Column("its frontend layer's index (slyr; NULL when none)", null=MINUS_ONE),
        "core": Column("its workload's lane (NULL when it names no workload of the schedule)", null=MINUS_ONE),
        "workload": Column("its workload id (wkl; NULL when none)", null=MINUS_ONE),
        "tile": Column("the workload's tile it works on (tile_num_N of the workload's tile_info; NULL when none)",
                       null=MINUS_ONE),
        "dst_memory": Column("the memory its destination lies in: L2, WL0 or DRAM (NULL when it names none)",
                             VARCHAR),
        "l2_address": Column("the L2 byte it writes (its DTaddr, bytes; NULL when it writes elsewhere)",
                             null=MINUS_ONE),
        "l2_bytes": Column("the bytes it writes from l2_address (elements × its data format; NULL where the "
                           "size is not settled: README)", null=MINUS_ONE),
        "wl0_address": Column("the WL0 unit it writes first (its DTaddr, in the unit of the wl0 table's address; "
                              "NULL when it writes elsewhere)", null=MINUS_ONE),
        "wl0_units": Column("the WL0 units it writes from wl0_address (64 bytes each: README; NULL where not "
                            "settled)", null=MINUS_ONE),
        "src_memory": Column("the memory its source lies in: L2 or DRAM (NULL when not read)", VARCHAR),
        "l2_source": Column("the L2 byte it reads (bytes: stores' and vp_self's STaddr, a convolution's input: "
                            "README; NULL otherwise)", null=MINUS_ONE),
        "l2_source_bytes": Column("the bytes it reads from l2_source (NULL where not settled)", null=MINUS_ONE),
        "start": Column("measured start (cycles; NULL in an assembly)", DOUBLE),
        "end": Column("measured end (cycles; NULL in an assembly)", DOUBLE),
        "prev_units": Column("the units it waits for (Prev_Insts, comma-separated: `LD,PE`; NULL for none)",
                             VARCHAR),
        "next_units": Column("the units that wait for it (Next_Insts; NULL for none)", VARCHAR),
    }, companions="instructions"),
    "measured": Table("one workload the joined trace measured (what ran against the plan)", {
        "file": FILE,
        "core": Column("the lane's id"),
        "workload": Column("its workload id"),
        "cycles": Column("its estimated duration (cycles)", DOUBLE),
        "measured_start": Column("its first trace instruction's start (cycles)", DOUBLE),
        "measured_end": Column("its last trace instruction's end (cycles)", DOUBLE),
        "measured_cycles": Column("measured_end - measured_start (cycles)", DOUBLE),
        "ratio": Column("measured_cycles / cycles (NULL when the estimate is 0)", DOUBLE),
        "instructions": Column("the trace instructions joined to it"),
    }, companions="trace"),
    "problems": Table("one problem (as `check` lists them)", {
        "file": FILE,
        "severity": Column("error, warning or info", VARCHAR),
        "code": Column("the problem's code", VARCHAR),
        "message": Column("what is wrong", VARCHAR),
        "location": Column("where (a JSON path)", VARCHAR),
    }),
}  # fmt: skip


def sql_type(name: str, column: str) -> str:
    return TABLES[name].columns[column].sql


def null_when(name: str, column: str) -> int | None:
    return TABLES[name].columns[column].null


def sql_types() -> dict[str, list[str]]:
    """Each SQL type and the columns of that type, every table's (a name has one type in all: tested)."""
    found: dict[str, list[str]] = {}
    for table in TABLES.values():
        for column, declared in table.columns.items():
            if column not in found.setdefault(declared.sql, []):
                found[declared.sql].append(column)
    return found


def lacking(name: str, document: Document) -> str | None:
    """Why `document` has no rows for table `name` to give (its schedule lacks the part they come from, or no
    assembly or trace is joined to it), or None."""
    if TABLES[name].companions == "instructions":
        from explorer.companions import joined_instructions

        if joined_instructions(document):
            return None
        return (f"this {document.meta.format} file has no assembly or trace joined for table {name} (put them "
                "beside it, named as its companions are)")  # fmt: skip
    if TABLES[name].companions == "trace":
        from explorer.companions import companions_of

        if companions_of(document).measured is not None:
            return None
        return (f"this {document.meta.format} file has no trace joined for table {name} (put it beside the "
                "schedule, named as its companions are, or name it with --trace)")  # fmt: skip
    part = TABLES[name].needs
    if document.scheduled().has(part):
        return None
    return f"this {document.meta.format} file has no {part} for table {name} (it has: " + \
        ", ".join(sorted(document.scheduled().parts)) + ")"


def build_table(name: str, document: Document, file: str) -> Columns:
    """Table `name` of one loaded document, each column an array of its rows."""
    columns = _BUILDERS[name](document)
    rows = len(next(iter(columns.values()))) if columns else 0
    return {"file": np.full(rows, file, dtype=object), **columns}


def _schedule(document: Document) -> Schedule:
    return document.scheduled()


def _workloads(document: Document) -> Columns:
    s = _schedule(document)
    analysis = document.schedule_analysis
    n = s.n_workloads
    kinds = np.asarray(document.vocabulary.block_kinds or ("",), dtype=object)
    from explorer.companions import companions_of

    measured = companions_of(document).measured
    joined = measured.instructions > 0 if measured is not None else np.zeros(n, dtype=bool)
    start = measured.start if measured is not None else np.full(n, np.nan)
    end = measured.end if measured is not None else np.full(n, np.nan)
    return {
        "core": s.wl_core, "workload": s.wl_id, "layer": _names(s.layers, s.wl_layer),
        "kind": kinds[np.clip(s.wl_type, 0, kinds.size - 1)] if n else np.zeros(0, dtype=object),
        "start": analysis.timeline.start if analysis is not None else np.full(n, np.nan),
        "end": analysis.timeline.end if analysis is not None else np.full(n, np.nan),
        "cycles": s.wl_time,
        "measured_start": np.where(joined, start, np.nan), "measured_end": np.where(joined, end, np.nan),
        "measured_cycles": np.where(joined, end - start, np.nan),
        "l2_bytes": analysis.l2_bytes if analysis is not None else np.zeros(n, dtype=np.int64),
        "ofmap_bytes": s.wl_ofmap_size,
    }  # fmt: skip


def _l2(document: Document) -> Columns:
    s = _schedule(document)
    rows = np.repeat(np.arange(s.n_workloads), np.diff(s.buf_ptr))
    roles = np.asarray(document.vocabulary.entry_kinds or ("input", "weight", "output"), dtype=object)
    start, end = entry_regions(s.buf_ptr, s.buf_addr, s.ring_ptr, s.ring_lo, s.ring_hi, s.buffersize)
    return {"core": s.wl_core[rows], "workload": s.wl_id[rows], "tensor": s.buf_tensor, "address": s.buf_addr,
            "bytes": s.buf_size, "role": roles[np.clip(s.buf_type, 0, roles.size - 1)], "new": s.buf_new,
            "region_start": start, "region_end": end}  # fmt: skip


def _wl0(document: Document) -> Columns:
    s = _schedule(document)
    rows = np.repeat(np.arange(s.n_workloads), np.diff(s.w0_ptr))
    return {"core": s.wl_core[rows], "workload": s.wl_id[rows], "address": s.w0_addr, "bytes": s.w0_size,
            "source": s.w0_src,
            "transfer": s.w0_tid}  # fmt: skip


def _transfers(document: Document) -> Columns:
    s = _schedule(document)
    destinations = np.diff(s.of_dst_ptr)
    output = np.repeat(np.arange(s.of_tid.size), np.maximum(destinations, 1))  # per destination (or none): its output
    sent = np.repeat(destinations > 0, np.maximum(destinations, 1))  # False: an output with no destination, one row
    row = s.of_row[output]
    dst_core, dst_workload = np.full(output.size, -1, np.int64), np.full(output.size, -1, np.int64)
    dst_core[sent], dst_workload[sent] = s.dst_core, s.dst_wl
    to_dram = np.zeros(output.size, dtype=bool)
    to_dram[sent] = s.dst_core < 0
    read = np.repeat(np.arange(s.dout_tid.size), np.diff(s.dout_dst_ptr))  # per destination: its DRAM read
    reads = read.size
    return {
        "transfer": np.concatenate([s.of_tid[output], s.dout_tid[read]]),
        "core": np.concatenate([s.wl_core[row], np.full(reads, -1)]),
        "workload": np.concatenate([s.wl_id[row], np.full(reads, -1)]),
        "bytes": np.concatenate([s.of_size[output], s.dout_size[read]]),
        "dst_core": np.concatenate([dst_core, s.dout_dst_core]),
        "dst_workload": np.concatenate([dst_workload, s.dout_dst_wl]),
        "to_dram": np.concatenate([to_dram, np.zeros(reads, dtype=bool)]),
        "from_dram": np.concatenate([np.zeros(output.size, dtype=bool), np.ones(reads, dtype=bool)]),
    }


def _layers(document: Document) -> Columns:
    s = _schedule(document)
    analysis = document.schedule_analysis
    n = len(s.layers)
    counts = np.bincount(s.wl_layer, minlength=n)
    width = int(s.wl_core.max()) + 1 if s.n_workloads else 1
    pairs = distinct(s.wl_layer.astype(np.int64) * width + s.wl_core)  # each (layer, core) once
    start = np.full(n, np.inf)
    end = np.full(n, -np.inf)
    if analysis is not None and s.n_workloads:
        np.minimum.at(start, s.wl_layer, analysis.timeline.start)
        np.maximum.at(end, s.wl_layer, analysis.timeline.end)
    return {"layer": np.asarray(s.layers, dtype=object), "workloads": counts,
            "cores": np.bincount(pairs // width, minlength=n),
            "cycles": np.bincount(s.wl_layer, weights=s.wl_time, minlength=n),
            "start": np.where(np.isfinite(start), start, np.nan),
            "end": np.where(np.isfinite(end), end, np.nan)}  # fmt: skip


def _incidents(document: Document) -> Columns:
    from explorer.schedule.pressure import explained_incidents

    incidents = explained_incidents(document)

    def column(values: list[object]) -> np.ndarray:
        return np.asarray(values, dtype=object)

    return {
        "code": column([i.code for i in incidents]), "core": column([i.core for i in incidents]),
        "tensor": column([i.tensor_ids[0] if i.tensor_ids else None for i in incidents]),
        "first_workload": column([i.first_workload for i in incidents]),
        "last_workload": column([i.last_workload for i in incidents]),
        "snapshots": column([i.snapshots for i in incidents]), "bytes": column([i.bytes for i in incidents]),
        "suggested_address": column([i.suggestion["address"] if i.suggestion else None for i in incidents]),
        "shortfall_bytes": column([i.shortfall_bytes for i in incidents]),
    }  # fmt: skip


def _problems(document: Document) -> Columns:
    found = document.problems
    return {"severity": np.asarray([p.severity for p in found], dtype=object),
            "code": np.asarray([p.code for p in found], dtype=object),
            "message": np.asarray([p.message for p in found], dtype=object),
            "location": np.asarray([p.location for p in found], dtype=object)}  # fmt: skip


def _names(names: list[str], index: np.ndarray) -> np.ndarray:
    return np.asarray(names or [""], dtype=object)[np.clip(index, 0, max(len(names) - 1, 0))]


def _instructions(document: Document) -> Columns:
    from explorer.companions import joined_instructions, rows_of

    s = _schedule(document)
    parts: list[Columns] = []
    for kind, table in joined_instructions(document).items():
        n = len(table.name)
        rows = rows_of(document, table)
        known = rows >= 0
        unmeasured = np.full(n, np.nan)
        parts.append({
            "companion": np.full(n, kind, dtype=object), "line": table.line, "inst_idx": _or_none(table.inst_idx, n),
            "name": np.asarray(table.name, dtype=object), "unit": np.asarray(table.unit, dtype=object),
            "layer_index": table.layer_index,
            "core": np.where(known, s.wl_core[np.maximum(rows, 0)], -1) if s.n_workloads else np.full(n, -1),
            "workload": table.workload, "tile": _or_none(table.tile, n),
            "dst_memory": _words(table.destination_memory, n),
            "l2_address": _or_none(table.l2_destination, n), "l2_bytes": _or_none(table.l2_destination_size, n),
            "wl0_address": _or_none(table.wl0_destination, n), "wl0_units": _or_none(table.wl0_destination_size, n),
            "src_memory": _words(table.source_memory, n),
            "l2_source": _or_none(table.l2_source, n), "l2_source_bytes": _or_none(table.l2_source_size, n),
            "start": table.start.astype(np.float64) if table.start is not None else unmeasured,
            "end": table.end.astype(np.float64) if table.end is not None else unmeasured,
            "prev_units": _words(table.prev_units, n), "next_units": _words(table.next_units, n),
        })  # fmt: skip
    if not parts:
        return {column: np.zeros(0, dtype=object if declared.sql == VARCHAR else np.float64 if declared.sql == DOUBLE
                                 else np.int64) for column, declared in TABLES["instructions"].columns.items()
                if column != "file"}  # fmt: skip
    return {column: np.concatenate([part[column] for part in parts]) for column in parts[0]}


def _or_none(values: np.ndarray | None, n: int) -> np.ndarray:
    """A column the table may not give: -1 (NULL) for every row then."""
    return values if values is not None else np.full(n, -1, dtype=np.int64)


def _words(values: list[str] | None, n: int) -> np.ndarray:
    """A text column, "" (none) as NULL."""
    return np.array([value or None for value in values] if values is not None else [None] * n, dtype=object)


def _measured(document: Document) -> Columns:
    from explorer.companions import companions_of

    s = _schedule(document)
    measured = companions_of(document).measured
    rows = np.flatnonzero(measured.instructions > 0) if measured is not None else np.zeros(0, dtype=np.int64)
    estimate = s.wl_time[rows].astype(np.float64)
    start = measured.start[rows] if measured is not None else np.zeros(0)
    end = measured.end[rows] if measured is not None else np.zeros(0)
    span = end - start
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(estimate > 0, span / np.where(estimate > 0, estimate, 1.0), np.nan)
    counts = measured.instructions[rows] if measured is not None else np.zeros(0, dtype=np.int64)
    return {"core": s.wl_core[rows], "workload": s.wl_id[rows], "cycles": estimate, "measured_start": start,
            "measured_end": end, "measured_cycles": span, "ratio": ratio,
            "instructions": counts.astype(np.int64)}  # fmt: skip


_BUILDERS: dict[str, Callable[[Document], Columns]] = {
    "workloads": _workloads, "l2": _l2, "wl0": _wl0, "transfers": _transfers, "layers": _layers,
    "incidents": _incidents, "instructions": _instructions, "measured": _measured, "problems": _problems,
}  # fmt: skip
