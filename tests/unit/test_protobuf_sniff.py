"""Format by content (issue #59 item 7): an ONNX model named `model.pb` and a Core ML model without its ending are
recognised from their first protobuf fields, as Netron does; other protobufs and text are not taken for them."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from explorer.api import open_document
from explorer.errors import LoadError
from explorer.protobuf_sniff import looks_like_coreml, looks_like_onnx, top_level_fields
from tests.conftest import SAMPLE_DATA


def test_top_level_fields_read_tags_and_stop_past_the_head():
    assert top_level_fields(b"\x08\x07\x12\x03abc") == [(1, 0, 7), (2, 2, 3)]
    assert top_level_fields(b"\x08\x07\x3a\xff\xff\x03") == [(1, 0, 7), (7, 2, 65535)]  # runs past: reading ends
    assert top_level_fields(b"\x0b") is None  # a group: not a message we read
    assert top_level_fields(b"\x00\x01") is None  # field 0
    assert top_level_fields(b'{"a": 1}') is None


def test_an_onnx_model_named_model_pb_opens_as_onnx(tmp_path):
    x, y = (helper.make_tensor_value_info(name, TensorProto.FLOAT, [1]) for name in "xy")
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]))
    path = tmp_path / "model.pb"
    onnx.save(model, path)
    assert looks_like_onnx(path.read_bytes()) and not looks_like_coreml(path.read_bytes())
    document = open_document(path)
    assert document.meta.format == "onnx" and document.summary["nodes"] == 1


def test_a_core_ml_model_without_its_ending_opens_as_core_ml(tmp_path):
    from coremltools.proto import Model_pb2

    spec = Model_pb2.Model()
    spec.specificationVersion = 4
    spec.description.input.add().name = "x"
    spec.neuralNetwork.layers.add().name = "relu"
    path = tmp_path / "model.bin"
    path.write_bytes(spec.SerializeToString())
    assert looks_like_coreml(path.read_bytes()) and not looks_like_onnx(path.read_bytes())
    assert open_document(path).meta.format == "coreml"


@pytest.mark.parametrize("source", ["residual_blocks.onnx", "clean_2x2_stschedule.json", "two_modules_mlf.tar"])
def test_other_files_named_pb_keep_their_own_format(tmp_path, source):
    original = open_document(SAMPLE_DATA / source).meta.format
    renamed = tmp_path / "renamed.pb"
    renamed.write_bytes((SAMPLE_DATA / source).read_bytes())
    assert open_document(renamed).meta.format == original


def test_a_tensorflow_graph_def_is_neither(tmp_path):
    path = tmp_path / "graph.pb"
    path.write_bytes(b"\x0a\x0c\x0a\x01x\x12\x07Placeholder")  # GraphDef: node (field 1) first
    with pytest.raises(LoadError, match="matches none of the supported formats"):
        open_document(path)
