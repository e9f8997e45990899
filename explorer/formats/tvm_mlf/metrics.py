"""A TVM graph-executor graph's fused functions counted (issue #57), from the shapes the graph JSON gives every
entry: a function whose first operator is a dense or matmul counts its output × K (its data's last dim), a
convolution its output × the kernel's elements per output channel (OIHW, HWIO and the NCHWc packing), a transposed
convolution its input × the kernel's elements per input channel (IOHW against NCHW data, HWOI against NHWC: each
input element is spread over a kernel's window of every output channel, as PyTorch's FlopCounterMode counts it); a
function of other operators has no multiply-accumulates, one whose first operator has no rule here is not counted.
Parameters are the elements of the params a function reads, each counted once, in the box it folds into."""

from __future__ import annotations

import math

from explorer.formats.tvm_mlf.bundle import Module
from explorer.formats.tvm_mlf.graph import Graph
from explorer.models.count import ZERO, Count, OpCounts
from explorer.models.graph import GraphModel

NO_MACS = "no multiply-accumulates"
_MATMULS = ("nn_dense", "nn_contrib_dense_pack", "nn_matmul", "nn_batch_matmul")
_CONVS = ("nn_conv1d", "nn_conv2d", "nn_conv3d", "nn_contrib_conv2d_NCHWc", "nn_contrib_depthwise_conv2d_NCHWc")
_TRANSPOSED = ("nn_conv1d_transpose", "nn_conv2d_transpose", "nn_conv3d_transpose")


class TvmCounter:
    """The TVM view's counter (explorer.models.count.OpCounter): `sources` maps each graph node to its module and
    graph-JSON node id."""

    def __init__(self, modules: list[Module], sources: list[tuple[int, int] | None], model: GraphModel) -> None:
        self.modules, self.sources, self.model = modules, sources, model

    def stamp(self) -> object:
        return 0  # the graph JSON states every shape: nothing changes them

    def counts(self) -> list[OpCounts | None]:
        model = self.model
        folded_into = model.node_folded_into.tolist() if model.node_folded_into.size else [-1] * model.n_nodes
        params: dict[int, Count] = {}
        for node, source in enumerate(self.sources):
            if source is not None and model.node_constant[node] and folded_into[node] >= 0:
                entry = _entry_shape(self._graph(source[0]), source[1], 0)
                if entry is not None:
                    params[folded_into[node]] = params.get(folded_into[node], ZERO) + Count.product(entry)
        found: list[OpCounts | None] = []
        for node, source in enumerate(self.sources):
            graph = self._graph(source[0]) if source is not None else None
            if source is None or graph is None or graph.nodes[source[1]].op != "tvm_op":
                found.append(None)
                continue
            module = self.modules[source[0]]
            macs, rule = function_macs(graph, module, source[1], model.node_op[node])
            found.append(OpCounts(params.get(node, ZERO), macs, _output_bytes(graph, source[1]), rule))
        return found

    def _graph(self, m: int) -> Graph | None:
        return self.modules[m].graph


def function_macs(graph: Graph, module: Module, nid: int, operators: str) -> tuple[Count, str]:
    """One fused function's multiply-accumulates by its first operator (`conv2d+add+relu`: a conv2d)."""
    first = "nn_" + operators.split("+", 1)[0]
    names = {array.name for array in module.params}
    node = graph.nodes[nid]
    shapes = [_entry_shape(graph, source, index) for source, index in node.inputs]
    weights = [s for (source, _), s in zip(node.inputs, shapes, strict=True) if graph.nodes[source].name in names]
    data = [s for (source, _), s in zip(node.inputs, shapes, strict=True) if graph.nodes[source].name not in names]
    output = _entry_shape(graph, nid, 0)
    if first not in _MATMULS and first not in _CONVS and first not in _TRANSPOSED:
        return ZERO, NO_MACS
    if output is None or not data or data[0] is None:
        return Count.not_known("a shape is not known"), "unknown: a shape is not known"
    if first in _MATMULS:
        return Count.product([*output, data[0][-1]]), "output elements × K"
    kernel = weights[0] if weights and weights[0] is not None else (data[1] if len(data) > 1 else None)
    if kernel is None or any(dim <= 0 for dim in kernel):
        return Count.not_known("the kernel's shape is not known or has a dim of 0"), "unknown: the kernel's shape"
    if first in _TRANSPOSED:
        return transposed_macs(data[0], kernel)
    channels = _output_channels(output, kernel)
    if channels is None:
        why = f"the kernel {list(kernel)} fits no layout of the output {list(output)}"
        return Count.not_known(why), f"unknown: {why}"
    elements = math.prod(kernel)
    return Count.product(output) * Count.of(elements // channels), "output elements × the kernel per output channel"


def transposed_macs(data: tuple[int, ...], kernel: tuple[int, ...]) -> tuple[Count, str]:
    """A transposed convolution: its input elements × the kernel's elements per input channel (IOHW against NCHW
    data, HWOI against NHWC)."""
    if len(data) >= 3 and len(kernel) == len(data) and data[1] == kernel[0]:
        channels = kernel[0]
    elif len(data) >= 3 and len(kernel) == len(data) and data[-1] == kernel[-1]:
        channels = kernel[-1]
    else:
        why = f"the kernel {list(kernel)} fits no layout of the input {list(data)}"
        return Count.not_known(why), f"unknown: {why}"
    per_input = Count.of(math.prod(kernel) // channels)
    return Count.product(data) * per_input, "input elements × the kernel per input channel"


def _output_channels(output: tuple[int, ...], kernel: tuple[int, ...]) -> int | None:
    """The output channels the kernel's elements are spread over: OIHW (NCHW), HWIO (NHWC), or NCHWc's
    [oc_chunk, ic_chunk, kh, kw, ic_block, oc_block] against the output [n, oc_chunk, h, w, oc_block]."""
    if len(output) == 5 and len(kernel) == 6 and output[1] == kernel[0] and output[-1] == kernel[-1]:
        return kernel[0] * kernel[-1]
    if len(output) >= 3 and output[1] == kernel[0]:
        return kernel[0]
    if output[-1] == kernel[-1]:
        return kernel[-1]
    return None


def _entry_shape(graph: Graph | None, nid: int, index: int) -> tuple[int, ...] | None:
    if graph is None:
        return None
    eid = graph.entry_id(nid, index)
    return graph.entries[eid].shape if eid is not None and eid < len(graph.entries) else None


def _output_bytes(graph: Graph, nid: int) -> Count:
    found = 0
    for index in range(graph.nodes[nid].num_outputs):
        eid = graph.entry_id(nid, index)
        if eid is None or eid >= len(graph.entries):
            return Count.not_known(f"output {index} has no entry")
        found += graph.entries[eid].nbytes
    return Count.of(found)
