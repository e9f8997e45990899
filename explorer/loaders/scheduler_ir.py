"""Loader for the multi-core Gemini scheduler IR (`*_stschedule.json`).

Speed: each workload is decoded with typed msgspec Structs that name only the fields the analyses use
(unknown and unused keys such as ``tile_info`` are skipped by the decoder, never materialised), then
flattened into the columns of `explorer.schedule.Schedule`. Each workload's raw bytes are kept so the
details panel can decode everything on demand.

Leniency: a workload that fails typed decoding is re-decoded generically; its invalid list entries
(buffer, wl0/wl1, ifmap, ofmap) are dropped one by one and the rest kept. Every drop is an error `Problem`
with its JSON path. Only unreadable JSON or a top level that is not an object is a `LoadError`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import numpy as np

from explorer import jsonpath
from explorer.errors import LoadError, Problem
from explorer.model import Document, ProgressCallback, no_progress
from explorer.schedule import (
    BUFFER_TYPES,
    DRAM_OUT_TYPES,
    LAYER_TYPES,
    WL_SOURCES,
    CsrBuilder,
    Schedule,
)

FORMAT = "scheduler-ir"
_SNIFF = re.compile(rb'^\s*\{\s*"(-1|\d+|buffersize|top_batch_cut|xlen|ylen)"\s*:')

# Values are stored in int64 columns: refuse what would not fit rather than overflow later.
Int = Annotated[int, msgspec.Meta(ge=-(2**62), le=2**62)]
NonNeg = Annotated[int, msgspec.Meta(ge=0, le=2**62)]
Number = Annotated[float, msgspec.Meta(ge=0, le=1e18)]


class Destination(msgspec.Struct, gc=False):
    type: Literal["core", "DRAM"]
    core_id: Int | None = None
    workload_id: Int | None = None


class OfmapRef(msgspec.Struct, gc=False):
    transfer_id: Int
    destination: list[Destination] = []
    size: NonNeg = 0


class InputRef(msgspec.Struct, gc=False):
    transfer_id: list[Int]
    size: NonNeg = 0


class BufferEntry(msgspec.Struct, gc=False):
    tensor_id: Int
    type: Literal["ifmap", "weight", "ofmap"]
    address: Int
    size: NonNeg
    newly_added: bool | None = None
    cur_wl_ifmap: bool | None = None


class WeightBufferEntry(msgspec.Struct, gc=False):
    address: Int
    size: NonNeg
    source: Literal["DDR", "CORE", "DRAM"] = "DDR"
    transfer_id: list[Int] = []
    layer_name: str | None = None


class Workload(msgspec.Struct, gc=False):
    workload_id: Int
    layer_name: str
    layer_type: Literal["pe", "vp", "dt"]
    time: Number
    ifmap: list[InputRef]
    ofmap: list[OfmapRef]
    buffer: list[BufferEntry]
    ring_buffer_info: list[tuple[Int, Int]] = []
    weight: InputRef | None = None
    wl0_buffer: list[WeightBufferEntry] | None = None
    wl1_buffer: list[WeightBufferEntry] | None = None
    ofmap_size: NonNeg = 0


class DramWrite(msgspec.Struct, gc=False):
    transfer_id: Int
    core_id: Int
    workload_id: Int
    layer_name: str = ""
    related_ofmap: list[Int] = []


class DramReadDestination(msgspec.Struct, gc=False):
    core_id: Int | None = None
    workload_id: Int | None = None
    type: str = "core"


class DramRead(msgspec.Struct, gc=False):
    transfer_id: Int
    type: Literal["weight", "fmap"]
    size: NonNeg = 0
    related_ifmap: list[Int] = []
    destination: list[DramReadDestination] = []


class Dram(msgspec.Struct, gc=False):
    in_: list[DramWrite] = msgspec.field(name="in", default_factory=list)
    out: list[DramRead] = []


# Lists inside a workload whose invalid entries are dropped one by one (the rest of the workload is kept).
_WORKLOAD_LISTS: dict[str, type] = {
    "buffer": BufferEntry,
    "wl0_buffer": WeightBufferEntry,
    "wl1_buffer": WeightBufferEntry,
    "ifmap": InputRef,
    "ofmap": OfmapRef,
}
_TOP_SCALARS = {"buffersize": 0, "top_batch_cut": 1, "xlen": 1, "ylen": 1}

_workload_decoder = msgspec.json.Decoder(Workload)
_raw_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_top_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])
_dram_decoder = msgspec.json.Decoder(Dram)


def match(path: Path, head: bytes) -> bool:
    if path.name.endswith("stschedule.json"):
        return True
    return bool(_SNIFF.match(head))


class _Context:
    """What one load accumulates: the file, its problems, and the strictness."""

    def __init__(self, path: Path, data: bytes, strict: bool) -> None:
        self.path = path
        self.data = data
        self.strict = strict
        self.problems: list[Problem] = []

    def error(self, code: str, location: str, message: str, **refs: Any) -> None:
        self.problems.append(Problem("error", code, message, location, refs))

    def warning(self, code: str, location: str, message: str, **refs: Any) -> None:
        self.problems.append(Problem("warning", code, message, location, refs))

    def plain(self, raw: msgspec.Raw, path: str, what: str) -> tuple[bool, Any]:
        """Decode `raw` as plain JSON values; on failure record an error at `path` and return (False, None)."""
        try:
            return True, msgspec.json.decode(raw)
        except RecursionError:
            reason = "nested too deeply"
        except UnicodeDecodeError:
            reason = "a string is not valid UTF-8"
        except msgspec.DecodeError as error:
            reason = str(error)
        self.error(f"bad-{what}", path, f"{reason}; the {what} is dropped", core=_core_of(path))
        return False, None


def load(path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False) -> Document:
    from explorer.schedule_view import build_document  # the view module imports this one's types

    schedule, problems = load_schedule(path, progress=progress, strict=strict)
    return build_document(Path(path), schedule, problems)


def load_schedule(
    path: str | Path, *, progress: ProgressCallback | None = None, strict: bool = False
) -> tuple[Schedule, list[Problem]]:
    path = Path(path)
    progress = progress or no_progress
    try:
        with path.open("rb") as handle:  # read-only, whole file: msgspec decodes from one buffer
            data = handle.read()
    except OSError as error:
        raise LoadError(path, "", f"cannot read the file: {error.strerror or error}") from None
    if not data.strip():
        raise LoadError(path, "byte 0", "the file is empty")
    context = _Context(path, data, strict)
    progress(0, 1, "parsing")
    top = _decode_top(context)
    scalars = _read_scalars(context, top)
    core_keys = sorted((int(k), k) for k in top if k.isdigit())
    if not core_keys and "-1" not in top:
        raise LoadError(path, "$", 'expected a scheduler IR object with core arrays ("0", "1", ...) and "-1"')
    unknown = [k for k in top if not k.isdigit() and k not in _TOP_SCALARS and k != "-1"]
    for k in unknown:
        report = context.error if strict else context.warning
        report("unknown-key", "$" + jsonpath.key(k), "unknown top-level key")

    dram = _decode_dram(context, top.get("-1"))
    builder = _ScheduleBuilder()
    total = sum(len(top[k]) for _, k in core_keys) or 1
    done = 0
    for core, key in core_keys:
        rows = _decode_core_array(context, key, top[key])
        for position, raw in enumerate(rows):
            workload, positions = _decode_workload(context, raw, f'$["{key}"][{position}]')
            if workload is not None:
                builder.add_workload(core, position, workload, raw, positions)
        done += len(top[key])
        progress(done, total, f"core {core}")
    builder.add_dram(dram)
    if strict:
        _strict_key_check(context, top)
    wl0_key = "wl1_buffer" if builder.saw_wl1 and not builder.saw_wl0 else "wl0_buffer"
    if builder.saw_wl0 and builder.saw_wl1:
        context.warning("wl-buffer-names", "$", "both wl0_buffer and wl1_buffer appear in this file")
    schedule = builder.build(scalars, wl0_key, top.get("-1"))
    progress(1, 1, "done")
    return schedule, context.problems


def _decode_top(context: _Context) -> dict[str, msgspec.Raw]:
    try:
        return _top_decoder.decode(context.data)
    except msgspec.ValidationError:  # a subclass of DecodeError: catch it first
        raise LoadError(context.path, "$", "expected a JSON object at the top level") from None
    except msgspec.DecodeError as error:
        location, message = jsonpath.locate_decode_error(error, context.data)
        raise LoadError(context.path, location, f"not valid JSON: {message}") from None
    except RecursionError:
        raise LoadError(context.path, "$", "JSON nested too deeply to be a scheduler IR") from None
    except UnicodeDecodeError as error:
        raise LoadError(context.path, "$", f"a key is not valid UTF-8 text ({error.reason})") from None


def _read_scalars(context: _Context, top: dict[str, msgspec.Raw]) -> dict[str, int]:
    values = dict(_TOP_SCALARS)
    for name, default in _TOP_SCALARS.items():
        raw = top.get(name)
        if raw is None:
            context.error("missing-key", "$", f'missing required key "{name}" (using {default})')
            continue
        try:
            value = msgspec.json.decode(
                raw, type=Annotated[int, msgspec.Meta(ge=0 if name == "buffersize" else 1, le=2**62)]
            )
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            ok, shown = context.plain(raw, "$" + jsonpath.key(name), "value")
            if ok:
                context.error(
                    "bad-value",
                    "$" + jsonpath.key(name),
                    f"expected a positive integer, got {jsonpath.short_json(shown)} (using {default})",
                )
            continue
        values[name] = value
    return values


def _decode_dram(context: _Context, raw: msgspec.Raw | None) -> Dram:
    if raw is None:
        context.error("missing-key", "$", 'missing the DRAM section "-1"')
        return Dram()
    try:
        return _dram_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    ok, obj = context.plain(raw, '$["-1"]', "dram")
    if not ok:
        return Dram()
    if not isinstance(obj, dict):
        context.error("bad-value", '$["-1"]', f"expected an object, got {jsonpath.short_json(obj)}")
        return Dram()
    kept: dict[str, list[Any]] = {}
    for name, entry_type in (("in", DramWrite), ("out", DramRead)):
        kept[name] = _keep_valid(context, obj.get(name, []), entry_type, f'$["-1"].{name}', "dram")[0]
    return Dram(in_=kept["in"], out=kept["out"])


def _decode_core_array(context: _Context, key: str, raw: msgspec.Raw) -> list[msgspec.Raw]:
    try:
        return _raw_list_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        context.error("bad-value", f'$["{key}"]', "expected an array of workloads; the core is skipped")
        return []


def _decode_workload(context: _Context, raw: msgspec.Raw, path: str) -> tuple[Workload | None, dict[str, list[int]]]:
    """The typed workload, plus the file positions of list entries when some were dropped."""
    try:
        return _workload_decoder.decode(raw), {}
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    ok, obj = context.plain(raw, path, "workload")
    if not ok:
        return None, {}
    if not isinstance(obj, dict):
        context.error("bad-workload", path, f"expected a workload object, got {jsonpath.short_json(obj)}")
        return None, {}
    positions: dict[str, list[int]] = {}
    for name, entry_type in _WORKLOAD_LISTS.items():
        items = obj.get(name)
        if isinstance(items, list):
            obj[name], positions[name] = _keep_valid(context, items, entry_type, path + jsonpath.key(name), "entry")
    try:
        return msgspec.convert(obj, Workload), positions
    except msgspec.ValidationError as error:
        location, message = jsonpath.explain_validation_error(error, obj, path)
        context.error("bad-workload", location, f"{message}; the workload is dropped", core=_core_of(path))
        return None, {}


def _core_of(path: str) -> int | None:
    match_ = re.match(r'\$\["(\d+)"\]', path)
    return int(match_.group(1)) if match_ else None


def _keep_valid(context: _Context, items: Any, entry_type: type, path: str, what: str) -> tuple[list[Any], list[int]]:
    """Entries of `items` that convert to `entry_type`, and their positions; an error for each other one."""
    if not isinstance(items, list):
        context.error("bad-value", path, f"expected an array, got {jsonpath.short_json(items)}")
        return [], []
    kept: list[Any] = []
    positions: list[int] = []
    for index, item in enumerate(items):
        try:
            kept.append(msgspec.convert(item, entry_type))
            positions.append(index)
        except msgspec.ValidationError as error:
            location, message = jsonpath.explain_validation_error(error, item, f"{path}[{index}]")
            context.error(f"bad-{what}", location, f"{message}; the {what} is dropped", core=_core_of(path))
    return kept, positions


# Keys the documented dialect uses, per record kind: --strict reports anything else.
_KNOWN_KEYS: dict[str, set[str]] = {
    "workload": {
        "workload_id",
        "layer_name",
        "layer_type",
        "time",
        "workload",
        "ofmap_size",
        "tile_padding_tblr",
        "ifmap",
        "ofmap",
        "weight",
        "tile_info",
        "ring_buffer_info",
        "buffer",
        "wl0_buffer",
        "wl1_buffer",
    },
    "buffer": {
        "tensor_id",
        "tensor_order",
        "type",
        "address",
        "size",
        "align",
        "bitwidth",
        "lower",
        "upper",
        "newly_added",
        "cur_wl_ifmap",
        "transfer_id",
        "source",
        "layer_name",
        "start_send",
    },
    "wl": {
        "address",
        "align",
        "bitwidth",
        "layer_name",
        "size",
        "source",
        "transfer_id",
        "tensor_order",
        "lower",
        "upper",
    },
    "ifmap": {"align", "bitwidth", "lower", "upper", "size", "transfer_id"},
    "ofmap": {"lower", "upper", "size", "transfer_id", "destination"},
    "in": {"core_id", "workload_id", "layer_name", "transfer_id", "lower", "upper", "related_ofmap"},
    "out": {"transfer_id", "type", "lower", "upper", "size", "related_ifmap", "destination"},
}


def _strict_key_check(context: _Context, top: dict[str, msgspec.Raw]) -> None:
    """--strict: unknown keys anywhere in the documented records are errors."""

    def check(obj: Any, kind: str, path: str) -> None:
        if isinstance(obj, dict):
            for name in obj:
                if name not in _KNOWN_KEYS[kind]:
                    context.error("unknown-key", path + jsonpath.key(name), f"unknown key in a {kind} record")

    for key, raw in top.items():
        ok, obj = context.plain(raw, "$" + jsonpath.key(key), "value")
        if not ok:
            continue
        if key == "-1" and isinstance(obj, dict):
            for name in ("in", "out"):
                for index, entry in enumerate(obj.get(name) or []):
                    check(entry, name, f'$["-1"].{name}[{index}]')
        elif key.isdigit() and isinstance(obj, list):
            for position, workload in enumerate(obj):
                base = f'$["{key}"][{position}]'
                check(workload, "workload", base)
                if not isinstance(workload, dict):
                    continue
                for list_name, kind in (
                    ("buffer", "buffer"),
                    ("wl0_buffer", "wl"),
                    ("wl1_buffer", "wl"),
                    ("ifmap", "ifmap"),
                    ("ofmap", "ofmap"),
                ):
                    for index, entry in enumerate(workload.get(list_name) or []):
                        check(entry, kind, f"{base}.{list_name}[{index}]")


class _ScheduleBuilder:
    """Flattens typed workloads into columns, one workload at a time."""

    def __init__(self) -> None:
        self.layers: dict[str, int] = {}
        self.wl: dict[str, list[Any]] = {k: [] for k in ("core", "pos", "id", "layer", "type", "time", "ofsize")}
        self.raw: list[msgspec.Raw] = []
        self.ring = CsrBuilder("lo", "hi")
        self.inputs = CsrBuilder("tid", "kind")
        self.ofmaps: dict[str, list[int]] = {k: [] for k in ("row", "tid", "size", "pos")}
        self.dst = CsrBuilder("core", "wl", "dram")
        self.buf = CsrBuilder("tensor", "addr", "size", "type", "new", "cur", "pos")
        self.w0 = CsrBuilder("addr", "size", "src", "tid", "pos", "layer")
        self.saw_wl0 = False
        self.saw_wl1 = False
        self.core_order: list[int] = []
        self.dram: Dram = Dram()

    def layer_index(self, name: str) -> int:
        index = self.layers.get(name)
        if index is None:
            index = self.layers[name] = len(self.layers)
        return index

    def add_workload(
        self, core: int, position: int, wl: Workload, raw: msgspec.Raw, positions: dict[str, list[int]]
    ) -> None:
        row = len(self.raw)
        if not self.core_order or self.core_order[-1] != core:
            self.core_order.append(core)
        w = self.wl
        w["core"].append(core)
        w["pos"].append(position)
        w["id"].append(wl.workload_id)
        w["layer"].append(self.layer_index(wl.layer_name))
        w["type"].append(LAYER_TYPES.index(wl.layer_type))
        w["time"].append(wl.time)
        w["ofsize"].append(wl.ofmap_size)
        self.raw.append(raw)

        ring = self.ring.columns
        for lo, hi in wl.ring_buffer_info:
            ring["lo"].append(lo)
            ring["hi"].append(hi)
        self.ring.close_parent()

        inputs = self.inputs.columns
        for ref in wl.ifmap:
            inputs["tid"].extend(ref.transfer_id)
            inputs["kind"].extend([0] * len(ref.transfer_id))
        if wl.weight is not None:
            inputs["tid"].extend(wl.weight.transfer_id)
            inputs["kind"].extend([1] * len(wl.weight.transfer_id))
        self.inputs.close_parent()

        of_positions = positions.get("ofmap") or range(len(wl.ofmap))
        dst = self.dst.columns
        for ofmap, pos in zip(wl.ofmap, of_positions, strict=True):
            self.ofmaps["row"].append(row)
            self.ofmaps["tid"].append(ofmap.transfer_id)
            self.ofmaps["size"].append(ofmap.size)
            self.ofmaps["pos"].append(pos)
            for d in ofmap.destination:
                is_dram = d.type == "DRAM"
                dst["core"].append(-1 if is_dram else (d.core_id if d.core_id is not None else -1))
                dst["wl"].append(d.workload_id if d.workload_id is not None else -1)
                dst["dram"].append(is_dram)
            self.dst.close_parent()

        entries = wl.buffer
        buf = self.buf.columns
        buf["tensor"].extend([e.tensor_id for e in entries])
        buf["addr"].extend([e.address for e in entries])
        buf["size"].extend([e.size for e in entries])
        buf["type"].extend([BUFFER_TYPES.index(e.type) for e in entries])
        buf["new"].extend([-1 if e.newly_added is None else int(e.newly_added) for e in entries])
        buf["cur"].extend([bool(e.cur_wl_ifmap) for e in entries])
        buf["pos"].extend(positions.get("buffer") or range(len(entries)))
        self.buf.close_parent()

        wl_entries = wl.wl0_buffer
        wl_name = "wl0_buffer"
        if wl.wl1_buffer is not None:
            self.saw_wl1 = True
            if wl_entries is None:
                wl_entries, wl_name = wl.wl1_buffer, "wl1_buffer"
        if wl.wl0_buffer is not None:
            self.saw_wl0 = True
        w0 = self.w0.columns
        for entry, pos in zip(wl_entries or [], positions.get(wl_name) or range(len(wl_entries or [])), strict=True):
            w0["addr"].append(entry.address)
            w0["size"].append(entry.size)
            w0["src"].append(WL_SOURCES.index(entry.source))
            w0["tid"].append(entry.transfer_id[0] if entry.transfer_id else -1)
            w0["pos"].append(pos)
            w0["layer"].append(self.layer_index(entry.layer_name) if entry.layer_name is not None else -1)
        self.w0.close_parent()

    def add_dram(self, dram: Dram) -> None:
        self.dram = dram

    def build(self, scalars: dict[str, int], wl0_key: str, dram_raw: Any) -> Schedule:
        w = self.wl
        core_ids = np.asarray(self.core_order, dtype=np.int64)
        cores = np.asarray(w["core"], dtype=np.int64)
        core_ptr = np.searchsorted(cores, core_ids, side="left")
        core_ptr = np.append(core_ptr, cores.size).astype(np.int64)
        ring = self.ring.arrays({})
        inputs = self.inputs.arrays({"kind": np.int8})
        dst = self.dst.arrays({"dram": bool})
        buf = self.buf.arrays({"type": np.int8, "new": np.int8, "cur": bool, "pos": np.int32})
        w0 = self.w0.arrays({"src": np.int8, "pos": np.int32})
        din = CsrBuilder("tid", "core", "wl", "pos")
        din_rel = CsrBuilder("rel")
        for position, entry in enumerate(self.dram.in_):
            din.columns["tid"].append(entry.transfer_id)
            din.columns["core"].append(entry.core_id)
            din.columns["wl"].append(entry.workload_id)
            din.columns["pos"].append(position)
            din_rel.columns["rel"].extend(entry.related_ofmap)
            din_rel.close_parent()
        dout = CsrBuilder("tid", "type", "size", "pos")
        dout_rel = CsrBuilder("rel")
        dout_dst = CsrBuilder("core", "wl")
        for position, entry in enumerate(self.dram.out):
            dout.columns["tid"].append(entry.transfer_id)
            dout.columns["type"].append(DRAM_OUT_TYPES.index(entry.type))
            dout.columns["size"].append(entry.size)
            dout.columns["pos"].append(position)
            dout_rel.columns["rel"].extend(entry.related_ifmap)
            dout_rel.close_parent()
            for d in entry.destination:
                dout_dst.columns["core"].append(d.core_id if d.core_id is not None else -1)
                dout_dst.columns["wl"].append(d.workload_id if d.workload_id is not None else -1)
            dout_dst.close_parent()
        din_a, din_rel_a = din.arrays({}), din_rel.arrays({})
        dout_a, dout_rel_a, dout_dst_a = dout.arrays({"type": np.int8}), dout_rel.arrays({}), dout_dst.arrays({})
        return Schedule(
            buffersize=scalars["buffersize"],
            xlen=scalars["xlen"],
            ylen=scalars["ylen"],
            top_batch_cut=scalars["top_batch_cut"],
            wl0_key=wl0_key,
            layers=list(self.layers),
            core_ids=core_ids,
            core_ptr=core_ptr,
            wl_core=cores.astype(np.int32),
            wl_pos=np.asarray(w["pos"], dtype=np.int32),
            wl_id=np.asarray(w["id"], dtype=np.int64),
            wl_layer=np.asarray(w["layer"], dtype=np.int32),
            wl_type=np.asarray(w["type"], dtype=np.int8),
            wl_time=np.asarray(w["time"], dtype=np.float64),
            wl_ofmap_size=np.asarray(w["ofsize"], dtype=np.int64),
            wl_raw=self.raw,
            ring_ptr=ring["ptr"],
            ring_lo=ring["lo"],
            ring_hi=ring["hi"],
            in_ptr=inputs["ptr"],
            in_tid=inputs["tid"],
            in_kind=inputs["kind"],
            of_row=np.asarray(self.ofmaps["row"], dtype=np.int64),
            of_tid=np.asarray(self.ofmaps["tid"], dtype=np.int64),
            of_size=np.asarray(self.ofmaps["size"], dtype=np.int64),
            of_pos=np.asarray(self.ofmaps["pos"], dtype=np.int32),
            of_dst_ptr=dst["ptr"],
            dst_core=dst["core"],
            dst_wl=dst["wl"],
            dst_dram=dst["dram"],
            buf_ptr=buf["ptr"],
            buf_tensor=buf["tensor"],
            buf_addr=buf["addr"],
            buf_size=buf["size"],
            buf_type=buf["type"],
            buf_new=buf["new"],
            buf_cur=buf["cur"],
            buf_pos=buf["pos"],
            w0_ptr=w0["ptr"],
            w0_addr=w0["addr"],
            w0_size=w0["size"],
            w0_src=w0["src"],
            w0_tid=w0["tid"],
            w0_pos=w0["pos"],
            w0_layer=w0["layer"].astype(np.int32),
            din_tid=din_a["tid"],
            din_core=din_a["core"],
            din_wl=din_a["wl"],
            din_pos=din_a["pos"],
            din_rel_ptr=din_rel_a["ptr"],
            din_rel=din_rel_a["rel"],
            dout_tid=dout_a["tid"],
            dout_type=dout_a["type"],
            dout_size=dout_a["size"],
            dout_pos=dout_a["pos"],
            dout_rel_ptr=dout_rel_a["ptr"],
            dout_rel=dout_rel_a["rel"],
            dout_dst_ptr=dout_dst_a["ptr"],
            dout_dst_core=dout_dst_a["core"],
            dout_dst_wl=dout_dst_a["wl"],
            dram_raw=dram_raw,
        )
