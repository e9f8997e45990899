"""Pydantic v2 models equivalent to the loader's msgspec Structs, only for measuring which validator to use.

The loader uses msgspec; `make bench` times both on the same bytes so the choice stays justified.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class Destination(_Model):
    type: Literal["core", "DRAM"]
    core_id: int | None = None
    workload_id: int | None = None


class OfmapRef(_Model):
    transfer_id: int
    destination: list[Destination] = []
    size: int = 0


class InputRef(_Model):
    transfer_id: list[int]
    size: int = 0


class BufferEntry(_Model):
    tensor_id: int
    type: Literal["ifmap", "weight", "ofmap"]
    address: int
    size: int
    newly_added: bool | None = None
    cur_wl_ifmap: bool = False


class WeightBufferEntry(_Model):
    address: int
    size: int
    source: Literal["DDR", "CORE", "DRAM"] = "DDR"
    transfer_id: list[int] = []
    layer_name: str | None = None


class Workload(_Model):
    workload_id: int
    layer_name: str
    layer_type: Literal["pe", "vp", "dt"]
    time: float
    ifmap: list[InputRef]
    ofmap: list[OfmapRef]
    buffer: list[BufferEntry]
    ring_buffer_info: list[tuple[int, int]] = []
    weight: InputRef | None = None
    wl0_buffer: list[WeightBufferEntry] | None = None
    wl1_buffer: list[WeightBufferEntry] | None = None
    ofmap_size: int = 0
