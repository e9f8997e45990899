"""Every reader's memory estimate against its real peak on hostile files (issue #44 item 3): files of empty
objects are the worst case of what a reader builds per byte (a node, a layer, a row each). The guard refuses a
file whose estimate passes what is available, so an estimate below the real peak lets a file kill the process
under a tight cgroup. Each command runs in a process of its own; its peak is the kernel's maximum resident size."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from explorer.memory_guard import json_memory_bound
from tests.conftest import ROOT, SAMPLE_DATA

OBJECTS = 200_000
PEAK = ("import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
        "print(done.stderr[-400:], file=sys.stderr)")  # fmt: skip


OPEN_ONLY = "open"  # a command that opens the file and does nothing else (the reader alone)


def peak_of(*args: str) -> int:
    """The largest resident size the command reached, in bytes (its exit status must be a clean one)."""
    command = ([sys.executable, "-c", f"from explorer.api import open_document; open_document({args[1]!r})"]
               if args[0] == OPEN_ONLY else [sys.executable, "-m", "explorer", *args])  # fmt: skip
    done = subprocess.run([sys.executable, "-c", PEAK, *command], cwd=ROOT,
                          capture_output=True, text=True, check=True)  # fmt: skip
    status, peak = map(int, done.stdout.split())
    assert status in (0, 1, 2) and "internal error" not in done.stderr, done.stderr  # 2: refused in words
    return peak


def varint(value: int) -> bytes:
    """The protobuf wire form of a length."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out) + bytes([value])


def empty_objects(count: int) -> str:
    return ",".join(["{}"] * count)


def tvm_bundle(folder: Path, graph: bytes) -> Path:
    with tarfile.open(SAMPLE_DATA / "two_modules_mlf.tar") as sample:
        metadata = json.loads(sample.extractfile("./metadata.json").read())
    metadata["modules"] = {"m": metadata["modules"]["classifier"]}
    path = folder / "empty_nodes.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in (("./metadata.json", json.dumps(metadata).encode()),
                           ("./executor-config/graph/m.graph", graph)):  # fmt: skip
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def hostile_file(folder: Path, reader: str, count: int) -> tuple[int, tuple[str, ...]]:
    """A file of `count` empty objects for `reader`: (the reader's estimate beyond BASE_BYTES, the command)."""
    if reader == "ark":
        from explorer.formats.ark.reader import MEMORY_PER_OBJECT

        data = ('{"Rank": 0, "WorldSize": 1, "Nodes": [' + empty_objects(count) + "]}").encode()
        path = folder / f"empty_nodes_{count}.json"
        path.write_bytes(data)
        return json_memory_bound(data, MEMORY_PER_OBJECT), ("info", str(path))
    if reader in ("onnx", "coreml"):
        from explorer.protobuf_guard import BYTES_PER_MESSAGE, count_messages

        if reader == "onnx":
            import onnx

            message = onnx.ModelProto()
            message.graph.name = "g"
            for _ in range(count):
                message.graph.node.add()
            path = folder / f"empty_nodes_{count}.onnx"
        else:
            from explorer.formats.coreml.proto import proto_module

            message = proto_module("Model_pb2").Model()
            message.specificationVersion = 4
            for _ in range(count):
                message.neuralNetwork.layers.add()
            path = folder / f"empty_layers_{count}.mlmodel"
        data = message.SerializeToString()
        path.write_bytes(data)
        # an ONNX model's `info` also builds its graph to count its ops (issue #57): the reader is measured alone
        command = OPEN_ONLY if reader == "onnx" else "info"
        return len(data) + count_messages(data, message.DESCRIPTOR) * BYTES_PER_MESSAGE, (command, str(path))
    if reader in ("gemini-trace", "gemini-asm"):
        from explorer.formats.gemini_trace.lines import MEMORY_PER_LINE, MEMORY_PER_TEXT_BYTE

        real = (SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt").read_text().splitlines()[0]
        # a trace of real lines (the text's own cost), an assembly of one-character lines (the per-line floor)
        text = (real + "\n") * max(count // 20, 1) if reader == "gemini-trace" else "x\n" * count
        path = folder / (f"t{count}_sim.txt" if reader == "gemini-trace" else f"a{count}_asm.txt")
        path.write_text(text)
        return len(text) * MEMORY_PER_TEXT_BYTE + MEMORY_PER_LINE * (text.count("\n") + 1), ("info", str(path))
    if reader == "gemini-frontend":
        from explorer.formats.gemini_frontend.reader import MEMORY_PER_OBJECT

        layers = "".join(f',"L{k}": {{}}' for k in range(count))
        data = ('{"a": {"layer_index": 0, "previous_layer": []}' + layers + "}").encode()
        path = folder / f"empty_layers_{count}_b1.json"
        path.write_bytes(data)
        return json_memory_bound(data, MEMORY_PER_OBJECT), ("info", str(path))
    if reader == "tvm-mlf":
        from explorer.formats.tvm_mlf.graph import MEMORY_PER_OBJECT

        graph = ('{"nodes": [' + empty_objects(count) + '], "arg_nodes": [], "heads": [], "attrs": {}}').encode()
        subfolder = folder / str(count)
        subfolder.mkdir()
        # the layout of every node: more than `info` needs
        return json_memory_bound(graph, MEMORY_PER_OBJECT), ("graph", str(tvm_bundle(subfolder, graph)), "--json")
    if reader == "scheduler-ir":
        from explorer.formats.scheduler_ir.memory_budget import MEMORY_PER_FILE_BYTE, MEMORY_PER_OBJECT

        data = ('{"0": [' + empty_objects(count) + '], "buffersize": 1024, "xlen": 1, "ylen": 1}').encode()
        path = folder / f"empty_{count}_stschedule.json"
        path.write_bytes(data)
        estimate = max(int(len(data) * MEMORY_PER_FILE_BYTE), data.count(b"{") * MEMORY_PER_OBJECT)
        return estimate, ("check", str(path))
    if reader == "scheduler-ir-elements":  # one workload reading `count` transfers: array elements, not objects
        from explorer.formats.scheduler_ir.memory_budget import json_counts, objects_estimate
        from explorer.memory_guard import BASE_BYTES
        from tests.schedules import two_core

        schedule = two_core()
        schedule["0"][0]["ifmap"][0]["transfer_id"] = [0, *range(100_000, 100_000 + count)]
        data = json.dumps(schedule).encode()
        path = folder / f"elements_{count}_stschedule.json"
        path.write_bytes(data)
        return objects_estimate(len(data), *json_counts(data)) - BASE_BYTES, ("check", str(path))
    from explorer.graph.node_data import CSV_BYTES_PER_BYTE

    path = folder / f"rows_{count}.csv"
    path.write_text("".join(f"n{k},{k}\n" for k in range(count)))
    return int(path.stat().st_size * CSV_BYTES_PER_BYTE), ("graph", str(SAMPLE_DATA / "residual_blocks.onnx"),
                                                           "--json", "--node-data", str(path))  # fmt: skip


@pytest.mark.parametrize("reader, count", [("ark", OBJECTS), ("gemini-frontend", OBJECTS), ("tvm-mlf", OBJECTS // 2),
                                           ("scheduler-ir", 3 * OBJECTS), ("scheduler-ir-elements", 5 * OBJECTS),
                                           ("node-data-csv", 2 * OBJECTS),
                                           ("onnx", 2 * OBJECTS), ("coreml", 5 * OBJECTS),
                                           ("gemini-trace", 5 * OBJECTS), ("gemini-asm", 2 * OBJECTS)])  # fmt: skip
def test_the_estimate_covers_the_real_peak_on_a_file_of_empty_objects(tmp_path, reader, count):
    """What a file of empty objects adds to the process (its peak less the same command's on a file of one) is
    within what the reader estimates for it beyond BASE_BYTES (the interpreter and its libraries)."""
    estimate, command = hostile_file(tmp_path, reader, count)
    _, small = hostile_file(tmp_path, reader, 1)
    added = peak_of(*command) - peak_of(*small)
    assert added <= estimate, f"{reader}: {added / 2**20:.0f} MiB added, {estimate / 2**20:.0f} MiB estimated"


def test_a_graph_of_empty_nodes_past_the_cap_is_refused_with_a_message(tmp_path):
    """The TVM graph's node count is capped (2,000,000 empty nodes in a 38 KB .tar.gz took 2 GiB): the bundle
    opens, the graph is not shown, and the problem says why."""
    from explorer.api import open_document
    from explorer.formats.tvm_mlf.graph import MAX_GRAPH_NODES

    graph = ('{"nodes": [' + empty_objects(MAX_GRAPH_NODES + 1) + "]}").encode()
    document = open_document(tvm_bundle(tmp_path, graph))
    said = [p.message for p in document.problems if p.code == "bad-graph"]
    assert any(f"over the cap of {MAX_GRAPH_NODES:,}" in message for message in said), said


def test_a_file_of_empty_workloads_under_a_tight_limit_is_refused_with_both_numbers(tmp_path):
    """Under a memory limit the schedule's empty objects would pass, the guard counts them and refuses before
    decoding: one line naming the estimate and what is available, exit 2 (not a killed process)."""
    import resource

    data = ('{"0": [' + empty_objects(8_000_000) + '], "buffersize": 1024, "xlen": 1, "ylen": 1}').encode()
    path = tmp_path / "empty_stschedule.json"
    path.write_bytes(data)  # 24 MB: about 770 MiB of objects

    def limit() -> None:  # the address space a container of 1 GiB leaves once the interpreter is up
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run([sys.executable, "-m", "explorer", "info", str(path)], cwd=ROOT, capture_output=True,
                          text=True, preexec_fn=limit,
                          env={"IR_EXPLORER_WORKERS": "0", "PATH": "", "IR_EXPLORER_CACHE": "off"})  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "8,000,00" in done.stderr and "needs about" in done.stderr and "is available" in done.stderr, done.stderr


def test_a_protobuf_of_empty_messages_under_a_tight_limit_is_refused_before_parsing(tmp_path):
    """An ONNX file of 8,000,000 empty nodes (16 MB; about 1.2 GB once parsed) under ulimit -v 1 GiB: the messages
    are counted on the wire before parsing and the file refused with both numbers, not a killed process."""
    import resource

    graph = b"\x0a\x00" * 8_000_000  # GraphProto.node (field 1), each an empty message
    path = tmp_path / "empty_nodes.onnx"
    path.write_bytes(b"\x3a" + varint(len(graph)) + graph)  # ModelProto.graph (field 7)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run([sys.executable, "-m", "explorer", "info", str(path)], cwd=ROOT, capture_output=True,
                          text=True, preexec_fn=limit, env={"PATH": "", "IR_EXPLORER_CACHE": "off"})  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "messages at" in done.stderr and "is available" in done.stderr, done.stderr
