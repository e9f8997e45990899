"""A TVM bundle's graph-executor graphs as the neutral graph: one group per module (when there are several),
`tvm_op` nodes labelled by their fused function (the module prefix dropped), parameters as constants and
graph inputs as inputs; edges from each node's inputs."""

from __future__ import annotations

import re
from typing import Any, Protocol

from explorer.formats.tvm_mlf.bundle import Module
from explorer.formats.tvm_mlf.metrics import TvmCounter
from explorer.graph.builder import GraphBuilder
from explorer.models.graph import ROOT, GraphModel
from explorer.models.ref import Ref


class GraphSource(Protocol):
    """The bundle's modules and each node's ref (the TvmView, which imports this module for its graph)."""

    @property
    def modules(self) -> list[Module]: ...

    def node_ref(self, m: int, nid: int) -> Ref: ...


def tvm_graph(view: GraphSource) -> GraphModel:
    b = GraphBuilder()
    sources: list[tuple[int, int] | None] = []  # per node made: (its module, its graph-JSON node id)
    with_graphs = [(m, module) for m, module in enumerate(view.modules) if module.graph is not None]
    for m, module in with_graphs:
        graph = module.graph
        assert graph is not None  # with_graphs holds the modules that have one
        group = ROOT if len(with_graphs) == 1 else b.group(f"module {module.name}", ROOT, kind="module",
                                                           ref=("module", m))  # fmt: skip
        params = {array.name for array in module.params}
        prefix = f"tvmgen_{module.name}_"
        ids: dict[int, int] = {}
        for node in graph.nodes:
            entry = _first_entry(graph, node.nid)
            detail = f"{entry.dtype}[{', '.join(map(str, entry.shape))}]" if entry is not None else ""
            if node.op == "null":
                is_param = node.name in params
                ids[node.nid] = b.node(node.name, "parameter" if is_param else "input", group=group, detail=detail,
                                       ref=view.node_ref(m, node.nid), constant=is_param,
                                       dtype=entry.dtype if entry else "",
                                       parameter_bytes=_bytes(module, node.name) if is_param else 0)  # fmt: skip
                sources.append((m, node.nid))
                continue
            function = node.func_name or node.name
            label = function.removeprefix(prefix)
            kind = fused_operators(label) if node.op == "tvm_op" else node.op
            ids[node.nid] = b.node(label, kind, group=group, detail=detail, ref=view.node_ref(m, node.nid),
                                   dtype=entry.dtype if entry else "", parameter_bytes=0)  # fmt: skip
            sources.append((m, node.nid))
        for node in graph.nodes:
            for source, _ in node.inputs:
                if source in ids:
                    b.edge(ids[source], ids[node.nid])
                else:
                    b.dangling.append((ids[node.nid], f"node {source}"))
    model = b.build()
    if with_graphs:  # the graph JSON states every entry's shape: its functions are counted
        model.op_counter = TvmCounter(view.modules, sources, model)
    return model


def _first_entry(graph: Any, nid: int) -> Any:
    if nid + 1 < len(graph.row_ptr):
        eid = graph.row_ptr[nid]
        if eid < len(graph.entries):
            return graph.entries[eid]
    return None


def _bytes(module: Any, name: str) -> int:
    return next((array.nbytes for array in module.params if array.name == name), 0)


# Relay operators whose names hold underscores, as a fused function's name writes them (`nn.contrib_conv2d_NCHWc`
# becomes `nn_contrib_conv2d_NCHWc`): matched longest first, so the name splits into the operators it fused
_MULTI_WORD = sorted((
    "nn_contrib_conv2d_NCHWc", "nn_contrib_depthwise_conv2d_NCHWc", "nn_contrib_dense_pack", "nn_conv2d_transpose",
    "nn_conv1d", "nn_conv2d", "nn_conv3d", "nn_dense", "nn_batch_matmul", "nn_relu", "nn_leaky_relu", "nn_prelu",
    "nn_max_pool1d", "nn_max_pool2d", "nn_avg_pool2d", "nn_global_avg_pool2d", "nn_global_max_pool2d",
    "nn_adaptive_avg_pool2d", "nn_batch_flatten", "nn_softmax", "nn_log_softmax", "nn_bias_add", "nn_pad",
    "nn_upsampling", "nn_batch_norm", "nn_layer_norm", "nn_depth_to_space", "layout_transform",
    "fixed_point_multiply", "right_shift", "left_shift", "strided_slice", "expand_dims", "image_resize2d",
    "qnn_conv2d", "qnn_dense", "qnn_requantize", "qnn_add", "qnn_quantize", "qnn_dequantize", "nn_contrib_conv2d",
), key=lambda name: -name.count("_"))  # fmt: skip
_SUFFIX = re.compile(r"(_\d+)+_?$")  # a duplicate's counter (_1), a long name's hash (_14669711146056581479_)


def fused_operators(function: str) -> str:
    """A fused function's operators as its op type: `fused_nn_contrib_conv2d_NCHWc_add_nn_relu_1` →
    `conv2d+add+relu` (TVM names a fused function after the Relay operators it holds; a box that said `tvm_op`
    said nothing). The first operator colours the box."""
    name = _SUFFIX.sub("", function.removeprefix("fused_"))
    words = name.split("_")
    found, at = [], 0
    while at < len(words):
        for candidate in _MULTI_WORD:
            parts = candidate.split("_")
            if words[at : at + len(parts)] == parts:
                found.append(candidate)
                at += len(parts)
                break
        else:
            if words[at] in ("nn", "qnn") and at + 1 < len(words):  # an nn operator this list does not know
                found.append(f"{words[at]}_{words[at + 1]}")
                at += 2
            else:
                found.append(words[at])
                at += 1
    short = [_short(op) for op in found if op]
    return "+".join(short) or "tvm_op"


def _short(operator: str) -> str:
    """`nn_contrib_conv2d_NCHWc` → `conv2d`, `nn_contrib_dense_pack` → `dense`, `nn_max_pool2d` → `max_pool2d`."""
    for prefix in ("nn_contrib_", "nn_"):
        operator = operator.removeprefix(prefix)
    for suffix in ("_NCHWc", "_pack"):
        operator = operator.removesuffix(suffix)
    return operator
