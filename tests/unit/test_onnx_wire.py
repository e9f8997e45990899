"""The ONNX wire walk (issue #56): a model without its large tensors' bytes, against onnx's own parser on every
sample, the tensors it leaves in the file pointing at their very bytes, and hostile files read up to what is
valid with one located problem."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from google.protobuf.message import DecodeError
from onnx import TensorProto, helper, numpy_helper

from explorer.formats.onnx.wire import INLINE, STRIP_BYTES, encode_varint, strip_weights
from tests.conftest import SAMPLES as SAMPLES_DIR

SAMPLES = sorted((SAMPLES_DIR / "onnx").glob("*.onnx"))


def pointers(model: onnx.ModelProto) -> dict[str, dict[str, str]]:
    """Initializer name → its external_data entries, for those the walk left in the file."""
    found = {}
    for tensor in model.graph.initializer:
        info = {entry.key: entry.value for entry in tensor.external_data}
        if INLINE in info:
            found[tensor.name] = info
    return found


def attributes(node: onnx.NodeProto) -> list:
    """A node's attributes as onnx parsed them, a large tensor's by its name and dims only."""
    return [(a.name, list(a.t.dims)) if a.t.ByteSize() > STRIP_BYTES else a.SerializeToString() for a in node.attribute]


def walked(data: bytes, name: str = "m.onnx", checked: bool = False) -> tuple[onnx.ModelProto, list]:
    walk = strip_weights(data, name, checked=checked)
    model = onnx.ModelProto()
    model.ParseFromString(walk.data)
    return model, walk.problems


def big_model() -> onnx.ModelProto:
    """MatMul by a 64×64 float32 weight (16 KiB, left in the file), Reshape by a small shape (kept), a Constant
    node holding a 32×32 float tensor, and an If whose branch has its own 48×48 initializer."""
    weight = numpy_helper.from_array(np.arange(64 * 64, dtype=np.float32).reshape(64, 64), "weight")
    shape = numpy_helper.from_array(np.array([1, 4096], dtype=np.int64), "shape")
    branch_weight = numpy_helper.from_array(np.ones((48, 48), dtype=np.float32), "branch_weight")
    branch = helper.make_graph([helper.make_node("Add", ["x", "branch_weight"], ["b"])], "then",
                               [], [helper.make_tensor_value_info("b", TensorProto.FLOAT, [48, 48])],
                               [branch_weight])  # fmt: skip
    constant = numpy_helper.from_array(np.full((40, 40), 2.0, dtype=np.float32), "c")
    nodes = [
        helper.make_node("MatMul", ["x", "weight"], ["y"], name="mm"),
        helper.make_node("Reshape", ["y", "shape"], ["z"], name="flat"),
        helper.make_node("Constant", [], ["k"], name="const", value=constant),
        helper.make_node("If", ["cond"], ["b"], name="if", then_branch=branch, else_branch=branch),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64]),
              helper.make_tensor_value_info("cond", TensorProto.BOOL, [])]  # fmt: skip
    output = helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4096])
    graph = helper.make_graph(nodes, "g", inputs, [output], [weight, shape])
    return helper.make_model(graph)


def test_large_tensors_point_at_their_bytes_in_the_file_and_small_ones_stay():
    model = big_model()
    data = model.SerializeToString()
    stripped, problems = walked(data)
    assert problems == []
    weight = pointers(stripped)["weight"]
    offset, length = int(weight["offset"]), int(weight["length"])
    assert (weight["location"], weight[INLINE], length) == ("m.onnx", "raw_data", 64 * 64 * 4)
    assert data[offset : offset + length] == model.graph.initializer[0].raw_data
    assert "shape" not in pointers(stripped) and stripped.graph.initializer[1] == model.graph.initializer[1]
    kept = stripped.graph.initializer[0]
    assert (list(kept.dims), kept.data_type, kept.raw_data, kept.data_location) == ([64, 64], 1, b"", 1)
    constant = stripped.graph.node[2].attribute[0].t  # a node's tensor attribute is walked too
    info = {e.key: e.value for e in constant.external_data}
    assert data[int(info["offset"]) : int(info["offset"]) + int(info["length"])] == np.full(
        (40, 40), 2.0, np.float32).tobytes()  # fmt: skip
    branch = stripped.graph.node[3].attribute[0].g.initializer[0]  # and a branch's initializer
    assert {e.key for e in branch.external_data} >= {INLINE, "offset", "length"} and list(branch.dims) == [48, 48]
    assert len(data) > 4 * (64 * 64 + 40 * 40 + 2 * 48 * 48) and len(strip_weights(data, "m").data) < 2000


def test_typed_fields_as_raw_bytes_are_left_in_the_file_and_varint_packed_ones_are_kept():
    floats = helper.make_tensor("f", TensorProto.FLOAT, [40, 40], np.ones(1600, np.float32).tolist())
    longs = helper.make_tensor("l", TensorProto.INT64, [40, 40], list(range(1600)))
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, [40, 40])
    graph = helper.make_graph([helper.make_node("Add", ["f", "f"], ["y"])], "g", [], [output], [floats, longs])
    data = helper.make_model(graph).SerializeToString()
    stripped, problems = walked(data)
    assert problems == []
    info = pointers(stripped)["f"]
    assert info[INLINE] == "float_data" and int(info["length"]) == 1600 * 4
    assert data[int(info["offset"]) : int(info["offset"]) + 6400] == np.ones(1600, np.float32).tobytes()
    assert "l" not in pointers(stripped) and list(stripped.graph.initializer[1].int64_data) == list(range(1600))


@pytest.mark.skipif(not SAMPLES, reason="../shared/samples/onnx is absent")
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_the_walk_gives_what_onnx_parses_on_every_sample(path: Path):
    data = path.read_bytes()
    original = onnx.load(str(path), load_external_data=False)
    stripped, problems = walked(data, path.name)
    assert problems == []
    assert [(n.op_type, n.name, list(n.input), list(n.output), attributes(n)) for n in original.graph.node] == [
        (n.op_type, n.name, list(n.input), list(n.output), attributes(n)) for n in stripped.graph.node]  # fmt: skip
    assert [(t.name, list(t.dims), t.data_type) for t in original.graph.initializer] == [
        (t.name, list(t.dims), t.data_type) for t in stripped.graph.initializer]  # fmt: skip
    assert list(original.graph.input) == list(stripped.graph.input)
    assert list(original.graph.output) == list(stripped.graph.output)
    assert list(original.opset_import) == list(stripped.opset_import)
    assert list(original.functions) == list(stripped.functions)
    left = pointers(stripped)
    for tensor in original.graph.initializer:  # each pointer gives the bytes onnx read
        if tensor.name in left:
            offset, length = int(left[tensor.name]["offset"]), int(left[tensor.name]["length"])
            assert data[offset : offset + length] == tensor.raw_data
    assert len(walked(data)[0].SerializeToString()) <= len(data)


def test_a_tensor_running_past_the_end_of_the_file_keeps_the_graph_and_says_where():
    model = big_model()
    data = model.SerializeToString()
    raw = model.graph.initializer[0].raw_data
    cut = data[: data.index(raw) + 100]  # the file ends inside the weight's bytes
    stripped, problems = walked(cut)
    assert [p[0] for p in problems] == ["graph.initializer[0].raw_data"]
    assert "runs past the end of the file" in problems[0][1]
    assert [n.name for n in stripped.graph.node] == ["mm", "flat", "const", "if"]  # what came before stays
    assert stripped.graph.initializer[0].name == "weight" and not stripped.graph.initializer[0].raw_data


def test_a_length_of_two_to_the_63_is_one_problem_not_a_read():
    model = big_model()
    data = model.SerializeToString()
    raw = model.graph.initializer[0].raw_data
    at = data.index(raw)
    length = encode_varint(len(raw))
    assert data[at - len(length) : at] == length
    hostile = data[: at - len(length)] + encode_varint(2**63) + data[at:]
    stripped, problems = walked(hostile)
    assert problems and problems[0][0] == "graph.initializer[0].raw_data"
    assert "runs past the end of its message" in problems[0][1]
    assert [n.name for n in stripped.graph.node] == ["mm", "flat", "const", "if"]


def test_a_truncated_or_overlong_varint_and_a_wrong_wire_type_are_located_problems():
    data = big_model().SerializeToString()
    _, problems = walked(data + b"\x80")  # a key whose varint never ends
    assert problems == [("(a field's key)", "a varint runs past the end of its message")]
    _, problems = walked(data + b"\xff" * 11)
    assert problems == [("(a field's key)", "a varint is longer than 10 bytes")]
    wrong = bytes([7 << 3 | 0]) + encode_varint(5)  # `graph` as a varint
    stripped, problems = walked(wrong + data)
    assert problems == [("graph", "has wire type 0 where 2 was expected: left out")]
    assert [n.name for n in stripped.graph.node] == ["mm", "flat", "const", "if"]  # the real graph after it


def test_a_node_that_does_not_parse_is_left_out_when_the_walk_checks_each_message():
    """A small message is copied as it is: when the model then does not parse, the reader walks again parsing
    each one alone (`checked`), and leaves out the one that does not."""
    model = big_model()
    data = model.SerializeToString()
    node = model.graph.node[1].SerializeToString()
    broken = b"\x0a\x7fab" + node[4:]  # its first input says 127 bytes where 2 follow
    hostile = data.replace(node, broken[: len(node)])
    with pytest.raises(DecodeError):
        walked(hostile)
    stripped, problems = walked(hostile, checked=True)
    assert problems == [("graph.node[1]", "is not a valid NodeProto: left out")]
    assert [n.name for n in stripped.graph.node] == ["mm", "const", "if"]


def _rows(sections) -> dict[str, str]:
    return {str(row[0]): str(row[1]) for section in sections for row in section.rows}


def test_a_weight_left_in_the_file_is_read_from_it_when_its_values_are_asked_for(tmp_path, monkeypatch):
    from explorer import protobuf_wire as reader
    from explorer.api import open_document

    monkeypatch.setattr(reader, "DIRECT_BYTES", 0)  # walked as a file over 16 MiB is

    path = tmp_path / "big.onnx"
    path.write_bytes(big_model().SerializeToString())
    document = open_document(path)
    weight = document.view.index.main.initializers["weight"]
    shown = _rows(document.describe(("init", "graph", weight)))
    first = int(pointers(document.view.index.model)["weight"]["offset"])
    assert shown["stored"] == f"raw_data in the file, bytes {first:,}–{first + 16384:,} (read when asked)"
    assert (shown["min"], shown["max"], shown["first values"]) == ("0", "4095", "0, 1, 2, 3, 4, 5, 6, 7")
    assert document.view.files_read() == []  # nothing beside the model
    with path.open("ab") as handle:  # the file changes under the open model: its weights are not read wrongly
        handle.write(b"\0")
    assert "the model file changed since it was opened" in _rows(document.describe(("init", "graph", weight)))[
        "values"]  # fmt: skip


def test_external_weights_are_never_opened_to_open_check_and_draw_a_model(tmp_path, monkeypatch):
    """A Llama-style export keeps its weights in `.onnx.data`: opening it, its checks (shape inference in its
    child) and its first graph screen never open that file; the details of a weight do, when asked."""
    import builtins
    import io
    import os

    from explorer.api import open_document
    from explorer.formats.onnx.samples import linear_model, save_with_external_data
    from explorer.graph.expansion import initial_expansion
    from explorer.graph.layout import layout_graph
    from explorer.graph.visible import visible_graph

    path = save_with_external_data(linear_model(64, 64), tmp_path)
    sidecar = str(path) + ".data"
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def watched_open(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def watched_os_open(file, *args, **kwargs):
        opened.append(str(file))
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", watched_open)
    monkeypatch.setattr(io, "open", watched_open)  # what Path.open calls
    monkeypatch.setattr(os, "open", watched_os_open)
    document = open_document(path)
    document.run_deep_checks()
    model = document.view.drawn_graph()
    layout_graph(model, visible_graph(model, initial_expansion(model)))
    assert str(path) in opened and sidecar not in opened
    weight = document.view.index.main.initializers["weight"]
    assert _rows(document.describe(("init", "graph", weight)))["min"] == "-1"
    assert sidecar in opened  # asked for: read then


def _field(number: int, body: bytes) -> bytes:
    return encode_varint(number << 3 | 2) + encode_varint(len(body)) + body


def test_graphs_nested_deeper_than_protobuf_allows_are_left_out_not_recursed_into():
    """An If whose branch holds an If... 150 deep (written on the wire: onnx's own classes refuse past 100), each
    over STRIP_BYTES (a 40×40 weight at the bottom): the walk stops at 100 messages deep with one problem
    instead of running out of stack."""
    weight = numpy_helper.from_array(np.ones((40, 40), dtype=np.float32), "w")
    graph = helper.make_graph([], "leaf", [], [], [weight]).SerializeToString()
    for _ in range(150):  # GraphProto.node (1) → NodeProto.attribute (5) → AttributeProto.g (6)
        attribute = _field(1, b"then_branch") + _field(6, graph)
        graph = _field(1, _field(4, b"If") + _field(5, attribute))
    walk = strip_weights(_field(7, graph), "deep.onnx")
    assert [why for _, why in walk.problems] == ["is nested deeper than 100 messages: left out"]
    assert walk.problems[0][0].count(".g") == 33  # graph, then (node, attribute, g): three messages a level


def test_reading_the_file_as_the_walk_goes_gives_the_same_model(tmp_path, monkeypatch):
    """A file over WHOLE_BYTES is read piece by piece (FileWindow): with pieces of 64 bytes, every field crosses
    their edges somewhere, and the walk gives the same bytes as from the file in memory; the reader opens it."""
    import os

    from explorer import protobuf_wire as reader
    from explorer.api import open_document
    from explorer.protobuf_wire import FileWindow

    path = tmp_path / "big.onnx"
    data = big_model().SerializeToString()
    path.write_bytes(data)
    monkeypatch.setattr(FileWindow, "CHUNK", 64)
    fd = os.open(path, os.O_RDONLY)
    try:
        window = FileWindow(fd, len(data))
        assert strip_weights(window, "big.onnx").data == strip_weights(data, "big.onnx").data
        assert (window[5], window[10:20], window[len(data) - 3 :]) == (data[5], data[10:20], data[-3:])
    finally:
        os.close(fd)
    monkeypatch.setattr(reader, "WHOLE_BYTES", 0)
    document = open_document(path)
    assert [p.code for p in document.problems] == [] and document.summary["nodes"] == 6  # a branch counts twice


def test_diff_compares_weights_by_shape_and_with_weights_by_a_hash_of_their_data(tmp_path, monkeypatch):
    """Issue #56: weights by name, dtype and dims without reading them; `--weights` hashes each from the file
    (a weight left in the file is read from its range), so one changed value is found."""
    import hashlib

    from explorer import protobuf_wire as reader
    from explorer.api import open_document
    from explorer.diff import diff_documents

    monkeypatch.setattr(reader, "DIRECT_BYTES", 0)  # walked as a file over 16 MiB is

    def model(change: float, dims: tuple[int, int], extra: bool) -> onnx.ModelProto:
        values = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
        values[3, 5] += change
        weights = [numpy_helper.from_array(values, "weight"),
                   numpy_helper.from_array(np.ones(dims, dtype=np.float32), "bias")]  # fmt: skip
        if extra:
            weights.append(numpy_helper.from_array(np.zeros(4, dtype=np.float32), "extra"))
        nodes = [helper.make_node("MatMul", ["x", "weight"], ["y"], name="mm")]
        x, y = (helper.make_tensor_value_info(n, TensorProto.FLOAT, [64, 64]) for n in ("x", "y"))
        graph = helper.make_graph(nodes, "g", [x], [y], weights)
        return helper.make_model(graph)

    paths = []
    for name, m in (("a.onnx", model(0.0, (64,), False)), ("b.onnx", model(1.0, (32,), True))):
        paths.append(tmp_path / name)
        paths[-1].write_bytes(m.SerializeToString())
    a, b = (open_document(p) for p in paths)
    by_shape = diff_documents(a, b)
    weights = [c for c in by_shape["changes"] if c["kind"].startswith("weight")]
    assert weights == [{"kind": "weight-changed", "name": "bias", "what": "shape", "a": "float32 [64]",
                        "b": "float32 [32]"},
                       {"kind": "weight-added", "name": "extra", "dtype": "float32", "dims": [4]}]  # fmt: skip
    assert (by_shape["summary"]["weights_compared"], by_shape["summary"]["weights_changed"]) == (2, 2)
    by_value = diff_documents(a, b, weights=True)
    changed = [c for c in by_value["changes"] if c.get("what") == "values"]
    expected = np.arange(64 * 64, dtype=np.float32)
    assert [c["name"] for c in changed] == ["weight"]
    assert changed[0]["a"] == hashlib.sha256(expected.tobytes()).hexdigest()
    assert "weight" in pointers(a.view.index.model)  # the hash was read from the range in the file


def test_a_small_file_that_parses_is_parsed_as_it_is_and_one_that_does_not_is_walked(tmp_path):
    """Up to DIRECT_BYTES the file is parsed whole when it parses (its weights in memory: they cost no more than
    its bytes); one that does not parse is walked, and opens with what is valid."""
    from explorer.api import open_document

    path = tmp_path / "small.onnx"
    data = big_model().SerializeToString()
    path.write_bytes(data)
    assert pointers(open_document(path).view.index.model) == {}  # parsed as it is: no weight left in the file
    raw = big_model().graph.initializer[0].raw_data
    path.write_bytes(data[: data.index(raw) + 100])
    document = open_document(path)
    assert [p.location for p in document.problems if p.code == "unreadable-field"] == [
        "graph.initializer[0].raw_data"]  # fmt: skip


def test_a_short_field_running_past_the_end_is_a_located_problem():
    """A name whose length (under 128) runs past the end of the file: the walk's fast path for short fields must
    check it too (issue #74: a mutation that dropped that bound kept the cut field silently, and 23 tests passed)."""
    data = big_model().SerializeToString()
    cut = data + bytes([2 << 3 | 2, 50]) + b"abc"  # producer_name: 50 bytes said, 3 there
    stripped, problems = walked(cut)
    assert problems == [("producer_name", f"runs past the end of the file (50 bytes from byte {len(data) + 2:,})")]
    assert stripped.producer_name == "" and [n.name for n in stripped.graph.node] == ["mm", "flat", "const", "if"]
