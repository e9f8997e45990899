"""Mutated inputs for the fuzz round in `make test` (tests/unit/test_fuzz_loaders.py) and the long campaign of
`make fuzz` (tests/fuzz_campaign.py): the seeds per format, the classes of mutation, and what a user touches.

Classes of mutation (RELIABILITY.md lists them with the counts of the last long run):
- truncate: the file cut at a random byte;
- flip: up to 8 random bytes changed (tar headers included);
- structure: JSON values deleted, duplicated, retyped, renamed or nested (3, 50, 3,000 and 100,000 levels), numbers
  of 1,000,000 digits; protobuf fields deleted, duplicated, set to odd values, If graphs nested 40 deep;
- huge-size: a length that claims 2 GiB (a protobuf field's length prefix, a tar member's size field).
Links (loops, absolute targets) in packages and folders, and files that change while being read, are built by
their own tests, since they are not byte strings.
"""

from __future__ import annotations

import copy
import io
import json
import random
import tarfile
import tempfile
from pathlib import Path

from explorer.formats.tvm_mlf.samples import tar_bytes
from tests.conftest import SAMPLE_DATA, SAMPLES

KINDS = ("truncate", "flip", "structure", "huge-size", "graph")  # graph: an ONNX graph broken as a model
DEEP = (3, 50, 3000, 100_000)
BIG_DIGITS = 1_000_000


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
    pipeline = SAMPLES / "gemini_pipeline"
    files["gemini-trace"] = [SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_sim.txt"]
    files["gemini-asm"] = [SAMPLE_DATA / "demo_pipeline_b1_c1_bw16_asm.txt"]
    files["gemini-frontend"] = [SAMPLE_DATA / "demo_pipeline_b1.json"]
    if pipeline.is_dir():
        files["gemini-trace"] += sorted(pipeline.glob("*_sim.txt"))
        files["gemini-asm"] += sorted(pipeline.glob("*_asm.txt"))
        files["gemini-frontend"] += sorted(pipeline.glob("*.json"))
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
    "gemini-trace": "m_{kind}_sim.txt",
    "gemini-asm": "m_{kind}_asm.txt",
    "gemini-frontend": "m_{kind}.json",
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
    action = rng.choice(["delete", "duplicate", "retype", "nest", "rename", "digits"])
    if action == "delete":
        del parent[key]
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    elif action == "nest":  # spliced in as bytes later: Python's json cannot encode thousands of levels
        parent[key] = f"__DEEP_{rng.choice(DEEP)}__"
    elif action == "digits":  # a number of a million digits, spliced in as bytes too
        parent[key] = "__DIGITS__"
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
    for depth in DEEP:
        text = text.replace(f'"__DEEP_{depth}__"', "[" * depth + "1" + "]" * depth)
    return text.replace('"__DIGITS__"', "9" * BIG_DIGITS).encode()


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


# ops whose C++ shape inference once crashed on inputs nobody declared (issue #44): the mutations favour them
RISKY_OPS = [("RegexFullMatch", ""), ("StringSplit", ""), ("StringConcat", ""), ("DictVectorizer", "ai.onnx.ml"),
             ("LabelEncoder", "ai.onnx.ml"), ("Reshape", ""), ("Loop", ""), ("If", ""), ("Gather", "")]  # fmt: skip


def mutated_onnx_graph(data: bytes, rng: random.Random) -> bytes:
    """An ONNX model that still parses but is wrong as a graph: inputs nobody declares, empty names, attributes
    of the wrong type, ops swapped for ones whose native checkers are fragile, declared inputs removed."""
    import onnx

    model = onnx.ModelProto()
    model.ParseFromString(data)
    graph = model.graph
    if not any(o.domain == "ai.onnx.ml" for o in model.opset_import):
        model.opset_import.add(domain="ai.onnx.ml", version=3)
    for _ in range(rng.randint(1, 3)):
        nodes = list(graph.node)
        if not nodes:
            return model.SerializeToString()
        node = rng.choice(nodes)
        action = rng.choice(["undeclared", "empty-name", "attribute-type", "risky-op", "no-inputs", "dup-output"])
        if action == "undeclared":
            if node.input:
                node.input[rng.randrange(len(node.input))] = f"undeclared_{rng.randrange(100)}"
            else:
                node.input.append("undeclared")
        elif action == "empty-name":
            fields = [f for f in ("name", "input", "output") if f == "name" or len(getattr(node, f))]
            field = rng.choice(fields)
            if field == "name":
                node.name = ""
            else:
                values = getattr(node, field)
                values[rng.randrange(len(values))] = ""
        elif action == "attribute-type" and node.attribute:
            attribute = rng.choice(list(node.attribute))
            attribute.type = rng.choice([t for t in range(1, 15) if t != attribute.type])
        elif action == "risky-op":  # at an opset that has the op, reading a value nobody declares
            node.op_type, node.domain = rng.choice(RISKY_OPS)
            for opset in model.opset_import:
                if opset.domain in ("", "ai.onnx"):
                    opset.version = max(opset.version, 20)
            if node.input:
                node.input[0] = f"undeclared_{rng.randrange(100)}"
            else:
                node.input.append("undeclared")
        elif action == "no-inputs":
            del graph.input[:]
        else:
            other = rng.choice(nodes)
            if node.output and other.output:
                other.output[0] = node.output[0]
    return model.SerializeToString()


def format_of(name: str) -> str:
    return next(fmt for fmt, paths in SEED_FILES.items() if any(str(p) == name for p in paths))


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def huge_size(data: bytes, rng: random.Random, fmt: str) -> bytes:
    """A length that claims 2 GiB: a tar member's size field, or a protobuf length prefix (a new field 2
    spliced in at a random field boundary of the top-level message, or replacing one)."""
    claimed = 2 * 1024**3 + rng.randrange(1024)
    if fmt == "tvm-mlf":
        raw = bytearray(data)
        headers = [offset for offset in range(0, len(raw) - 512, 512) if raw[offset + 257 : offset + 262] == b"ustar"]
        if not headers:
            return data
        at = rng.choice(headers)
        raw[at + 124 : at + 136] = b"%011o\x00" % claimed
        raw[at + 148 : at + 156] = b" " * 8
        raw[at + 148 : at + 156] = b"%06o\x00 " % sum(raw[at : at + 512])
        return bytes(raw)
    if fmt in ("onnx", "coreml"):
        field = rng.choice([2, 7, 8]) << 3 | 2  # length-delimited fields that exist in ModelProto and Model
        cut = rng.randrange(len(data) + 1)
        return data[:cut] + bytes([field]) + varint(claimed) + data[cut : cut + rng.randrange(64)]
    return data.replace(b"1", b"2147483648" * rng.randint(1, 3), 1)  # JSON: a size or address of 2 GiB


def mutated_bytes(name: str, seed: int, kind: str) -> bytes:
    rng = random.Random(seed)
    data = SEEDS[name]
    if kind == "truncate":
        return data[: rng.randrange(len(data))]
    fmt = format_of(name)
    if kind == "graph" and fmt != "onnx":  # a graph-level mutation is ONNX's; the others break their structure
        kind = "structure"
    if kind == "huge-size":
        return huge_size(data, rng, fmt)
    if fmt == "onnx" and kind == "graph":
        return mutated_onnx_graph(data, rng)
    if fmt in ("onnx", "coreml"):
        return flipped(data, rng) if kind == "flip" else mutated_protobuf(fmt, data, rng)
    if name.endswith(".tar"):
        if kind == "flip" and rng.random() < 0.5:
            return flipped(data, rng)  # the tar headers themselves
        return mutated_bundle(data, rng, kind)
    if kind == "flip":
        return flipped(data, rng)
    if fmt in ("gemini-trace", "gemini-asm"):
        return mutated_lines(data, rng)
    return mutated_json(data, rng)


def mutated_lines(data: bytes, rng: random.Random) -> bytes:
    """Instruction lines broken the way real files break: cut short, dropped, duplicated (so inst_idx repeats),
    an enum renamed, a time reversed, a token replaced by an odd one, brackets unbalanced."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(len(lines))
        line = lines[k]
        action = rng.choice(["cut", "drop", "duplicate", "enum", "reverse", "token", "bracket"])
        if action == "cut":
            lines[k] = line[: rng.randrange(len(line) + 1)]
        elif action == "drop" and len(lines) > 1:
            del lines[k]
        elif action == "duplicate":
            lines.insert(k, line)
        elif action == "enum":
            lines[k] = line.replace(b"<DataFmt.", b"<DataFormat.", 1).replace(b"INT8: 1", b"INT9: 7", 1)
        elif action == "reverse" and b"'time': [" in line:
            head, _, rest = line.partition(b"'time': [")
            first, _, tail = rest.partition(b"]")
            parts = first.split(b", ")
            lines[k] = head + b"'time': [" + b", ".join(reversed(parts)) + b"]" + tail
        elif action == "token":
            odd = rng.choice([b"None", b"True", b"-1", b"1e400", b"'x'", b"[]", b"{}", b"<X.Y: z>", b"\\", b'"'])
            cut = rng.randrange(len(line) + 1)
            lines[k] = line[:cut] + odd + line[cut:]
        else:
            lines[k] = line.replace(b"]", b"", 1) if rng.random() < 0.5 else b"[" + line
    return b"\n".join(lines)


def exercise(doc, deep: bool = False) -> None:
    """Touch what a user would: problems, the summary, the first items of every tree level, their details.
    `deep` runs the checks `check` and the TUI add (ONNX: shape inference, in a child process)."""
    if deep:
        doc.run_deep_checks()
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
        from explorer.formats.ark.tensor_report import tensor_report
        from explorer.tensors.stride_map import outer_dims, plane_grid

        for tensor_id in list(view.index.tensors)[:6]:
            tensor_report(view.index, tensor_id)
            layout = view.index.layout(tensor_id)
            if layout is None:
                continue
            others = view.index.layouts_on(layout.buffer_id)
            plane_grid(layout, others, tuple(layout.offsets[: outer_dims(layout)]), 20, 60)


# Per-node data files (issue #44): the user's own file beside a model, fuzzed like the models themselves
NODE_DATA_SEEDS = {
    "layer_profile.csv": (SAMPLE_DATA / "clean_2x2_layer_profile.csv").read_bytes(),
    "model_explorer.json": json.dumps({
        "graph": {"results": {"Conv_0": {"value": 1.5}, "Conv_1": {"value": -2}, "Add_3": {"value": 3}},
                  "thresholds": [{"value": 0, "bgColor": "#fff"}, {"value": 2, "bgColor": "#f00"}]},
        "other": {"results": {"Conv_2": {"value": 7}}, "centre": 1},
    }).encode(),
    "plain.json": json.dumps({"Conv_0": 1, "Conv_1": 2.5, "1/0": 3}).encode(),
}


def mutated_node_data(name: str, seed: int, kind: str) -> bytes:
    """A per-node data file broken as the model files are: cut short, bytes flipped, JSON values deleted,
    retyped, nested deep, numbers of a million digits, CSV lines cut, duplicated, given odd tokens."""
    rng = random.Random(seed)
    data = NODE_DATA_SEEDS[name]
    if kind == "truncate":
        return data[: rng.randrange(len(data))]
    if kind == "flip":
        return flipped(data, rng)
    if kind == "huge-size":
        return data.replace(b"1", b"9" * rng.choice([400, 5000, 200_000]), 1)
    if name.endswith(".json"):
        return mutated_json(data, rng)
    return mutated_lines(data, rng)
