"""A Core ML model as the neutral graph: ML Program ops (constants folded), nested blocks (cond, while_loop)
as groups under their op's block, one group per function when there are several; NeuralNetwork layers by
their input and output names."""

from __future__ import annotations

from typing import Any

from explorer.formats.coreml.metrics import CoreMLCounter
from explorer.formats.coreml.mil_text import MilProgram
from explorer.formats.coreml.model import CoreMLModel, feature_type, op_name, type_text
from explorer.formats.coreml.source import ProgramSource
from explorer.graph.builder import GraphBuilder
from explorer.models.graph import ROOT, GraphModel


def coreml_graph(view: ProgramSource) -> GraphModel:
    b = GraphBuilder()
    model = view.model
    if model.blocks:
        _program(view, b)
        graph = b.build()
        graph.op_counter = CoreMLCounter(view, graph)  # a program states every value's type: its ops are counted
        return graph
    elif model.model is None and model.mil_text:
        _compiled(view.mil_program(), b)
    else:
        _layers(view, b)
    return b.build()


def _program(view: ProgramSource, b: GraphBuilder) -> None:
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
    for key, block in model.blocks.items():  # a while_loop's cond and body, a cond's branches hang off their op
        if block.parent is not None and block.parent in op_ids:
            b.owned_by(block_group[key], op_ids[block.parent])
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


def _block_input(model: CoreMLModel, block_inputs: dict[tuple[str, str], int], key: str, name: str) -> int | None:
    current: str | None = key
    while current is not None:
        found = block_inputs.get((current, name))
        if found is not None:
            return found
        parent = model.blocks[current].parent
        current = parent[0] if parent else None
    return None


def _functions(view: ProgramSource) -> dict[str, Any]:
    spec = view.spec
    if spec is None or spec.WhichOneof("Type") != "mlProgram":
        return {}
    return dict(sorted(spec.mlProgram.functions.items()))  # a protobuf map: sorted for a stable order


MAIN_INPUTS = {"x": 0, "input": 0, "values": 0, "cond": 0, "a": 0, "y": 1, "b": 1}  # MIL's data inputs, in order


def _input_order(item: tuple[str, Any]) -> tuple[int, str]:
    return MAIN_INPUTS.get(item[0], 2), item[0]


def _layers(view: ProgramSource, b: GraphBuilder) -> None:
    producer: dict[str, int] = {}
    readers: list[tuple[int, list[str]]] = []
    spec = view.spec
    for k, feature in enumerate(spec.description.input if spec is not None else []):
        shape = feature_type(feature).removeprefix("multiArray ")  # `fp32[1, 3, 32, 32]`: the box says 1×3×32×32
        producer[feature.name] = b.node(feature.name, "input", detail=shape, ref=("feature", "input", k))
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


def _compiled(program: MilProgram, b: GraphBuilder) -> None:
    """A compiled folder's model.mil drawn as an .mlpackage's program is: the same ops, constants folded, a
    loop's or cond's blocks as groups hanging off their op. Each box's ref is its line of model.mil, the
    tree's item for that op."""
    functions = {block.function for block in program.blocks}
    group_of: list[int] = []
    inputs_of: list[list[tuple[str, int]]] = []  # per block: its inputs' nodes
    for block in program.blocks:
        if block.parent < 0:
            group = ROOT if len(functions) == 1 else b.group(block.function, ROOT, kind="function",
                                                             ref=("mil-function", block.function))  # fmt: skip
        else:
            group = b.group(block.title, group_of[block.parent], kind="block", ref=None)
        group_of.append(group)
        kind = "input" if block.parent < 0 else "block input"
        inputs_of.append([(name, b.node(name, kind, group=group, detail=type_name, ref=("description",)))
                          for name, type_name in block.inputs])  # fmt: skip
    scope = _Scope(program, inputs_of)
    op_ids = []
    for op in program.ops:
        scope.enter(op.block)
        node = b.node(op.name or op.outputs[0], op.op, group=group_of[op.block], detail=op.output_type,
                      ref=("source", "model.mil", op.line), constant=is_constant(op.op),
                      dtype=op.output_type.partition("[")[0], value=op.value)  # fmt: skip
        op_ids.append(node)
        for slot, (role, name) in enumerate(sorted(op.inputs, key=_input_order)):
            source = scope.visible.get(name)
            if source is None:
                b.dangling.append((node, name))  # a name nothing defines
            else:
                b.edge(source, node, name, role, slot)
        for name in op.outputs:
            scope.define(name, node)
    for k, block in enumerate(program.blocks):
        if block.owner >= 0:
            b.owned_by(group_of[k], op_ids[block.owner])


class _Scope:
    """The names visible in the block being read: one table, each block's definitions undone when it closes.
    Blocks are met in the text's order, so each is entered and left once (a lookup that climbed the blocks made
    deeply nested files quadratic: 1.3 MB took 208 s)."""

    def __init__(self, program: MilProgram, inputs_of: list[list[tuple[str, int]]]) -> None:
        self.program, self.inputs_of = program, inputs_of
        self.visible: dict[str, int] = {}
        self.open: list[tuple[int, list[tuple[str, int | None]]]] = []  # (block, what its names hid)
        self.opened: set[int] = set()

    def enter(self, block: int) -> None:
        if self.open and self.open[-1][0] == block:
            return
        chain = []  # the block and its ancestors not open yet, innermost first
        at = block
        while at >= 0 and at not in self.opened:
            chain.append(at)
            at = self.program.blocks[at].parent
        while self.open and self.open[-1][0] != at:  # close what is not an ancestor
            closed, hidden = self.open.pop()
            self.opened.discard(closed)
            for name, previous in reversed(hidden):
                if previous is None:
                    self.visible.pop(name, None)
                else:
                    self.visible[name] = previous
        for k in reversed(chain):
            self.open.append((k, []))
            self.opened.add(k)
            for name, node in self.inputs_of[k]:
                self.define(name, node)

    def define(self, name: str, node: int) -> None:
        self.open[-1][1].append((name, self.visible.get(name)))
        self.visible[name] = node


def is_constant(op_type: str) -> bool:
    """`const`, and the `constexpr_*` ops that make a weight from compressed data at load time (an int8 or
    palettized model's `constexpr_affine_dequantize`, `constexpr_lut_to_dense`, `constexpr_sparse_to_dense`):
    they fold into their readers like constants, instead of standing as source boxes above every conv."""
    return op_type == "const" or op_type.startswith("constexpr_")
