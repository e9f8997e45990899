"""Deterministic generator of scheduler IR files: the bundled demos, the test fixtures and the benchmark input.

`write_samples(DIR)` writes the two demo files into DIR (``make samples``). Schedules are a chain of layers split
over every core: each core runs one workload per layer, reads its predecessor's output from its own L2
(plus a halo from the next core every third layer, which makes cross-core waits), streams weights from DRAM
with prefetch, and spills one tensor through DRAM. L2 is split into two ring regions (feature maps, weights)
filled by a bump allocator that wraps, so entries do cross region ends without ever overlapping.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

CLEAN_NAME = "clean_2x2_stschedule.json"
PLANTED_NAME = "planted_problems_2x2_stschedule.json"


@dataclass(frozen=True)
class Recipe:
    xlen: int = 2
    ylen: int = 2
    layers: int = 12
    buffersize: int = 28 * 1024
    fmap_region: int = 20 * 1024  # ring region 0 = [0, fmap_region), region 1 = the rest (weights)
    prefetch: int = 2  # weights of the next layers already resident
    spill_layer: int | None = 6  # core 0's output of this layer goes through DRAM
    seed: int = 7
    max_fmap: int = 96 * 1024
    max_weight: int = 48 * 1024


class _Ring:
    """Bump allocation inside [lo, hi) that wraps to lo; FIFO lifetimes make that overlap-free."""

    def __init__(self, lo: int, hi: int) -> None:
        self.lo, self.hi, self.next = lo, hi, lo

    def take(self, size: int) -> int:
        address = self.next
        self.next += size
        if self.next >= self.hi:
            self.next = self.lo + (self.next - self.hi)
        return address


def _box(n: int, c: int, h: int, w: int) -> tuple[list[int], list[int]]:
    return [0, 0, 0, 0], [n - 1, c - 1, h - 1, w - 1]


class _Generator:
    def __init__(self, recipe: Recipe) -> None:
        self.r = recipe
        self.rng = random.Random(recipe.seed)
        self.cores = recipe.xlen * recipe.ylen
        self.next_tid = 0
        self.next_tensor = 0
        self.dram_in: list[dict] = []
        self.dram_out: list[dict] = []

    def tid(self) -> int:
        self.next_tid += 1
        return self.next_tid - 1

    def tensor(self) -> int:
        self.next_tensor += 1
        return self.next_tensor - 1

    def plan(self) -> None:
        """Decide every layer's shape, type, weights and transfer ids before emitting workloads."""
        r, rng = self.r, self.rng
        self.layer_name = [("Conv_%d" if k % 4 != 3 else "Add_%d") % k for k in range(r.layers)]
        self.is_pe = [k % 4 != 3 for k in range(r.layers)]
        self.halo = [k > 0 and k % 3 == 0 and self.cores > 1 for k in range(r.layers)]
        self.shape = []
        for _ in range(r.layers):
            channels = rng.choice([8, 16, 32])
            side = rng.choice([8, 12, 16])
            self.shape.append((1, channels, side, side))
        self.fmap_size = [min(c * h * w, r.max_fmap) for (_, c, h, w) in self.shape]
        self.weight_size = [
            min(self.shape[k][1] * 72 + 32 * 8, r.max_weight) if self.is_pe[k] else 0 for k in range(r.layers)
        ]
        self.time = [[rng.randint(1000, 9000) for _ in range(self.cores)] for _ in range(r.layers)]
        # transfer ids: the network input, weights per (layer, core), outputs per (layer, core)
        self.input_tid = [self.tid() for _ in range(self.cores)]
        self.weight_tid = [[self.tid() if self.is_pe[k] else -1 for _ in range(self.cores)] for k in range(r.layers)]
        self.out_tid = [[self.tid() for _ in range(self.cores)] for _ in range(r.layers)]
        self.spill_read_tid = self.tid() if r.spill_layer is not None else -1
        for c in range(self.cores):
            _, upper = _box(*self.shape[0])
            self.dram_out.append(
                {
                    "destination": [{"core_id": c, "layer_name": self.layer_name[0], "type": "core", "workload_id": 0}],
                    "lower": [0, 0, 0, 0],
                    "related_ifmap": [],
                    "size": self.fmap_size[0],
                    "transfer_id": self.input_tid[c],
                    "type": "fmap",
                    "upper": upper,
                }
            )
        for k in range(r.layers):
            for c in range(self.cores):
                if self.is_pe[k]:
                    self.dram_out.append(
                        {
                            "destination": [
                                {"core_id": c, "layer_name": self.layer_name[k], "type": "core", "workload_id": k}
                            ],
                            "lower": [0, 0, 0, 0],
                            "related_ifmap": [],
                            "size": self.weight_size[k],
                            "transfer_id": self.weight_tid[k][c],
                            "type": "weight",
                            "upper": [0, self.shape[k][1] - 1, 7, 8],
                        }
                    )

    def is_spill(self, k: int, c: int) -> bool:
        return self.r.spill_layer is not None and k == self.r.spill_layer and c == 0

    def input_tids(self, k: int, c: int) -> list[tuple[int, int]]:
        """(transfer id, source core) of the inputs of layer k on core c; source -1 = DRAM."""
        if k == 0:
            return [(self.input_tid[c], -1)]
        inputs = [(self.spill_read_tid, -1)] if self.is_spill(k - 1, c) else [(self.out_tid[k - 1][c], c)]
        if self.halo[k]:
            other = (c + 1) % self.cores
            inputs.append((self.out_tid[k - 1][other], other))
        return inputs

    def destinations(self, k: int, c: int) -> list[dict]:
        last = k == self.r.layers - 1
        if last or self.is_spill(k, c):
            return [{"core_id": -1, "type": "DRAM"}]
        dests = [{"core_id": c, "type": "core", "workload_id": k + 1}]
        if self.halo[k + 1]:
            consumer = (c - 1) % self.cores
            dests.append({"core_id": consumer, "type": "core", "workload_id": k + 1})
        return dests

    def core_workloads(self, c: int) -> Iterator[dict]:
        r = self.r
        fmaps = _Ring(0, r.fmap_region)
        weights = _Ring(r.fmap_region, r.buffersize)
        resident_weights: dict[int, dict] = {}  # layer -> entry
        own_input: dict | None = None  # the entry holding this core's input for the current layer
        for k in range(r.layers):
            n, ch, h, w = self.shape[k]
            lower, upper = _box(n, ch, h, w)
            entries: list[dict] = []
            # inputs
            inputs = self.input_tids(k, c)
            if own_input is None:  # network input, or a spilled tensor read back from DRAM
                tid, _ = inputs[0]
                own_input = self._fmap_entry(fmaps, k - 1 if k else 0, tid, -1, new=True)
            else:
                own_input = {**own_input, "newly_added": False}
            own_input["cur_wl_ifmap"] = True
            entries.append(own_input)
            for tid, source in inputs[1:]:
                halo = self._fmap_entry(fmaps, k - 1, tid, source, new=True)
                halo["cur_wl_ifmap"] = True
                entries.append(halo)
            # weights: current layer plus prefetch of the next pe layers
            for j in range(k, min(k + r.prefetch + 1, r.layers)):
                if self.is_pe[j] and j not in resident_weights:
                    size = self.weight_size[j]
                    resident_weights[j] = {
                        "address": weights.take(size),
                        "align": 8,
                        "bitwidth": 8,
                        "layer_name": self.layer_name[j],
                        "lower": [0, 0, 0, 0],
                        "newly_added": True,
                        "size": size,
                        "source": [
                            {
                                "core_id": -1,
                                "lower": [0, 0, 0, 0],
                                "size": size,
                                "transfer_id": self.weight_tid[j][c],
                                "type": "DRAM",
                                "upper": [0, self.shape[j][1] - 1, 7, 8],
                            }
                        ],
                        "tensor_id": self.tensor(),
                        "tensor_order": j,
                        "transfer_id": [self.weight_tid[j][c]],
                        "type": "weight",
                        "upper": [0, self.shape[j][1] - 1, 7, 8],
                    }
                    resident_weights[j]["_new_at"] = k
            for j in sorted(resident_weights):
                entry = resident_weights[j]
                entries.append(
                    {**{key: v for key, v in entry.items() if key != "_new_at"}, "newly_added": entry["_new_at"] == k}
                )
            # output: pre-allocated as the next workload's input, or staged for DRAM
            out_tid = self.out_tid[k][c]
            to_dram = k == r.layers - 1 or self.is_spill(k, c)
            if to_dram:
                size = self.fmap_size[k]
                entries.append(
                    {
                        "address": fmaps.take(size),
                        "align": 8,
                        "bitwidth": 8,
                        "layer_name": self.layer_name[k],
                        "lower": lower,
                        "size": size,
                        "start_send": True,
                        "tensor_id": self.tensor(),
                        "tensor_order": 1000 + k,
                        "type": "ofmap",
                        "upper": upper,
                    }
                )
                next_input = None
            else:
                next_input = self._fmap_entry(fmaps, k, out_tid, c, new=True)
                entries.append(next_input)
            ofmap = {
                "destination": self.destinations(k, c),
                "lower": lower,
                "size": self.fmap_size[k],
                "transfer_id": out_tid,
                "upper": upper,
            }
            workload: dict[str, Any] = {
                "buffer": entries,
                "ifmap": [
                    {
                        "align": 8,
                        "bitwidth": 8,
                        "lower": lower,
                        "size": self.fmap_size[max(k - 1, 0)],
                        "transfer_id": [tid],
                        "upper": upper,
                    }
                    for tid, _ in inputs
                ],
                "layer_name": self.layer_name[k],
                "layer_type": "pe" if self.is_pe[k] else "vp",
                "ofmap": [ofmap],
                "ofmap_size": self.fmap_size[k],
                "ring_buffer_info": [[0, r.fmap_region], [r.fmap_region, r.buffersize]],
                "tile_info": {
                    "tile_num_0": {
                        "ifmap_lower": lower,
                        "ifmap_upper": upper,
                        "ofmap_lower": lower,
                        "ofmap_upper": upper,
                        "single_tile_time_pred": float(self.time[k][c]),
                        "tile_padding_tblr": [1, 1, 1, 1],
                    }
                },
                "tile_padding_tblr": [1, 1, 1, 1],
                "time": self.time[k][c],
                "wl0_buffer": self._wl0(k, c) if self.is_pe[k] else None,
                "workload": [lower, upper],
                "workload_id": k,
            }
            if self.is_pe[k]:
                workload["weight"] = {
                    "lower": [0, 0, 0, 0],
                    "size": self.weight_size[k],
                    "transfer_id": [self.weight_tid[k][c]],
                    "upper": [0, ch - 1, 7, 8],
                }
            if to_dram:
                related = [self.spill_read_tid] if self.is_spill(k, c) else []
                entry = {
                    "core_id": c,
                    "layer_name": self.layer_name[k],
                    "lower": lower,
                    "transfer_id": out_tid,
                    "upper": upper,
                    "workload_id": k,
                }
                if related:
                    entry["related_ofmap"] = related
                self.dram_in.append(entry)
                if self.is_spill(k, c):
                    self.dram_out.append(
                        {
                            "destination": [
                                {
                                    "core_id": c,
                                    "layer_name": self.layer_name[k + 1],
                                    "type": "core",
                                    "workload_id": k + 1,
                                }
                            ],
                            "lower": lower,
                            "related_ifmap": [out_tid],
                            "size": self.fmap_size[k],
                            "transfer_id": self.spill_read_tid,
                            "type": "fmap",
                            "upper": upper,
                        }
                    )
            resident_weights.pop(k, None)
            own_input = next_input
            yield workload

    def _fmap_entry(self, ring: _Ring, layer: int, tid: int, source_core: int, new: bool) -> dict:
        n, ch, h, w = self.shape[layer]
        lower, upper = _box(n, ch, h, w)
        size = self.fmap_size[layer]
        source = {
            "core_id": source_core,
            "lower": lower,
            "size": size,
            "transfer_id": tid,
            "type": "DRAM" if source_core < 0 else "core",
            "upper": upper,
        }
        if source_core >= 0:
            source["layer_name"] = self.layer_name[layer]
        return {
            "address": ring.take(size),
            "align": 8,
            "bitwidth": 8,
            "lower": lower,
            "newly_added": new,
            "size": size,
            "source": [source],
            "tensor_id": self.tensor(),
            "tensor_order": 100 + layer,
            "transfer_id": [tid],
            "type": "ifmap",
            "upper": upper,
        }

    def _wl0(self, k: int, c: int) -> list[dict]:
        size = min(self.weight_size[k], 8192)
        entries = [
            {
                "address": 0,
                "align": 8,
                "bitwidth": 8,
                "layer_name": self.layer_name[k],
                "size": size,
                "source": "CORE",
                "tensor_order": None,
                "transfer_id": [self.weight_tid[k][c]],
            }
        ]
        nxt = k + 1
        if nxt < self.r.layers and self.is_pe[nxt]:
            entries.append(
                {
                    "address": 8192,
                    "align": 8,
                    "bitwidth": 8,
                    "layer_name": self.layer_name[nxt],
                    "lower": [0, 0, 0, 0],
                    "size": min(self.weight_size[nxt], 8192),
                    "source": "DDR",
                    "tensor_order": nxt,
                    "transfer_id": [self.weight_tid[nxt][c]],
                    "upper": [0, self.shape[nxt][1] - 1, 7, 8],
                }
            )
        return entries


def generate(recipe: Recipe = Recipe()) -> dict[str, Any]:
    """The whole schedule as JSON values (small and medium files)."""
    gen = _Generator(recipe)
    gen.plan()
    doc: dict[str, Any] = {}
    for c in range(gen.cores):
        doc[str(c)] = list(gen.core_workloads(c))
    doc["-1"] = {"in": gen.dram_in, "out": gen.dram_out}
    doc["buffersize"] = recipe.buffersize
    doc["top_batch_cut"] = 1
    doc["xlen"] = recipe.xlen
    doc["ylen"] = recipe.ylen
    return doc


def write_streaming(path: Path, recipe: Recipe) -> int:
    """Write a (possibly huge) schedule core by core without holding it in memory; returns bytes written."""
    gen = _Generator(recipe)
    gen.plan()
    encoder = msgspec.json.Encoder()
    with path.open("wb") as out:
        out.write(b"{")
        for c in range(gen.cores):
            out.write(b'"%d":[' % c)
            for i, workload in enumerate(gen.core_workloads(c)):
                if i:
                    out.write(b",")
                out.write(encoder.encode(workload))
            out.write(b"],")
        out.write(b'"-1":' + encoder.encode({"in": gen.dram_in, "out": gen.dram_out}))
        out.write(
            b',"buffersize":%d,"top_batch_cut":1,"xlen":%d,"ylen":%d}' % (recipe.buffersize, recipe.xlen, recipe.ylen)
        )
        return out.tell()


def dumps_like_jsoncpp(doc: dict[str, Any]) -> str:
    """Sorted keys, 3-space indent and ' : ' like the real files (JsonCpp's StyledWriter)."""
    return json.dumps(doc, indent=3, sort_keys=True, separators=(",", " : ")) + "\n"


# What `planted_problems()` plants: the checker must find exactly these and nothing else.
PLANTED = (
    ("l2-overlap", 1, 3),
    ("wl0-overlap", 2, 4),
    ("unresolved-transfer", 3, 5),
)
PLANTED_TENSOR = 90_000
PLANTED_TRANSFER = 99_999


def planted_problems(recipe: Recipe = Recipe()) -> dict[str, Any]:
    """The clean schedule with one L2 overlap, one WL0 overlap and one broken transfer id planted."""
    doc = generate(recipe)
    victim = max(doc["1"][3]["buffer"], key=lambda e: e["size"])
    doc["1"][3]["buffer"].append(
        {
            "address": victim["address"] + 64,
            "align": 8,
            "bitwidth": 8,
            "lower": [0, 0, 0, 0],
            "newly_added": True,
            "size": 128,
            "source": [
                {
                    "core_id": -1,
                    "lower": [0, 0, 0, 0],
                    "size": 128,
                    "transfer_id": 0,
                    "type": "DRAM",
                    "upper": [0, 0, 0, 127],
                }
            ],
            "tensor_id": PLANTED_TENSOR,
            "tensor_order": 0,
            "transfer_id": [0],
            "type": "ifmap",
            "upper": [0, 0, 0, 127],
        }
    )
    wl0 = doc["2"][4]["wl0_buffer"]
    wl0.append({**wl0[0], "address": wl0[0]["address"] + 16, "size": 64})
    doc["3"][5]["ifmap"][0]["transfer_id"] = [PLANTED_TRANSFER]
    return doc


def write_samples(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, doc in ((CLEAN_NAME, generate()), (PLANTED_NAME, planted_problems())):
        path = folder / name
        path.write_text(dumps_like_jsoncpp(doc), encoding="utf-8")
        written.append(path)
    written.append(write_layer_profile(folder / CLEAN_NAME, folder / LAYER_PROFILE_NAME))
    return written


LAYER_PROFILE_NAME = "clean_2x2_layer_profile.csv"


def write_layer_profile(schedule: Path, path: Path) -> Path:
    """A per-node data demo (`--node-data`): each layer of the clean schedule with made-up profiler cycles,
    its estimated time scaled by a repeating pattern, so the graph shows some layers hotter than others."""
    from explorer.api import open_document  # at call time: the sample writer runs after the formats load

    model = open_document(schedule).view.drawn_graph()
    lines = ["layer,cycles"]
    for k, g in enumerate(g for g in range(model.n_groups) if model.group_unit[g]):
        time = float(model.group_values["time"][g])
        lines.append(f"{model.group_label[g]},{time * (0.6 + 0.35 * (k * 7 % 5)):.0f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
