"""One GPT exported by both of torch's exporters (tests/data/torch_exports, made by make_tinygpt.py there): the
dynamo export is grouped by its modules as deep as the TorchScript one (issue #54), with the modules' classes in
the titles, and comparing the two matches the token embedding's Gather (issue #59 item 4: it was reported
removed and added)."""

from __future__ import annotations

import json

from explorer import cli
from explorer.api import open_document
from explorer.graph.layout import group_title
from tests.conftest import ROOT

FOLDER = ROOT / "tests" / "data" / "torch_exports"
DYNAMO = FOLDER / "tinygpt2_dynamo.onnx"
TORCHSCRIPT = FOLDER / "tinygpt2_torchscript_opset14.onnx"


def test_both_exports_have_the_same_module_groups_and_the_dynamo_one_names_their_classes():
    dynamo, torchscript = (open_document(path).view.graph_model() for path in (DYNAMO, TORCHSCRIPT))

    def paths(model) -> list[str]:
        out = []
        for g in range(len(model.group_label)):
            parent = int(model.group_parent[g])
            out.append(f"{model.group_label[parent]}/{model.group_label[g]}" if parent >= 0 else model.group_label[g])
        return out

    assert paths(dynamo) == ["layers.0", "layers.0/qkv", "layers.0/proj", "layers.0/fc1", "layers.0/fc2", "layers.1",
                             "layers.1/qkv", "layers.1/proj", "layers.1/fc1", "layers.1/fc2", "head"]  # fmt: skip
    # opset 14 has no LayerNormalization: TorchScript's layer norms are several ops, so groups of their own
    assert paths(dynamo) == [p for p in paths(torchscript) if p.rpartition("/")[2] not in ("ln1", "ln2", "ln")]
    titles = [group_title(dynamo, g) for g in range(len(dynamo.group_label))]
    assert titles[:5] == ["layers.0 · Block", "qkv · Linear", "proj · Linear", "fc1 · Linear", "fc2 · Linear"]
    assert group_title(torchscript, 0) == "layers.0"  # no metadata: no class


def test_comparing_the_two_exports_matches_the_token_embedding(capsys):
    capsys.readouterr()
    assert cli.main(["diff", str(DYNAMO), str(TORCHSCRIPT), "--json", "--all"]) in (0, 1)
    changes = json.loads(capsys.readouterr().out)["changes"]
    embedding = [c for c in changes if "/tok/Gather" in (c.get("name"), c.get("name_b"))
                 or c.get("name_a") == "node_embedding"]  # fmt: skip
    # paired (neither removed nor added) and, differing only in the dims one side's inference named (issue #74),
    # not a change
    assert embedding == []
    from explorer.api import open_document
    from explorer.graph.compare import compare_documents

    comparison = compare_documents(open_document(DYNAMO), open_document(TORCHSCRIPT))
    a, b = comparison.a, comparison.b
    paired = int(comparison.match.a_to_b[a.node_label.index("node_embedding")])
    assert paired >= 0 and b.node_label[paired] == "/tok/Gather"
    assert comparison.describe("a", a.node_label.index("node_embedding")).startswith("same · matched by structure")
