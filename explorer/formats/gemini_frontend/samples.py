"""The frontend IR of the demo pipeline (sample_data/, `make samples`): the four layers its assembly and trace
(explorer.formats.gemini_trace.samples) run, with their shapes, dtypes, quantisation and module settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NAME = "demo_pipeline_b1.json"


def _layer(index: int, name: str, operation: str, inputs: list, outputs: list, previous: list, following: list,
           **extra: Any) -> dict:  # fmt: skip
    return {
        "layer_index": index, "name": name, "operation": operation, "device": "npu",
        "input_dtype": ["int8"] * len(inputs), "output_dtype": ["int8"], "input_shape": inputs,
        "output_shape": outputs, "previous_layer": previous, "next_layer": following, **extra,
    }  # fmt: skip


def frontend() -> dict:
    layers = [
        _layer(0, "src_quantize_1_1", "quantize", [[1, 3, 32, 32]], [[1, 3, 32, 32]], ["input1"], ["Conv_1"],
               module_list={"post_cal": {"mul_k": 53.5, "sum_b": -14.0, "carry_sel": "round"}}),
        _layer(1, "Conv_1", "conv2d", [[1, 3, 32, 32], [16, 3, 3, 3]], [[1, 16, 32, 32]],
               ["src_quantize_1_1", "constant_conv1_weight"], ["Conv_3", "Add_5"], kernel_size=[3, 3],
               stride=[1, 1], padding=[1, 1, 1, 1], activation_type="relu",
               quant_info={"input_scale": 0.0187, "weight_scale": 0.0042, "output_scale": 0.0311}),
        _layer(2, "Conv_3", "conv2d", [[1, 16, 32, 32], [16, 16, 3, 3]], [[1, 16, 32, 32]],
               ["Conv_1", "constant_conv3_weight"], ["Add_5"], kernel_size=[3, 3], stride=[1, 1],
               padding=[1, 1, 1, 1]),
        _layer(3, "Add_5", "element_wise_add", [[1, 16, 32, 32], [1, 16, 32, 32]], [[1, 16, 32, 32]],
               ["Conv_3", "Conv_1"], ["output1"]),
    ]  # fmt: skip
    return {layer["name"]: layer for layer in layers}


def write_samples(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / NAME
    path.write_text(json.dumps(frontend(), indent=3) + "\n", encoding="utf-8")
    return [path]
