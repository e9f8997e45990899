"""A steering input's plumbing folded into one closed box per scope (issue #74, item 6): the ops that read only
an attention mask (or a position id, a timestep, a cache) until they meet the model's data."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from explorer.api import open_document
from explorer.graph.expansion import initial_expansion
from tests.conftest import ROOT


def _members(model, group: int) -> list[str]:
    return [model.node_label[v] for v in np.flatnonzero(model.node_group == group) if not model.node_constant[v]]


def test_gpt2_s_attention_mask_chain_is_one_closed_box_beside_the_stack():
    model = open_document(ROOT / "tests" / "data" / "torch_exports" / "hf_gpt2_dynamo.onnx").view.graph_model()
    [folded] = [g for g, kind in enumerate(model.group_kind) if kind == "plumbing"]
    assert model.group_label[folded] == "attention_mask plumbing"
    assert model.group_detail[folded] == "5 ops that read only attention_mask"
    assert model.group_label[int(model.group_parent[folded])] == "transformer"
    assert _members(model, folded) == ["node_view_1", "node__to_copy", "node_GatherND_37", "node_bitwise_and_1",
                                       "node_Where_94"]  # fmt: skip
    assert folded not in initial_expansion(model)  # the first screen shows it closed


def _model(tmp_path, extra_mask_ops: int):
    """x → Relu → Where(cond, Relu, 0) → y, where cond = mask → Cast → (Not × extra) chain; mask an input too."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Cast", ["mask"], ["c0"], name="cast", to=TensorProto.BOOL)]  # fmt: skip
    last = "c0"
    for k in range(extra_mask_ops):
        nodes.append(helper.make_node("Not", [last], [f"c{k + 1}"], name=f"not{k}"))
        last = f"c{k + 1}"
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    nodes.append(helper.make_node("Where", [last, "r", "zero"], ["y"], name="where"))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                                           helper.make_tensor_value_info("mask", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [zero])  # fmt: skip
    path = tmp_path / f"masked_{extra_mask_ops}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return open_document(path).view.graph_model()


def test_only_ops_that_read_nothing_but_the_mask_are_folded_and_one_op_stays_a_box(tmp_path):
    model = _model(tmp_path, 2)
    [folded] = [g for g, kind in enumerate(model.group_kind) if kind == "plumbing"]
    assert model.group_label[folded] == "mask plumbing" and _members(model, folded) == ["cast", "not0", "not1"]
    assert int(model.group_parent[folded]) == -1  # at the top level, where its ops were
    where = model.node_label.index("where")
    assert model.node_group[where] != folded  # it reads the data too: where the mask meets the model
    single = _model(tmp_path, 0)  # mask → Cast → Where: one op is its own box
    assert "plumbing" not in single.group_kind


def _unet_like(tmp_path):
    """sample → Relu → blk/Add(·, t2b) → y, with the timestep's plumbing: time_proj (a module of plumbing alone:
    Cast → Neg), then in blk: t1a → t1b → sub/p (sub also holds a data op, so it is no plumbing module) → t2a →
    t2b. A path from blk's plumbing leaves blk through sub and comes back."""
    def op(kind, inputs, output, name, **attributes):
        return helper.make_node(kind, inputs, [output], name=name, **attributes)

    nodes = [op("Cast", ["timestep"], "tc", "/time_proj/Cast", to=TensorProto.FLOAT),
             op("Neg", ["tc"], "tn", "/time_proj/Neg"),
             op("Relu", ["sample"], "r", "/conv_in/Relu"),
             op("Abs", ["tn"], "t1a", "/blk/t1a"), op("Neg", ["t1a"], "t1b", "/blk/t1b"),
             op("Sigmoid", ["t1b"], "p", "/blk/sub/p"), op("Relu", ["r"], "d", "/blk/sub/data"),
             op("Abs", ["p"], "t2a", "/blk/t2a"), op("Neg", ["t2a"], "t2b", "/blk/t2b"),
             op("Add", ["d", "t2b"], "y", "/blk/Add")]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("sample", TensorProto.FLOAT, [4]),
                                           helper.make_tensor_value_info("timestep", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])  # fmt: skip
    path = tmp_path / "unet_like.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return open_document(path).view.graph_model()


def test_plumbing_a_path_leaves_and_reenters_folds_in_one_box_and_a_plumbing_module_folds_whole(tmp_path):
    """The reduced diffusion UNet (dynamo): `time_embedding`'s one plumbing box read from and fed its child `act`,
    a cycle between closed boxes; the layout then broke it by file order and drew down_blocks.3 above
    down_blocks.1 (32 of 99 edges against the drawn order). sub's plumbing op `p` is read in blk, so it folds
    in blk with the rest: blk's plumbing is one box, time_proj (plumbing alone) folds whole into the top level's
    box, and the drawn graph has no cycle."""
    from explorer.graph.layout import _item_order
    from explorer.graph.visible import expand_all, visible_graph

    model = _unet_like(tmp_path)
    folded = [g for g, kind in enumerate(model.group_kind) if kind == "plumbing"]
    by_members = {tuple(_members(model, g)): g for g in folded}
    assert ("/blk/t1a", "/blk/t1b", "/blk/sub/p", "/blk/t2a", "/blk/t2b") in by_members
    [proj] = [g for g, label in enumerate(model.group_label) if label == "time_proj"]
    holder = int(model.group_parent[proj])
    assert model.group_kind[holder] == "plumbing" and model.group_label[holder] == "timestep plumbing"
    assert int(model.group_parent[holder]) == -1
    for expanded in (initial_expansion(model), set()):
        visible = visible_graph(model, expanded)
        order = _item_order(model, visible)
        position = np.empty(visible.n_items, dtype=np.int64)
        position[order] = np.arange(visible.n_items)
        assert (position[visible.edge_src] < position[visible.edge_dst]).all()
    assert expand_all(model)  # every group still opens


def test_plumbing_shared_by_later_blocks_folds_where_all_its_readers_are(tmp_path):
    """TorchScript computes a UNet's SiLU(temb) once, in down_blocks.0's first resnet, for every resnet: folded
    there, down_blocks.0 fed every later block and the ordering threw the down blocks from side to side. It folds
    in the scope that holds all its readers (here the top level, with the time embedding)."""
    def op(kind, inputs, output, name):
        return helper.make_node(kind, inputs, [output], name=name)

    nodes = [op("Neg", ["timestep"], "te", "/time_embedding/Neg"), op("Abs", ["te"], "te2", "/time_embedding/Abs"),
             op("Sigmoid", ["te2"], "sg", "/down_blocks.0/resnets.0/act/Sigmoid"),
             op("Mul", ["te2", "sg"], "silu", "/down_blocks.0/resnets.0/act/Mul"),
             op("Relu", ["sample"], "r0", "/down_blocks.0/resnets.0/conv/Relu"),
             op("Add", ["r0", "silu"], "a0", "/down_blocks.0/resnets.0/Add"),
             op("Relu", ["a0"], "r1", "/down_blocks.1/resnets.0/conv/Relu"),
             op("Add", ["r1", "silu"], "y", "/down_blocks.1/resnets.0/Add")]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("sample", TensorProto.FLOAT, [4]),
                                           helper.make_tensor_value_info("timestep", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])  # fmt: skip
    path = tmp_path / "shared_silu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    model = open_document(path).view.graph_model()
    [folded] = [g for g, kind in enumerate(model.group_kind) if kind == "plumbing"]
    assert int(model.group_parent[folded]) == -1 and model.group_label[folded] == "timestep plumbing"
    inside = {model.node_label[v] for v in range(model.n_nodes) if folded in model.ancestors(int(model.node_group[v]))}
    assert inside == {"/time_embedding/Neg", "/time_embedding/Abs", "/down_blocks.0/resnets.0/act/Sigmoid",
                      "/down_blocks.0/resnets.0/act/Mul"}  # fmt: skip


def test_a_decoder_s_token_embedding_is_data_not_plumbing(tmp_path):
    """`decoder_input_ids` steers where reading starts (the encoder's input first), but its embedding lookup turns
    ids into the decoder's data: T5's TorchScript decoder had its embedding, norm and whole first self-attention
    (28 ops) folded as `decoder_input_ids plumbing`. A Gather from a weight table ends the plumbing; a mask's
    arithmetic on the same input still folds."""
    table = helper.make_tensor("table", TensorProto.FLOAT, [10, 4], [0.0] * 40)
    nodes = [helper.make_node("Relu", ["input_features"], ["enc"], name="/encoder/Relu"),
             helper.make_node("Gather", ["table", "decoder_input_ids"], ["emb"], name="/decoder/embed/Gather"),
             helper.make_node("Neg", ["emb"], ["n"], name="/decoder/norm/Neg"),
             helper.make_node("Abs", ["n"], ["a"], name="/decoder/norm/Abs"),
             helper.make_node("Cast", ["decoder_attention_mask"], ["m0"], name="/decoder/mask/Cast",
                              to=TensorProto.FLOAT),
             helper.make_node("Neg", ["m0"], ["m1"], name="/decoder/mask/Neg"),
             helper.make_node("Add", ["a", "m1"], ["s"], name="/decoder/Add"),
             helper.make_node("Add", ["s", "enc"], ["y"], name="/decoder/cross/Add")]  # fmt: skip
    inputs = [helper.make_tensor_value_info("input_features", TensorProto.FLOAT, [4, 4]),
              helper.make_tensor_value_info("decoder_input_ids", TensorProto.INT64, [4]),
              helper.make_tensor_value_info("decoder_attention_mask", TensorProto.INT64, [4, 4])]  # fmt: skip
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
                              [table])  # fmt: skip
    path = tmp_path / "decoder.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    model = open_document(path).view.graph_model()
    [folded] = [g for g, kind in enumerate(model.group_kind) if kind == "plumbing"]
    assert model.group_label[folded] == "decoder_attention_mask plumbing"
    inside = {model.node_label[v] for v in range(model.n_nodes) if folded in model.ancestors(int(model.node_group[v]))}
    assert inside == {"/decoder/mask/Cast", "/decoder/mask/Neg"}  # the mask module folded whole
