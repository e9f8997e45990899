"""Mutated files either load or raise a located LoadError: never another exception, never a traceback.

`make test` runs a few hundred examples; `make fuzz` sets IR_EXPLORER_FUZZ_EXAMPLES=10000 and prints the count.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.api import open_document
from explorer.errors import LoadError
from explorer.formats.tvm_mlf.samples import tar_bytes
from tests.conftest import ROOT, SAMPLE_DATA, SAMPLES

EXAMPLES = int(os.environ.get("IR_EXPLORER_FUZZ_EXAMPLES", "150"))
RAN: dict[str, int] = {}


def seed_files() -> dict[str, list[Path]]:
    """Per format: the generated samples, plus the real ones when ../shared is there."""
    files = {
        "scheduler-ir": [
            SAMPLE_DATA / "clean_2x2_stschedule.json",
            SAMPLE_DATA / "planted_problems_2x2_stschedule.json",
        ],
        "ark": [SAMPLE_DATA / "views_ark_model.json"],
        "tvm-mlf": [SAMPLE_DATA / "two_modules_mlf.tar"],
    }
    if (SAMPLES / "scheduler_ir").is_dir():
        files["scheduler-ir"] += sorted((SAMPLES / "scheduler_ir").glob("*_stschedule.json"))
    if (SAMPLES / "ark").is_dir():
        files["ark"] += sorted((SAMPLES / "ark").glob("*.json"))
    if (SAMPLES / "tvm_mlf").is_dir():
        files["tvm-mlf"] += sorted((SAMPLES / "tvm_mlf").glob("*.tar"))
    files["onnx"] = [SAMPLE_DATA / "subgraphs_functions.onnx"]
    if (SAMPLES / "onnx").is_dir():
        files["onnx"] += sorted((SAMPLES / "onnx").glob("*.onnx"))
    files["coreml"] = coreml_seeds()
    return files


def coreml_seeds() -> list[Path]:
    """Model protobufs (inside packages or bare): MIL-builder models made now, plus the real samples."""
    from tests.coreml_models import make_models

    folders = [make_models(Path(tempfile.mkdtemp(prefix="irx-coreml-seeds-")))]
    if (SAMPLES / "coreml").is_dir():
        folders.append(SAMPLES / "coreml")
    found = []
    for folder in folders:
        found += sorted(folder.glob("*.mlmodel")) + sorted(
            folder.glob("*.mlpackage/Data/com.apple.CoreML/model.mlmodel")
        )
    return found


SEED_FILES = seed_files()
SEEDS = {str(path): path.read_bytes() for paths in SEED_FILES.values() for path in paths}
# what a mutated file is saved as: the scheduler IR is recognised by its name too, ARK files by content only
SAVE_AS = {
    "scheduler-ir": "m_{kind}_stschedule.json",
    "ark": "m_{kind}.json",
    "tvm-mlf": "m_{kind}.tar",
    "onnx": "m_{kind}.onnx",
    "coreml": "m_{kind}.mlmodel",
}
ODD_VALUES = [
    None,
    True,
    -1,
    0,
    2**63,
    10**40,
    -(10**30),
    1.5,
    float("1e308"),
    "",
    "0x100",
    [],
    {},
    [[[]]],
    {"a": {"b": {}}},
]


def mutate_structure(value, rng: random.Random):
    """Pick one object or array somewhere in the tree and break it: delete, duplicate, retype or nest."""
    path = []
    node = value
    while isinstance(node, dict | list) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return copy.deepcopy(rng.choice(ODD_VALUES))
    parent, key = path[-1]
    action = rng.choice(["delete", "duplicate", "retype", "nest", "rename"])
    if action == "delete":
        del parent[key]
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    elif action == "nest":  # spliced in as bytes later: Python's json cannot encode thousands of levels
        parent[key] = f"__DEEP_{rng.choice([3, 50, 3000])}__"
    elif action == "rename" and isinstance(parent, dict):
        parent[str(key) + "_x"] = parent.pop(key)
    else:
        parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return value


def flipped(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def mutated_json(data: bytes, rng: random.Random) -> bytes:
    value = json.loads(data)
    for _ in range(rng.randint(1, 4)):
        value = mutate_structure(value, rng)
    text = json.dumps(value)
    for depth in (3, 50, 3000):
        text = text.replace(f'"__DEEP_{depth}__"', "[" * depth + "1" + "]" * depth)
    return text.encode()


def mutated_bundle(data: bytes, rng: random.Random, kind: str) -> bytes:
    """A tar with one member changed: its JSON broken (structure) or its bytes flipped (params, sources)."""
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = {info.name.removeprefix("./"): archive.extractfile(info).read() for info in archive if info.isreg()}
    json_names = [n for n in members if n.endswith((".json", ".graph"))]
    if kind == "structure" and json_names:
        name = rng.choice(json_names)
        members[name] = mutated_json(members[name], rng)
    else:
        name = rng.choice(sorted(members))
        if members[name]:
            members[name] = flipped(members[name], rng)
    return tar_bytes(members)


def mutate_proto(message, rng: random.Random) -> None:
    """Break one field somewhere in a protobuf message: delete, duplicate, retype (odd values) or nest."""
    for _ in range(64):  # walk down a random path of set fields
        fields = message.ListFields()
        if not fields:
            return
        descriptor, value = rng.choice(fields)
        repeated = descriptor.is_repeated if hasattr(descriptor, "is_repeated") else descriptor.label == 3
        is_message = descriptor.message_type is not None
        if repeated and len(value) and rng.random() < 0.35:
            container = getattr(message, descriptor.name)
            if is_message and descriptor.message_type.GetOptions().map_entry:
                key = rng.choice(list(container))
                if rng.random() < 0.5:
                    del container[key]
                    return
                message = container[key] if hasattr(container[key], "ListFields") else message
                continue
            index = rng.randrange(len(container))
            if rng.random() < 0.5:
                del container[index]
            elif is_message:
                container.add().CopyFrom(container[index])
            else:
                container.append(container[index])
            return
        if is_message and rng.random() < 0.8:
            if repeated:
                if descriptor.message_type.GetOptions().map_entry:
                    values = list(getattr(message, descriptor.name).values())
                    if not values or not hasattr(values[0], "ListFields"):
                        return
                    message = rng.choice(values)
                else:
                    message = rng.choice(list(value))
            else:
                message = value
            continue
        if is_message:
            message.ClearField(descriptor.name)
            return
        odd = {
            descriptor.TYPE_STRING: ["", "x" * 300, "../../etc", "\u0000"],
            descriptor.TYPE_BYTES: [b"", b"\xff" * 17, b"\x00"],
            descriptor.TYPE_BOOL: [True, False],
            descriptor.TYPE_FLOAT: [float("nan"), float("inf"), -1e38],
            descriptor.TYPE_DOUBLE: [float("nan"), -1e300],
        }.get(descriptor.type, [0, -1, 2**31 - 1, 2**40, -(2**40), 7, 1000])
        choice = rng.choice(odd)
        try:
            if repeated:
                container = getattr(message, descriptor.name)
                container[rng.randrange(len(container))] = choice
            else:
                setattr(message, descriptor.name, choice)
        except (ValueError, TypeError):  # out of range for this integer width, or not a valid enum
            message.ClearField(descriptor.name)
        return


def mutated_protobuf(fmt: str, data: bytes, rng: random.Random) -> bytes:
    if fmt == "onnx":
        import onnx

        message = onnx.ModelProto()
    else:
        from explorer.formats.coreml.proto import proto_module

        message = proto_module("Model_pb2").Model()
    message.ParseFromString(data)
    for _ in range(rng.randint(1, 4)):
        mutate_proto(message, rng)
    if fmt == "onnx" and rng.random() < 0.1:  # deep nesting: the graph wrapped in If branches, many levels
        import onnx
        from google.protobuf.message import DecodeError

        graph = message.graph
        for _ in range(rng.choice([3, 20, 40])):  # 40 levels of If pass protobuf's own nesting limit
            wrapper = onnx.GraphProto(name="wrap")
            empty = onnx.GraphProto(name="empty")  # one branch only: the size grows linearly, not 2^depth
            try:
                node = onnx.helper.make_node("If", ["c"], ["o"], then_branch=graph, else_branch=empty)
            except DecodeError:
                break
            wrapper.node.add().CopyFrom(node)
            graph = wrapper
        message.graph.CopyFrom(graph)
    return message.SerializeToString()


def format_of(name: str) -> str:
    return next(fmt for fmt, paths in SEED_FILES.items() if any(str(p) == name for p in paths))


def mutated_bytes(name: str, seed: int, kind: str) -> bytes:
    rng = random.Random(seed)
    data = SEEDS[name]
    if kind == "truncate":
        return data[: rng.randrange(len(data))]
    fmt = format_of(name)
    if fmt in ("onnx", "coreml"):
        return flipped(data, rng) if kind == "flip" else mutated_protobuf(fmt, data, rng)
    if name.endswith(".tar"):
        if kind == "flip" and rng.random() < 0.5:
            return flipped(data, rng)  # the tar headers themselves
        return mutated_bundle(data, rng, kind)
    if kind == "flip":
        return flipped(data, rng)
    return mutated_json(data, rng)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def exercise(doc) -> None:
    """Touch what a user would: problems, the summary, the first items of every tree level, their details."""
    for problem in doc.problems:
        assert problem.code and problem.message
    doc.describe(("summary",))
    level = [doc.tree]
    for _ in range(5):
        nxt = []
        for item in level:
            doc.describe(item.ref)
            doc.tensor_of(item.ref)
            nxt += item.get_children()[:3]
        level = nxt
    if doc.schedule is not None:
        for row in range(min(doc.schedule.n_workloads, 5)):
            doc.describe(("workload", row))
    tvm = doc.view
    if doc.meta.format == "tvm-mlf":
        for m, module in enumerate(tvm.modules):
            for k in range(min(len(module.params), 3)):
                doc.describe(("param", m, k))
            if module.plan:
                doc.describe(("storage", m))
            for node in (module.graph.nodes if module.graph else [])[:8]:
                doc.describe(tvm.node_ref(m, node.nid))
                tvm.function_source(node.func_name)
        if doc.schedule is not None:
            for e in range(min(doc.schedule.buf_tensor.size, 3)):
                doc.describe(("buffer-entry", 0, e))
    onnx_view = doc.view
    if doc.meta.format == "onnx":
        for key, info in list(onnx_view.index.graphs.items())[:4]:
            doc.describe(("graph", key))
            for n in range(min(len(info.nodes), 4)):
                doc.describe(("node", key, n))
                for name in info.nodes[n].input[:2]:
                    doc.describe(("value", key, name))
                    onnx_view._links(key, name)
            for i in range(min(len(info.initializers), 2)):
                doc.describe(("init", key, i))
        doc.search("Conv")
    coreml_view = doc.view
    if doc.meta.format == "coreml":
        for key, block in list(coreml_view.model.blocks.items())[:4]:
            doc.describe(("block", key))
            for i in range(min(len(block.proto.operations), 6)):
                doc.describe(("op", key, i))
                coreml_view._op_children(key, i)
        for k in range(min(len(coreml_view.layers() or []), 6)):
            doc.describe(("layer", k))
        doc.describe(("description",))
        doc.search("conv")
    view = doc.view
    if doc.meta.format.startswith("ark-"):
        from explorer.analysis.stride_map import outer_dims, plane_grid
        from explorer.formats.ark.tensor_report import tensor_report

        for tensor_id in list(view.index.tensors)[:6]:
            tensor_report(view.index, tensor_id)
            layout = view.index.layout(tensor_id)
            if layout is None:
                continue
            others = view.index.layouts_on(layout.buffer_id)
            plane_grid(layout, others, tuple(layout.offsets[: outer_dims(layout)]), 20, 60)


@pytest.mark.parametrize("fmt", sorted(SEED_FILES))
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), seed=st.integers(0, 2**32), kind=st.sampled_from(["truncate", "flip", "structure"]))
def test_mutated_files_load_or_fail_cleanly(fuzz_dir, fmt, data, seed, kind):
    name = data.draw(st.sampled_from([str(path) for path in SEED_FILES[fmt]]))
    RAN[fmt] = RAN.get(fmt, 0) + 1
    path = fuzz_dir / SAVE_AS[fmt].format(kind=kind)
    path.write_bytes(mutated_bytes(name, seed, kind))
    before = path.read_bytes()
    try:
        doc = open_document(path)
    except LoadError as error:
        assert error.path == str(path)
        assert error.message
        assert error.location or "empty" in error.message or "no such" in error.message
    else:
        exercise(doc)
    assert path.read_bytes() == before


def test_zz_report_fuzz_count():
    for fmt in sorted(SEED_FILES):
        print(f"\nfuzz: {RAN.get(fmt, 0)} mutated {fmt} files checked")
        assert RAN.get(fmt, 0) >= min(EXAMPLES, 100), fmt


def test_check_never_prints_a_traceback(tmp_path):
    for index, kind in enumerate(["truncate", "flip", "structure"] * 3):
        fmt = sorted(SEED_FILES)[index % len(SEED_FILES)]
        path = tmp_path / SAVE_AS[fmt].format(kind=f"{index}_{kind}")
        path.write_bytes(mutated_bytes(str(SEED_FILES[fmt][0]), index, kind))
        result = subprocess.run(
            [sys.executable, "-m", "explorer", "check", str(path)], capture_output=True, text=True, cwd=ROOT
        )
        assert result.returncode in (0, 1, 2)
        assert "Traceback" not in result.stderr + result.stdout
