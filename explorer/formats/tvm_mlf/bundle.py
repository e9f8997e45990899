"""A TVM Model Library Format bundle as plain data: metadata, modules and the files that belong to each.

Metadata versions differ in where things are (see `explorer.formats.tvm_mlf.reader`); this is the common form.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from explorer.errors import LoadError
from explorer.formats.tvm_mlf.archive import Bundle
from explorer.formats.tvm_mlf.graph import Graph
from explorer.formats.tvm_mlf.params import MAX_STATS_BYTES, ParamArray, array_stats
from explorer.formats.tvm_mlf.storage_plan import StoragePlan
from explorer.formatting import human_bytes


@dataclass(frozen=True, slots=True)
class FunctionMemory:
    function: str
    device: int | None
    workspace_bytes: int
    constants_bytes: int | None = None
    io_bytes: int | None = None


@dataclass
class Module:
    name: str
    executors: list[str]
    style: str
    targets: list[str]
    memory: list[FunctionMemory] = field(default_factory=list)
    graph_member: str | None = None
    params_member: str | None = None
    relay_member: str | None = None
    tir_members: list[str] = field(default_factory=list)
    source_members: list[str] = field(default_factory=list)  # codegen C sources, headers, objects
    graph: Graph | None = None
    params: list[ParamArray] = field(default_factory=list)
    plan: StoragePlan | None = None
    core: int | None = None  # this module's core in the storage-plan schedule

    @property
    def workspace_bytes(self) -> int:
        return sum(m.workspace_bytes for m in self.memory if m.function == "main")

    @property
    def param_bytes(self) -> int:
        return sum(array.nbytes for array in self.params)


@dataclass
class MlfBundle:
    bundle: Bundle
    metadata: dict[str, Any]
    version: int | None
    modules: list[Module]
    rows_nid: dict[int, list[int]] = field(default_factory=dict)  # per core: node id of each schedule row

    def text(self, member: str) -> str:
        return self.bundle.members.get(member, b"").decode("utf-8", errors="replace")

    def param_stats(self, member: str, array: ParamArray) -> dict[str, str]:
        """One parameter's value statistics, its bytes read from the bundle now (params files are not held)."""
        left = self.bundle.left.get(member)
        if left is None:
            return array_stats(self.bundle.members.get(member, b""), array)
        if array.nbytes > MAX_STATS_BYTES:
            return {"values": f"not summarised: {human_bytes(array.nbytes)} is over the "
                              f"{human_bytes(MAX_STATS_BYTES)} limit"}  # fmt: skip
        try:
            data = left.read(array.offset, array.nbytes)
        except LoadError as error:
            return {"values": f"not read: {error.message}"}
        return array_stats(data, dataclasses.replace(array, offset=0))
