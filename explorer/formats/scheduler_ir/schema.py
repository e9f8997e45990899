"""The scheduler IR's workloads and DRAM section as typed msgspec Structs: only the fields the analyses use
(unknown keys such as ``tile_info`` are skipped by the decoder, never materialised)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

# Values are stored in int64 columns: refuse what would not fit rather than overflow later.
Int = Annotated[int, msgspec.Meta(ge=-(2**62), le=2**62)]


NonNeg = Annotated[int, msgspec.Meta(ge=0, le=2**62)]


Number = Annotated[float, msgspec.Meta(ge=0, le=1e18)]


# Addresses and buffer sizes are added (an entry's end) and subtracted (spans, gaps): within ±2^61 every such
# result fits in int64, where 2^62 + 2^62 wrapped to a negative end with numpy's overflow warning.
Address = Annotated[int, msgspec.Meta(ge=-(2**61), le=2**61)]


Size = Annotated[int, msgspec.Meta(ge=0, le=2**61)]


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
    address: Address
    size: Size
    newly_added: bool | None = None
    cur_wl_ifmap: bool = False


class WeightBufferEntry(msgspec.Struct, gc=False):
    address: Address
    size: Size
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
    # The L2 entries stay raw here and are decoded per workload afterwards (`decode_buffers`): decoded apart
    # from the rest of the workload, a core's million entries lie together in memory, and building the columns
    # from them took a third of the time (measured on the 16-core benchmark file).
    buffer: msgspec.Raw
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
WORKLOAD_LISTS: dict[str, type] = {
    "wl0_buffer": WeightBufferEntry,
    "wl1_buffer": WeightBufferEntry,
    "ifmap": InputRef,
    "ofmap": OfmapRef,
}


TOP_SCALARS = {"buffersize": 0, "top_batch_cut": 1, "xlen": 1, "ylen": 1}
