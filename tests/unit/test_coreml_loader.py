"""Core ML: the real samples, MIL-builder models (nested blocks, blobs, quantized, stateful, multi-function),
compiled folders and broken packages."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import cli
from explorer.api import open_document
from explorer.errors import LoadError
from tests.conftest import ROOT, samples_dir
from tests.coreml_models import make_models


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return make_models(tmp_path_factory.mktemp("coreml"))


def test_real_samples_open_with_zero_errors():
    folder = samples_dir("coreml")
    program = open_document(folder / "small_cnn_mlprogram_ios15_fp16.mlpackage")
    assert program.problems == []
    s = program.summary
    assert (s["model_type"], s["spec_version"], s["functions"], s["operations"]) == ("mlProgram", 6, 1, 52)
    assert (s["inputs"], s["outputs"]) == (1, 1) and s["op_types"]["conv"] == 3
    loops = open_document(folder / "mil_builder_while_cond_ios16.mlpackage")
    assert loops.problems == [] and loops.summary["op_types"]["while_loop"] == 1
    network = open_document(folder / "small_cnn_neuralnetwork.mlmodel")
    assert network.problems == []
    assert (network.summary["model_type"], network.summary["spec_version"], network.summary["layers"]) == (
        "neuralNetwork",
        4,
        13,
    )
    convolution = network.describe(
        (
            "layer",
            next(k for k, item in enumerate(network.view.layers()) if item.WhichOneof("layer") == "convolution"),
        )
    )
    assert convolution[2].title == "Weights" and convolution[2].rows  # weights inline, with their sizes


def test_nested_blocks_blobs_and_quantized_constants(built):
    doc = open_document(built / "nested_blocks_blob.mlpackage")
    assert doc.problems == []
    view = doc.view
    main = "mlProgram.functions[main].block_specializations[CoreML6]"
    # while_loop (op 1) has its condition and body blocks; the body holds a cond with two more (depth 2)
    nested = [key for key in view.model.blocks if key != main]
    assert f"{main}.operations[1].blocks[1].operations[4].blocks[0]" in nested and len(nested) == 4
    # every operation of every block is counted
    assert doc.summary["operations"] == sum(len(b.proto.operations) for b in view.model.blocks.values()) == 19
    blobs = {blob.dtype: blob for blob in view.model.blobs.values()}
    assert blobs["float32"].size == 64 * 4 and blobs["uint8"].size == 64  # the linear weight and the quantized data
    weight_key = next(key for key, blob in view.model.blobs.items() if blob.dtype == "float32")
    stats = dict(doc.describe(("op", *weight_key))[-1].rows)
    assert (stats["min"], stats["max"], stats["mean"]) == ("-1", "1", "0")  # linspace(-1, 1, 64)
    constexpr = next(
        i for i, op in enumerate(view.model.blocks[main].proto.operations) if op.type.startswith("constexpr")
    )
    assert ("kind", "compressed constant (decompressed when the model loads)") in doc.describe(("op", main, constexpr))[
        0
    ].rows
    # the graph folds the compressed weight into the linear that reads it, as it folds a const (issue #40: an
    # int8 or palettized model's constexpr_* ops stood as source boxes above every conv)
    model = view.graph_model()
    node = next(n for n in range(model.n_nodes) if model.node_op[n].startswith("constexpr"))
    assert model.node_constant[node] and model.node_folded_into[node] >= 0
    assert model.node_op[int(model.node_folded_into[node])] == "linear"
    # the tree reaches the innermost block, and a binding jumps to the op producing it
    path = view.ancestors(("op", f"{main}.operations[1].blocks[1].operations[4].blocks[0]", 0))
    assert path[0] == ("function", "main") and len(path) == 6


def test_stateful_and_multi_function(built):
    stateful = open_document(built / "stateful.mlpackage")
    assert stateful.summary["states"] == 1 and stateful.problems == []
    multi = open_document(built / "multi_function.mlmodel")
    assert multi.summary["functions"] == 2 and multi.summary["inputs"] == 2  # the default function's interface
    assert [p.code for p in multi.problems] == ["missing-weights"]  # a bare .mlmodel with blob constants


def test_missing_and_corrupt_weights(built, tmp_path):
    copy = tmp_path / "copy.mlpackage"
    shutil.copytree(built / "nested_blocks_blob.mlpackage", copy)
    weights = copy / "Data" / "com.apple.CoreML" / "weights" / "weight.bin"
    data = bytearray(weights.read_bytes())
    data[64:68] = b"\0\0\0\0"  # break the first record's magic
    weights.write_bytes(bytes(data))
    doc = open_document(copy)
    bad = [p for p in doc.problems if p.code == "bad-blob"]
    assert len(bad) == 1 and "magic" in bad[0].message and ".attributes[val]" in bad[0].location
    assert doc.find_ref({"location": bad[0].location})[0] == "op"
    weights.unlink()
    doc = open_document(copy)
    assert [p.code for p in doc.problems] == ["missing-weights"] and doc.summary["operations"] == 19


TINY_MIL = (
    "program(1.0)\n{\n  func main<ios16>(tensor<fp32, [1, 4]> x) {\n"
    '    tensor<fp32, [1, 4]> y = relu(x = x)[name = string("y")];\n'
    '    tensor<fp32, [1, 4]> z = add(x = y, y = x)[name = string("z")];\n'
    "  } -> (z);\n}\n"
)


def write_compiled(folder: Path, metadata_as_array: bool = True, mil: bool = True) -> Path:
    """A compiled folder laid out as Apple's coremlcompiler writes one: metadata.json (an array of one object),
    coremldata.bin, model.mil, analytics/coremldata.bin (the binary files' contents are opaque here)."""
    folder.mkdir()
    (folder / "analytics").mkdir()
    schema = {"type": "MultiArray", "shape": "[1, 4]", "dataType": "Float32", "hasShapeFlexibility": "0",
              "isOptional": "0", "formattedType": "MultiArray (Float32 1 × 4)"}  # fmt: skip
    metadata = {
        "metadataOutputVersion": "3.0",
        "shortDescription": "tiny",
        "outputSchema": [{"name": "z", **schema}],
        "specificationVersion": 7,
        "mlProgramOperationTypeHistogram": {"Ios16.relu": 1, "Ios16.add": 1},
        "computePrecision": "Mixed (Float32, Int32)",
        "isUpdatable": "0",
        "availability": {"macOS": "13.0", "iOS": "16.0"},
        "modelType": {"name": "MLModelType_mlProgram"},
        "userDefinedMetadata": {"com.github.apple.coremltools.version": "8.0"},
        "inputSchema": [{"name": "x", **schema}],
        "generatedClassName": "tiny",
        "method": "predict",
    }
    (folder / "metadata.json").write_text(json.dumps([metadata] if metadata_as_array else metadata, indent=2))
    (folder / "coremldata.bin").write_bytes(b"\x00\x01\x02opaque")
    (folder / "analytics" / "coremldata.bin").write_bytes(b"\x00opaque")
    if mil:
        (folder / "model.mil").write_text(TINY_MIL)
    return folder


@pytest.mark.parametrize("as_array", [True, False])
def test_a_compiled_folder_as_coremlcompiler_writes_it_opens(tmp_path, as_array, capsys):
    """metadata.json is an array of one object in real compiled models; a TVM bundle has a metadata.json too."""
    folder = write_compiled(tmp_path / "tiny.mlmodelc", metadata_as_array=as_array)
    doc = open_document(folder)
    assert doc.meta.format == "coreml" and doc.problems == []
    assert doc.summary["spec_version"] == 7 and doc.summary["inputs"] == 1 and doc.summary["outputs"] == 1
    features = doc.describe(("description",))[1].rows
    assert features == [("input", "x", "MultiArray (Float32 1 × 4)"), ("output", "z", "MultiArray (Float32 1 × 4)")]
    assert cli.main(["info", str(folder)]) == 0 and "format: coreml" in capsys.readouterr().out
    renamed = folder.rename(tmp_path / "plain_folder")  # without its ending: coremldata.bin says what it is
    assert open_document(renamed).meta.format == "coreml"


def test_a_compiled_neuralnetwork_without_model_mil_shows_its_interface(tmp_path):
    doc = open_document(write_compiled(tmp_path / "nn.mlmodelc", mil=False))
    assert [p.code for p in doc.problems] == ["no-model-mil"] and doc.summary["operations"] == 0
    assert doc.summary["inputs"] == 1


def test_compiled_folder_shows_model_mil(tmp_path):
    folder = tmp_path / "tiny.mlmodelc"
    folder.mkdir()
    (folder / "model.mil").write_text(TINY_MIL)
    doc = open_document(folder)
    assert doc.summary["model_type"] == "compiled"
    assert doc.summary["operations"] == 2 and doc.summary["op_types"] == {"relu": 1, "add": 1}
    assert doc.offers("source") and doc.sources is not None and doc.search("add")[0][1] == ("source", "model.mil", 5)


@pytest.mark.parametrize("breakage", ["truncated", "garbage", "manifest", "empty"])
def test_broken_packages_are_load_errors(built, tmp_path, breakage):
    copy = tmp_path / "broken.mlpackage"
    shutil.copytree(built / "nested_blocks_blob.mlpackage", copy)
    spec = copy / "Data" / "com.apple.CoreML" / "model.mlmodel"
    if breakage == "truncated":
        spec.write_bytes(spec.read_bytes()[:100])
    elif breakage == "garbage":
        spec.write_bytes(b"\xff" * 300)
    elif breakage == "manifest":
        (copy / "Manifest.json").write_text(json.dumps({"itemInfoEntries": {}}))
    else:
        spec.write_bytes(b"")
    with pytest.raises(LoadError) as caught:
        open_document(copy)
    assert caught.value.location
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "check", str(copy)], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_coremltools_converters_are_not_imported():
    code = (
        "import sys; from explorer.api import open_document; "
        f"open_document({str(samples_dir('coreml') / 'small_cnn_neuralnetwork.mlmodel')!r}); "
        "print('coremltools' in sys.modules, 'coremltools.converters' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.split() == ["False", "False"] and "Failed to load" not in result.stderr


LOOP_MIL = (
    "program(1.0)\n[buildInfo = dict<tensor<string, []>, tensor<string, []>>({{\"coremlc-version\", \"1\"}})]\n{\n"
    "  func main<ios16>(tensor<fp32, [1, 4]> x) {\n"
    '    tensor<int32, []> k = const()[name = tensor<string, []>("k"), val = tensor<int32, []>(3)];\n'
    '    tensor<fp32, [1, 4]> y = relu(x = x)[name = tensor<string, []>("y")];\n'
    '    tensor<int32, [1]> i_out, tensor<fp32, [1, 4]> y_out = while_loop(loop_vars = (k, y))'
    '[name = tensor<string, []>("loop")]\n'
    "     loop_cond(tensor<int32, [1]> i, tensor<fp32, [1, 4]> v) {\n"
    '        tensor<bool, [1]> go = less(x = i, y = k)[name = tensor<string, []>("go")];\n'
    "     } -> (go);\n"
    "     loop_body(tensor<int32, [1]> i_1, tensor<fp32, [1, 4]> v_1) {\n"
    '        tensor<fp32, [1, 4]> twice = mul(x = v_1, y = y)[name = tensor<string, []>("twice")];\n'
    "     } -> (i_1, twice);\n"
    '    tensor<fp32, [1, 4]> z = add(x = y_out, y = ghost)[name = tensor<string, []>("z")];\n'
    "  } -> (z);\n}\n"
)


def test_a_compiled_ml_program_draws_its_model_mil_ops(tmp_path, capsys):
    """An .mlmodelc has no protobuf program: its graph comes from model.mil's text, as an .mlpackage's would
    (constants folded with their value, a loop's blocks hanging off it, each box's ref its line)."""
    folder = write_compiled(tmp_path / "loop.mlmodelc")
    (folder / "model.mil").write_text(LOOP_MIL)
    doc = open_document(folder)
    assert doc.offers("graph")
    model = doc.view.graph_model()
    ops = dict(zip(model.node_label, model.node_op, strict=True))
    assert {ops["y"], ops["loop"], ops["go"], ops["twice"], ops["z"]} == {"relu", "while_loop", "less", "mul", "add"}
    loop = model.node_label.index("loop")
    assert model.node_ref[loop] == ("source", "model.mil", 7)  # the tree's item for that line
    k = model.node_label.index("k")
    assert model.node_constant[k] and model.node_folded_into[k] == loop
    edges = {(model.node_label[a], model.node_label[b]) for a, b in zip(model.edge_src, model.edge_dst, strict=True)}
    assert {("x", "y"), ("y", "loop"), ("loop", "z"), ("v_1", "twice"), ("y", "twice"), ("k", "go")} <= edges
    assert [name for _, name in model.dangling] == ["ghost"]
    owned = {model.group_label[g]: model.node_label[o] for g, o in enumerate(model.group_owner.tolist()) if o >= 0}
    assert owned == {"loop › loop_cond": "loop", "loop › loop_body": "loop"}
    assert cli.main(["graph", "--json", "--expand", "none", str(folder)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {n["op"] for n in payload["nodes"]} >= {"relu", "while_loop", "add", "mul"}
    assert "owner" in {e["kind"] for e in payload["edges"]}
