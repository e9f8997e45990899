"""The JSON that leaves the explorer, as typed contracts: the `--json` outputs of info, check, diff, tensor and
graph, and the bookmarks sidecar. CI jobs and scripts read these, so their shape is written down here (pydantic
models the commands build and serialise), printed by `ir-explorer schema NAME`, committed under `schemas/`,
and held stable by a test that fails when a schema changes without its version.

Per-format facts (an info summary's keys, a diff's per-format summary) are open objects: the README lists them
per format. Everything the commands share is typed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import msgspec
from pydantic import BaseModel, ConfigDict, Field

from explorer.gc_pause import collector_paused


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)


class ProblemCounts(_Closed):
    error: int = Field(ge=0)
    warning: int = Field(ge=0)


class CompanionStatus(_Closed):
    file: str
    joined: bool
    why_not: str = Field(description="why it was not joined ('' when it was)")


class LayerTimes(_Closed):
    estimated: float = Field(description="the schedule's cycles for the layer's workloads")
    measured: float = Field(description="the sum of its workloads' measured spans (first start to last end)")
    ratio: float | None = Field(description="measured / estimated")


class MeasuredSummary(_Closed):
    source: str = Field(description="the trace file joined")
    makespan: float = Field(description="last end - first start of the joined instructions, cycles")
    estimated_makespan: float | None
    workloads: int = Field(description="workloads joined to at least one instruction")
    per_layer: dict[str, LayerTimes]


class LiveTensor(_Closed):
    tensor_id: int
    bytes: int
    address: int
    role: str = Field(description="what the tensor is, as the incidents name it")


class CorePressure(_Closed):
    """One core's L2 at its fullest (the README defines each number)."""

    capacity: int = Field(description="the L2 buffer's size (buffersize; 0 when unknown)")
    peak_bytes: int = Field(description="the largest live bytes of a snapshot on the core")
    peak_workload: int = Field(description="the first workload whose snapshot reaches the peak")
    high_water: int = Field(description="the largest end address of a placed piece on the core")
    packing: float = Field(description="peak_bytes / high_water (1.0: nothing tighter was possible)")
    live_at_peak: list[LiveTensor] = Field(description="the peak snapshot's tensors, largest first, ties by id")
    max_fragmentation: float = Field(description="the largest 1 - largest free block / free bytes of a snapshot")
    max_fragmentation_workload: int


class L2Memory(_Closed):
    cores: dict[str, CorePressure] = Field(description="core id → its pressure")


class SideCorePressure(_Closed):
    """One core's WL0 (or WL1): the numbers that make sense without a capacity, regions or tensor ids."""

    peak_bytes: int
    peak_workload: int
    high_water: int
    packing: float


class SideMemory(_Closed):
    name: str = Field(description="what the file calls it: WL0 or WL1")
    cores: dict[str, SideCorePressure]


class Memory(_Closed):
    l2: L2Memory
    wl0: SideMemory | None = Field(None, description="the side memory per core, when the file has entries in it")


class Counted(_Closed):
    """One kind of count (parameters, multiply-accumulates, activation bytes) of an op, a group or the model."""

    value: int | None = Field(description="the number, when it depends on no unbound dim; null otherwise")
    formula: str = Field(description="the count in the model's symbolic dims (`221,184·batch`), or the number "
                         "itself; `unknown` for an op whose count is not known")  # fmt: skip
    unknown_ops: int | None = Field(None, description="a sum: the ops it leaves out because their count is unknown")
    why: str | None = Field(None, description="an op whose count is unknown: the reason")


class Metrics(_Closed):
    params: Counted = Field(description="elements of the weights (initializers) read, each counted once")
    macs: Counted = Field(description="multiply-accumulates (the ops that multiply matrices; other ops have none)")
    activation_bytes: Counted = Field(description="bytes of the outputs written")
    share: float | None = Field(None, description="a group: its part of the model's multiply-accumulates (0-1)")


class TopGroup(_Closed):
    label: str
    path: str = Field(description="the group's place: its enclosing groups' labels and its own, joined by ` › `")
    metrics: Metrics


class ModelMetrics(_Closed):
    dims: dict[str, int] = Field(description="the symbolic dims bound by --dims")
    totals: Metrics
    top_groups: list[TopGroup] = Field(description="the groups a review lists (where the model splits), by "
                                       "multiply-accumulates, at most 10")  # fmt: skip


class InfoOutput(_Closed):
    """`ir-explorer info FILE --json`."""

    schema_version: Literal[4] = 4
    format: str = Field(description="the format's name, as `--version` lists them")
    file: str
    summary: dict[str, Any] = Field(description="the format's facts (the README lists them per format)")
    problems: ProblemCounts
    plugin_failures: list[str] = Field(default_factory=list, description="plug-ins that failed to load, and why")
    companions: dict[str, CompanionStatus] = Field(
        default_factory=dict, description="a schedule's pipeline files (frontend, asm, trace) and whether joined"
    )
    measured: MeasuredSummary | None = Field(None, description="the trace joined to the schedule, if any")
    memory: Memory | None = Field(None, description="schedules: L2 pressure per core")
    metrics: ModelMetrics | None = Field(None, description="models whose format counts its ops (ONNX): parameters, "
                                         "multiply-accumulates and activation bytes")  # fmt: skip


class Problem(_Open):
    """One problem; extra keys are the references a format adds (`tensor_id`, `core`, `workload_id`, ...)."""

    severity: Literal["error", "warning", "info"]
    code: str
    message: str
    location: str = Field(description="where: a JSON path, a protobuf field or a tar member ('' for the file)")


class IncidentContext(_Closed):
    capacity: int
    live_bytes: int = Field(description="the sum of the snapshot's entry sizes")
    largest_free_block: int = Field(description="the largest free block of the snapshot's regions")
    largest_live: list[LiveTensor] = Field(description="the five largest live tensors")


class Suggestion(_Closed):
    address: int = Field(description="its address in the neighbouring snapshot if free in every snapshot, else the "
                                     "lowest 8-aligned address of that region free in every snapshot")
    end: int = Field(description="address + its size")
    residency: list[int] = Field(description="[first, last] workload it stays at its address")
    home_workload: int | None = Field(
        description="the neighbouring workload whose address for the tensor this is (null: the lowest free address)"
    )


class TouchedBy(_Closed):
    """One instruction that wrote into an overlap."""

    line: int = Field(description="its line in the assembly or trace")
    name: str
    workload: int
    address: int = Field(description="its destination's first byte (bytes)")
    start: float | None = Field(None, description="measured start (cycles; a trace only)")
    end: float | None = Field(None, description="measured end (cycles; a trace only)")


class Touched(_Closed):
    """Whether what ran wrote into an overlap: the instructions of its workloads whose destination lies in it."""

    companion: Literal["asm", "trace"] = Field(description="the joined file the instructions are read from")
    instructions: list[TouchedBy] = Field(description="those that did (at most 20; `more` counts the rest)")
    more: int = Field(ge=0)
    checked: int = Field(ge=0, description="instructions of the incident's workloads that name a destination there")
    basis: Literal["first byte", "byte ranges", "byte ranges where known, else first byte"] = Field(
        description="what of the instructions' destinations was compared: each one's byte range where its size is "
        "settled, else its first byte")


class Incident(_Closed):
    """Overlaps grouped: one misplaced tensor (or WL0 transfer) on one core, over consecutive snapshots."""

    code: Literal["l2-overlap", "wl0-overlap"]
    core: int
    introduced_by: int = Field(description="the tensor (L2) or transfer (WL0) whose placement collides")
    tensor_ids: list[int] = Field(description="every id involved, the misplaced one first")
    first_workload: int
    last_workload: int
    snapshots: int = Field(ge=1)
    bytes: int = Field(ge=0, description="bytes of the merged overlapping ranges")
    ranges: list[list[int]] = Field(description="merged overlapping byte ranges [lo, hi)")
    roles: dict[str, str] = Field(description="id → its kind, and who made it or that it is read from DRAM")
    pairs: int = Field(ge=1, description="per-pair problems (one per pair and snapshot) behind it")
    context: IncidentContext | None = Field(None, description="L2: the pressure at the first workload")
    suggestion: Suggestion | None = Field(
        None, description="L2: where the misplaced tensor fits for its whole residency (absent when it does not)"
    )
    shortfall_bytes: int | None = Field(
        None, description="L2, when there is no suggestion: its size - the largest block free in all its snapshots"
    )
    region: list[int] | None = Field(
        None, description="L2: [lo, hi) of the region searched: where the tensor lies in its neighbouring snapshot"
    )
    region_largest_free: int | None = Field(
        None, description="L2: that region's largest block free in every snapshot of the residency (8-aligned)"
    )
    touched: Touched | None = Field(
        None, description="with an assembly or trace joined: whether its instructions wrote into the overlap"
    )


class CheckOutput(_Closed):
    """`ir-explorer check FILE --json`: every problem, and (schedules) the overlaps grouped into incidents."""

    schema_version: Literal[6] = 6
    format: str
    file: str
    problems: list[Problem]
    incidents: list[Incident] = Field(default_factory=list)


class Change(_Open):
    """One difference; `kind` says which (layer-added, duration, node-changed, op-count, parameters, ...)."""

    kind: str


class DiffOutput(_Closed):
    """`ir-explorer diff A B --json`."""

    schema_version: Literal[1] = 1
    format: str
    a: str
    b: str
    summary: dict[str, Any] = Field(description="pairs [A, B] and deltas B - A (the README lists them)")
    changes: list[Change]
    left_out: dict[str, int] = Field(
        default_factory=dict, description="changes not listed, by kind (25 of each are listed; --all lists all)"
    )


class TensorOutput(_Closed):
    """`ir-explorer tensor FILE ID --json`: where an ARK tensor's bytes sit (nulls when it cannot be placed)."""

    schema_version: Literal[1] = 1
    tensor_id: int
    buffer_id: int
    dtype: str
    element_bytes: int
    shape: list[int]
    strides: list[int]
    offsets: list[int]
    padded_shape: list[int]
    first_byte: int | None
    end_byte: int | None
    bytes: int | None
    runs: int | None
    padding_bytes: int | None
    aliases: list[int]


class _Box(_Closed):
    x: int | None
    y: int | None
    w: int | None
    h: int | None


class GraphNode(_Box):
    id: str = Field(description='"n<node>", or "g<group>" for a closed unit group (a schedule layer)')
    label: str
    op: str
    group: str | None
    folded_into: str | None = Field(
        None, description="a folded constant: the id of the box it is drawn in (its first reader); it has no box "
        "of its own (w = h = 0); null for drawn nodes and unread constants")  # fmt: skip
    shape_plumbing: bool | None = Field(
        None, description="a folded op computed from shapes when the model runs (Shape/Size and ops reading only "
        "shapes and small constants): true; null otherwise")  # fmt: skip
    inside: str | None = Field(
        None, description="a node inside a closed group: the id of that group, whose box holds it; it has no box "
        "of its own (w = h = 0); absent for drawn nodes")  # fmt: skip
    problem: Literal["error", "warning"] | None = Field(
        None, description="the worst problem found on this node (its box starts with ✗ or ⚠); absent for none"
    )
    data: dict[str, float] | None = Field(
        None, description="per-node data (--node-data): data set name → this node's value; absent for none"
    )
    metrics: Metrics | None = Field(None, description="an op of a format that counts its ops; absent otherwise")


class GraphEdge(_Closed):
    source: str
    target: str
    kind: Literal["routed", "stub", "back", "bundle", "folded", "owner"] = Field(
        description="routed: a value drawn as a line; stub/back/bundle: drawn as a labelled piece out of its source; "
        "folded: a constant drawn in its reader; owner: the dotted link from an If/Loop/while_loop to its closed "
        "branch or body, or when open to its first box (no value flows)")
    count: int = Field(ge=1, description="model edges drawn by this one")
    folded: bool | None = Field(None, description="true: the source is a folded constant, drawn in the target")
    points: list[tuple[int, int]] = Field(
        description="the drawn route in cells, [x, y] each, as the TUI and the SVG draw it: a routed edge's "
        "orthogonal polyline; a stub, back or bundled edge's own short piece out of its source box; [] for folded")


class GraphGroup(_Box):
    id: str
    label: str
    kind: str = Field(description='"scope" (a name scope or module), "stack" (alike consecutive blocks: its '
                      'children), "chunk", "subgraph", "function", "layer", ...')  # fmt: skip
    parent: str | None
    expanded: bool
    module_class: str | None = Field(
        None, description="the class of the module a scope is, where the file says (torch's dynamo exporter: "
        "`LlamaDecoderLayer`); a stack's is its blocks' class; null otherwise")  # fmt: skip
    stacked: int | None = Field(None, description="a stack: how many alike blocks it holds; null otherwise")
    problem: Literal["error", "warning"] | None = Field(
        None, description="the worst problem among the nodes it holds; absent for none"
    )
    data: dict[str, float] | None = Field(
        None, description="per-node data: data set name → the aggregate (sum, max or mean) of what it holds"
    )
    metrics: Metrics | None = Field(None, description="the sums of the ops it holds, with its share of the model")


class Dangling(_Closed):
    target: str
    value: str


class GraphOutput(_Closed):
    """`ir-explorer graph FILE --json`: the graph view's layout in terminal cells."""

    schema_version: Literal[8] = 8
    direction: Literal["TB", "LR"]
    width: int
    height: int
    back_edges: int
    dangling: list[Dangling]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    groups: list[GraphGroup]
    metrics: ModelMetrics | None = Field(None, description="the model's totals and top groups, as `info` gives them")


class FileNotRead(_Closed):
    file: str
    error: str = Field(description="why, in one line (the file, where and what was expected)")


class QueryOutput(_Closed):
    """`ir-explorer query FILE... SQL --format json`: the query's columns and rows."""

    schema_version: Literal[2] = 2
    columns: list[str]
    rows: list[list[Any]] = Field(description="each row's values in the columns' order; NULL and NaN as null")
    row_cap: int = Field(description="the most rows given (--max-rows)")
    capped: bool = Field(description="true when the rows stopped at the cap (the query had more)")
    not_read: list[FileNotRead] = Field(description="files that could not be read: the rows are the others'")


class CacheEntry(_Closed):
    entry: str = Field(description="the entry's file in the cache folder")
    source: str | None = Field(description="the file it was derived from (null: an entry this version cannot read)")
    format: str | None
    bytes: int
    last_used: str = Field(description="ISO 8601, UTC: when it was written or last read")


class CacheOutput(_Closed):
    """`ir-explorer cache [--clear] --json`: the derived-data cache's entries, least recently used first."""

    schema_version: Literal[1] = 1
    folder: str
    enabled: bool = Field(description="false when IR_EXPLORER_CACHE=off")
    cap_bytes: int
    total_bytes: int
    entries: list[CacheEntry]
    cleared: int = Field(0, description="entries removed (--clear)")


class BookmarkEntry(_Open):
    """One bookmark as the sidecar stores it; unknown keys (a newer version's) are kept."""

    ref: list[Any] = Field(description="the tree item's reference")
    view: str = "tree"
    note: str = ""
    label: str = ""
    id: str = ""
    created: str = Field("", description="ISO 8601, UTC")
    author: str = ""


class BookmarksFile(_Open):
    """The sidecar `FILE.bookmarks.json`. Entries this version cannot read are kept verbatim."""

    schema_version: Literal[2] = 2
    file: str = Field(description="the name of the file the bookmarks belong to")
    bookmarks: list[BookmarkEntry | Any] = Field(description="bookmarks, and entries kept verbatim")


CONTRACTS: dict[str, type[BaseModel]] = {
    "info": InfoOutput,
    "check": CheckOutput,
    "diff": DiffOutput,
    "tensor": TensorOutput,
    "graph": GraphOutput,
    "query": QueryOutput,
    "cache": CacheOutput,
    "bookmarks": BookmarksFile,
}


def version(name: str) -> int:
    """A contract's schema version: the value its `schema_version` field must have. Raise it (in the model's
    Literal) whenever the schema changes, then run `make schemas`; the schema test fails until both are done."""
    return int(CONTRACTS[name].model_fields["schema_version"].default)


def schema_text(name: str) -> str:
    """The JSON Schema of one contract, as committed under schemas/ (stable key order, one trailing newline)."""
    schema = CONTRACTS[name].model_json_schema()
    schema["$id"] = f"ir-explorer/{name}/v{version(name)}"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def dump(name: str, payload: dict[str, Any], indent: int | None = 2) -> str:
    """Build the contract from what a command computed (validating it) and serialise it. The payload is encoded
    as JSON first (numpy numbers and tuples become JSON values) and validated from those bytes: with 9,000
    incidents, pydantic's JSON path took 0.9 s where json.dumps, json.loads and validating the objects took 1.5."""
    raw = msgspec.json.encode({"schema_version": version(name), **payload}, enc_hook=_plain_json)
    with collector_paused():  # the models are acyclic; the collector would rescan the loaded document for them
        model = CONTRACTS[name].model_validate_json(raw)
        return model.model_dump_json(indent=indent)


def _plain_json(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def write_schemas(folder: str | Path) -> list[Path]:
    """`make schemas`: every contract's schema into folder/NAME.schema.json."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in CONTRACTS:
        path = out / f"{name}.schema.json"
        path.write_text(schema_text(name), encoding="utf-8")
        written.append(path)
    return written
