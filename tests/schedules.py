"""Tiny hand-written schedules whose expected analysis results are worked out by hand in the tests."""

from __future__ import annotations

import copy
from typing import Any


def workload(
    wid: int,
    layer: str,
    time: int,
    inputs: list[int],
    out: int,
    dests: list[dict],
    *,
    buffer: list[dict] | None = None,
    layer_type: str = "vp",
    weight: list[int] | None = None,
    ring: list[list[int]] | None = None,
    wl0: list[dict] | None = None,
) -> dict[str, Any]:
    w: dict[str, Any] = {
        "workload_id": wid,
        "layer_name": layer,
        "layer_type": layer_type,
        "time": time,
        "workload": [[0, 0, 0, 0], [0, 0, 0, 0]],
        "ofmap_size": 16,
        "tile_padding_tblr": [0, 0, 0, 0],
        "ifmap": [
            {"align": 8, "bitwidth": 8, "lower": [0, 0, 0, 0], "upper": [0, 0, 0, 0], "size": 16, "transfer_id": [t]}
            for t in inputs
        ],
        "ofmap": [{"lower": [0, 0, 0, 0], "upper": [0, 0, 0, 0], "size": 16, "transfer_id": out, "destination": dests}],
        "tile_info": {"tile_num_0": {"single_tile_time_pred": float(time)}},
        "ring_buffer_info": ring if ring is not None else [[0, 1024]],
        "buffer": buffer or [],
        "wl0_buffer": wl0,
    }
    if weight is not None:
        w["weight"] = {"lower": [0, 0, 0, 0], "upper": [0, 0, 0, 0], "size": 8, "transfer_id": weight}
        w["layer_type"] = "pe"
    return w


def entry(tensor: int, address: int, size: int, kind: str = "ifmap", new: bool | None = None) -> dict:
    e: dict[str, Any] = {
        "tensor_id": tensor,
        "tensor_order": 0,
        "type": kind,
        "address": address,
        "size": size,
        "align": 8,
        "bitwidth": 8,
        "lower": [0, 0, 0, 0],
        "upper": [0, 0, 0, 0],
    }
    if new is not None:
        e["newly_added"] = new
    return e


def core(c: int, w: int) -> dict:
    return {"type": "core", "core_id": c, "workload_id": w}


DRAM = {"type": "DRAM", "core_id": -1}


def two_core() -> dict[str, Any]:
    """Core 0: A(10) → B(5); core 1: C(7) reads A's output, then D(3) reads B and C.

    Transfer 0 is the DRAM input; 1 = A's ofmap (to B and C); 2 = B's ofmap (to D); 3 = C's (to D);
    4 = D's ofmap, written to DRAM.
    Dependency-aware times: A 0–10, B 10–15, C 10–17 (waits for A), D 17–20 (waits for C).
    Sequential: A 0–10, B 10–15, C 0–7, D 7–10. Makespans 20 and 15. Critical path A → C → D.
    """
    return copy.deepcopy(
        {
            "-1": {
                "in": [
                    {
                        "core_id": 1,
                        "workload_id": 1,
                        "layer_name": "D",
                        "transfer_id": 4,
                        "lower": [0, 0, 0, 0],
                        "upper": [0, 0, 0, 0],
                    }
                ],
                "out": [
                    {
                        "transfer_id": 0,
                        "type": "fmap",
                        "size": 16,
                        "related_ifmap": [],
                        "lower": [0, 0, 0, 0],
                        "upper": [0, 0, 0, 0],
                        "destination": [{"core_id": 0, "workload_id": 0, "layer_name": "A", "type": "core"}],
                    }
                ],
            },
            "0": [workload(0, "A", 10, [0], 1, [core(0, 1), core(1, 0)]), workload(1, "B", 5, [1], 2, [core(1, 1)])],
            "1": [workload(0, "C", 7, [1], 3, [core(1, 1)]), workload(1, "D", 3, [2, 3], 4, [DRAM])],
            "buffersize": 1024,
            "top_batch_cut": 1,
            "xlen": 2,
            "ylen": 1,
        }
    )
