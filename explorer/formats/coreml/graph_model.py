"""A Core ML model as the neutral graph: ML Program ops (constants folded), nested blocks (cond, while_loop)
as groups under their op's block, one group per function when there are several; NeuralNetwork layers by
their input and output names."""

from __future__ import annotations

from typing import Any

from explorer.formats.coreml.model import op_name, type_text
from explorer.graph.builder import GraphBuilder
from explorer.graph.model import ROOT, GraphModel


def coreml_graph(view: Any) -> GraphModel:
    b = GraphBuilder()
    model = view.model
    if model.blocks:
        _program(view, b)
    else:
        _layers(view, b)
    return b.build()


def _program(view: Any, b: GraphBuilder) -> None:
    model = view.model
    functions = {block.function for block in model.blocks.values()}
    block_group: dict[str, int] = {}
    op_ids: dict[tuple[str, int], int] = {}
    block_inputs: dict[tuple[str, str], int] = {}
    for key, block in model.blocks.items():  # parents come before their nested blocks
        if block.parent is None:
            group = ROOT if len(functions) == 1 else b.group(block.title, ROOT, kind="function", ref=("block", key))
        else:
            group = b.group(block.title, block_group[block.parent[0]], kind="block", ref=("block", key))
        block_group[key] = group
        for value in block.proto.inputs:  # a nested block's own inputs (the loop variables of a while_loop)
            detail = type_text(value.type, view.mil)
            block_inputs[(key, value.name)] = b.node(value.name, "block input", group=group, detail=detail,
                                                     ref=("block", key))  # fmt: skip
        for i, op in enumerate(block.proto.operations):
            output = op.outputs[0] if op.outputs else None
            detail = type_text(output.type, view.mil) if output is not None else ""
            blob = model.blobs.get((key, i))
            op_ids[(key, i)] = b.node(
                op_name(op) or f"{op.type}_{i}", op.type, group=group, detail=detail, ref=("op", key, i),
                constant=is_constant(op.type), dtype=getattr(blob, "dtype", ""),
                parameter_bytes=getattr(blob, "size", 0) if blob is not None else 0,
            )  # fmt: skip
    inputs: dict[tuple[str, str], int] = {}  # (function, input name) → its node
    for name, function in _functions(view).items():
        top = next((k for k, blk in model.blocks.items() if blk.function == name and blk.parent is None), None)
        for value in function.inputs:
            group = block_group.get(top, ROOT) if top is not None else ROOT
            detail = type_text(value.type, view.mil)
            inputs[(name, value.name)] = b.node(value.name, "input", group=group, detail=detail,
                                                ref=("function", name))  # fmt: skip
    for key, block in model.blocks.items():
        for i, op in enumerate(block.proto.operations):
            target = op_ids[(key, i)]
            # the op's named inputs (x, weight, bias): a protobuf map, iterated in no fixed order (the layout changed
            # from run to run), so the main input first and the rest by name
            for slot, (role, argument) in enumerate(sorted(op.inputs.items(), key=_input_order)):
                for binding in argument.arguments:
                    if binding.WhichOneof("binding") != "name":
                        continue
                    source = view.resolve(key, binding.name)
                    if source is not None:
                        b.edge(op_ids[source], target, binding.name, role, slot)
                    elif (found := _block_input(model, block_inputs, key, binding.name)) is not None:
                        b.edge(found, target, binding.name, role, slot)
                    elif (block.function, binding.name) in inputs:
                        b.edge(inputs[(block.function, binding.name)], target, binding.name, role, slot)
                    else:
                        b.dangling.append((target, binding.name))  # a name nothing defines


def _block_input(model: Any, block_inputs: dict[tuple[str, str], int], key: str, name: str) -> int | None:
    current: str | None = key
    while current is not None:
        found = block_inputs.get((current, name))
        if found is not None:
            return found
        parent = model.blocks[current].parent
        current = parent[0] if parent else None
    return None


def _functions(view: Any) -> dict[str, Any]:
    spec = view.spec
    if spec is None or spec.WhichOneof("Type") != "mlProgram":
        return {}
    return dict(sorted(spec.mlProgram.functions.items()))  # a protobuf map: sorted for a stable order


MAIN_INPUTS = {"x": 0, "input": 0, "values": 0, "cond": 0, "a": 0, "y": 1, "b": 1}  # MIL's data inputs, in order


def _input_order(item: tuple[str, Any]) -> tuple[int, str]:
    return MAIN_INPUTS.get(item[0], 2), item[0]


def _layers(view: Any, b: GraphBuilder) -> None:
    producer: dict[str, int] = {}
    readers: list[tuple[int, list[str]]] = []
    spec = view.spec
    for k, feature in enumerate(spec.description.input if spec is not None else []):
        producer[feature.name] = b.node(feature.name, "input", ref=("feature", "input", k))
    for k, layer in enumerate(view.layers() or []):
        node = b.node(layer.name or f"layer {k}", layer.WhichOneof("layer") or "?", ref=("layer", k))
        for name in layer.output:
            producer[name] = node
        readers.append((node, list(layer.input)))
    for node, names in readers:
        for name in names:
            if name in producer:
                b.edge(producer[name], node, name)
            else:
                b.dangling.append((node, name))


def is_constant(op_type: str) -> bool:
    """`const`, and the `constexpr_*` ops that make a weight from compressed data at load time (an int8 or
    palettized model's `constexpr_affine_dequantize`, `constexpr_lut_to_dense`, `constexpr_sparse_to_dense`):
    they fold into their readers like constants, instead of standing as source boxes above every conv."""
    return op_type == "const" or op_type.startswith("constexpr_")
