"""Small hostile files for the hardening tests (issue #44), made on demand."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def onnx_that_crashes_shape_inference(folder: Path) -> list[Path]:
    """Two tiny models on which onnx's C++ shape inference segfaults: a node reading an input nobody declares, of
    RegexFullMatch (opset 20) and of ai.onnx.ml's DictVectorizer."""
    from onnx import helper

    made = []
    regex = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern="a")
    model = helper.make_model(helper.make_graph([regex], "g", [], []), opset_imports=[helper.make_opsetid("", 20)])
    made.append(folder / "regex_undeclared.onnx")
    made[-1].write_bytes(model.SerializeToString())
    vectorizer = helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml", string_vocabulary=["a"])
    model = helper.make_model(
        helper.make_graph([vectorizer], "g", [], []),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
    )
    made.append(folder / "vectorizer_undeclared.onnx")
    made[-1].write_bytes(model.SerializeToString())
    return made


def overlapping_entries_schedule(path: Path, entries: int, same_tensor: bool = False) -> Path:
    """The two-core schedule whose first workload's L2 holds `entries` entries all on the same bytes: distinct
    tensors (every pair an overlap: entries²/2 of them) or one tensor listed `entries` times (no overlap at all,
    but a sweep that pairs by scanning back meets entries²/2 candidates). 64,000 entries make a 22 MB file."""
    import json

    from tests.schedules import entry, two_core

    schedule = two_core()
    schedule["buffersize"] = 1 << 20
    first = schedule["0"][0]
    first["ring_buffer_info"] = [[0, 1 << 20]]
    first["buffer"] = [entry(7 if same_tensor else 1000 + k, 64, 256) for k in range(entries)]
    path.write_text(json.dumps(schedule))
    return path


def mil_with_body(folder: Path, body: str) -> Path:
    """A compiled Core ML folder (tests.unit.test_coreml_loader's) whose main function holds `body` as its ops."""
    from tests.unit.test_coreml_loader import write_compiled

    made = write_compiled(folder)
    mil = (made / "model.mil").read_text()
    start, end = mil.index("    tensor<fp32, [1, 4]> y"), mil.index("  } -> (z);")
    (made / "model.mil").write_text(mil[:start] + body + mil[end:])
    return made


def mil_nested_blocks(folder: Path, depth: int) -> Path:
    """`depth` cond blocks each inside the last, each reading `y` and `x` from the top: a lookup that climbs the
    blocks is quadratic in the depth."""
    opens = "".join(f'    tensor<fp32, [1, 4]> c{k} = cond(pred = x)[name = string("c{k}")] {{\n'
                    f'    tensor<fp32, [1, 4]> r{k} = add(x = y, y = x)[name = string("r{k}")];\n'
                    for k in range(depth))  # fmt: skip
    closes = "".join(f"    }} -> (r{k});\n" for k in reversed(range(depth)))
    head = '    tensor<fp32, [1, 4]> y = relu(x = x)[name = string("y")];\n'
    tail = '    tensor<fp32, [1, 4]> z = add(x = y, y = r0)[name = string("z")];\n'
    return mil_with_body(folder, head + opens + closes + tail)


_MEASURED = (
    "import sys\n"
    "from explorer.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            print('VmHWM', int(line.split()[1]) * 1024, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def explorer_peak(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, int]:
    """(exit code, peak resident bytes) of `ir-explorer ARGS` in a process of its own. VmHWM, the process's own
    high-water mark: the rusage of a child counts the parent's pages it held between fork and exec."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _MEASURED, *args], cwd=cwd, capture_output=True, text=True,
                          env=env)  # fmt: skip
    peak = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("VmHWM ")]
    return done.returncode, peak[-1] if peak else 0


def chain_model(nodes: int, reverse: bool = False) -> Any:
    """x → Mul(w_k) → … : each node reads the one before and its own weight; `reverse` lists the nodes backwards."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    made = [helper.make_node("Mul", [f"v{k}", f"w{k}"], [f"v{k + 1}"], name=f"mul{k}") for k in range(nodes)]
    weights = [numpy_helper.from_array(np.ones([1], np.float32), f"w{k}") for k in range(nodes)]
    given = helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])
    made_last = helper.make_tensor_value_info(f"v{nodes}", TensorProto.FLOAT, [1])
    graph = helper.make_graph(made[::-1] if reverse else made, "chain", [given], [made_last], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def cut_onnx_chain(path: Path, nodes: int) -> Path:
    """A chain model cut inside its first initializer, as an interrupted download is: every node's weight is gone
    (issue #72: each undefined value was checked against every later node)."""
    data = chain_model(nodes).SerializeToString()
    path.write_bytes(data[: data.index(b"w0", data.index(b"chain")) + 2])
    return path
