"""A schedule's pipeline companions: the frontend IR it was scheduled from, its assembly and the ZeBu trace of
that assembly. Found beside the schedule by the naming convention (or named with --frontend/--asm/--trace),
checked to belong to the same model and batch, and joined: every workload gets the measured first start and
last end of its instructions.

The join is format-neutral: the documents answer `instructions()` and `layer_names()`; nothing here knows a
format. A companion that belongs to another model or batch is reported and not joined, never joined wrongly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from explorer.arrays import distinct
from explorer.bounded_read import regular_size, too_big
from explorer.document import Document, DocumentView, InstructionTable, Item, Section
from explorer.errors import LoadError, Problem
from explorer.models.ref import Ref
from explorer.models.schedule import Schedule, SchedulePart

SCHEDULE_NAME = re.compile(r"^(?P<model>.+)_b(?P<batch>\d+)_c(?P<cores>\d+)_bw(?P<bw>\d+)_stschedule\.json$")
KINDS = ("frontend", "asm", "trace")
AGREEMENT = 0.95  # the share of joined instructions whose layer must match the schedule's


@dataclass
class Measured:
    """A hardware trace joined to a schedule : per schedule row, the first start and the
    last end of its instructions (NaN where it has none)."""

    source: Path
    start: np.ndarray
    end: np.ndarray
    instructions: np.ndarray  # per row: how many instructions were joined to it
    makespan: float  # last end - first start over the joined instructions
    # per row, over every instruction, set-up included (NaN where it has none): what `start`/`end` leave out
    first_start: np.ndarray | None = None
    last_end: np.ndarray | None = None
    basis: str = "every instruction"  # what `start`/`end` are taken over, said in the details

    @property
    def workloads(self) -> int:
        return int((self.instructions > 0).sum())


@dataclass
class Companions:
    """The pipeline files found beside a schedule (or named on the command line) and what was joined."""

    paths: dict[str, Path] = field(default_factory=dict)  # kind (frontend, asm, trace) → file
    documents: dict[str, Document] = field(default_factory=dict)  # kind → its loaded Document
    measured: Measured | None = None
    refused: dict[str, str] = field(default_factory=dict)  # kind → why it was not joined

    def said(self, short: bool = False) -> str:
        """One line for the summary bar: which companions were found and joined (`short`: for 80 columns,
        `frontend✓ asm✓ trace✗`)."""
        if not self.paths:
            return ""
        if short:
            return " ".join(f"{kind}{'✗' if kind in self.refused else '✓'}" for kind in self.paths)
        parts = [f"{kind} ✓" if kind not in self.refused else f"{kind} ✗" for kind in self.paths]
        return "companions: " + ", ".join(parts)


_NONE = Companions()


def companions_of(document: Document) -> Companions:
    """The companions joined to `document` (none unless it is a schedule that found some)."""
    view = document.view
    return view.companions if isinstance(view, JoinedView) else _NONE


class JoinedView:
    """A schedule's view and its companions' documents answering as one: what the front ends ask a document
    (details, search, the tree's ancestors, links, the tensor shown) goes to the schedule's own view, or to
    the companion a ref ("companion", kind, inner) names; links also lead between them. Everything else is the
    schedule's view's (delegated), so the document, the views and the exports need not know of companions.
    """

    def __init__(self, inner: Any, companions: Companions, document: Document) -> None:
        self.inner = inner
        self.companions = companions
        self.document = document

    def __getattr__(self, name: str) -> Any:  # only for what is not defined here
        return getattr(self.inner, name)

    def describe(self, ref: Ref) -> list[Section]:
        return describe_companion(self.document, ref) if _is_companion(ref) else self.inner.describe(ref)

    def search(self, text: str) -> list[tuple[str, Ref]]:
        return self.inner.search(text) + search_companions(self.document, text)

    def ancestors(self, ref: Ref) -> list[Ref]:
        return companion_ancestors(self.document, ref) if _is_companion(ref) else self.inner.ancestors(ref)

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        own = [] if _is_companion(ref) else self.inner.links(ref)
        return own + companion_links(self.document, ref)

    def tensor_of(self, ref: Ref) -> int | None:
        return None if _is_companion(ref) else self.inner.tensor_of(ref)

    def files_read(self) -> list[Path]:
        """The schedule's own, and its companions (found beside it or named): outputs never overwrite them."""
        return [*self.inner.files_read(), *self.companions.paths.values()]


def _is_companion(ref: Ref) -> bool:
    return isinstance(ref, tuple) and len(ref) == 3 and ref[0] == "companion"


MAX_COMPANION_BYTES = 512 * 2**20  # the real samples are 130-180 KB each; a trace of a big schedule is many times that
COMPANION_WHAT = {"frontend": "a frontend IR", "asm": "an assembly", "trace": "a trace"}
LIMIT_VARIABLE = "IR_EXPLORER_MAX_COMPANION_SIZE"  # bytes; what --max-companion-size sets


def companion_limit() -> int:
    """The largest companion that is read (--max-companion-size, passed on to workers and serve's sessions)."""
    text = os.environ.get(LIMIT_VARIABLE, "")
    return int(text) if text.isdigit() else MAX_COMPANION_BYTES


def find_companions(schedule_path: Path) -> dict[str, Path]:
    """The companion files beside a schedule named `<model>_b<B>_c<C>_bw<W>_stschedule.json`: the frontend IR
    `<model>_b<B>.json`, the trace `<model>_b<B>_c<C>_bw<W>_sim.txt` and the assembly `..._asm.txt`, whose
    model part may be cut short (`sim_quanti` for `sim_quantized`). {} when the name does not follow it."""
    match = SCHEDULE_NAME.match(schedule_path.name)
    if not match:
        return {}
    model, batch, cores, bw = match["model"], match["batch"], match["cores"], match["bw"]
    folder = schedule_path.parent
    wanted = {
        "frontend": f"_b{batch}.json",
        "asm": f"_b{batch}_c{cores}_bw{bw}_asm.txt",
        "trace": f"_b{batch}_c{cores}_bw{bw}_sim.txt",
    }
    found: dict[str, Path] = {}
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return {}
    for kind, suffix in wanted.items():
        stems = [name[: -len(suffix)] for name in names if name.endswith(suffix)]
        fitting = [stem for stem in stems if stem == model or (len(stem) >= 4 and model.startswith(stem))]
        if fitting:  # the same model, or its name cut short; the longest such name wins
            found[kind] = folder / (max(fitting, key=len) + suffix)
    return found


def attach_companions(
    document: Document, given: dict[str, Path | None] | None, open_document: Callable[..., Document]
) -> Companions:
    """Find (or take) the schedule's companions, load them (with `open_document`: the caller's entry, so this
    module imports no loader) and join the trace. When any is found, the document's view becomes a
    `JoinedView` answering for the schedule and its companions. Problems of the join go to the document's
    problems with the companion's file in their location; a companion that cannot be loaded is reported, and
    the schedule stays as it is."""
    companions = Companions()
    if not document.is_schedule or document.schedule is None:
        return companions
    paths = find_companions(document.meta.source)
    paths.update({kind: Path(path) for kind, path in (given or {}).items() if path})
    companions.paths = {kind: paths[kind] for kind in KINDS if kind in paths}
    for kind, path in companions.paths.items():
        try:
            size, limit = regular_size(path), companion_limit()
            if size > limit:  # found by name: anyone may have put it there, judged before a byte is read
                raise LoadError(path, "", too_big(size, limit, COMPANION_WHAT[kind], "--max-companion-size"))
            companions.documents[kind] = open_document(path)
        except LoadError as error:
            companions.refused[kind] = f"cannot be read: {error.message}"
            where = f"{path.name}: {error.location}" if error.location else path.name
            document.problems.append(Problem("warning", "companion-unreadable",
                                             f"{kind} companion {path.name}: {error.message}", where))  # fmt: skip
    layer_names = None
    frontend = companions.documents.get("frontend")
    if frontend is not None:
        layer_names = frontend.view.layer_names()
        if not layer_names:
            companions.refused["frontend"] = f"{frontend.meta.format} is not a frontend IR"
            layer_names = None
        else:
            missing = sorted(set(document.schedule.layers) - set(layer_names))
            ours, theirs = document.view.batch_size(), frontend.view.batch_size()
            if len(missing) > len(document.schedule.layers) * (1 - AGREEMENT):
                companions.refused["frontend"] = (f"{len(missing)} of the schedule's {len(document.schedule.layers)} "
                                                  "layers are not in it: another model")  # fmt: skip
                layer_names = None
            elif ours is not None and theirs is not None and ours != theirs:  # same layers, another batch
                companions.refused["frontend"] = (f"its shapes are batch {theirs}, the schedule's workloads cover "
                                                  f"batch {ours}: another batch")  # fmt: skip
                layer_names = None
    checked_addresses = False  # the assembly and the trace hold the same instructions: their addresses once
    for kind in ("asm", "trace"):
        other = companions.documents.get(kind)
        if other is None:
            continue
        table = other.view.instructions()
        if table is None:
            companions.refused[kind] = f"{other.meta.format} holds no instructions"
            continue
        rows = rows_of(document, table)  # each instruction's schedule row, once for every use below
        why = _mismatch(document, table, rows, layer_names)
        if why:
            companions.refused[kind] = why
            document.problems.append(Problem("error", "companion-mismatch", f"{kind} companion "
                                             f"{companions.paths[kind].name} was not joined: {why}",
                                             companions.paths[kind].name))  # fmt: skip
            continue
        document.problems += _unknown_workloads(table, rows, companions.paths[kind].name, kind)
        document.problems += _unknown_tiles(document.view, table, rows, companions.paths[kind].name, kind)
        if layer_names is not None:
            document.problems += _unknown_layers(table, len(layer_names), companions.paths[kind].name, kind)
        if kind == "trace" and table.start is not None:
            companions.measured = join_measurement(document, table, rows, companions.paths[kind])
        planned = document.schedule.has(SchedulePart.ADDRESS_SPACE)
        if table.l2_destination is not None and not checked_addresses and planned:
            from explorer.schedule.plan_conformance import outside_plan, unreadable_addresses, unreadable_sizes

            checked_addresses = True
            name = companions.paths[kind].name
            document.problems += unreadable_addresses(table.unreadable_destination, table.name, table.line, name)
            document.problems += unreadable_sizes(table.unreadable_size, table.name, table.line, name)
            document.problems += outside_plan(document.scheduled(), rows, table.l2_destination, table.name,
                                              table.line, name, entry_kinds=document.vocabulary.entry_kinds,
                                              sizes=table.l2_destination_size)  # fmt: skip
            if table.l2_source is not None:
                document.problems += outside_plan(document.scheduled(), rows, table.l2_source, table.name,
                                                  table.line, name, sizes=table.l2_source_size, reads=True)
            side = document.vocabulary.side_memory
            if table.wl0_destination is not None and side and document.scheduled().w0_addr.size:
                document.problems += outside_plan(document.scheduled(), rows, table.wl0_destination, table.name,
                                                  table.line, companions.paths[kind].name, side,
                                                  sizes=table.wl0_destination_size)  # fmt: skip
    for kind, why in companions.refused.items():
        if kind == "frontend":
            document.problems.append(Problem("error", "companion-mismatch", f"frontend companion "
                                             f"{companions.paths[kind].name} was not joined: {why}",
                                             companions.paths[kind].name))  # fmt: skip
    if companions.paths:
        # not a DocumentView subclass: what it does not answer itself goes to the schedule's view (__getattr__)
        document.view = cast(DocumentView, JoinedView(document.view, companions, document))
    if document.tree.children is not None:  # each joined companion's tree, under the schedule's own
        document.tree.children += [companion_root(document, kind) for kind in joined(companions)]
    return companions


TITLES = {"frontend": "Frontend IR", "asm": "Assembly", "trace": "ZeBu trace"}


def joined(companions: Companions) -> list[str]:
    return [kind for kind in KINDS if kind in companions.documents and kind not in companions.refused]


def joined_instructions(document: Document) -> dict[str, InstructionTable]:
    """The instructions of each joined assembly and trace ("asm", "trace": in that order), where they hold some."""
    companions = companions_of(document)
    found = {}
    for kind in joined(companions):
        table = companions.documents[kind].view.instructions() if kind in ("asm", "trace") else None
        if table is not None:
            found[kind] = table
    return found


def _wrap(kind: str, item: Item) -> Item:
    """A companion's tree item under the schedule: the same label, its ref tagged with the companion."""
    return Item(
        item.kind,
        item.label,
        ("companion", kind, item.ref),
        expand=(lambda: [_wrap(kind, child) for child in item.get_children()]) if item.has_children else None,
    )


def companion_root(document: Document, kind: str) -> Item:
    other = companions_of(document).documents[kind]
    root = _wrap(kind, other.tree)
    root.kind, root.label = "companion", f"{TITLES[kind]}: {companions_of(document).paths[kind].name}"
    return root


def describe_companion(document: Document, ref: tuple) -> list[Section]:
    """A companion's own details; for a joined instruction, where its operands lie in its workload's plan."""
    _, kind, inner = ref
    other = companions_of(document).documents.get(kind)
    if other is None:
        return []
    sections = other.describe(inner)
    k = other.view.instruction_at(inner)
    table = other.view.instructions()
    if k is not None and table is not None and kind not in companions_of(document).refused:
        from explorer.schedule.plan_conformance import operands_in_plan

        rows = operands_in_plan(document.scheduled(), int(rows_of(document, table)[k]), table, k,
                                document.vocabulary.entry_kinds, document.vocabulary.side_memory)  # fmt: skip
        if rows:
            sections.append(Section("In the plan", ("operand", "memory", "bytes", "entry of its workload"), rows))
    return sections


def companion_ancestors(document: Document, ref: Ref) -> list[Ref]:
    _, kind, inner = ref
    other = companions_of(document).documents.get(kind)
    if other is None:
        return [ref]
    root = ("companion", kind, other.tree.ref)
    chain = [("companion", kind, step) for step in other.ancestors(inner)]
    return [root, *[step for step in chain if step != root]]


def search_companions(document: Document, text: str) -> list[tuple[str, Ref]]:
    found: list[tuple[str, Ref]] = []
    for kind in joined(companions_of(document)):
        for label, ref in companions_of(document).documents[kind].search(text)[:50]:
            found.append((f"{TITLES[kind]}: {label}", ("companion", kind, ref)))
    return found


def companion_links(document: Document, ref: Ref) -> list[tuple[str, Ref]]:
    """Jumps between the schedule and its companions, both ways: a workload ↔ its instructions (trace, else
    assembly) ↔ its frontend layer."""
    s = document.scheduled()
    companions = companions_of(document)
    kinds = joined(companions)
    frontend = companions.documents.get("frontend") if "frontend" in kinds else None
    code = next((k for k in ("trace", "asm") if k in kinds), None)
    table = companions.documents[code].view.instructions() if code else None
    found: list[tuple[str, Ref]] = []

    def layer_link(name: str) -> None:
        if frontend is not None:
            target = frontend.find_ref({"layer": name})
            if target is not None:
                found.append((f"frontend layer {name}", ("companion", "frontend", target)))

    def instruction_links(hits: np.ndarray) -> None:
        assert code is not None and table is not None  # called only when a trace or an assembly is joined
        ids = companions.documents[code].scheduled().wl_id  # row → instruction: inverted once
        row_of = np.full(max(int(ids.max(initial=-1)) + 1, 0), -1, dtype=np.int64)
        row_of[ids] = np.arange(ids.size)
        for k in hits[:40].tolist():
            if 0 <= k < row_of.size and row_of[k] >= 0:
                where = f"instruction {table.name[k]} (line {int(table.line[k])})"
                target = ("companion", code, ("workload", int(row_of[k])))
                found.append((f"{where} in the {TITLES[code].lower()}", target))

    def workload_links(rows: np.ndarray) -> None:
        for row in rows[:40].tolist():
            found.append((f"schedule {s.wl_label(row)} ({s.layers[s.wl_layer[row]]})", ("workload", row)))

    if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "workload" and s is not None:
        row = int(ref[1])
        if table is not None:
            instruction_links(np.flatnonzero(table.workload == int(s.wl_id[row])))
        layer_link(s.layers[s.wl_layer[row]])
        return found
    if not (isinstance(ref, tuple) and len(ref) == 3 and ref[0] == "companion"):
        return found
    _, kind, inner = ref
    other = companions.documents.get(kind)
    if other is None:
        return found
    found += [(label, ("companion", kind, target)) for label, target in other.links(inner)]
    if kind in ("trace", "asm") and isinstance(inner, tuple) and inner and inner[0] == "workload":
        own = other.view.instructions()
        if own is None:
            return found
        k = int(other.scheduled().wl_id[int(inner[1])])
        rows = rows_of(document, own)
        if rows[k] >= 0:
            workload_links(np.asarray([rows[k]]))
        names = frontend.view.layer_names() if frontend is not None else []
        if 0 <= int(own.layer_index[k]) < len(names):
            layer_link(names[int(own.layer_index[k])])
    elif kind == "frontend":
        name = other.view.layer_of(inner)
        if name is not None and s is not None and name in s.layers:
            workload_links(np.flatnonzero(s.wl_layer == s.layers.index(name)))
            if table is not None:
                index = other.view.layer_names().index(name)
                instruction_links(np.flatnonzero(table.layer_index == index))
    return found


def rows_of(document: Document, table: InstructionTable) -> np.ndarray:
    """The schedule row of each instruction (by its workload id on the schedule's only core), -1 if none."""
    s = document.scheduled()
    core = int(s.core_ids[0]) if s.core_ids.size else 0
    rows = s.core_rows(core)
    ids = s.wl_id[rows.start : rows.stop]
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    at = np.searchsorted(sorted_ids, table.workload)
    at = np.minimum(at, max(sorted_ids.size - 1, 0))
    hit = (table.workload >= 0) & (sorted_ids.size > 0) & (sorted_ids[at] == table.workload) if sorted_ids.size else (
        np.zeros(table.workload.size, dtype=bool))  # fmt: skip
    return np.where(hit, rows.start + order[at], -1)


def _mismatch(document: Document, table: InstructionTable, rows: np.ndarray, layer_names: list[str] | None) -> str:
    """Why the instructions belong to another model or batch, or "" when they fit the schedule."""
    s = document.scheduled()
    if s.core_ids.size != 1:
        return (
            f"the schedule has {s.core_ids.size} cores and instructions name no core: joined only to one-core schedules"
        )
    with_workload = table.workload >= 0
    if not with_workload.any():
        return "no instruction names a workload (wkl)"
    found = (rows >= 0) & with_workload
    if found.sum() < with_workload.sum() * AGREEMENT:
        return f"{int(with_workload.sum() - found.sum())} instructions name workloads the schedule does not have"
    covered = distinct(rows[found]).size
    if covered < s.n_workloads * AGREEMENT:  # a trace of another batch covers only the workloads both have
        return f"the instructions cover {covered} of the schedule's {s.n_workloads} workloads: another batch or model"
    why = _layers_disagree(s, table, rows, found)
    if why:
        return why
    if layer_names is not None:
        scheduled = found & (table.layer_index >= 0) & (table.layer_index < len(layer_names))
        names = np.asarray(layer_names, dtype=object)
        theirs = names[table.layer_index[scheduled]]
        ours = np.asarray(s.layers, dtype=object)[s.wl_layer[rows[scheduled]]]
        agree = int((theirs == ours).sum())
        if scheduled.any() and agree < scheduled.sum() * AGREEMENT:
            return (f"only {agree} of {int(scheduled.sum())} instructions are in the layer the schedule gives their "
                    "workload: another batch or model")  # fmt: skip
    return ""


def _layers_disagree(s: Schedule, table: InstructionTable, rows: np.ndarray, found: np.ndarray) -> str:
    """Why the instructions' layers (slyr) are not the schedule's layer for layer, or "": the workloads of one
    schedule layer must sit in one slyr, and two schedule layers in two. Needs no frontend (its names are
    checked apart): a trace of another model groups the workloads otherwise."""
    placed = found & (table.layer_index >= 0)
    if not placed.any():
        return ""
    pairs = np.stack([s.wl_layer[rows[placed]].astype(np.int64), table.layer_index[placed].astype(np.int64)], 1)
    keys, counts = np.unique(pairs, axis=0, return_counts=True)
    best: dict[int, tuple[int, int]] = {}  # schedule layer → (its most common slyr, instructions there)
    for (layer, slyr), count in zip(keys.tolist(), counts.tolist(), strict=True):
        if count > best.get(layer, (0, 0))[1]:
            best[layer] = (slyr, count)
    agree = sum(count for _, count in best.values())
    if agree < placed.sum() * AGREEMENT:
        return (f"only {agree} of {int(placed.sum())} instructions are in the layer (slyr) of the other workloads of "
                "their schedule layer: another model")  # fmt: skip
    shared = len(best) - len({slyr for slyr, _ in best.values()})
    if shared > len(best) * (1 - AGREEMENT):
        return f"{shared} of the schedule's layers share an instruction layer (slyr) with another: another model"
    return ""


def _unknown_workloads(table: InstructionTable, rows: np.ndarray, name: str, kind: str) -> list[Problem]:
    stray = np.flatnonzero((table.workload >= 0) & (rows < 0))
    return [Problem("warning", "unknown-workload", f"{kind} instruction {table.name[k]} names workload "
                    f"{int(table.workload[k])}, which the schedule does not have", f"{name}: line {int(table.line[k])}")
            for k in stray[:1000].tolist()]  # fmt: skip


def _unknown_tiles(view: DocumentView, table: InstructionTable, rows: np.ndarray, name: str,
                   kind: str) -> list[Problem]:  # fmt: skip
    """A warning for each instruction naming a tile its workload does not have (the workload's tiles as the
    schedule lists them; a workload that lists none is not checked)."""
    if table.tile is None:
        return []
    named = np.flatnonzero((table.tile >= 0) & (rows >= 0))
    tiles = {row: view.workload_tiles(row) for row in distinct(rows[named]).tolist()}
    found = []
    for k in named.tolist():
        known, tile = tiles[int(rows[k])], int(table.tile[k])
        if known is None or tile in known:
            continue
        found.append(Problem("warning", "unknown-tile", f"{kind} instruction {table.name[k]} names tile {tile} of "
                             f"workload {int(table.workload[k])}, which has {_tile_numbers(known)}",
                             f"{name}: line {int(table.line[k])}", {"line": int(table.line[k])}))  # fmt: skip
        if len(found) == 1000:
            break
    return found


def _tile_numbers(tiles: frozenset[int]) -> str:
    """`tiles 0–3` when they run without a gap, else the numbers (the first 8), `no tile` for none."""
    if not tiles:
        return "no tile"
    ordered = sorted(tiles)
    if ordered[-1] - ordered[0] + 1 == len(ordered):
        return f"tile {ordered[0]}" if len(ordered) == 1 else f"tiles {ordered[0]}–{ordered[-1]}"
    shown = ", ".join(str(tile) for tile in ordered[:8])
    return f"tiles {shown}{', …' if len(ordered) > 8 else ''}"


def _unknown_layers(table: InstructionTable, layers: int, name: str, kind: str) -> list[Problem]:
    stray = np.flatnonzero(table.layer_index >= layers)
    return [Problem("warning", "unknown-layer-index", f"{kind} instruction {table.name[k]} is scheduled in layer "
                    f"{int(table.layer_index[k])} (slyr), and the frontend IR has {layers} layers",
                    f"{name}: line {int(table.line[k])}") for k in stray[:1000].tolist()]  # fmt: skip


def join_measurement(document: Document, table: InstructionTable, rows: np.ndarray, source: Path) -> Measured:
    """`rows`: each instruction's schedule row (`rows_of`), -1 where it has none."""
    s = document.scheduled()
    joined = rows >= 0
    n = s.n_workloads
    starts, ends = table.start, table.end
    assert starts is not None and ends is not None, "a measurement joins a trace (an assembly has no times)"

    def spans(chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        start, end = np.full(n, np.inf), np.full(n, -np.inf)
        np.minimum.at(start, rows[chosen], starts[chosen].astype(np.float64))
        np.maximum.at(end, rows[chosen], ends[chosen].astype(np.float64))
        counts = np.bincount(rows[chosen], minlength=n)
        start[counts == 0] = np.nan
        end[counts == 0] = np.nan
        return start, end, counts

    first_start, last_end, counts = spans(joined)
    start, end, basis = first_start, last_end, "every instruction"
    if table.setup is not None:  # set-up can run long before the work (sta_cfg at cycle 0 of a 5 M-cycle run)
        start, end, working = spans(joined & ~table.setup)
        only_setup = (working == 0) & (counts > 0)  # a workload of set-up alone: its whole span
        start[only_setup], end[only_setup] = first_start[only_setup], last_end[only_setup]
        basis = "compute and data-movement instructions (set-up and control left out)"
    span = float(ends[joined].max() - starts[joined].min()) if joined.any() else 0.0
    return Measured(source=source, start=start, end=end, instructions=counts, makespan=span,
                    first_start=first_start, last_end=last_end, basis=basis)  # fmt: skip


def measured_summary(document: Document) -> dict:
    """`info --json`'s "measured": the makespan measured on the emulator against the estimate, and per layer
    the estimated and measured cycles (a layer's measured time: the sum of its workloads' measured spans)."""
    measured = companions_of(document).measured
    if measured is None:
        return {}
    s = document.scheduled()
    estimate = document.analysed().timeline if document.schedule_analysis else None
    spans = np.nan_to_num(measured.end - measured.start)
    per_layer: dict[str, dict[str, float]] = {}
    for row in np.flatnonzero(measured.instructions > 0).tolist():
        layer = s.layers[int(s.wl_layer[row])]
        entry = per_layer.setdefault(layer, {"estimated": 0.0, "measured": 0.0})
        entry["estimated"] += float(s.wl_time[row])
        entry["measured"] += float(spans[row])
    return {
        "source": measured.source.name,
        "makespan": measured.makespan,
        "estimated_makespan": estimate.makespan if estimate else None,
        "workloads": measured.workloads,
        "per_layer": {layer: {**e, "ratio": e["measured"] / e["estimated"] if e["estimated"] else None}
                      for layer, e in per_layer.items()},  # fmt: skip
    }
