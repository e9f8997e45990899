"""Lenient decoding of the scheduler IR: a workload that fails typed decoding is re-decoded generically, its
invalid list entries (buffer, wl0/wl1, ifmap, ofmap) dropped one by one and the rest kept, each drop an error
`Problem` with its JSON path; the top level's numbers and DRAM section; the strict mode's unknown-key check."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import msgspec

from explorer import jsonpath
from explorer.errors import CappedProblems, LoadError, Problem
from explorer.file_spans import FileIdentity
from explorer.formats.scheduler_ir import layout
from explorer.formats.scheduler_ir.schema import (
    TOP_SCALARS,
    WORKLOAD_LISTS,
    BufferEntry,
    Dram,
    DramRead,
    DramWrite,
    Workload,
)
from explorer.json_errors import find_fault, locate_json_error

_workload_decoder = msgspec.json.Decoder(Workload)


_buffer_decoder = msgspec.json.Decoder(list[BufferEntry])


_core_decoder = msgspec.json.Decoder(list[Workload])


_raw_list_decoder = msgspec.json.Decoder(list[msgspec.Raw])


_top_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])


_dram_decoder = msgspec.json.Decoder(Dram)


def raw_items(array: bytes | msgspec.Raw) -> list[msgspec.Raw]:
    """A JSON array's items as raw texts, checked as JSON but not decoded (raises msgspec.DecodeError)."""
    return _raw_list_decoder.decode(array)


NO_FILE = FileIdentity(0, 0)  # a decode of bytes already in hand (a core's part): nothing is read again


class DecodeContext:
    """What one load accumulates: the file, its problems, and the strictness."""

    def __init__(
        self, path: Path, data: bytes | bytearray, *, strict: bool, stamp: FileIdentity = NO_FILE
    ) -> None:
        self.path = path
        self.data = data
        self.strict = strict
        self.stamp = stamp  # the file when opened: workers refuse a file changed since
        self.span_guessed = False  # the core being decoded lies where `layout` guessed: not an array refutes it
        self.problems = CappedProblems()  # counted past 10,000 a code: memory bounded by the cap

    def error(self, code: str, location: str, message: str, **refs: Any) -> None:
        self.problems.add(Problem("error", code, message, location, refs))

    def warning(self, code: str, location: str, message: str, **refs: Any) -> None:
        self.problems.add(Problem("warning", code, message, location, refs))

    def plain(self, raw: msgspec.Raw, path: str, what: str) -> tuple[bool, Any]:
        """Decode `raw` as plain JSON values; on failure record an error at `path` and return (False, None)."""
        try:
            return True, msgspec.json.decode(raw)
        except RecursionError:
            reason = "nested too deeply"
        except (msgspec.DecodeError, UnicodeDecodeError) as error:
            fault = find_fault(raw)  # the reason from the bytes, not from the library's words
            inside = f" at {jsonpath.join(path, fault.path)}" if fault and fault.path not in ("", "$") else ""
            reason = f"{fault.reason}{inside}" if fault and fault.reason else str(error)
        self.error(f"bad-{what}", path, f"{reason}; the {what} is dropped", core=_core_of(path))
        return False, None


SLICE_BYTES = 64 << 20  # a core larger than this is decoded in slices of about this many bytes


def decode_workloads(
    context: DecodeContext, key: str, raw: bytes | bytearray | msgspec.Raw, report: Callable[[int], None]
) -> list[tuple[int, Workload, dict[str, list[int]]]]:
    """A core's valid workloads as (file position, workload, positions of the list entries kept when some were
    dropped). The whole core is decoded typed in one go when it can be; otherwise workload by workload."""
    try:
        return [(position, workload, {}) for position, workload in enumerate(_decode_core(raw, report))]
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    kept = []
    for position, raw_workload in enumerate(_decode_core_array(context, key, raw)):
        workload, positions = _decode_workload(context, raw_workload, f'$["{key}"][{position}]')
        if workload is not None:
            kept.append((position, workload, positions))
    return kept


BUFFER_BATCH = 2048  # workloads whose L2 entries are decoded between two progress reports


def decode_buffers(
    context: DecodeContext,
    key: str,
    kept: list[tuple[int, Workload, dict[str, list[int]]]],
    report: Callable[[int, int], None],
) -> list[list[BufferEntry]]:
    """Each kept workload's L2 entries. A batch decodes typed in one pass; a batch with a bad entry is decoded
    again workload by workload, dropping the bad entries (an error each) and noting the positions kept."""
    entries: list[list[BufferEntry]] = []
    for start in range(0, len(kept), BUFFER_BATCH):
        batch = kept[start : start + BUFFER_BATCH]
        try:
            buffers = map(operator.attrgetter("buffer"), map(operator.itemgetter(1), batch))
            decoded = list(map(_buffer_decoder.decode, buffers))
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            decoded = []
            for position, workload, dropped in batch:
                path = f'$["{key}"][{position}]' + jsonpath.key("buffer")
                try:
                    decoded.append(_buffer_decoder.decode(workload.buffer))
                    continue
                except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                    pass
                ok, items = context.plain(workload.buffer, path, "entry")
                valid, dropped["buffer"] = _keep_valid(context, items if ok else [], BufferEntry, path, "entry")
                decoded.append(valid)
        entries += decoded
        report(start + len(batch), len(kept))
    return entries


def _decode_core(raw: bytes | bytearray | msgspec.Raw, report: Callable[[int], None]) -> list[Workload]:
    """A core's workloads, typed. A big core is split into its workloads' raw texts first and decoded in slices
    of about SLICE_BYTES, reporting the bytes done after each; a malformed core raises as one decode would."""
    if len(raw) <= SLICE_BYTES:
        return _core_decoder.decode(raw)
    raws = _raw_list_decoder.decode(raw)
    workloads: list[Workload] = []
    start, done = 0, 0
    while start < len(raws):
        end, size = start, 0
        while end < len(raws) and size < SLICE_BYTES:
            size += len(raws[end])
            end += 1
        workloads += [_workload_decoder.decode(r) for r in raws[start:end]]
        done += size
        report(done)
        start = end
    return workloads


def decode_top(context: DecodeContext) -> dict[str, msgspec.Raw]:
    try:
        return _top_decoder.decode(context.data)
    except msgspec.ValidationError:  # a subclass of DecodeError: catch it first
        raise LoadError(context.path, "$", "expected a JSON object at the top level") from None
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        location, message = locate_json_error(context.data, error)
        raise LoadError(context.path, location, f"not valid JSON: {message}") from None
    except RecursionError:
        raise LoadError(context.path, "$", "JSON nested too deeply to be a scheduler IR") from None


def read_scalars(context: DecodeContext, top: dict[str, msgspec.Raw]) -> dict[str, int]:
    values = dict(TOP_SCALARS)
    for name, default in TOP_SCALARS.items():
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


def decode_dram(context: DecodeContext, raw: msgspec.Raw | None) -> tuple[Dram, dict[str, list[int]]]:
    """The DRAM section, plus the file positions of its entries when invalid ones were dropped."""
    if raw is None:
        context.error("missing-key", "$", 'missing the DRAM section "-1"')
        return Dram(), {}
    try:
        return _dram_decoder.decode(raw), {}
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    ok, obj = context.plain(raw, '$["-1"]', "dram")
    if not ok:
        return Dram(), {}
    if not isinstance(obj, dict):
        context.error("bad-value", '$["-1"]', f"expected an object, got {jsonpath.short_json(obj)}")
        return Dram(), {}
    kept: dict[str, list[Any]] = {}
    positions: dict[str, list[int]] = {}
    for name, entry_type in (("in", DramWrite), ("out", DramRead)):
        kept[name], positions[name] = _keep_valid(context, obj.get(name, []), entry_type, f'$["-1"].{name}', "dram")
    return Dram(in_=kept["in"], out=kept["out"]), positions


def _decode_core_array(context: DecodeContext, key: str, raw: bytes | bytearray | msgspec.Raw) -> list[msgspec.Raw]:
    try:
        return _raw_list_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        if context.span_guessed:
            raise layout.SpanGuessWrong(f"core {key}") from None
        context.error("bad-value", f'$["{key}"]', "expected an array of workloads; the core is skipped")
        return []


def _decode_workload(
    context: DecodeContext, raw: msgspec.Raw, path: str
) -> tuple[Workload | None, dict[str, list[int]]]:
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
    for name, entry_type in WORKLOAD_LISTS.items():
        items = obj.get(name)
        if isinstance(items, list):
            obj[name], positions[name] = _keep_valid(context, items, entry_type, path + jsonpath.key(name), "entry")
    if "buffer" in obj:  # kept raw, like the typed decode does: its entries are checked by decode_buffers
        obj["buffer"] = msgspec.Raw(msgspec.json.encode(obj["buffer"]))
    try:
        return msgspec.convert(obj, Workload), positions
    except msgspec.ValidationError as error:
        location, message = jsonpath.explain_validation_error(error, obj, path)
        context.error("bad-workload", location, f"{message}; the workload is dropped", core=_core_of(path))
        return None, {}


def _core_of(path: str) -> int | None:
    match_ = re.match(r'\$\["(\d+)"\]', path)
    return int(match_.group(1)) if match_ else None


def _keep_valid(
    context: DecodeContext, items: Any, entry_type: type, path: str, what: str
) -> tuple[list[Any], list[int]]:
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


def strict_key_check(context: DecodeContext, top: dict[str, msgspec.Raw]) -> None:
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
