"""Weights never loaded (issue #56), a part of `make bench`: full-size TorchScript exports with their weights inside
one file (hf_exports.export_full), each opened by `ir-explorer graph FILE --json`, `ir-explorer check FILE` and
the TUI's way to its first graph screen (headless: the load, shape inference, the graph, the first layout), against
a bare `onnx.load` of the same file in the same run. Every figure is one process from its start (the interpreter
and its imports included) to its end, the median of RUNS; peak memory is the most the process and its children
(the shape-inference child) held at once, sampled every few milliseconds from /proc. Targets: each at most 0.35×
the bare load's time, peak memory at most 0.25× the file's bytes. Run alone: `python benchmarks/weights_bench.py`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS = 3
SAMPLE_SECONDS = 0.005

BARE_LOAD = "import sys, onnx; onnx.load(sys.argv[1])"
# the floor: what `graph --json` imports before it reads a byte, and the shape-inference child's interpreter
IMPORTS_ALONE = ("import onnx, explorer.cli, explorer.contracts, explorer.exports.graph_json, "
                 "explorer.formats.onnx.document")
CHILD_ALONE = "import onnx"
FIRST_SCREEN = """
import sys
from pathlib import Path
from explorer.api import open_document
from explorer.graph.expansion import initial_expansion
from explorer.graph.layout import layout_graph
from explorer.graph.visible import visible_graph

document = open_document(Path(sys.argv[1]))
document.run_deep_checks()
model = document.view.drawn_graph()
layout_graph(model, visible_graph(model, initial_expansion(model)))
"""


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and its descendants now (0 once gone)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{current}/task/{current}/children") as handle:
                pending += [int(child) for child in handle.read().split()]
        except (OSError, ValueError):
            continue
    return total


def run(argv: list[str]) -> tuple[float, int]:
    """Seconds from start to exit, and the peak resident bytes of the process tree."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tree_rss(process.pid))
        time.sleep(SAMPLE_SECONDS)
    return time.perf_counter() - started, peak


def measure(argv: list[str]) -> tuple[float, int]:
    found = [run(argv) for _ in range(RUNS)]
    return statistics.median(t for t, _ in found), max(m for _, m in found)


def _row_and_verdict(name: str, size: int, bare: tuple[float, int], ours: dict[str, tuple[float, int]],
                     baseline: str) -> tuple[str, str]:  # fmt: skip
    """One file's table row (each command's time and peak, ratios to the baseline, peaks to the bytes) and its
    verdict against the targets (time ≤ 0.35× the baseline, peak ≤ 0.25× the file's bytes)."""
    cells = " | ".join(f"{t:.2f} s, {m / 2**20:,.0f} MiB" for t, m in ours.values())
    ratios = ", ".join(f"{t / bare[0]:.2f}×" for t, _ in ours.values())
    peaks = ", ".join(f"{m / size:.2f}" for _, m in ours.values())
    row = (f"| {name} | {size / 2**20:,.0f} MiB | {bare[0]:.2f} s, {bare[1] / 2**20:,.0f} MiB | {cells} | "
           f"{ratios} | {peaks} |")  # fmt: skip
    missed = [f"{what} {t / bare[0]:.2f}× {baseline}" for what, (t, _) in ours.items() if t > 0.35 * bare[0]]
    missed += [f"{what} peak {m / size:.2f}× the bytes" for what, (_, m) in ours.items() if m > 0.25 * size]
    return row, f"{name}: " + ("all met." if not missed else "missed: " + ", ".join(missed) + ".")


def section(out: Path) -> list[str]:
    from hf_exports import export_full

    python = sys.executable
    lines = [
        "## Weights never loaded (issue #56)",
        "",
        "Full-size TorchScript exports (random weights, the default configs), their weights inside the one file.",
        f"One process from start to end, median of {RUNS} runs; peak: the most the process and its children held",
        "at once (/proc, every 5 ms). `onnx.load`: a bare load of the file. First screen: the TUI's way to its",
        "first graph screen, headless (load, shape inference, graph, first layout).",
        "",
        "| file | bytes | `onnx.load`: time, peak | `graph --json` | `check` | first screen | ratios to the load "
        "(time) | peak ÷ file bytes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    imports, child = measure([python, "-c", IMPORTS_ALONE]), measure([python, "-I", "-c", CHILD_ALONE])
    verdicts = []
    for name, path, what in export_full(out):
        if path is None:
            lines.append(f"| {name} | {what} | | | | | | |")
            continue
        size = path.stat().st_size
        bare = measure([python, "-c", BARE_LOAD, str(path)])
        ours = {
            "graph --json": measure([python, "-m", "explorer", "graph", str(path), "--json"]),
            "check": measure([python, "-m", "explorer", "check", str(path)]),
            "first screen": measure([python, "-c", FIRST_SCREEN, str(path)]),
        }
        row, verdict = _row_and_verdict(name, size, bare, ours, "the load")
        lines.append(row)
        verdicts.append(verdict)
    lines += ["", f"The floor, in the same run: `graph --json`'s imports alone take {imports[0]:.2f} s and "
              f"{imports[1] / 2**20:,.0f} MiB, the shape-inference child's interpreter with onnx imported "
              f"{child[0]:.2f} s and {child[1] / 2**20:,.0f} MiB, before either reads a byte of the file.", "",
              "Against issue #56's targets (time ≤ 0.35× `onnx.load`, peak ≤ 0.25× the file's bytes):", ""]
    return lines + [f"- {v}" for v in verdicts] + [""] + other_formats(out)


BARE_COREML = ("import sys; from explorer.formats.coreml.proto import proto_module; "
               "proto_module('Model_pb2').Model().ParseFromString(open(sys.argv[1], 'rb').read())")
BARE_TVM = ("import sys, tarfile; archive = tarfile.open(sys.argv[1]); "
            "[archive.extractfile(m).read() for m in archive if m.isreg()]")
LAYERS, WIDTH = 8, 4096  # a NeuralNetwork of 8 inner products of 4096×4096 float32: 512 MiB of weights
TVM_PARAMS = 512 << 20  # one params file of this many bytes, in a plain tar


def _big_network(path: Path) -> Path:
    import numpy as np

    from explorer.formats.coreml.proto import proto_module

    if path.is_file():
        return path
    pb = proto_module("Model_pb2")
    model = pb.Model(specificationVersion=4)
    model.description.input.add().name = "x"
    model.description.output.add().name = f"y{LAYERS - 1}"
    values = np.random.default_rng(0).standard_normal(WIDTH * WIDTH).astype(np.float32)
    for k in range(LAYERS):
        layer = model.neuralNetwork.layers.add(name=f"fc{k}", input=["x" if k == 0 else f"y{k - 1}"], output=[f"y{k}"])
        layer.innerProduct.inputChannels = layer.innerProduct.outputChannels = WIDTH
        layer.innerProduct.weights.floatValue.extend(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


def _big_bundle(path: Path) -> Path:
    import io
    import tarfile

    import numpy as np

    from explorer.formats.tvm_mlf.samples import bundle_members, params_bytes

    if path.is_file():
        return path
    members = bundle_members()
    members["parameters/classifier.params"] = params_bytes({"p0": np.zeros(TVM_PARAMS // 4, dtype=np.float32)})
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo("./" + name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def other_formats(out: Path) -> list[str]:
    """The same for a Core ML NeuralNetwork `.mlmodel` (weights inside its protobuf) and a TVM bundle's params file,
    against what reading them whole costs (the spec parsed whole; the tar's members read into memory)."""
    python = sys.executable
    lines = [
        "### Core ML and TVM",
        "",
        f"A NeuralNetwork `.mlmodel` of {LAYERS} inner products of {WIDTH}×{WIDTH} float32 (weights in `floatValue`),",
        f"and a TVM bundle (a plain tar) whose params file holds {TVM_PARAMS >> 20} MiB. Baselines: the spec parsed",
        "whole by coremltools' protobuf classes; every tar member read into memory (what the reader did before).",
        "",
        "| file | bytes | baseline: time, peak | `info --json` | `check` | ratios to the baseline (time) | "
        "peak ÷ file bytes |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    verdicts = []
    inputs = (("NeuralNetwork .mlmodel", _big_network(out / "weights" / "big_network.mlmodel"), BARE_COREML),
              ("TVM bundle", _big_bundle(out / "weights" / "big_bundle.tar"), BARE_TVM))
    for name, path, bare_code in inputs:
        size = path.stat().st_size
        bare = measure([python, "-c", bare_code, str(path)])
        ours = {
            "info --json": measure([python, "-m", "explorer", "info", str(path), "--json"]),
            "check": measure([python, "-m", "explorer", "check", str(path)]),
        }
        row, verdict = _row_and_verdict(name, size, bare, ours, "the baseline")
        lines.append(row)
        verdicts.append(verdict)
    return lines + ["", "Against the same targets:", ""] + [f"- {v}" for v in verdicts] + [""]


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "out"
    print("\n".join(section(target)))
