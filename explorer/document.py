"""The Document: the one in-memory form that every view (TUI, CLI, export) reads, whatever the format.

This module is the interface between a format package and everything else: a format's loader returns a
`Document` whose `view` (a `DocumentView` subclass) answers questions about its items, whose `capabilities`
say which views it offers and whose `vocabulary` gives those views their words. The tree and the details are
uniform so that one tree widget and one details panel serve every format.
"""

from __future__ import annotations

import functools
import gc
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from explorer.errors import Problem
from explorer.formatting import visible
from explorer.models.ref import Ref
from explorer.models.schedule import Schedule, SchedulePart

if TYPE_CHECKING:  # the parts a document may have, typed; imported where they are built, never by this module
    import networkx as nx

    from explorer.models.graph import GraphModel, ItemDetails
    from explorer.schedule.analysis import ScheduleAnalysis
    from explorer.schedule.timeline import PendingTimeline
    from explorer.tensors.strides import TensorLayout

# progress(done, total, stage): loaders call it now and then; the TUI turns it into a progress bar.
ProgressCallback = Callable[[float, float, str], None]


def no_progress(done: float, total: float, stage: str) -> None:
    """The default progress callback: headless callers do not need one."""


@dataclass(slots=True)
class Item:
    """A node of the uniform tree. Children are either given or produced on demand by `expand`.

    Lazy children keep huge schedules cheap: a 10^6-entry file must not build 10^6 items up front.
    `ref` is an opaque key that the document's `describe` understands (and that problems point at).
    """

    kind: str
    label: str
    ref: Ref | None = None
    children: list[Item] | None = None
    expand: Callable[[], list[Item]] | None = None

    def __post_init__(self) -> None:  # a name from the file, shown inert by every view (formatting.visible)
        self.label = visible(self.label)

    @property
    def has_children(self) -> bool:
        return bool(self.children) or self.expand is not None

    def get_children(self) -> list[Item]:
        if self.children is None:
            self.children = self.expand() if self.expand else []
            self.expand = None
        return self.children


@dataclass(frozen=True, slots=True)
class KeyHint:
    """A details value that points at a key without naming it (the core knows no front end's keys): the TUI
    writes `press <key> to <purpose>` with the key its bindings give `action`; `info`, the exports and the
    serve page write the purpose alone."""

    action: str  # an action as the TUI's bindings name it: "view('source')", "select_cursor"
    purpose: str  # what the key does, as a verb phrase: "open the source view", "jump there"

    def __str__(self) -> str:
        return self.purpose


@dataclass(slots=True)
class Section:
    """One table of the details panel: a title, column names and rows of plain values."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]

    def __post_init__(self) -> None:  # values from the file, shown inert by the details panel and the exports
        self.title = visible(self.title)
        if any(isinstance(cell, str) and visible(cell, lines=True) is not cell for row in self.rows for cell in row):
            self.rows = [[visible(c, lines=True) if isinstance(c, str) else c for c in row] for row in self.rows]


@dataclass(slots=True)
class Meta:
    format: str
    source: Path
    producer: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


_GRAPH_BUILD = threading.RLock()  # one graph built at a time, and each once


class Capability(StrEnum):
    """What a loaded document offers. The TUI builds its tabs, keys, help and palette from these; the exports
    ask for them too. A view a document does not offer is not shown at all."""

    TREE = "tree"
    DETAILS = "details"
    TIMELINE = "timeline"  # needs Document.schedule (lanes of blocks) and its analysis
    BUFFERS = "buffers"  # needs Document.schedule's address-space snapshots
    LAYOUT = "layout"  # needs Document.layouts (strided tensors inside buffers)
    SOURCE = "source"  # needs Document.sources (text members: Relay, TIR, C, MIL)
    GRAPH = "graph"  # needs DocumentView.graph_model()
    MESH = "mesh"  # needs Document.schedule's lanes placed on a mesh (xlen × ylen), more than one of them


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The words and colour meanings a format gives the shared views, so none of them says another format's
    words (TVM's storage plan is drawn by the timeline, but its axis is node order, not cycles)."""

    lane: str = "lane"  # what one timeline row is: "core", "module"
    block: str = "block"  # what one timeline block is: "workload", "node"
    time_label: str = "time"  # the timeline axis: "time (cycles)", "node order"
    time_unit: str = ""  # the unit of a block's duration, for exports: "cycles", "steps"
    block_kinds: tuple[str, ...] = ()  # names of the block kind codes (Schedule.wl_type), in code order
    memory: str = "memory"  # the address space the buffer view draws: "L2", "storage"
    entry_kinds: tuple[str, ...] = ()  # names of the address-space entry kinds (Schedule.buf_type), in code order
    side_memory: str = ""  # the second address space beside it ("WL0", "WL1"), or "" for none
    search_hint: str = "name or id"  # what the search box can find in this format

    def block_kind(self, code: int) -> str:
        return self.block_kinds[code] if 0 <= code < len(self.block_kinds) else self.block


class DocumentView:
    """What a format supplies for one loaded file: the answers every front end asks of a document.

    Subclass it in a format package and override what the format has; the defaults are the honest "nothing"
    (no details, no links, no graph). Refs are opaque to everything but the view that made them.
    """

    document: Document | None = None
    # What a session fills as it goes (caches of what was read, jobs running in worker processes): left out when
    # the document is kept by the derived-data cache and made again, empty, when it is read back
    SESSION_STATE: dict[str, Callable[[], Any]] = {}
    # Whether a kept document holds its graph (a model's, built after its deep checks): the TUI keeps such a
    # document once the graph is built rather than as soon as it is loaded
    KEEPS_GRAPH = False

    def __getstate__(self) -> dict[str, Any]:
        return {name: value for name, value in self.__dict__.items() if name not in self.SESSION_STATE}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name, make in self.SESSION_STATE.items():
            setattr(self, name, make())

    def derived_state(self) -> tuple:
        """How much the view has worked out and remembered (kept by the cache with the document): () for none."""
        return ()

    def describe(self, ref: Ref) -> list[Section]:
        """The details panel's tables for a ref."""
        return []

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        """The tree ref a problem points at (its refs plus its "location"), or None."""
        return None

    def search(self, text: str) -> list[tuple[str, Ref]]:
        """(label, ref) pairs matching `text`, best first."""
        return []

    def ancestors(self, ref: Ref) -> list[Ref]:
        """Refs from the top of the tree down to `ref`, so a view can open its way there."""
        return [ref]

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        """Where an item's data comes from and goes to: (label, ref) pairs to jump to (key g)."""
        return []

    def tensor_of(self, ref: Ref) -> int | None:
        """The tensor id an item shows, for documents with a layout view; None elsewhere."""
        return None

    def value_preview(self, ref: Ref) -> str:
        """A constant's values in a few characters (`[1, 16, 64]`), for the list of what a graph box folds; ""
        when the format cannot say cheaply."""
        return ""

    def deep_checks(self) -> list[Problem]:
        """Checks that cost more than reading the file (ONNX shape inference): `check` and the TUI run them
        once, `info` does not."""
        return []

    def bind_dims(self, dims: Mapping[str, int]) -> None:
        """The dims the user bound (`--dims`), given before the deep checks: ONNX's shape inference starts from
        them, so it carries sizes where it would invent a new symbol for each unknown (TorchScript's `unk__N`).
        A format that infers nothing ignores them."""

    def input_dims(self) -> set[str]:
        """The symbolic dims the model's inputs declare (what `--dims` may name besides those in its counts)."""
        return set()

    def timeline_checks(self, document: Document, timeline: PendingTimeline) -> list[Problem]:
        """A schedule format's checks that need the timeline, given as an explorer.schedule.timeline.
        PendingTimeline (`result()` waits for the Timeline: ask for it as late as the checks allow, its pass may
        be running in a worker process). They run after the buffer checks; their problems come before the
        buffer checks' in the document."""
        return []

    def overlaps_found(self, document: Document, rows: list[int]) -> None:
        """Hears the schedule rows whose L2 snapshots overlap as soon as they are known, while the checks still
        run (what incidents will name can be read meanwhile)."""

    def analyzed(self, document: Document) -> None:
        """Called once the neutral schedule analysis is in `document.schedule_analysis`: a format whose file
        is a schedule adds its own checks and summary here."""

    def node_signatures(self) -> dict[str, tuple[str, str]]:
        """name → (op type, what else identifies it) for every node/op of a model: what `diff` compares."""
        return {}

    def settings(self) -> dict[str, str]:
        """Where → value of what the file sets besides its graph (an ARK plan's warps, tiles, task counts and
        processor groups): `diff` lists each one that differs. {} when the format has none."""
        return {}

    def node_attributes(self, ref: Ref, as_written: bool = False) -> str:
        """A graph node's attributes as comparable text (names and values), for comparing two graphs; "" when
        the format has none or cannot say cheaply. `as_written`: an attribute written at its default counts too
        (else it is as if not written)."""
        return ""

    def parameter_bytes_by_dtype(self) -> dict[str, int]:
        """Bytes of stored parameters per dtype (HTML report, diff)."""
        return {}

    def weights(self, digests: bool = False) -> dict[str, Weight]:
        """name → each stored weight's dtype, dims and bytes, known without reading its data (what `diff`
        compares); `digests`: with a hash of its data too, read in chunks (`diff --weights`). {} elsewhere."""
        return {}

    def memory_curves(self) -> list[MemoryCurve]:
        """Bytes live per step of each memory plan (TVM's storage plan), for the HTML report."""
        return []

    _graph_cache: GraphModel | None = None

    def graph_model(self) -> GraphModel | None:
        """The document's graph for the graph view (explorer.graph.builder.GraphModel), or None; built once, on first
        use, with the cycle collector paused (many small objects, none in cycles)."""
        with _GRAPH_BUILD:  # the TUI may build it in the background while the graph view asks for it
            if self._graph_cache is None:
                from explorer.gc_pause import collector_paused

                started = time.perf_counter()
                with collector_paused():
                    self._graph_cache = self.build_graph()
                    # kept as long as the document: frozen before the collector resumes, else its first pass
                    # scans every new object at once (0.27 s holding the interpreter on a 168,000-box graph)
                    gc.freeze()
                if self.document is not None:  # what a kept document saves its next open
                    self.document.derive_seconds += time.perf_counter() - started
        return self._graph_cache

    def draws_graph(self) -> bool:
        """Whether build_graph() makes a graph (known without building it): the graph view is offered then."""
        return False

    def build_graph(self) -> GraphModel | None:
        """Build the graph (formats with one override this; see explorer.graph.builder.GraphBuilder)."""
        return None

    def counts_ops(self) -> bool:
        """Whether the graph's ops are counted (parameters, multiply-accumulates, bytes: GraphModel.op_counter),
        known without building it: `info` lists the counts then."""
        return False

    def drawn_graph(self) -> GraphModel:
        """The graph model, where only a document with a graph gets (its graph view, its exports)."""
        model = self.graph_model()
        if model is None:
            raise ValueError("this document has no graph")
        return model

    def graph_ready(self) -> bool:
        """Whether graph_model() is already built (the TUI builds big graphs once the file is shown)."""
        return self._graph_cache is not None

    def files_read(self) -> list[Path]:
        """Files the format read besides the document's source (ONNX external weights): outputs never overwrite
        them (explorer.writing.refuse_inputs). A source that is a folder covers everything inside it."""
        return []

    def entry_role(self, row: int, entry: int) -> str:
        """What an address-space entry of a schedule is, in words (its kind, layer, where it comes from): what
        an overlap incident says of each tensor. "" when the format cannot say more than the entry's kind."""
        return ""

    def instructions(self) -> InstructionTable | None:
        """The instructions of an assembly or trace, for joining them to a schedule; None elsewhere."""
        return None

    def instruction_at(self, ref: Ref) -> int | None:
        """The index into `instructions()` of the instruction `ref` shows, or None (not an instruction)."""
        return None

    def layer_of(self, ref: Ref) -> str | None:
        """The layer name an item is (a frontend IR's layer), for joining; None elsewhere."""
        return None

    def layer_names(self) -> list[str]:
        """A layer graph's layer names in layer_index order (a frontend IR), for joining; [] elsewhere."""
        return []

    def workload_tiles(self, row: int) -> frozenset[int] | None:
        """The tiles a schedule's workload (row) is cut into, by number, for checking the instructions that name
        one; None when the format or the workload does not say."""
        return None

    def batch_size(self) -> int | None:
        """How many samples one run covers (a frontend IR's shapes, a schedule's workload boxes), for joining
        companions of one batch only; None when the file does not say."""
        return None

    def graph_size_hint(self) -> int:
        """About how many nodes graph_model() will hold, known without building it (-1: unknown). The graph
        view builds small graphs at once and big ones in a worker."""
        return -1


@dataclass(frozen=True, slots=True)
class MemoryCurve:
    """Bytes live at each step of one plan, with its peak: a neutral series for the report."""

    name: str
    step_label: str
    live_bytes: Sequence[int]
    peak_bytes: int


class SourceFiles(Protocol):
    """Text members a document can show in the source view (Relay, TIR, C, MIL)."""

    def source_text(self, member: str) -> str: ...

    def language_of(self, member: str) -> str | None: ...


class TensorLayouts(Protocol):
    """Strided tensors inside buffers, for the layout view (explorer.tensors.strides.TensorLayout)."""

    def first_tensor(self) -> int: ...

    def layout(self, tensor_id: int) -> TensorLayout | None: ...

    def layout_faults(self, tensor_id: int) -> list[str]: ...

    def layouts_on(self, buffer_id: int) -> list[TensorLayout]: ...

    def buffer_bytes(self, buffer_id: int) -> int: ...

    def aliases_of(self, tensor_id: int) -> list[int]: ...

    def tensor_ids(self) -> list[int]: ...

    def report(self, tensor_id: int) -> dict[str, Any] | None:
        """first/end byte, data bytes, runs, padding, aliases: what `ir-explorer tensor` prints."""
        ...


@dataclass(frozen=True)
class Weight:
    """A stored weight as `diff` compares it: by dtype, dims and bytes, and by a hash of its data when asked."""

    dtype: str
    dims: tuple[int, ...]
    bytes: int | None
    digest: str | None = None


@dataclass(frozen=True)
class InstructionTable:
    """Instructions a document holds (an assembly or hardware trace), as neutral columns, so that they can be
    joined to a schedule's workloads. `start`/`end` are measured cycles, or None for an assembly (order only)."""

    name: list[str]
    unit: list[str]  # the unit of each instruction (CT, LD, PE, ...)
    line: np.ndarray  # 1-based line in its file
    workload: np.ndarray  # the schedule's workload id (wkl), -1 when none
    layer_index: np.ndarray  # the frontend layer it is scheduled in (slyr), -1 when none
    start: np.ndarray | None
    end: np.ndarray | None
    # True where an instruction only sets a unit up (its configuration, or control): it can run long before the
    # work it prepares, so a workload's measured time is taken over the others. None: none is known to.
    setup: np.ndarray | None = None
    # Where each instruction writes in L2, in bytes (its destination field; -1 where it writes elsewhere, DRAM or
    # WL0, or says nothing): what `explorer.schedule.plan_conformance` checks against the workload's snapshot.
    # None: the format gives no addresses.
    l2_destination: np.ndarray | None = None
    # The same for the side memory (WL0), in its unit (the schedule's WL0 addresses'): the weight loads' (`lw_`)
    # destinations, and how many units each covers (-1 where not known).
    wl0_destination: np.ndarray | None = None
    wl0_destination_size: np.ndarray | None = None
    # The destination fields that name no byte (negative, past 2**62, not a whole number): instruction → the value
    # as written, each a located warning of the join (`bad-address`), its instruction left unchecked.
    unreadable_destination: dict[int, str] = field(default_factory=dict)
    # How many bytes the L2 destination covers (-1 where not known: its first byte alone is checked); the L2 byte
    # an instruction reads (a store's, a vector op's source; -1 for none) and how many; the sizes written that are
    # none (negative, too big: instruction → the field as written), each a `bad-address` warning.
    l2_destination_size: np.ndarray | None = None
    l2_source: np.ndarray | None = None
    l2_source_size: np.ndarray | None = None
    unreadable_size: dict[int, str] = field(default_factory=dict)
    # The memory each instruction's destination and source lie in ("L2", "WL0", "DRAM", "" where none is named)
    destination_memory: list[str] | None = None
    source_memory: list[str] | None = None
    # The workload's tile each instruction works on (-1 for none), its index in the trace (inst_idx; -1, or None in
    # an assembly), and the units it waits for and that wait for it ("LD,PE"; "" for none; None: not given)
    tile: np.ndarray | None = None
    inst_idx: np.ndarray | None = None
    prev_units: list[str] | None = None
    next_units: list[str] | None = None


@dataclass
class Document:
    """Everything a format produced plus what the analyses added (problems, summary, timeline...).

    Its parts are typed and optional: the neutral data the shared views draw is in `schedule` (the parts a
    format's schedule has, explorer.models.schedule_parts), `layouts`, `sources` and the view's graph;
    `capabilities` (which views it offers) follows from which parts it has. `vocabulary` gives the words those
    views use; `view` answers the questions about its items, format-specific objects stay behind it.
    """

    meta: Meta
    tree: Item
    view: DocumentView
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    problems: list[Problem] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    graph: nx.DiGraph | None = None  # the file's own graph, for graph formats (networkx)
    schedule: Schedule | None = None  # lanes of blocks with address-space snapshots
    schedule_analysis: ScheduleAnalysis | None = None  # once analysed
    is_schedule: bool = False  # the file itself is a schedule (diff and the report compare it as one)
    layouts: TensorLayouts | None = None
    sources: SourceFiles | None = None
    # one line for the summary bar when the summary's counts do not say it well (e.g. TVM's nested modules)
    headline: str = ""
    # Non-empty for a first part of a big file shown while the rest loads (Format.preview): says what is shown.
    # Such a document has no problems yet and is not exported, compared or bookmarked.
    partial: str = ""
    # Whether the analyses may start reading what later questions will need (the incidents' roles) while the
    # checks run: `info` asks none of them, and the read would only load a busy machine.
    read_ahead: bool = True
    _deep_checked: bool = field(default=False, repr=False)
    # Where the derived-data cache keeps this document once the command or the first screen is done with it
    # (explorer.cache.documents.keep), and its problems as they were opened: the entry holds what opening the
    # file gives, with what was worked out since only where it is remembered on the analysis (`cached`), never
    # a later step's problems (deep checks)
    cache_slot: Any = field(default=None, repr=False, compare=False)
    _opened_problems: list[Problem] | None = field(default=None, repr=False, compare=False)
    # A document read back from the cache: what it had worked out then (`derived_state`); kept again only when a
    # command or the TUI has worked out more since (a `check` after an `info`, the incidents' roles named)
    _kept_state: tuple | None = field(default=None, repr=False, compare=False)
    # Seconds spent working out what it holds (its load and analyses, deep checks, graph): what its entry saves
    derive_seconds: float = field(default=0.0, repr=False, compare=False)

    def derived_state(self) -> tuple:
        """What has been worked out and remembered since the file was read: the analysis's remembered results
        and the view's (`DocumentView.derived_state`)."""
        analysis = self.schedule_analysis
        return (tuple(sorted(analysis.cached)) if analysis is not None else (), self.view.derived_state())

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["cache_slot"] = state["_kept_state"] = None
        opened = state.pop("_opened_problems", None)
        if opened is not None:
            state["problems"], state["_deep_checked"] = opened, False
        state["_opened_problems"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __post_init__(self) -> None:
        self.view.document = self
        self.headline = visible(self.headline)
        self.meta.producer = visible(self.meta.producer)
        self.meta.versions = {visible(str(k)): visible(v) for k, v in self.meta.versions.items()}
        self.summary = _visible_values(self.summary)

    def scheduled(self) -> Schedule:
        """The schedule, where only a document with one gets (its timeline, its schedule exports and checks)."""
        if self.schedule is None:
            raise ValueError(f"{self.meta.source.name} holds no schedule")
        return self.schedule

    def analysed(self) -> ScheduleAnalysis:
        """The schedule's analysis, where only an analysed schedule gets."""
        if self.schedule_analysis is None:
            raise ValueError(f"{self.meta.source.name} holds no analysed schedule")
        return self.schedule_analysis

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The views this document's parts make: a schedule's lanes the timeline, its address space the buffers
        and memory views, lanes on a mesh (more than one) the mesh, tensor layouts the layout view, source
        members the source view, a view that draws a graph the graph (not while a first part is shown alone)."""
        offered = {Capability.TREE, Capability.DETAILS}
        if self.schedule is not None:
            offered.add(Capability.TIMELINE)
            if self.schedule.has(SchedulePart.ADDRESS_SPACE):
                offered.add(Capability.BUFFERS)
            if self.schedule.has(SchedulePart.MESH) and self.schedule.core_ids.size > 1:
                offered.add(Capability.MESH)
        if self.layouts is not None:
            offered.add(Capability.LAYOUT)
        if self.sources is not None:
            offered.add(Capability.SOURCE)
        if self.view.draws_graph() and not self.partial:
            offered.add(Capability.GRAPH)
        return frozenset(offered)

    def offers(self, capability: Capability | str) -> bool:
        return Capability(capability) in self.capabilities

    def files_read(self) -> list[Path]:
        """The source (a package or bundle folder whole) and every file read with it: what no output may be."""
        return [self.meta.source, *self.view.files_read()]

    def _graph_details(self) -> tuple[GraphModel, ItemDetails] | None:
        """The graph, once built (the graph view built it), with what it adds to an item's details."""
        model = self.view.graph_model() if self.view.graph_ready() else None
        if model is None or model.item_details is None:
            return None
        return model, model.item_details

    def describe(self, ref: Ref) -> list[Section]:
        graph = self._graph_details()
        if is_group_ref(ref):  # a graph group no tree item stands for (a name scope): what the graph knows of it
            return [Section(*table) for table in graph[1].group_sections(graph[0], ref[1])] if graph else []
        sections = self.view.describe(ref)
        if graph is not None:  # a box's folded constants, the user's per-node data
            model, details = graph
            sections += [Section(*table) for table in details.extra_sections(model, ref, self.view.value_preview)]
        return sections

    def find_ref(self, refs: dict[str, Any]) -> Ref | None:
        return self.view.find_ref(refs)

    def search(self, text: str) -> list[tuple[str, Ref]]:
        return self.view.search(text)

    def ancestors(self, ref: Ref) -> list[Ref]:
        return self.view.ancestors(ref)

    def links(self, ref: Ref) -> list[tuple[str, Ref]]:
        if is_group_ref(ref):  # a graph group: the producers of what it reads, the readers of what it gives
            graph = self._graph_details()
            return graph[1].group_links(graph[0], ref[1]) if graph else []
        return self.view.links(ref)

    def tensor_of(self, ref: Ref) -> int | None:
        return self.view.tensor_of(ref)

    def bind_dims(self, dims: Mapping[str, int]) -> None:
        """`--dims` for the deep checks to start from; given before them (after, they change nothing)."""
        if dims and not self._deep_checked:
            self.view.bind_dims(dims)

    def run_deep_checks(self) -> None:
        if not self._deep_checked:
            self._deep_checked = True
            started = time.perf_counter()
            self.problems = self.problems + self.view.deep_checks()
            self.derive_seconds += time.perf_counter() - started


CHUNK = 500  # children per tree group: a node with 10^5 children must still open instantly


def chunked_items(
    start: int, stop: int, make_item: Callable[[int], Item], word: str, chunk_ref: Callable[[int], Ref]
) -> list[Item]:
    """Items for indices start..stop-1, grouped in lazily built chunks of CHUNK when there are more.

    Labels count from `start` ("workloads 0–499"); `chunk_ref(lo)` is the ref of the chunk starting at `lo`.
    """
    if stop - start <= CHUNK:
        return [make_item(i) for i in range(start, stop)]
    return [
        Item(
            "chunk",
            f"{word} {lo - start}–{min(lo + CHUNK, stop) - 1 - start}",
            chunk_ref(lo),
            expand=_chunk_items(make_item, lo, min(lo + CHUNK, stop)),
        )
        for lo in range(start, stop, CHUNK)
    ]


def _chunk_items(make_item: Callable[[int], Item], lo: int, hi: int) -> Callable[[], list[Item]]:
    """A chunk's children, made when it opens (a partial, not a closure: a kept document pickles its tree)."""
    return functools.partial(_items_between, make_item, lo, hi)


def _items_between(make_item: Callable[[int], Item], lo: int, hi: int) -> list[Item]:
    return [make_item(i) for i in range(lo, hi)]


def chunk_start(index: int, start: int = 0) -> int:
    """The first index of the chunk holding `index` (see chunked_items)."""
    return start + (index - start) // CHUNK * CHUNK


GROUP_REF = "graph-group"  # ("graph-group", group id): the selection of a graph group no tree item stands for


def group_ref(group: int) -> tuple[str, int]:
    return (GROUP_REF, group)


def is_group_ref(ref: object) -> bool:
    return isinstance(ref, tuple) and len(ref) == 2 and ref[0] == GROUP_REF and isinstance(ref[1], int)


def describe_by_kind(view: object, ref: Ref) -> list[Section]:
    """The details of `ref` from `view`'s `_describe_<kind>` method (a format's view or its details object; kind
    = ref[0], `-` read as `_`).

    A kept record can still hold junk that the loader's fast path never read; instead of failing the panel,
    such a record is described as unreadable, with the reason.
    """
    if not isinstance(ref, tuple) or not ref:
        return []
    method = getattr(view, "_describe_" + str(ref[0]).replace("-", "_"), None)
    if method is None:
        return []
    try:
        return method(*ref[1:])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, StopIteration) as error:
        return [Section("Unreadable", ("problem",), [(f"{type(error).__name__}: {error}",)])]


def _visible_values(value: Any) -> Any:
    """A summary's strings made visible, nested lists and mappings included (names from the file end up there)."""
    if isinstance(value, str):
        return visible(value, lines=True)
    if isinstance(value, dict):
        return {_visible_values(k) if isinstance(k, str) else k: _visible_values(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_visible_values(v) for v in value)
    return value
