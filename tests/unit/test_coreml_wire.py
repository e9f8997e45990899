"""The Core ML wire walk (issue #56): a NeuralNetwork `.mlmodel` opens without its weights' values, each
weight's size and kind still shown; hostile files open with what is valid and one located problem."""

from __future__ import annotations

import numpy as np
import pytest

from explorer import protobuf_wire
from explorer.api import open_document
from explorer.formats.coreml.proto import proto_module
from explorer.formats.coreml.wire import LEFT_FIELD, left_in_file, strip_weights
from explorer.protobuf_wire import bytes_field
from tests.conftest import SAMPLES

SAMPLE = SAMPLES / "coreml" / "small_cnn_neuralnetwork.mlmodel"


def network(layers: int = 3, weights: int = 64 * 64) -> bytes:
    """A NeuralNetwork of `layers` inner products, each with `weights` float32 values and 8 fp16 bias bytes."""
    pb = proto_module("Model_pb2")
    model = pb.Model(specificationVersion=4)
    model.description.input.add().name = "x"
    model.description.output.add().name = f"y{layers - 1}"
    for k in range(layers):
        layer = model.neuralNetwork.layers.add(name=f"fc{k}", input=["x" if k == 0 else f"y{k - 1}"], output=[f"y{k}"])
        layer.innerProduct.inputChannels = layer.innerProduct.outputChannels = 64
        layer.innerProduct.weights.floatValue.extend(np.arange(weights, dtype=np.float32) + k)
        layer.innerProduct.bias.float16Value = bytes(8)
    return model.SerializeToString()


@pytest.fixture
def walked_always(monkeypatch):
    monkeypatch.setattr(protobuf_wire, "DIRECT_BYTES", 0)  # walked as a file over 16 MiB is


def layer_rows(document) -> list:
    return [tuple(row) for row in document.describe(("layers",))[0].rows]


def test_a_walked_network_shows_each_weight_as_the_whole_parse_does(tmp_path, walked_always, monkeypatch):
    """Same layers, same weights per layer and per dtype; the parsed spec holds none of the large values."""
    path = tmp_path / "net.mlmodel"
    path.write_bytes(network())
    walked = open_document(path)
    monkeypatch.setattr(protobuf_wire, "DIRECT_BYTES", 1 << 30)
    whole = open_document(path)
    assert walked.problems == whole.problems == []
    assert walked.view.weights_by_dtype() == whole.view.weights_by_dtype() == {"float32": (3, 3 * 4 * 4096),
                                                                               "float16": (3, 24)}  # fmt: skip
    assert layer_rows(walked) == layer_rows(whole)
    assert walked.describe(("layer", 1))[2].rows == [("weights", "float32", "16,384"), ("bias", "float16", "8")]
    assert walked.view.spec.ByteSize() < 1000 < 3 * 4 * 4096  # no weight's values were parsed
    assert [layer.name for layer in walked.view.layers()] == ["fc0", "fc1", "fc2"]


def test_the_note_points_at_the_values_in_the_file(tmp_path):
    """Each note's offset and length are the very bytes of the layer's values."""
    data = network()
    walk = strip_weights(data, "7:7")
    pb = proto_module("Model_pb2")
    spec = pb.Model()
    spec.ParseFromString(walk.data)
    for k, layer in enumerate(spec.neuralNetwork.layers):
        (left,) = left_in_file(layer.innerProduct.weights, "7:7")
        assert left.stored_as == "float32" and left.length == 4 * 4096
        values = np.frombuffer(data[left.offset : left.offset + left.length], dtype=np.float32)
        assert np.array_equal(values, np.arange(4096, dtype=np.float32) + k)
        assert left_in_file(layer.innerProduct.weights, "8:8") == []  # made for another file: not believed
        assert layer.innerProduct.bias.float16Value == bytes(8)  # small values stay


def test_a_note_the_file_carries_itself_is_not_believed(tmp_path):
    """A file parsed as it is has no stamp: a LEFT_FIELD it carries adds no weight."""
    pb = proto_module("Model_pb2")
    model = pb.Model()
    model.ParseFromString(network(layers=1, weights=4))
    params = model.neuralNetwork.layers[0].innerProduct.weights
    params.ParseFromString(params.SerializeToString() + bytes_field(LEFT_FIELD, b"1:0:999999999:"))
    path = tmp_path / "forged.mlmodel"
    path.write_bytes(model.SerializeToString())
    assert open_document(path).view.weights_by_dtype()["float32"] == (1, 16)


def test_a_file_cut_inside_a_weight_opens_with_the_layers_before_it(tmp_path, walked_always):
    data = network()
    second = data.index((np.arange(4096, dtype=np.float32) + 1).tobytes())
    path = tmp_path / "cut.mlmodel"
    path.write_bytes(data[: second + 100])
    document = open_document(path)
    assert [(p.code, p.location) for p in document.problems] == [
        ("unreadable-field", "neuralNetwork.layers[1].innerProduct.weights.floatValue")]  # fmt: skip
    assert "runs past the end of the file" in document.problems[0].message
    assert [layer.name for layer in document.view.layers()] == ["fc0", "fc1"]
    assert document.view.weights_by_dtype()["float32"] == (1, 4 * 4096)


def test_a_length_of_two_to_the_63_is_a_located_problem(tmp_path, walked_always):
    data = network(layers=1)
    values = data.index(np.arange(4096, dtype=np.float32).tobytes())
    assert data[values - 3 : values] == bytes([0x80, 0x80, 0x01])  # the values' length: 16,384
    path = tmp_path / "huge.mlmodel"
    path.write_bytes(data[: values - 3] + bytes([0x80] * 9 + [0x01]) + data[values:])  # now 2^63
    document = open_document(path)  # the enclosing lengths now lie too: what is valid around them opens
    first = document.problems[0]
    location = "neuralNetwork.layers[0].innerProduct.weights.floatValue"
    assert (first.code, first.location) == ("unreadable-field", location)
    assert "runs past the end" in first.message
    assert [layer.name for layer in document.view.layers()] == ["fc0"]


def test_the_sample_walked_keeps_its_weights_sizes(walked_always):
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} is absent (../shared/samples)")
    walked = open_document(SAMPLE)
    assert walked.problems == [] and walked.view.weights_by_dtype() == {"float32": (8, 22952)}
    assert walked.view.spec.ByteSize() < SAMPLE.stat().st_size // 4


def test_an_ml_programs_ops_are_counted_from_the_types_it_states():
    """Issue #57 for Core ML: each conv's output × its kernel's other dims, the linear's output × its input's last
    dim, parameters the float constants each op reads (weights and biases), worked by hand."""
    program = SAMPLES / "coreml" / "small_cnn_mlprogram_ios15_fp16.mlpackage"
    if not program.is_dir():
        pytest.skip(f"{program} is absent (../shared/samples)")
    from explorer.graph.metrics import metrics_of

    document = open_document(program)
    graph = document.view.drawn_graph()
    metrics = metrics_of(graph)
    counted = [(graph.node_op[n], op.macs.value, op.params.value) for n, op in enumerate(metrics.ops)
               if op is not None and op.macs.value]  # fmt: skip
    assert counted == [("conv", 16 * 32 * 32 * 3 * 3 * 3, 16 * 27 + 16),  # fp16[1, 16, 32, 32], kernel 16×3×3×3
                       ("conv", 32 * 8 * 8 * 16 * 3 * 3, 32 * 144 + 32),  # kernel 32×16×3×3
                       ("conv", 32 * 8 * 8 * 1 * 3 * 3, 32 * 9 + 32),  # depthwise: kernel 32×1×3×3
                       ("linear", 10 * 32, 10 * 32 + 10)]  # fmt: skip
    assert metrics.model["macs"].count.value == 756032 and document.view.counts_ops()
    network = open_document(SAMPLE)  # a NeuralNetwork states no shapes between its layers: not counted
    assert not network.view.counts_ops() and metrics_of(network.view.drawn_graph()) is None
