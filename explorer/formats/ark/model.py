"""ARK model and plan files as plain data: nodes/tasks → ops → tensors → buffers.

The loader (`explorer.formats.ark.reader`) fills these from lenient JSON; analyses and views only read them.
Every object keeps the JSON path it came from, so a problem can point at the exact place in the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

# Element sizes in bytes of ARK's DataType strings (ark/api/data_type.cpp). NONE is registered but never
# valid for a real tensor.
DTYPE_BYTES: dict[str, int] = {
    "FP32": 4,
    "FP16": 2,
    "BF16": 2,
    "INT32": 4,
    "UINT32": 4,
    "INT8": 1,
    "UINT8": 1,
    "BYTE": 1,
    "NONE": 0,
}

ARG_TYPES = ("INT", "UINT32", "INT64", "UINT64", "BOOL", "FLOAT", "DIMS", "TENSOR", "OFFSET")

# Args each registered op type takes (current main, plus the historical Matmul args of the May 2024 docs).
OP_ARGS: dict[str, frozenset[str]] = {
    "Tensor": frozenset(),
    "Matmul": frozenset({"TransposeInput", "TransposeOther", "InputDimNC", "OtherDimNC", "ShapeMNK", "StridesACDB"}),
    "ReduceSum": frozenset({"Axis", "KeepDim"}),
    "ReduceMax": frozenset({"Axis", "KeepDim"}),
    "ReduceMean": frozenset({"Axis", "KeepDim"}),
    "ScalarAssign": frozenset({"Value"}),
    "ScalarAdd": frozenset({"Factor"}),
    "ScalarMul": frozenset({"Factor"}),
    "Transpose": frozenset({"Permutation"}),
    "SendPacket": frozenset({"Flag"}),
    "RecvPacket": frozenset({"Flag"}),
    "RecvReduceSendPacket": frozenset({"Flag", "NPeers", "Rank"}),
    "RecvReduceSend": frozenset({"NPeers", "Rank"}),
    "DeviceSync": frozenset({"Rank", "PeerNum"}),
    **dict.fromkeys(
        (
            "Add",
            "Sub",
            "Mul",
            "Div",
            "Exp",
            "Gelu",
            "Relu",
            "Rsqrt",
            "Sigmoid",
            "Sqrt",
            "Copy",
            "Cast",
            "Rope",
            "Embedding",
            "Noop",
            "Send",
            "SendDone",
            "Recv",
            "Reshape",
            "Placeholder",
        ),  # fmt: skip
        frozenset(),
    ),
}

ARCHITECTURES = ("ANY", "CUDA", "CUDA_70", "CUDA_80", "CUDA_90", "ROCM", "ROCM_90A", "ROCM_942")
TENSOR_ROLES = ("read", "write", "result")
ROLE_KEYS = {"read": "ReadTensors", "write": "WriteTensors", "result": "ResultTensors"}


@dataclass(frozen=True, slots=True)
class ArkBuffer:
    id: int
    rank: int = -1  # -1 = the file's own rank
    send_tags: tuple[tuple[int, int], ...] = ()
    recv_tags: tuple[tuple[int, int], ...] = ()
    is_external: bool = False


@dataclass(frozen=True, slots=True)
class ArkTensor:
    """A strided view of a buffer. `strides` is ARK's region shape in elements, not byte strides."""

    id: int
    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offsets: tuple[int, ...]
    padded_shape: tuple[int, ...]
    buffer: ArkBuffer
    path: str = ""  # the first occurrence; see ArkOp.tensor_path
    pads: tuple[int, ...] | None = None  # the April 2024 draft's field, kept for display only

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES.get(self.dtype, 0)

    def same_fields(self, other: ArkTensor) -> bool:
        return (self.dtype, self.shape, self.strides, self.offsets, self.padded_shape, self.buffer.id) == (
            other.dtype,
            other.shape,
            other.strides,
            other.offsets,
            other.padded_shape,
            other.buffer.id,
        )


@dataclass(frozen=True, slots=True)
class ArkArg:
    name: str
    type: str
    value: Any  # int, float, bool, list[int], ArkTensor, (buffer_id, value) for OFFSET, raw JSON if invalid
    path: str = ""


@dataclass(slots=True)
class ArkOp:
    type: str
    name: str
    is_virtual: bool
    read: list[ArkTensor]
    write: list[ArkTensor]
    result: list[ArkTensor]
    args: list[ArkArg]
    config: dict[str, Any] | None = None  # plan files only
    path: str = ""

    def tensors(self, role: str) -> list[ArkTensor]:
        return {"read": self.read, "write": self.write, "result": self.result}[role]

    def tensor_path(self, role: str, position: int) -> str:
        """Where this op's tensor sits in the file. A tensor object is shared by all its occurrences (the
        loader reuses identical ones), so its own `path` is only that of the first."""
        return f"{self.path}.{ROLE_KEYS[role]}[{position}]"


@dataclass(slots=True)
class ArkNode:
    id: int
    producers: list[int]
    consumers: list[int]
    ops: list[ArkOp]
    path: str = ""


@dataclass(slots=True)
class ArkRange:
    """A plan range `[begin, end]` or `[begin, end, step]`; `end` is exclusive."""

    begin: int
    end: int
    step: int = 1

    def __str__(self) -> str:
        return f"[{self.begin}, {self.end})" + (f" step {self.step}" if self.step != 1 else "")

    def __len__(self) -> int:
        return max(0, -(-(self.end - self.begin) // self.step)) if self.step > 0 else 0


@dataclass(slots=True)
class ArkTaskGroup:
    task_id: int
    task_range: ArkRange | None
    granularity: int
    path: str = ""


@dataclass(slots=True)
class ArkResourceGroup:
    processor_range: ArkRange | None
    warp_range: ArkRange | None
    sram_range: ArkRange | None
    task_groups: list[ArkTaskGroup]
    path: str = ""


@dataclass(slots=True)
class ArkProcessorGroup:
    processor_range: ArkRange | None
    resource_groups: list[ArkResourceGroup]
    path: str = ""


@dataclass(slots=True)
class ArkTask:
    id: int
    num_warps: int
    sram_bytes: int
    ops: list[ArkOp]
    path: str = ""


class OpSite(NamedTuple):
    """Where an op sits: the node (model) or task (plan) at `group` position, op `index` inside it."""

    group: int
    op_index: int


@dataclass
class ArkFile:
    """A loaded ARK model or plan. `groups` are the nodes (model) or task infos (plan) holding the ops."""

    kind: str  # "model" or "plan"
    rank: int
    world_size: int
    nodes: list[ArkNode] = field(default_factory=list)
    tasks: list[ArkTask] = field(default_factory=list)
    processor_groups: list[ArkProcessorGroup] = field(default_factory=list)
    architecture: str = "ANY"
    num_processors: int = 1
    num_warps_per_processor: int = 1

    @property
    def groups(self) -> Sequence[ArkNode | ArkTask]:
        return self.nodes if self.kind == "model" else self.tasks

    def ops(self) -> list[tuple[OpSite, ArkOp]]:
        return [(OpSite(g, i), op) for g, group in enumerate(self.groups) for i, op in enumerate(group.ops)]
