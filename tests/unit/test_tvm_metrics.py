"""TVM fused functions counted (issue #57): dense by output × K, convolutions per output channel in each kernel
layout, the other functions none, worked by hand on the bundled sample."""

from __future__ import annotations

from explorer.api import open_document
from explorer.formats.tvm_mlf.metrics import _output_channels
from explorer.graph.metrics import metrics_of
from tests.conftest import SAMPLE_DATA


def test_the_sample_classifiers_functions_count_by_hand():
    document = open_document(SAMPLE_DATA / "two_modules_mlf.tar")
    graph = document.view.drawn_graph()
    metrics = metrics_of(graph)
    counted = [(graph.node_label[n], op.macs.value, op.params.value, op.activation_bytes.value)
               for n, op in enumerate(metrics.ops) if op is not None]  # fmt: skip
    assert counted == [("fused_nn_dense_add", 32 * 64, 32 * 64 + 32, 32 * 4),  # [1, 64] → [1, 32], float32
                       ("fused_nn_relu", 0, 0, 32 * 4),
                       ("fused_nn_dense_add_1", 10 * 32, 10 * 32 + 10, 10 * 4),  # [1, 32] → [1, 10]
                       ("fused_nn_softmax", 0, 0, 10 * 4)]  # fmt: skip
    assert metrics.model["params"].count.value == 2080 + 330  # every param of the graph, each read once
    assert document.view.counts_ops()


def test_a_kernels_output_channels_in_each_layout():
    assert _output_channels((1, 64, 56, 56), (64, 32, 3, 3)) == 64  # NCHW output, OIHW kernel
    assert _output_channels((1, 56, 56, 64), (3, 3, 32, 64)) == 64  # NHWC output, HWIO kernel
    assert _output_channels((1, 4, 56, 56, 16), (4, 2, 3, 3, 16, 16)) == 64  # NCHW16c: oc_chunk 4 × oc_block 16
    assert _output_channels((1, 10, 7, 7), (64, 32, 3, 3)) is None  # no layout fits: unknown, never a guess


def test_a_transposed_convolution_counts_its_input_by_the_kernel_per_input_channel():
    """An upsampling function, [1, 16, 8, 8] → [1, 8, 17, 17] with a 16×8×3×3 kernel (IOHW): each input element meets
    a 3×3 window of all 8 output channels, 1,024 × 72 = 73,728 (PyTorch's FlopCounterMode counts the same for
    ConvTranspose2d(16, 8, 3, stride=2))."""
    import json

    from explorer.formats.tvm_mlf.bundle import Module
    from explorer.formats.tvm_mlf.graph import parse_graph
    from explorer.formats.tvm_mlf.metrics import function_macs, transposed_macs
    from explorer.formats.tvm_mlf.params import ParamArray

    graph_json = {
        "nodes": [{"op": "null", "name": "data", "inputs": []}, {"op": "null", "name": "w", "inputs": []},
                  {"op": "tvm_op", "name": "up", "inputs": [[0, 0, 0], [1, 0, 0]],
                   "attrs": {"func_name": "tvmgen_default_fused_nn_conv2d_transpose_add", "num_inputs": "2",
                             "num_outputs": "1", "flatten_data": "0"}}],
        "arg_nodes": [0, 1], "heads": [[2, 0, 0]], "node_row_ptr": [0, 1, 2, 3],
        "attrs": {"shape": ["list_shape", [[1, 16, 8, 8], [16, 8, 3, 3], [1, 8, 17, 17]]],
                  "dltype": ["list_str", ["float32"] * 3], "storage_id": ["list_int", [0, 1, 2]]},
    }  # fmt: skip
    graph, problems = parse_graph(json.dumps(graph_json).encode(), "graph.json")
    assert problems == []
    module = Module("default", ["graph"], "full-model", ["c"], graph=graph,
                    params=[ParamArray("w", "float32", (16, 8, 3, 3), 16 * 8 * 9 * 4, 0, 1)])  # fmt: skip
    macs, rule = function_macs(graph, module, 2, "conv2d_transpose+add")
    assert (macs.value, rule) == (73_728, "input elements × the kernel per input channel")
    assert transposed_macs((1, 8, 8, 16), (3, 3, 8, 16))[0].value == 1024 * 72  # NHWC data, HWOI kernel
    unknown, why = transposed_macs((1, 10, 8, 8), (16, 8, 3, 3))
    assert unknown.value is None and why.startswith("unknown: the kernel [16, 8, 3, 3] fits no layout")
