"""Issue #54: a model exported by torch's dynamo exporter names its nodes `node_MatMul_12` and keeps each node's
module path in its metadata (`pkg.torch.onnx.name_scopes`); the graph groups them by module as it groups a
TorchScript export by its scoped names."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from explorer.api import open_document
from explorer.formats.onnx.index import MAX_SCOPE_TEXT, TORCH_CLASSES, TORCH_SCOPES, TorchScope, torch_scope
from tests.conftest import SAMPLES


class Prop:
    def __init__(self, key: str, value: str) -> None:
        self.key, self.value = key, value


@pytest.mark.parametrize(
    ("value", "scope"),
    [
        ("['', 'layers.0', 'layers.0.attn', 'linear']", "layers.0/attn"),
        ("['', 'tok', 'embedding']", "tok"),
        ("['', 'add_10']", ""),  # an op of the root module
        ("['_empty_nn_module_stack_from_metadata_hook', 'sym_size_int_10']", ""),
        ("['', 'encoder', 'encoder.layer.3', 'encoder.layer.3.attention.self', 'matmul']",
         "encoder/layer.3/attention.self"),
        ('["", "down_blocks.1", "down_blocks.1.resnets.0", "conv"]', "down_blocks.1/resnets.0"),
        ("['', 'a/b', 'x']", "a∕b"),  # a '/' inside a module's name does not cut it
        ("['', 'blocks.0', 'other.module', 'op']", "blocks.0/other.module"),  # not its parent's child: kept whole
    ],
)
def test_torch_scope_reads_the_module_path(value, scope):
    assert torch_scope([Prop("namespace", "ignored"), Prop(TORCH_SCOPES, value)]) == TorchScope(scope)
    assert torch_scope([Prop("namespace", value)]) == TorchScope()


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("not a list", "is not a list of names"),
        ("[" + "'x', " * MAX_SCOPE_TEXT + "'y']", "longer than 4,096 characters"),  # a 10,000-deep path
        ("['', 'layers.0\x1b[2J', 'op']", "holds control characters"),
    ],
    ids=["not-a-list", "too-long", "control-characters"],
)
def test_metadata_that_is_not_a_module_path_is_ignored_and_says_why(value, why):
    found = torch_scope([Prop(TORCH_SCOPES, value)])
    assert found.path == "" and why in found.ignored and found.ignored.endswith("grouped by its name instead")


def test_the_classes_come_from_the_class_hierarchy_when_it_fits_the_path():
    scopes = Prop(TORCH_SCOPES, "['', 'layers.0', 'layers.0.qkv', 'linear']")
    classes = "['builtins.MiniGPT', 'builtins.Attn', 'torch.nn.modules.linear.Linear', 'aten.linear.default']"
    assert torch_scope([scopes, Prop(TORCH_CLASSES, classes)]) == TorchScope("layers.0/qkv", ("Attn", "Linear"))
    longer = "['builtins.MiniGPT', 'x.A', 'x.B', 'x.C', 'aten.linear.default']"  # longer than the path: no classes
    found = torch_scope([scopes, Prop(TORCH_CLASSES, longer)])
    assert (found.path, found.classes) == ("layers.0/qkv", ()) and "does not name one class per module" in found.ignored


def _node(op: str, inputs: list[str], output: str, n: int, scopes: str | None, classes: str = "") -> onnx.NodeProto:
    node = helper.make_node(op, inputs, [output], name=f"node_{op}_{n}")
    for key, value in ((TORCH_SCOPES, scopes), (TORCH_CLASSES, classes)):
        if value:
            entry = node.metadata_props.add()
            entry.key, entry.value = key, value
    return node


def test_a_dynamo_style_model_is_grouped_by_its_modules(tmp_path: Path):
    # x → layers.0.attn (MatMul, Add) → layers.0.mlp (Relu) → layers.1.attn (MatMul) → root (Identity)
    nodes = [
        _node("MatMul", ["x", "w"], "a", 0, "['', 'layers.0', 'layers.0.attn', 'linear']",
              "['m.GPT', 'm.Block', 'm.Attention', 'aten.linear']"),
        _node("Add", ["a", "x"], "b", 1, "['', 'layers.0', 'layers.0.attn', 'linear']"),
        _node("Relu", ["b"], "c", 2, "['', 'layers.0', 'layers.0.mlp', 'relu']"),
        _node("MatMul", ["c", "w"], "d", 3, "['', 'layers.1', 'layers.1.attn', 'linear_1']"),
        _node("Identity", ["d"], "y", 4, "['', 'clone']"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor("w", TensorProto.FLOAT, [4, 4], [0.0] * 16)],
    )  # fmt: skip
    path = tmp_path / "dynamo_style.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    model = open_document(path).view.graph_model()
    group_of = {model.node_label[n]: n for n in range(model.n_nodes)}

    def path_of(label: str) -> list[str]:
        group, names = int(model.node_group[group_of[label]]), []
        while group >= 0:  # ROOT is -1
            names.append(model.group_label[group])
            group = int(model.group_parent[group])
        return names[::-1]

    assert path_of("node_MatMul_0") == path_of("node_Add_1") == ["layers.0", "attn"]
    assert path_of("node_Relu_2") == ["layers.0"]  # a module of one node is not a group of its own
    assert path_of("node_MatMul_3") == []  # layers.1 (and its attn) hold one node: no group
    assert path_of("node_Identity_4") == []
    # the classes in the titles: `layers.0 · Block` › `attn · Attention`
    from explorer.graph.layout import group_title

    attn = int(model.node_group[group_of["node_MatMul_0"]])
    assert group_title(model, attn) == "attn · Attention"
    assert group_title(model, int(model.group_parent[attn])) == "layers.0 · Block"


def test_a_file_whose_metadata_lies_groups_by_name_and_warns_once(tmp_path: Path):
    nodes = [_node("Relu", ["x"], "a", 0, "['', 'bad\x1b]0;owned\x07', 'relu']"),
             _node("Relu", ["a"], "b", 1, "nonsense"), _node("Relu", ["b"], "y", 2, "['', 'ok', 'ok.inner', 'relu']")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])  # fmt: skip
    path = tmp_path / "lies.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    document = open_document(path)
    [warning] = [p for p in document.problems if p.code == "torch-scope-ignored"]
    assert warning.severity == "warning" and warning.location == "graph.node[0].metadata_props"
    assert "node 0 'node_Relu_0' (and 1 other node)" in warning.message and "control characters" in warning.message
    model = document.view.graph_model()
    assert model.group_label == []  # no scope from the lies; `ok` holds one node: no group


def test_the_dynamo_and_torchscript_exports_of_one_gpt_have_the_same_modules():
    folder = SAMPLES / "onnx"
    dynamo = folder / "minigpt4_dynamo_dynseq_noopt.onnx"
    torchscript = folder / "minigpt4_dynaxes_torchscript_opset17_noconstfold.onnx"
    if not dynamo.exists() or not torchscript.exists():
        pytest.skip(f"no {folder}")
    labels = [open_document(path).view.graph_model().group_label for path in (dynamo, torchscript)]
    assert [label for label in labels[0] if label.startswith("layers.")] == [f"layers.{k}" for k in range(4)] + [
        "layers.0–3"]  # the four blocks stacked: the constant they share, in layers.0's scope, drawn beside
    # the same modules, stacked alike: TorchScript's layers.1–3 read Identity copies of the LayerNorm weights
    # layers.0 reads, which is no difference of structure
    assert labels[0] == labels[1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["", "a", "a.b", "a.b.c", "x/y", "q'r", 'd"e', "back\\slash", "c,d", "\x1b"]),
                min_size=1, max_size=6), st.one_of(st.none(), st.integers(0, 2)))
def test_the_module_part_read_once_gives_what_reading_every_node_gives(names, classes):
    """The nodes of a module share all but their last name: that part is read once (cached); the answer must be
    what reading the whole text gives, whatever the names hold."""
    from explorer.formats.onnx.index import _scope_of

    text = repr(["", *names, "op_7"])
    said = None if classes is None else repr(["m.Root", *[f"m.C{k}" for k in range(len(names) + classes - 1)], "aten"])
    props = [Prop(TORCH_SCOPES, text)] + ([Prop(TORCH_CLASSES, said)] if said is not None else [])
    assert torch_scope(props) == _scope_of(text, said)
