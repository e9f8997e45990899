"""A small TVM MLF v7 bundle with two modules, written deterministically (for demos, tests and fuzzing).

Module `classifier` is a graph-executor model (dense → relu → dense → softmax) whose storage plan reuses the
input's storage id; module `kws` is an AOT build (no graph, a `tvmgen_kws.h` header). Every fused function
has a C definition, so the tree's "→ C source" links resolve. `make samples` writes it.
"""

from __future__ import annotations

import io
import json
import struct
import tarfile
from pathlib import Path
from typing import Any

import numpy as np

MLF_NAME = "two_modules_mlf.tar"
FUNCTIONS = (
    "tvmgen_classifier_fused_nn_dense_add",
    "tvmgen_classifier_fused_nn_relu",
    "tvmgen_classifier_fused_nn_dense_add_1",
    "tvmgen_classifier_fused_nn_softmax",
)


def params_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """`tvm.relay.save_param_dict`'s layout (see explorer.formats.tvm_mlf.params)."""
    codes = {"f": 2, "i": 0, "u": 1}
    out = [struct.pack("<QQQ", 0xF7E58D4F05049CB7, 0, len(arrays))]
    for name in arrays:
        out.append(struct.pack("<Q", len(name)) + name.encode())
    out.append(struct.pack("<Q", len(arrays)))
    for array in arrays.values():
        data = np.ascontiguousarray(array).tobytes()
        out.append(struct.pack("<QQiii", 0xDD5E40F096B4A13F, 0, 1, 0, array.ndim))
        out.append(struct.pack("<BBH", codes[array.dtype.kind], array.dtype.itemsize * 8, 1))
        out.append(struct.pack(f"<{array.ndim}q", *array.shape) + struct.pack("<q", len(data)) + data)
    return b"".join(out)


def _graph() -> dict[str, Any]:
    def op(name: str, inputs: list[int], num_inputs: int) -> dict:
        return {
            "op": "tvm_op",
            "name": name,
            "attrs": {"num_outputs": "1", "num_inputs": str(num_inputs), "flatten_data": "0", "func_name": name},
            "inputs": [[i, 0, 0] for i in inputs],
        }

    nodes = [
        {"op": "null", "name": "input", "inputs": []},  # 0
        {"op": "null", "name": "p0", "inputs": []},  # 1: dense 1 weight [32, 64]
        {"op": "null", "name": "p1", "inputs": []},  # 2: bias [32]
        op(FUNCTIONS[0], [0, 1, 2], 3),  # 3 → [1, 32]
        op(FUNCTIONS[1], [3], 1),  # 4 → [1, 32], reuses the input's storage
        {"op": "null", "name": "p2", "inputs": []},  # 5: dense 2 weight [10, 32]
        {"op": "null", "name": "p3", "inputs": []},  # 6: bias [10]
        op(FUNCTIONS[2], [4, 5, 6], 3),  # 7 → [1, 10]
        op(FUNCTIONS[3], [7], 1),  # 8 → [1, 10], output
    ]
    shapes = [[1, 64], [32, 64], [32], [1, 32], [1, 32], [10, 32], [10], [1, 10], [1, 10]]
    storage = [0, 1, 2, 3, 0, 4, 5, 6, 7]
    return {
        "nodes": nodes,
        "arg_nodes": [0, 1, 2, 5, 6],
        "heads": [[8, 0, 0]],
        "attrs": {
            "dltype": ["list_str", ["float32"] * 9],
            "device_index": ["list_int", [1] * 9],
            "storage_id": ["list_int", storage],
            "shape": ["list_shape", shapes],
        },
        "node_row_ptr": list(range(10)),
    }


def _c_source() -> str:
    lines = ["// tvm target: c -keys=cpu", '#include "tvm/runtime/c_runtime_api.h"', ""]
    for name in FUNCTIONS:
        lines += [
            f"TVM_DLL int32_t {name}(void* args, int32_t* arg_type_ids, int32_t num_args) {{",
            "  void* p0 = (((TVMValue*)args)[0].v_handle);",
            "  for (int32_t i = 0; i < 32; ++i) {",
            "    ((float*)p0)[i] = 0.000000e+00f;",
            "  }",
            "  return 0;",
            "}",
            "",
        ]
    return "\n".join(lines)


def _metadata() -> dict[str, Any]:
    def usage(workspace: int, **extra: int) -> list[dict]:
        return [{"device": 1, "workspace_size_bytes": workspace, **extra}]

    return {
        "modules": {
            "classifier": {
                "executors": ["graph"],
                "export_datetime": "2026-11-22 00:00:00Z",
                "memory": {
                    "functions": {
                        "main": usage(384, constants_size_bytes=9704, io_size_bytes=296),
                        "operator_functions": [
                            {"function_name": name, "workspace": usage(64 * (k + 1))}
                            for k, name in enumerate(FUNCTIONS)
                        ],
                    }
                },
                "model_name": "classifier",
                "style": "full-model",
                "target": ["c -keys=cpu -model=host"],
            },
            "kws": {
                "executors": ["aot"],
                "export_datetime": "2026-11-22 00:00:00Z",
                "memory": {"functions": {"main": usage(1184, constants_size_bytes=16, io_size_bytes=8)}},
                "model_name": "kws",
                "style": "full-model",
                "target": ["c -keys=cpu -model=host"],
            },
        },
        "version": 7,
    }


def bundle_members() -> dict[str, bytes]:
    rng = np.random.default_rng(7)
    params = {
        "p0": rng.standard_normal((32, 64)).astype(np.float32),
        "p1": np.zeros(32, dtype=np.float32),
        "p2": rng.standard_normal((10, 32)).astype(np.float32),
        "p3": np.linspace(-1, 1, 10).astype(np.float32),
    }
    relay = (
        "def @main(%input: Tensor[(1, 64), float32]) {\n"
        "  %0 = nn.dense(%input, meta[relay.Constant][0], units=32);\n"
        "  %1 = nn.relu(%0);\n"
        "  %2 = nn.dense(%1, meta[relay.Constant][1], units=10);\n"
        "  nn.softmax(%2)\n"
        "}\n"
    )
    return {
        "metadata.json": json.dumps(_metadata(), indent=2).encode(),
        "executor-config/graph/classifier.graph": json.dumps(_graph()).encode(),
        "parameters/classifier.params": params_bytes(params),
        "parameters/kws.params": params_bytes({"p0": np.arange(4, dtype=np.int32)}),
        "src/classifier.relay": relay.encode(),
        "src/kws.relay": b"def @main(%x: Tensor[(1, 2), float32]) {\n  nn.relu(%x)\n}\n",
        "codegen/host/src/classifier_lib0.c": _c_source().encode(),
        "codegen/host/src/kws_lib0.c": b"// tvm target: c -keys=cpu\nint32_t tvmgen_kws_run(void) {\n  return 0;\n}\n",
        "codegen/host/include/tvmgen_kws.h": b"#ifndef TVMGEN_KWS_H_\n#define TVMGEN_KWS_H_\n#endif\n",
    }


def tar_bytes(members: dict[str, bytes]) -> bytes:
    """A tar with `./`-prefixed names, as TVM writes them, with fixed times and owners (reproducible)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo("./" + name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def write_samples(folder: Path) -> list[Path]:
    """The bundled TVM demo: a tar with two modules."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MLF_NAME
    path.write_bytes(tar_bytes(bundle_members()))
    return [path]
