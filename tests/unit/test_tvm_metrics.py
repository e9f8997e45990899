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
