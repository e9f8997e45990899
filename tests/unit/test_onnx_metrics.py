"""Parameters, multiply-accumulates and activation bytes of ONNX ops (issue #57), each rule against a count worked
by hand, their sums per group and for the model, symbolic dims bound by the user, and shapes that make a count
unknown with the reason."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from explorer.api import open_document
from explorer.graph.metrics import breakdown, metrics_of
from tests.conftest import ROOT


def small_net(tmp_path, batch: object = "batch") -> onnx.ModelProto:
    """x [batch, 3, 32, 32] → block0/conv (8×3×3×3, bias 8, pads 1) → block0/relu → head/flatten → head/matmul
    (8192 × 10) → y [batch, 10]."""
    weights = [numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "conv.w"),
               numpy_helper.from_array(np.ones(8, np.float32), "conv.b"),
               numpy_helper.from_array(np.ones((8192, 10), np.float32), "fc.w")]  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], name="block0/conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="block0/relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="head/flatten"),
        helper.make_node("MatMul", ["f", "fc.w"], ["y"], name="head/matmul"),
    ]
    graph = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], weights)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def opened(tmp_path, model: onnx.ModelProto, name: str = "m.onnx"):
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    document = open_document(path)
    document.run_deep_checks()  # shape inference: the intermediate shapes
    return document, document.view.drawn_graph()


def node(graph, label: str) -> int:
    return graph.node_label.index(label)


def test_each_op_counts_by_its_rule_in_symbolic_dims(tmp_path):
    document, graph = opened(tmp_path, small_net(tmp_path))
    metrics = metrics_of(graph)
    conv, relu, matmul = (metrics.ops[node(graph, n)] for n in ("block0/conv", "block0/relu", "head/matmul"))
    assert conv.macs.text() == "221,184·batch"  # batch × 8 × 32 × 32 outputs × 3 × 3 × 3
    assert conv.params.value == 8 * 27 + 8 and conv.activation_bytes.text() == "32,768·batch"  # 8×32×32×4 B
    assert (relu.macs.value, relu.rule) == (0, "no multiply-accumulates")
    assert matmul.macs.text() == "81,920·batch" and matmul.params.value == 81920  # [batch, 10] × K 8192
    assert metrics.model["macs"].count.text() == "303,104·batch"
    assert metrics.model["params"].count.value == 224 + 81920 == document.summary["parameters"]


def test_bound_dims_give_numbers_and_groups_sum_their_members(tmp_path):
    _, graph = opened(tmp_path, small_net(tmp_path))
    metrics = metrics_of(graph, {"batch": 4})
    assert metrics.model["macs"].count.value == 4 * 303104
    groups = {graph.group_label[g]: sums for g, sums in enumerate(metrics.groups)}
    assert groups["block0"]["macs"].count.value == 4 * 221184 and groups["head"]["macs"].count.value == 4 * 81920
    assert groups["block0"]["params"].count.value == 224
    assert [(graph.group_label[g], round(metrics.share("macs", s.count), 4)) for g, s in breakdown(graph, metrics)] == [
        ("block0", round(221184 / 303104, 4)), ("head", round(81920 / 303104, 4))]  # fmt: skip
    assert metrics_of(graph, {"batch": 4}) is metrics  # worked out once per dims
    assert np.isnan(metrics.node_values["macs"][node(graph, "x")])  # not an op
    assert metrics.node_values["macs"][node(graph, "head/matmul")] == 4 * 81920


def test_gemm_einsum_attention_and_lstm_count_by_hand(tmp_path):
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal((16, 64)).astype(np.float32), "gw"),
               numpy_helper.from_array(rng.standard_normal((1, 4 * 20, 16)).astype(np.float32), "lw"),
               numpy_helper.from_array(rng.standard_normal((1, 4 * 20, 20)).astype(np.float32), "lr")]  # fmt: skip
    nodes = [
        helper.make_node("Gemm", ["a", "gw"], ["g"], name="gemm", transB=1),  # a [5, 64] · gwᵀ [64, 16]
        helper.make_node("Einsum", ["q", "k"], ["s"], name="einsum", equation="bhqd,bhkd->bhqk"),
        helper.make_node("LSTM", ["seq", "lw", "lr"], ["h"], name="lstm", hidden_size=20),
    ]
    inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, [5, 64]),
              helper.make_tensor_value_info("q", TensorProto.FLOAT, [2, 4, 10, 8]),
              helper.make_tensor_value_info("k", TensorProto.FLOAT, [2, 4, 12, 8]),
              helper.make_tensor_value_info("seq", TensorProto.FLOAT, [7, 3, 16])]  # fmt: skip
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("g", "s", "h")]
    model = helper.make_model(helper.make_graph(nodes, "ops", inputs, outputs, weights),
                              opset_imports=[helper.make_opsetid("", 17)])  # fmt: skip
    _, graph = opened(tmp_path, model)
    metrics = metrics_of(graph)
    assert metrics.ops[node(graph, "gemm")].macs.value == 5 * 16 * 64
    assert metrics.ops[node(graph, "einsum")].macs.value == 2 * 4 * 10 * 12 * 8  # output × the contracted d
    assert metrics.ops[node(graph, "lstm")].macs.value == 7 * 3 * (80 * 16 + 80 * 20)  # steps × batch × (W + R)
    assert metrics.ops[node(graph, "lstm")].params.value == 80 * 16 + 80 * 20


def test_attention_counts_both_products(tmp_path):
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["o"], name="attn")]
    inputs = [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 8, "seq", 64]),
              helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, 8, "seq", 64]),
              helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 8, "seq", 64])]  # fmt: skip
    output = helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, 8, "seq", 64])
    opsets = [helper.make_opsetid("", 23)]
    model = helper.make_model(helper.make_graph(nodes, "a", inputs, [output]), opset_imports=opsets)
    _, graph = opened(tmp_path, model)
    attention = metrics_of(graph).ops[node(graph, "attn")]
    assert attention.macs.text() == "1,024·seq²"  # Q·Kᵀ: 8·seq·64·seq, and the weights · V as much again
    assert metrics_of(graph, {"seq": 2048}).ops[node(graph, "attn")].macs.value == 1024 * 2048**2


def test_shapes_that_disagree_or_are_not_known_make_that_op_unknown(tmp_path):
    nodes = [helper.make_node("MatMul", ["a", "b"], ["c"], name="bad"),
             helper.make_node("MatMul", ["c", "w"], ["d"], name="blind"),
             helper.make_node("Custom", ["d"], ["e"], name="custom", domain="com.example")]  # fmt: skip
    inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 8]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [6, 3]),
              helper.make_tensor_value_info("w", TensorProto.FLOAT, None)]  # fmt: skip
    values = [helper.make_tensor_value_info("c", TensorProto.FLOAT, [4, 3])]
    graph_proto = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
                                    value_info=values)  # fmt: skip
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    model = helper.make_model(graph_proto, opset_imports=opsets)
    path = tmp_path / "bad.onnx"
    path.write_bytes(model.SerializeToString())
    graph = open_document(path).view.drawn_graph()  # no inference: it would refuse the disagreeing MatMul
    metrics = metrics_of(graph)
    assert metrics.ops[node(graph, "bad")].macs.unknown == "A's last dim (8) and B's reduced dim (6) disagree"
    assert metrics.ops[node(graph, "blind")].macs.unknown == "input 1 (w) has no known shape"
    assert metrics.ops[node(graph, "custom")].rule == "not counted: no rule for com.example.Custom"
    assert metrics.model["macs"].unknown_ops == 3 and metrics.model["macs"].count.value == 0
    assert metrics.model["macs"].text() == "0 (+ 3 ops not counted)"


def test_zero_negative_and_huge_dims_are_unknown_never_wrong(tmp_path):
    for dims, why in (([0, 8], "a dim of 0"), ([2**40, 2**30], "more than 2^63")):
        nodes = [helper.make_node("MatMul", ["a", "b"], ["c"], name="mm")]
        inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, dims),
                  helper.make_tensor_value_info("b", TensorProto.FLOAT, [dims[1], 2])]  # fmt: skip
        output = helper.make_tensor_value_info("c", TensorProto.FLOAT, [dims[0], 2])
        model = helper.make_model(helper.make_graph(nodes, "g", inputs, [output]),
                                  opset_imports=[helper.make_opsetid("", 17)])  # fmt: skip
        path = tmp_path / "dims.onnx"
        path.write_bytes(model.SerializeToString())
        graph = open_document(path).view.drawn_graph()
        assert metrics_of(graph).ops[node(graph, "mm")].macs.unknown == why


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT)


def test_info_and_graph_json_carry_the_counts_with_the_dims_bound(tmp_path):
    path = tmp_path / "net.onnx"
    path.write_bytes(small_net(tmp_path).SerializeToString())
    text = run_cli("info", str(path), "--dims", "batch=2")
    assert text.returncode == 0, text.stderr
    assert "  multiply-accumulates: 606 k" in text.stdout and "  dims bound: batch=2" in text.stdout
    assert "    block0: 442 k, 73.0% of MACs" in text.stdout and "    head: 164 k, 27.0% of MACs" in text.stdout
    info = json.loads(run_cli("info", str(path), "--json").stdout)
    assert info["schema_version"] == 4
    assert info["metrics"]["totals"]["macs"] == {"value": None, "formula": "303,104·batch", "unknown_ops": 0,
                                                 "why": None}  # fmt: skip
    assert [g["label"] for g in info["metrics"]["top_groups"]] == ["block0", "head"]
    graph = json.loads(run_cli("graph", str(path), "--json", "--dims", "batch=1").stdout)
    conv = next(n for n in graph["nodes"] if n["label"] == "block0/conv")
    assert conv["metrics"]["macs"]["value"] == 221184 and conv["metrics"]["params"]["value"] == 224
    block = next(g for g in graph["groups"] if g["label"] == "block0")
    assert block["metrics"]["share"] == 221184 / 303104 and graph["metrics"]["dims"] == {"batch": 1}
    refused = run_cli("info", str(path), "--dims", "batch=0")
    assert refused.returncode == 2 and "expected NAME=SIZE with a positive whole size, got 'batch=0'" in refused.stderr


def test_the_counted_colour_modes_say_their_unit(tmp_path):
    from explorer.graph.colours import colour_modes, item_colours
    from explorer.graph.expansion import initial_expansion
    from explorer.graph.visible import visible_graph

    _, graph = opened(tmp_path, small_net(tmp_path, batch=1))
    assert {"MACs", "parameters", "activation bytes"} <= set(colour_modes(graph))
    visible = visible_graph(graph, initial_expansion(graph))
    _, legend = item_colours(graph, visible, "MACs")
    assert legend[0][0].endswith(" MACs") and legend[-1][0] == "none"
    _, legend = item_colours(graph, visible, "activation bytes")
    assert legend[0][0].endswith("B")


def test_the_report_draws_the_top_groups(tmp_path):
    from explorer.exports.html_report import top_groups

    document, _ = opened(tmp_path, small_net(tmp_path, batch=1))
    figure = top_groups(document)
    assert list(figure.data[0].x) == ["block0", "head"] and list(figure.data[0].y) == [221184, 81920]
    assert figure.data[0].text[0] == f"{221184 / 303104:.1%} of the model"


def test_an_identity_of_a_weight_holds_no_activation_bytes(tmp_path):
    """Issue #74: torch's Identity copies of weights were counted as activations (ResNet-50: 90,112 bytes)."""
    model = small_net(tmp_path)
    model.graph.node[3].input[1] = "fc.w.copy"
    model.graph.node.insert(3, helper.make_node("Identity", ["fc.w"], ["fc.w.copy"], name="head/copy"))
    model.graph.node.insert(3, helper.make_node("Identity", ["r"], ["r.copy"], name="head/activation_copy"))
    _, graph = opened(tmp_path, model)
    metrics = metrics_of(graph, {"batch": 1})
    assert metrics.ops[node(graph, "head/copy")].activation_bytes.value == 0
    assert metrics.ops[node(graph, "head/activation_copy")].activation_bytes.value == 32_768  # a copy of an activation
    assert metrics.model["activation_bytes"].count.value == 32_768 * 4 + 40  # conv, relu, r.copy, flatten; y [1, 10]
