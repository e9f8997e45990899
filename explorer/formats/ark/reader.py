"""Lenient reading of ARK model and plan JSON into `explorer.formats.ark.model` objects, with a JSON path for
every fault.

Both node forms are read (`Op`, one object, and the older `Ops` array), `PaddedShape` or the April 2024
draft's `Pads`/`BufferId`, every argument type, `[rank, tag]` send/receive pairs and the optional
`Buffer.IsExternal`. What is invalid is dropped at the smallest level that can be dropped (an arg, a tensor,
an op) and listed as an error; unknown keys, op types and arg names are kept and listed as warnings (errors
with `strict`). Only unreadable JSON or a top level of the wrong shape is a LoadError.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from explorer import jsonpath
from explorer.bounded_read import read_regular
from explorer.errors import LoadError, Problem
from explorer.formats.ark.layout import check_tensor
from explorer.formats.ark.model import (
    ARCHITECTURES,
    ARG_TYPES,
    OP_ARGS,
    ArkArg,
    ArkBuffer,
    ArkFile,
    ArkNode,
    ArkOp,
    ArkProcessorGroup,
    ArkRange,
    ArkResourceGroup,
    ArkTask,
    ArkTaskGroup,
    ArkTensor,
)
from explorer.json_errors import locate_json_error
from explorer.jsonpath import duplicate_problems
from explorer.memory_guard import JSON_TEXT_FLOOR, ensure_json_fits

T = TypeVar("T")

INT_LIMIT = 2**62  # larger values cannot be real sizes; refusing them keeps every later product exact
_ARG_INT_RANGES = {
    "INT": (-(2**31), 2**31 - 1),
    "UINT32": (0, 2**32 - 1),
    "INT64": (-(2**63), 2**63 - 1),
    "UINT64": (0, 2**64 - 1),
}
_TENSOR_KEYS = {"Id", "DataType", "Shape", "Strides", "Offsets", "PaddedShape", "Pads", "Buffer", "BufferId"}
_TENSOR_KEYS |= {"Exported", "ImportedRank"}  # April 2024 draft fields: accepted, not used
_BUFFER_KEYS = {"Id", "Rank", "SendTags", "RecvTags", "IsExternal"}
_OP_KEYS = {"Type", "Name", "IsVirtual", "ReadTensors", "WriteTensors", "ResultTensors", "Args", "Config"}
_NODE_KEYS = {"Id", "ProducerNodeIds", "ConsumerNodeIds", "Op", "Ops"}
_MODEL_KEYS = {"Rank", "WorldSize", "Nodes", "Tensors"}
_PLAN_KEYS = {"Rank", "WorldSize", "Architecture", "NumProcessors", "NumWarpsPerProcessor", "TaskInfos"}
_PLAN_KEYS |= {"ProcessorGroups"}
_TASK_KEYS = {"Id", "NumWarps", "SramBytes", "Ops"}
_PG_KEYS = {"ProcessorRange", "ResourceGroups"}
_RG_KEYS = {"ProcessorRange", "WarpRange", "SramRange", "TaskGroups"}
_TG_KEYS = {"TaskId", "TaskRange", "Granularity"}


def _plain_ints(value: Any) -> tuple[int, ...] | None:
    """A JSON array of in-range integers as a tuple, checked at C speed; None when anything is unusual."""
    if type(value) is not list or not value or set(map(type, value)) != {int}:
        return None
    if min(value) < -INT_LIMIT or max(value) > INT_LIMIT:
        return None
    return tuple(value)


# What the reader and the document build of each JSON object, at most: measured on a file of empty nodes (1,000,000
# `{}` nodes, 3 MB: 507 MiB at peak, about 470 bytes an object beyond the interpreter; tests/unit/test_limits.py)
MEMORY_PER_OBJECT = 600


class Dropped(Exception):
    """A required field is missing or of the wrong type: the enclosing object cannot be kept."""


def decode_file(path: Path) -> tuple[Any, list[Problem]]:
    """The file as plain JSON values, and an error for each key repeated in its object (the last copy is the
    one read); a LoadError with line and column when it is not JSON."""
    data = read_regular(path, "ARK file", bytes_per_file_byte=JSON_TEXT_FLOOR)
    if not data.strip():
        raise LoadError(path, "byte 0", "the file is empty")
    ensure_json_fits(path, data, "ARK file", MEMORY_PER_OBJECT)
    try:
        return msgspec.json.decode(data), duplicate_problems(data)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        location, message = locate_json_error(data, error)
        raise LoadError(path, location, f"not valid JSON: {message}") from None
    except RecursionError:
        raise LoadError(path, "$", "JSON nested too deeply to be an ARK file") from None


class ArkReader:
    """Walks decoded JSON, building ArkFile parts and collecting problems with their JSON paths."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self.problems: list[Problem] = []
        self.tensor_table: dict[int, Any] = {}  # draft files: tensors listed once at the top level
        # A tensor is repeated wherever it is used (producer's result, consumers' reads): an occurrence equal to
        # the last one read for its id reuses that object instead of being validated again.
        self._read_tensors: dict[int, tuple[dict, ArkTensor]] = {}
        self._read_buffers: dict[int, tuple[dict, ArkBuffer]] = {}

    # ---- problems ---------------------------------------------------------------------------------------
    def error(self, code: str, path: str, message: str, **refs: Any) -> None:
        self.problems.append(Problem("error", code, message, path, refs))

    def warning(self, code: str, path: str, message: str, **refs: Any) -> None:
        self.problems.append(Problem("error" if self.strict else "warning", code, message, path, refs))

    def unknown_keys(self, obj: dict, known: set[str], path: str) -> None:
        for name in obj:
            if name not in known:
                self.warning("unknown-key", path + jsonpath.key(name), f"unknown key {name!r} (kept, not used)")

    # ---- typed field access -----------------------------------------------------------------------------
    def obj(self, value: Any, path: str, what: str) -> dict:
        if not isinstance(value, dict):
            raise Dropped(path, f"expected {what} object, got {jsonpath.short_json(value)}")
        return value

    def field(self, obj: dict, name: str, path: str) -> Any:
        if name not in obj:
            raise Dropped(path, f'missing required key "{name}"')
        return obj[name]

    def int_value(self, value: Any, path: str, low: int = -INT_LIMIT, high: int = INT_LIMIT) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Dropped(path, f"expected an integer, got {jsonpath.short_json(value)}")
        if not low <= value <= high:
            raise Dropped(path, f"expected an integer in {low}..{high}, got {value}")
        return value

    def int_field(self, obj: dict, name: str, path: str, low: int = -INT_LIMIT, high: int = INT_LIMIT) -> int:
        value = obj.get(name)
        if type(value) is int and low <= value <= high:
            return value  # the common case: no path string is built
        return self.int_value(self.field(obj, name, path), path + jsonpath.key(name), low, high)

    def int_list(self, value: Any, path: str, low: int = -INT_LIMIT) -> tuple[int, ...]:
        if not isinstance(value, list):
            raise Dropped(path, f"expected an array of integers, got {jsonpath.short_json(value)}")
        if set(map(type, value)) <= {int} and (not value or (min(value) >= low and max(value) <= INT_LIMIT)):
            return tuple(value)  # the common case, checked at C speed
        return tuple(self.int_value(v, f"{path}[{i}]", low) for i, v in enumerate(value))

    def str_field(self, obj: dict, name: str, path: str) -> str:
        value = self.field(obj, name, path)
        if not isinstance(value, str):
            raise Dropped(path + jsonpath.key(name), f"expected a string, got {jsonpath.short_json(value)}")
        return value

    def bool_field(self, obj: dict, name: str, path: str) -> bool:
        value = self.field(obj, name, path)
        if not isinstance(value, bool):
            raise Dropped(path + jsonpath.key(name), f"expected true or false, got {jsonpath.short_json(value)}")
        return value

    def dropping(self, code: str, what: str, call: Callable[..., T], *args: Any) -> T | None:
        """Run `call`; when it raises Dropped, record an error naming what was dropped and return None."""
        try:
            return call(*args)
        except Dropped as drop:
            location, message = drop.args
            self.error(code, location, f"{message}; the {what} is dropped")
            return None

    def array(self, obj: dict, name: str, path: str, required: bool = True) -> list:
        if name not in obj:
            if required:
                self.error("missing-key", path, f'missing required key "{name}" (read as empty)')
            return []
        value = obj[name]
        if not isinstance(value, list):
            self.error("bad-value", path + jsonpath.key(name), f"expected an array, got {jsonpath.short_json(value)}")
            return []
        return value

    # ---- tensors and buffers ----------------------------------------------------------------------------
    def tensor(self, value: Any, path: str) -> ArkTensor:
        if isinstance(value, int) and not isinstance(value, bool) and value in self.tensor_table:
            return self.tensor(self.tensor_table[value], path)  # draft form: a tensor id
        obj = self.obj(value, path, "a tensor")
        tensor_id = obj.get("Id")
        seen = self._read_tensors.get(tensor_id) if type(tensor_id) is int else None
        if seen is not None and seen[0] == obj:
            return seen[1]
        tensor = self._well_formed_tensor(obj, path)
        if tensor is None:  # something is off: the careful reading below names it
            tensor = self._tensor_fields(obj, path)
        for fault in check_tensor(tensor):
            self.error("tensor-invariant", path, f"tensor {tensor.id}: {fault}", tensor_id=tensor.id)
        self._read_tensors[tensor.id] = (obj, tensor)
        return tensor

    def _well_formed_tensor(self, obj: dict, path: str) -> ArkTensor | None:
        """The current form with nothing unusual (exactly its seven keys, plain integers): read without
        building a path per field. None sends the tensor to the careful reader."""
        if len(obj) != 7:
            return None
        tensor_id, dtype, buffer = obj.get("Id"), obj.get("DataType"), obj.get("Buffer")
        if type(tensor_id) is not int or not 0 <= tensor_id <= INT_LIMIT or type(dtype) is not str:
            return None
        shape, strides, offsets, padded = (_plain_ints(obj.get(name)) for name in ("Shape", "Strides", "Offsets",
                                                                                 "PaddedShape"))  # fmt: skip
        if shape is None or strides is None or offsets is None or padded is None or type(buffer) is not dict:
            return None
        buffer_id = buffer.get("Id")
        seen = self._read_buffers.get(buffer_id) if type(buffer_id) is int else None
        if seen is not None and seen[0] == buffer:
            ark_buffer = seen[1]
        else:
            ark_buffer = self.buffer(buffer, path + ".Buffer")
            self._read_buffers[ark_buffer.id] = (buffer, ark_buffer)
        return ArkTensor(tensor_id, dtype, shape, strides, offsets, padded, buffer=ark_buffer, path=path)

    def _tensor_fields(self, obj: dict, path: str) -> ArkTensor:
        tensor_id = self.int_field(obj, "Id", path, low=0)
        dtype = self.str_field(obj, "DataType", path)
        dims = {name: self.int_list(self.field(obj, name, path), path + "." + name) for name in ("Shape",)}
        for name in ("Strides", "Offsets"):
            dims[name] = self.int_list(self.field(obj, name, path), path + "." + name)
        pads = None
        if "PaddedShape" in obj:
            dims["PaddedShape"] = self.int_list(obj["PaddedShape"], path + ".PaddedShape")
        elif "Pads" in obj:  # the draft's Pads were "currently unused, all ones": the data has no padding
            pads = self.int_list(obj["Pads"], path + ".Pads")
            dims["PaddedShape"] = dims["Shape"]
        else:
            raise Dropped(path, 'missing required key "PaddedShape"')
        if "Buffer" in obj:
            buffer = self.buffer(obj["Buffer"], path + ".Buffer")
        elif "BufferId" in obj:
            buffer = ArkBuffer(self.int_field(obj, "BufferId", path, low=0))
        else:
            raise Dropped(path, 'missing required key "Buffer"')
        self.unknown_keys(obj, _TENSOR_KEYS, path)
        return ArkTensor(
            id=tensor_id,
            dtype=dtype,
            shape=dims["Shape"],
            strides=dims["Strides"],
            offsets=dims["Offsets"],
            padded_shape=dims["PaddedShape"],
            buffer=buffer,
            path=path,
            pads=pads,
        )

    def buffer(self, value: Any, path: str) -> ArkBuffer:
        obj = self.obj(value, path, "a buffer")
        buffer_id = self.int_field(obj, "Id", path, low=0)
        rank = self.int_field(obj, "Rank", path, low=-1)
        tags = {name: self.tags(obj, name, path) for name in ("SendTags", "RecvTags")}
        external = obj.get("IsExternal", False)
        if not isinstance(external, bool):
            self.error(
                "bad-value", path + ".IsExternal", f"expected true or false, got {jsonpath.short_json(external)}"
            )
            external = False
        self.unknown_keys(obj, _BUFFER_KEYS, path)
        return ArkBuffer(buffer_id, rank, tags["SendTags"], tags["RecvTags"], external)

    def tags(self, obj: dict, name: str, path: str) -> tuple[tuple[int, int], ...]:
        """`[[remote_rank, tag], ...]`; an invalid pair is dropped with an error, the buffer kept."""
        if obj.get(name) == []:
            return ()
        pairs = []
        for i, pair in enumerate(self.array(obj, name, path)):
            where = f"{path}.{name}[{i}]"
            if isinstance(pair, list) and len(pair) == 2:
                try:
                    pairs.append(
                        (self.int_value(pair[0], where + "[0]", low=-1), self.int_value(pair[1], where + "[1]"))
                    )
                    continue
                except Dropped as drop:
                    self.error("bad-tag", drop.args[0], f"{drop.args[1]}; the tag is dropped")
                    continue
            self.error("bad-tag", where, f"expected a [rank, tag] pair, got {jsonpath.short_json(pair)}; dropped")
        return tuple(pairs)

    def tensor_list(self, obj: dict, name: str, path: str) -> list[ArkTensor]:
        kept = []
        for i, value in enumerate(self.array(obj, name, path)):
            tensor = self.dropping("bad-tensor", "tensor", self.tensor, value, f"{path}.{name}[{i}]")
            if tensor is not None:
                kept.append(tensor)
        return kept

    # ---- ops --------------------------------------------------------------------------------------------
    def op(self, value: Any, path: str, in_plan: bool) -> ArkOp:
        obj = self.obj(value, path, "an op")
        op_type = self.str_field(obj, "Type", path)
        name = obj.get("Name", "")
        if not isinstance(name, str):
            self.error("bad-value", path + ".Name", f"expected a string, got {jsonpath.short_json(name)}")
            name = str(name)
        elif "Name" not in obj:
            self.error("missing-key", path, 'missing required key "Name"')
        virtual = obj.get("IsVirtual", False)
        if not isinstance(virtual, bool):
            self.error("bad-value", path + ".IsVirtual", f"expected true or false, got {jsonpath.short_json(virtual)}")
            virtual = False
        if op_type not in OP_ARGS:
            self.warning("unknown-op-type", path + ".Type", f"unknown op type {op_type!r} (kept)")
        config = obj.get("Config")
        if in_plan and config is None:
            self.warning("missing-config", path, "a plan op needs a Config object")
        elif config is not None and not isinstance(config, dict):
            self.error("bad-value", path + ".Config", f"expected an object, got {jsonpath.short_json(config)}")
            config = None
        elif config is not None and not in_plan:
            self.warning("config-in-model", path + ".Config", "Config belongs in plan files, not model files")
        self.unknown_keys(obj, _OP_KEYS, path)
        return ArkOp(
            type=op_type,
            name=name,
            is_virtual=virtual,
            read=self.tensor_list(obj, "ReadTensors", path),
            write=self.tensor_list(obj, "WriteTensors", path),
            result=self.tensor_list(obj, "ResultTensors", path),
            args=self.args(obj, path, op_type),
            config=config,
            path=path,
        )

    def args(self, obj: dict, path: str, op_type: str) -> list[ArkArg]:
        args_obj = obj.get("Args", {})
        if "Args" not in obj:
            self.error("missing-key", path, 'missing required key "Args" (read as {})')
        if not isinstance(args_obj, dict):
            self.error("bad-value", path + ".Args", f"expected an object, got {jsonpath.short_json(args_obj)}")
            return []
        known = OP_ARGS.get(op_type)
        kept = []
        for name, wrapped in args_obj.items():
            where = path + ".Args" + jsonpath.key(name)
            arg = self.dropping("bad-arg", "arg", self.arg, name, wrapped, where)
            if arg is None:
                continue
            kept.append(arg)
            if known is not None and name not in known:
                self.warning("unknown-arg", where, f"{op_type} has no arg {name!r} (kept)")
        return kept

    def arg(self, name: str, wrapped: Any, path: str) -> ArkArg:
        if not isinstance(wrapped, dict) or len(wrapped) != 1:
            raise Dropped(path, f'expected {{"ARGTYPE": value}} with one key, got {jsonpath.short_json(wrapped)}')
        ((arg_type, value),) = wrapped.items()
        where = path + jsonpath.key(arg_type)
        if arg_type not in ARG_TYPES:
            raise Dropped(where, f"unknown arg type {arg_type!r} (ARK refuses such a file)")
        if arg_type in _ARG_INT_RANGES:
            low, high = _ARG_INT_RANGES[arg_type]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise Dropped(
                    where, f"expected an {arg_type} integer in {low}..{high}, got {jsonpath.short_json(value)}"
                )
        elif arg_type == "BOOL" and not isinstance(value, bool):
            raise Dropped(where, f"expected true or false, got {jsonpath.short_json(value)}")
        elif arg_type == "FLOAT" and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise Dropped(where, f"expected a number, got {jsonpath.short_json(value)}")
        elif arg_type == "DIMS":
            value = list(self.int_list(value, where))
            if len(value) > 4:
                raise Dropped(where, f"DIMS holds at most 4 integers, got {len(value)}")
        elif arg_type == "TENSOR":
            value = self.tensor(value, where)
        elif arg_type == "OFFSET":
            offset = self.obj(value, where, "an OFFSET {BufferId, Value}")
            value = (self.int_field(offset, "BufferId", where, low=0), self.int_field(offset, "Value", where))
        return ArkArg(name, arg_type, value, path)

    # ---- model ------------------------------------------------------------------------------------------
    def node(self, value: Any, path: str) -> ArkNode:
        obj = self.obj(value, path, "a node")
        node_id = self.int_field(obj, "Id", path, low=0)
        producers = self.int_list(self.field(obj, "ProducerNodeIds", path), path + ".ProducerNodeIds")
        consumers = self.int_list(self.field(obj, "ConsumerNodeIds", path), path + ".ConsumerNodeIds")
        ops: list[ArkOp] = []
        if "Op" in obj:
            op = self.dropping("bad-op", "op", self.op, obj["Op"], path + ".Op", False)
            ops = [op] if op is not None else []
        elif "Ops" in obj:
            for i, raw in enumerate(self.array(obj, "Ops", path)):
                op = self.dropping("bad-op", "op", self.op, raw, f"{path}.Ops[{i}]", False)
                if op is not None:
                    ops.append(op)
        else:
            self.error("missing-key", path, 'a node needs "Op" (or the older "Ops" array)', node_id=node_id)
        self.unknown_keys(obj, _NODE_KEYS, path)
        return ArkNode(node_id, list(producers), list(consumers), ops, path)

    def top_ints(self, top: dict, names: dict[str, tuple[int, int]]) -> dict[str, int]:
        values = {}
        for name, (default, low) in names.items():
            try:
                values[name] = self.int_field(top, name, "$", low=low)
            except Dropped as drop:
                self.error("bad-value", drop.args[0], f"{drop.args[1]} (using {default})")
                values[name] = default
        return values

    def model(self, top: Any, path: Path) -> ArkFile:
        if not isinstance(top, dict) or "Nodes" not in top:
            raise LoadError(path, "$", 'expected an ARK model object with a "Nodes" array')
        if not isinstance(top["Nodes"], list):
            raise LoadError(path, "$.Nodes", f"expected an array of nodes, got {jsonpath.short_json(top['Nodes'])}")
        ints = self.top_ints(top, {"Rank": (0, 0), "WorldSize": (1, 1)})
        self._rank_check(ints)
        for i, raw in enumerate(self.array(top, "Tensors", "$", required=False)):
            if isinstance(raw, dict) and isinstance(raw.get("Id"), int):
                self.tensor_table[raw["Id"]] = raw
            else:
                self.error("bad-tensor", f"$.Tensors[{i}]", "expected a tensor object with an integer Id; dropped")
        self.unknown_keys(top, _MODEL_KEYS, "$")
        nodes = []
        for i, raw in enumerate(top["Nodes"]):
            node = self.dropping("bad-node", "node", self.node, raw, f"$.Nodes[{i}]")
            if node is not None:
                nodes.append(node)
        return ArkFile("model", ints["Rank"], ints["WorldSize"], nodes=nodes)

    def _rank_check(self, ints: dict[str, int]) -> None:
        if not 0 <= ints["Rank"] < ints["WorldSize"]:
            self.error("bad-rank", "$.Rank", f"Rank {ints['Rank']} is outside 0..WorldSize-1 ({ints['WorldSize']})")

    # ---- plan -------------------------------------------------------------------------------------------
    def plan(self, top: Any, path: Path) -> ArkFile:
        if not isinstance(top, dict) or not ({"TaskInfos", "ProcessorGroups"} & set(top)):
            raise LoadError(path, "$", 'expected an ARK plan object with "TaskInfos" and "ProcessorGroups"')
        ints = self.top_ints(
            top, {"Rank": (0, 0), "WorldSize": (1, 1), "NumProcessors": (1, 1), "NumWarpsPerProcessor": (1, 1)}
        )
        self._rank_check(ints)
        architecture = top.get("Architecture")
        if architecture is None:
            self.problems.append(
                Problem("info", "no-architecture", 'no "Architecture" key: read as "ANY" (older plans omit it)', "$")
            )
            architecture = "ANY"
        elif architecture not in ARCHITECTURES:
            self.warning("unknown-architecture", "$.Architecture", f"unknown architecture {architecture!r}")
            architecture = str(architecture)
        self.unknown_keys(top, _PLAN_KEYS, "$")
        tasks = []
        for i, raw in enumerate(self.array(top, "TaskInfos", "$")):
            task = self.dropping("bad-task", "task info", self.task, raw, f"$.TaskInfos[{i}]")
            if task is not None:
                tasks.append(task)
        groups = []
        for i, raw in enumerate(self.array(top, "ProcessorGroups", "$")):
            group = self.dropping("bad-group", "processor group", self.processor_group, raw, f"$.ProcessorGroups[{i}]")
            if group is not None:
                groups.append(group)
        return ArkFile(
            "plan",
            ints["Rank"],
            ints["WorldSize"],
            tasks=tasks,
            processor_groups=groups,
            architecture=architecture,
            num_processors=ints["NumProcessors"],
            num_warps_per_processor=ints["NumWarpsPerProcessor"],
        )

    def task(self, value: Any, path: str) -> ArkTask:
        obj = self.obj(value, path, "a task info")
        task_id = self.int_field(obj, "Id", path, low=0)
        num_warps = self.int_field(obj, "NumWarps", path, low=0)
        sram = self.int_field(obj, "SramBytes", path, low=0)
        ops = []
        for i, raw in enumerate(self.array(obj, "Ops", path)):
            op = self.dropping("bad-op", "op", self.op, raw, f"{path}.Ops[{i}]", True)
            if op is not None:
                ops.append(op)
        self.unknown_keys(obj, _TASK_KEYS, path)
        return ArkTask(task_id, num_warps, sram, ops, path)

    def range_field(self, obj: dict, name: str, path: str) -> ArkRange | None:
        if name not in obj:
            self.error("missing-key", path, f'missing required key "{name}"')
            return None
        where = path + "." + name
        try:
            values = self.int_list(obj[name], where)
        except Dropped as drop:
            self.error("bad-range", drop.args[0], f"{drop.args[1]}; the range is ignored")
            return None
        if len(values) not in (2, 3) or (len(values) == 3 and values[2] < 1) or values[1] < values[0]:
            self.error(
                "bad-range",
                where,
                f"expected [begin, end] or [begin, end, step>0] with begin ≤ end, got {list(values)}",
            )
            return None
        return ArkRange(*values)

    def processor_group(self, value: Any, path: str) -> ArkProcessorGroup:
        obj = self.obj(value, path, "a processor group")
        processor_range = self.range_field(obj, "ProcessorRange", path)
        resource_groups = []
        for i, raw in enumerate(self.array(obj, "ResourceGroups", path)):
            group = self.dropping(
                "bad-group", "resource group", self.resource_group, raw, f"{path}.ResourceGroups[{i}]"
            )
            if group is not None:
                resource_groups.append(group)
        self.unknown_keys(obj, _PG_KEYS, path)
        return ArkProcessorGroup(processor_range, resource_groups, path)

    def resource_group(self, value: Any, path: str) -> ArkResourceGroup:
        obj = self.obj(value, path, "a resource group")
        ranges = {name: self.range_field(obj, name, path) for name in ("ProcessorRange", "WarpRange", "SramRange")}
        task_groups = []
        for i, raw in enumerate(self.array(obj, "TaskGroups", path)):
            group = self.dropping("bad-group", "task group", self.task_group, raw, f"{path}.TaskGroups[{i}]")
            if group is not None:
                task_groups.append(group)
        self.unknown_keys(obj, _RG_KEYS, path)
        return ArkResourceGroup(ranges["ProcessorRange"], ranges["WarpRange"], ranges["SramRange"], task_groups, path)

    def task_group(self, value: Any, path: str) -> ArkTaskGroup:
        obj = self.obj(value, path, "a task group")
        task_id = self.int_field(obj, "TaskId", path, low=0)
        task_range = self.range_field(obj, "TaskRange", path)
        granularity = self.int_field(obj, "Granularity", path, low=1)
        self.unknown_keys(obj, _TG_KEYS, path)
        return ArkTaskGroup(task_id, task_range, granularity, path)
